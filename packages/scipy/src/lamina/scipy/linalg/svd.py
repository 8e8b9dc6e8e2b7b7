"""The singular value decomposition, ``svd``."""

from functools import partial

import lamina.numpy as jnp
from lamina.interpreters import jit
from lamina.lax import linalg as lax_linalg
from lamina.scipy.linalg.operands import promote_inexact


def svd(
    a,
    full_matrices=True,
    compute_uv=True,
    overwrite_a=False,
    check_finite=True,
    lapack_driver="gesdd",
):
    """``(u, s, vh)`` with ``a = u @ diag(s) @ vh`` for each matrix in ``a``, singular
    values descending; only ``s`` when not ``compute_uv``. ``lapack_driver`` is
    accepted and ignored."""
    del overwrite_a, check_finite, lapack_driver
    return _svd(jnp.asarray(a), bool(full_matrices), bool(compute_uv))


@partial(jit, static_argnums=(1, 2))
def _svd(a, full_matrices, compute_uv):
    (a,) = promote_inexact(a)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
