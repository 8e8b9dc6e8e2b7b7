"""The Hermitian eigendecomposition, ``eigh``."""

from functools import partial

import lamina.numpy as jnp
from lamina.interpreters import jit
from lamina.lax import linalg as lax_linalg
from lamina.scipy.linalg.operands import promote_inexact


def eigh(
    a,
    b=None,
    lower=True,
    eigvals_only=False,
    overwrite_a=False,
    overwrite_b=False,
    turbo=True,
    eigvals=None,
    type=1,
    check_finite=True,
):
    """``(w, v)``: the eigenvalues (ascending, real) and eigenvectors (columns) of each
    Hermitian matrix in ``a``, read from the triangle named by ``lower``; only ``w``
    when ``eigvals_only``. As in JAX, the generalized problem (``b``), ``type`` other
    than 1 and ``eigvals`` are not implemented."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    return _eigh(jnp.asarray(a), bool(lower), bool(eigvals_only))


@partial(jit, static_argnums=(1, 2))
def _eigh(a, lower, eigvals_only):
    (a,) = promote_inexact(a)
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)
