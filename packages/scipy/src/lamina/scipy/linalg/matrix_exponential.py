"""``expm`` by Padé approximation with scaling and squaring (Higham 2005), and
``expm_frechet``, its derivative in a direction, by forward-mode differentiation.

The degree of the approximant is chosen at run time from the 1-norm of the scaled
matrix (3, 5 or 7 for single precision; 3 to 13 for double), and the squarings that
undo the scaling run in a fixed-length loop so that reverse mode works through them.
"""

from __future__ import annotations

from functools import partial, reduce
from operator import add

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit, jvp
from lamina.ir import dtypes
from lamina.numpy import linalg as jnp_linalg

__all__ = ["expm", "expm_frechet"]

# Padé coefficients b_0..b_m of exp for each degree m.
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0,
        2162160.0, 110880.0, 3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
         1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
         33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}  # fmt: skip

# Per precision: the norm above which the matrix is scaled, the norm bounds between
# degrees, and the degrees (Higham's θ_m for the unit roundoff of the type).
_SINGLE = (3.925724783138660, (4.258730016922831e-1, 1.880152677804762), (3, 5, 7))
_DOUBLE = (
    5.371920351148152,
    (1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1, 2.097847961257068),
    (3, 5, 7, 9, 13),
)


def _as_inexact(a):
    """``a`` as an array of its inexact dtype (integers and bools to the default float)."""
    a = jnp.asarray(a)
    return a.astype(dtypes.to_inexact_dtype(a.dtype))


def _dot(a, b):
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _pade(degree, a):
    """(U, V): the odd and even parts of the degree-``degree`` Padé numerator of exp(a),
    so that exp(a) ≈ (V - U)⁻¹ (V + U)."""
    b = _PADE[degree]
    eye = jnp.eye(a.shape[0], dtype=a.dtype)
    a2 = _dot(a, a)
    if degree == 13:
        a4 = _dot(a2, a2)
        a6 = _dot(a4, a2)
        odd = _dot(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
        odd = odd + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye
        even = _dot(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
        even = even + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
        return _dot(a, odd), even
    powers = [eye, a2]  # a^0, a^2, a^4, ...
    for _ in range(degree // 2 - 1):
        powers.append(_dot(powers[-1], a2))
    # highest power first
    odd = reduce(add, [b[2 * k + 1] * p for k, p in reversed(list(enumerate(powers)))])
    even = reduce(add, [b[2 * k] * p for k, p in reversed(list(enumerate(powers)))])
    return _dot(a, odd), even


def _numerator_denominator(a):
    """(P, Q, s): the Padé numerator and denominator of exp(a / 2^s), s the number of
    squarings that recovers exp(a)."""
    if a.dtype in (np.float64, np.complex128):
        max_norm, bounds, degrees = _DOUBLE
    elif a.dtype in (np.float32, np.complex64):
        max_norm, bounds, degrees = _SINGLE
    else:
        raise TypeError(f"A.dtype={a.dtype} is not supported.")
    norm = jnp_linalg.norm(a, 1)
    squarings = jnp.maximum(0, jnp.floor(jnp.log2(norm / max_norm)))
    a = a / (2**squarings).astype(a.dtype)
    which = sum((norm >= bound).astype(np.int32) for bound in bounds)
    odd, even = lax.switch(which, [partial(_pade, d) for d in degrees], a)
    return odd + even, even - odd, squarings


def _square(r, squarings, max_squarings):
    """``r`` squared ``squarings`` times, in a loop of ``max_squarings`` steps."""

    def step(x, i):
        return lax.cond(i < squarings, lambda y: _dot(y, y), lambda y: y, x), None

    return lax.scan(step, r, jnp.arange(max_squarings, dtype=squarings.dtype))[0]


def _expm_2d(a, upper_triangular, max_squarings):
    p, q, squarings = _numerator_denominator(a)

    def compute(a, p, q):
        if upper_triangular:
            r = lax.linalg.triangular_solve(q, p, left_side=True, lower=False)
        else:
            r = jnp_linalg.solve(q, p)
        return _square(r, squarings, max_squarings)

    def overflow(a, p, q):
        return jnp.full_like(a, np.nan)

    return lax.cond(squarings > max_squarings, overflow, compute, a, p, q)


@partial(jit, static_argnames=("upper_triangular", "max_squarings"))
def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential of each square matrix in ``A`` (shape ``(..., n, n)``);
    ``upper_triangular`` promises triangular input, and a matrix needing more than
    ``max_squarings`` squarings gives NaNs."""
    a = _as_inexact(A)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={a.shape}.")
    fun = partial(_expm_2d, upper_triangular=upper_triangular, max_squarings=max_squarings)
    if a.ndim > 2:
        return jnp.vectorize(fun, signature="(n,n)->(n,n)")(a)
    return fun(a)


@partial(jit, static_argnames=("method", "compute_expm"))
def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Fréchet derivative of ``expm`` at ``A`` in the direction ``E``, and with
    ``compute_expm`` also ``expm(A)`` (first). ``method`` is accepted and ignored."""
    del method
    a, e = jnp.asarray(A), jnp.asarray(E)
    # the check of A compares axis 1, not -1, with -2 (JAX's, which this follows)
    if a.ndim < 2 or a.shape[-2] != a.shape[1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={a.shape}")
    if e.ndim < 2 or e.shape[-2] != e.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={e.shape}")
    if a.shape != e.shape:
        raise ValueError(
            f"expected A and E to be the same shape, got A.shape={a.shape} E.shape={e.shape}"
        )
    expm_a, frechet = jvp(partial(expm, upper_triangular=False, max_squarings=16), (a,), (e,))
    return (expm_a, frechet) if compute_expm else frechet
