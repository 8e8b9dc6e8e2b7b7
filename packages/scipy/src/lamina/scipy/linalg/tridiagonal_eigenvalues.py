"""``eigh_tridiagonal``: eigenvalues of a symmetric (Hermitian) tridiagonal matrix by
bisection on Sturm sequence counts, all wanted eigenvalues at once, and eigenvectors by
inverse iteration from random vectors, with the vectors of close eigenvalues
orthonormalized together after each step (as LAPACK's ``stein``)."""

from __future__ import annotations

from functools import partial

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit

__all__ = ["eigh_tridiagonal"]

_SUPPORTED = (np.float32, np.float64, np.complex64, np.complex128)


def _counts_below(alpha, beta_sq, pivmin, alpha0_perturbation, x):
    """For each shift in ``x``: how many eigenvalues lie below it (the negative pivots
    of the LDLᵀ factorization of T - x·I)."""
    q = alpha[0] - x
    count = (q < 0).astype(np.int32)
    q = jnp.where(alpha[0] == x, alpha0_perturbation, q)

    def step(i, state):
        q, count = state
        q = alpha[i] - beta_sq[i - 1] / q - x
        small = q <= pivmin
        return jnp.where(small, jnp.minimum(q, -pivmin), q), count + small.astype(np.int32)

    return lax.fori_loop(1, alpha.shape[0], step, (q, count), unroll=8)[1]


def _normal(key, shape, dtype):
    """Standard normal samples drawn as ``jax.random.normal`` draws them."""
    bits = lax.random_bits(key, np.dtype(dtype).itemsize * 8, shape)
    nmant = np.finfo(dtype).nmant
    uint = bits.dtype
    mantissa = lax.shift_right_logical(bits, np.array(bits.dtype.itemsize * 8 - nmant, uint))
    one = np.array(1.0, dtype).view(uint)
    u = lax.bitcast_convert_type(lax.bitwise_or(mantissa, one), dtype) - np.array(1.0, dtype)
    low = np.array(-1.0 + 2.0 ** -(nmant + 1), dtype)
    u = jnp.maximum(low, u * (np.array(1.0, dtype) - low) + low)
    return np.array(np.sqrt(2), dtype) * lax.erf_inv(u)


def _orthonormalize_clusters(v, starts, ends, clusters):
    """The rows of ``v`` in each run ``starts[c]:ends[c]`` replaced by an orthonormal
    basis of their span (from a QR factorization)."""
    k, n = v.shape
    rows = jnp.arange(k)

    def one(c, v):
        start, end = starts[c], ends[c]
        inside = (rows < end - start).astype(v.dtype)[:, None]
        block = lax.dynamic_slice(jnp.pad(v, ((0, k), (0, 0))), (start, 0), (k, n)) * inside
        q = jnp.linalg.qr(block.T)[0].T * inside
        placed = lax.dynamic_update_slice(jnp.zeros((2 * k, n), v.dtype), q, (start, 0))[:k]
        return jnp.where(((rows >= start) & (rows < end))[:, None], placed, v)

    return lax.fori_loop(0, clusters, one, v)


def _eigenvectors(alpha, beta, eigvals, key):
    """Inverse iteration for the eigenvectors (as rows) of the ascending ``eigvals``."""
    n, k = alpha.shape[0], eigvals.shape[0]
    dtype = beta.dtype
    real = np.finfo(dtype).dtype
    # clusters: runs of eigenvalues closer than sqrt(eps)·‖T‖
    t_norm = jnp.maximum(jnp.abs(eigvals[0]), jnp.abs(eigvals[-1]))
    close = (eigvals[1:] - eigvals[:-1]) < np.sqrt(np.finfo(real).eps) * t_norm
    close_left = jnp.pad(close, (1, 0))
    close_right = jnp.pad(close, (0, 1))
    begins = ~close_left & close_right
    size = k // 2 + 1
    starts = jnp.nonzero(begins, size=size)[0]
    ends = jnp.nonzero(close_left & ~close_right, size=size)[0] + 1
    clusters = jnp.sum(begins)

    lower = jnp.broadcast_to(jnp.pad(jnp.conj(beta), (1, 0)), (k, n))
    upper = jnp.broadcast_to(jnp.pad(beta, (0, 1)), (k, n))
    shifted = (alpha[None, :] - eigvals[:, None]).astype(dtype)
    v = _normal(key, (k, n), real).astype(dtype)
    v = v / jnp.linalg.norm(v, axis=-1, keepdims=True).astype(dtype)

    def growing(state):
        # LAPACK's stein: at most 5 steps, until no norm grows by 10% or more
        i, _, norm, old_norm = state
        return (i < 5) & jnp.any(norm >= 1.1 * old_norm)

    def step(state):
        i, v, norm, _ = state
        w = lax.linalg.tridiagonal_solve(
            lower.astype(dtype), shifted, upper.astype(dtype), v[:, :, None],
            perturb_singular=True,
        )[:, :, 0]  # fmt: skip
        new_norm = jnp.linalg.norm(w, axis=-1)
        w = w / new_norm[:, None].astype(dtype)
        return i + 1, _orthonormalize_clusters(w, starts, ends, clusters), new_norm, norm

    ones, zeros = jnp.ones(k, eigvals.dtype), jnp.zeros(k, eigvals.dtype)
    return lax.while_loop(growing, step, (0, v, ones, zeros))[1]


@partial(jit, static_argnames=("eigvals_only", "select", "select_range"))
def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None,
                     key=None):  # fmt: skip
    """Eigenvalues (ascending), and unless ``eigvals_only`` the eigenvectors as columns,
    of the symmetric tridiagonal matrix with diagonal ``d`` and off-diagonal ``e``.
    ``select='i'`` keeps the eigenvalues with indices in ``select_range`` (inclusive);
    ``tol`` is the absolute tolerance of the bisection; ``key`` seeds the start vectors
    of inverse iteration (``jax.random.key(42)`` when None)."""
    alpha, beta = jnp.asarray(d), jnp.asarray(e)
    if alpha.dtype != beta.dtype:
        raise TypeError(
            "diagonal and off-diagonal values must have same dtype, "
            f"got {alpha.dtype} and {beta.dtype}"
        )
    if alpha.dtype not in _SUPPORTED or beta.dtype not in _SUPPORTED:
        raise TypeError(
            "Only float32 and float64 inputs are supported as inputs to "
            f"jax.scipy.linalg.eigh_tridiagonal, got {alpha.dtype} and {beta.dtype}"
        )
    if not eigvals_only:
        if key is None:
            key = lax.random_seed(np.asarray(42, jnp.int_), lax.resolve_prng_impl(None))
        key, _ = lax.check_prng_key("normal", key)
    n = alpha.shape[0]
    if n <= 1:
        values = jnp.real(alpha)
        return values if eigvals_only else (values, jnp.eye(n, dtype=alpha.dtype))
    if jnp.iscomplexobj(alpha):
        alpha = jnp.real(alpha)
        beta_sq = jnp.real(beta * jnp.conj(beta))
        beta_abs = jnp.sqrt(beta_sq)
    else:
        beta_abs, beta_sq = jnp.abs(beta), jnp.square(beta)

    # Gershgorin bounds on the spectrum, and the smallest pivot allowed
    row_sums = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    top = jnp.max(alpha + row_sums)
    bottom = jnp.min(alpha - row_sums)
    t_norm = jnp.maximum(jnp.abs(bottom), jnp.abs(top))
    info = np.finfo(alpha.dtype)
    one = np.ones([], alpha.dtype)
    safe_min = np.maximum(one / info.max, (one + info.eps) * info.tiny)
    pivmin = safe_min * jnp.maximum(1, jnp.max(beta_sq))
    alpha0_perturbation = jnp.square(info.eps * beta_abs[0])
    abs_tol = info.eps * t_norm
    if tol is not None:
        abs_tol = jnp.maximum(tol, abs_tol)
    max_steps = info.nmant + 1  # enough to split the widest interval to eps

    if select == "a":
        targets = jnp.arange(n, dtype=np.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        targets = jnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")

    slack = jnp.array(n, alpha.dtype) * 2.1 * info.eps * t_norm
    shape = targets.shape
    low = jnp.broadcast_to(bottom - slack - 2 * 2.1 * pivmin, shape)
    high = jnp.broadcast_to(top + slack + 2.1 * pivmin, shape)
    pivmin = jnp.broadcast_to(pivmin, shape)
    alpha0_perturbation = jnp.broadcast_to(alpha0_perturbation, shape)

    def unfinished(state):
        i, low, _, high = state
        return (i < max_steps) & (abs_tol < jnp.max(high - low))

    def bisect(state):
        i, low, mid, high = state
        below = _counts_below(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        low = jnp.where(below <= targets, mid, low)
        high = jnp.where(below > targets, mid, high)
        return i + 1, low, 0.5 * (low + high), high

    state = (0, low, 0.5 * (low + high), high)
    eigvals = lax.while_loop(unfinished, bisect, state)[2]
    if eigvals_only:
        return eigvals
    return eigvals, _eigenvectors(alpha, beta, eigvals, key).T
