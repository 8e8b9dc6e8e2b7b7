"""The QR factorization: ``qr`` and ``qr_multiply`` (a product with Q)."""

from functools import partial

import lamina.numpy as jnp
from lamina import lax
from lamina.interpreters import jit
from lamina.lax import linalg as lax_linalg
from lamina.scipy.linalg.operands import promote_inexact


@partial(jit, static_argnames=("mode", "pivoting"))
def _qr(a, mode, pivoting):
    (a,) = promote_inexact(a)
    full_matrices = mode != "economic"
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    return (r, *p) if mode == "r" else (q, r, *p)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """``(q, r)`` with ``a = q @ r`` (``a[:, p] = q @ r`` with ``pivoting``, which adds
    the column permutation p). ``mode`` is "full" (q m×m), "economic" (q m×k) or "r"
    (only r, as a 1-tuple, plus p when pivoting)."""
    del overwrite_a, lwork, check_finite
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    return _qr(jnp.asarray(a), mode, bool(pivoting))


@partial(jit, static_argnames=("mode", "pivoting", "conjugate"))
def _qr_multiply(a, c, mode, pivoting, conjugate):
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=False)
    if conjugate:
        q = jnp.conj(q)
    hi = lax.Precision.HIGHEST
    out = jnp.matmul(q, c, precision=hi) if mode == "left" else jnp.matmul(c, q, precision=hi)
    batch = jnp.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    r = jnp.broadcast_to(r, (*batch, *r.shape[-2:]))
    p = [jnp.broadcast_to(x, (*batch, x.shape[-1])) for x in p]
    return (out, r, *p)


def qr_multiply(
    a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False, overwrite_c=False
):
    """``(c @ Q, r)`` (mode "right") or ``(Q @ c, r)`` (mode "left") for the economic QR
    factorization of ``a``; Q is conjugated when ``conjugate``, and the column
    permutation is added when ``pivoting``. A vector ``c`` gives a vector."""
    del overwrite_a, overwrite_c
    a, c = promote_inexact(a, c)
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    vector = c.ndim == 1
    if vector:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(
            "Array shapes are not compatible for Q @ c operation: a has shape "
            f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} rows "
            f"(expected {k})."
        )
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(
            "Array shapes are not compatible for c @ Q operation: a has shape "
            f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} columns "
            f"(expected {m})."
        )
    out, *rest = _qr_multiply(a, c, mode, bool(pivoting), bool(conjugate))
    return (out.ravel() if vector else out, *rest)
