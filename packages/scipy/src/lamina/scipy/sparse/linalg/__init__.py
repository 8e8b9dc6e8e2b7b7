"""lamina.scipy.sparse.linalg: `jax.scipy.sparse.linalg`, Krylov solvers of `A x = b`
for a matrix or a linear function `A` and pytree vectors (cg, gmres, bicgstab)."""

from lamina.scipy.sparse.linalg.biconjugate_gradient_stabilized import bicgstab
from lamina.scipy.sparse.linalg.conjugate_gradient import cg
from lamina.scipy.sparse.linalg.generalized_minimal_residual import gmres

__all__ = ["bicgstab", "cg", "gmres"]


def __dir__():
    return list(__all__)
