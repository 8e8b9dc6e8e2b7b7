"""``polar``: the polar decomposition a = u·p (``side='right'``) or a = p·u
(``side='left'``), u with orthonormal columns (or rows) and p Hermitian positive
semi-definite, by QDWH iteration (``lax.linalg.qdwh``) or from the SVD."""

from __future__ import annotations

from functools import partial

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit

__all__ = ["polar"]


def _adjoint(x):
    return x.T.conj()


def _polar_2d(a, side, method, eps, max_iterations):
    del max_iterations  # JAX 0.10.2 does not pass it on to qdwh either
    m, n = a.shape
    inexact = jnp.issubdtype(a.dtype, jnp.inexact)
    if method == "qdwh":
        if not inexact:  # JAX's qdwh reads finfo of the dtype
            raise ValueError(f"data type {a.dtype.type} not inexact")
        if m >= n and side == "right":
            u, p, _, _ = lax.linalg.qdwh(a, is_hermitian=False, eps=eps)
        elif m < n and side == "left":
            u, p, _, _ = lax.linalg.qdwh(_adjoint(a), is_hermitian=False, eps=eps)
            u, p = _adjoint(u), _adjoint(p)
        else:
            raise NotImplementedError(
                "method='qdwh' only supports mxn matrices where m < n where side='right' "
                f"and m >= n side='left', got {a.shape} with side={side!r}"
            )
    elif method == "svd":
        if not inexact:
            raise TypeError(
                f"svd does not accept dtype {a.dtype} at position 0. Accepted dtypes at "
                "position 0 are subtypes of floating, complexfloating."
            )
        w, s, vh = lax.linalg.svd(a, full_matrices=False)
        s = s.astype(w.dtype)
        u = w @ vh
        p = (_adjoint(vh) * s) @ vh if side == "right" else (w * s) @ _adjoint(w)
    else:
        raise ValueError(f"Unknown polar decomposition method {method}.")
    return u, p


@partial(jit, static_argnames=("side", "method"))
def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """The polar decomposition ``(u, p)`` of each matrix in ``a`` (shape ``(..., m, n)``):
    a = u·p with p n×n for ``side='right'``, a = p·u with p m×m for ``side='left'``.
    ``method`` is ``'qdwh'`` (``eps`` sets its tolerance) or ``'svd'``."""
    arr = jnp.asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ["right", "left"]:
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    signature = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    fun = partial(_polar_2d, side=side, method=method, eps=eps, max_iterations=max_iterations)
    return jnp.vectorize(fun, signature=signature)(arr)
