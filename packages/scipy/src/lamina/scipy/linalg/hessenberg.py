"""The Hessenberg form, ``hessenberg``."""

from functools import partial

import lamina.numpy as jnp
from lamina.interpreters import jit
from lamina.lax import linalg as lax_linalg
from lamina.scipy.linalg.operands import check_matrix, check_square


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """The upper Hessenberg form h of each square matrix in ``a``; with ``calc_q``,
    ``(h, q)`` with ``a = q @ h @ qᴴ``, q unitary."""
    del overwrite_a, check_finite
    a = jnp.asarray(a)
    n = a.shape[-1] if a.ndim else 0
    if a.ndim >= 2 and n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    check_square(
        "Argument to Hessenberg reduction must have shape [..., n, n], got shape {shape}", a
    )
    check_matrix("hessenberg", a)
    return _hessenberg(a, bool(calc_q))


@partial(jit, static_argnums=1)
def _hessenberg(a, calc_q):
    reduced, taus = lax_linalg.hessenberg(a)
    h = jnp.triu(reduced, -1)
    if not calc_q:
        return h
    q = lax_linalg.householder_product(reduced[..., 1:, :-1], taus)
    # Q fixes the first basis vector: it is diag(1, q).
    q = jnp.pad(q, [(0, 0)] * (q.ndim - 2) + [(1, 0), (1, 0)])
    q = q.at[..., 0, 0].set(1)
    return h, q
