"""lamina.lax.linalg: JAX's ``jax.lax.linalg`` — matrix factorizations and solves, run
on CPU through the LAPACK kernels jaxlib registers (see ``_lapack``)."""

from lamina.lax.linalg.cholesky import *  # noqa: F403
from lamina.lax.linalg.decompositions import *  # noqa: F403
from lamina.lax.linalg.eigh import *  # noqa: F403
from lamina.lax.linalg.lu import *  # noqa: F403
from lamina.lax.linalg.qdwh import *  # noqa: F403
from lamina.lax.linalg.qr import *  # noqa: F403
from lamina.lax.linalg.qr import geqrf  # noqa: F401  (not in jax.lax.linalg; used by jnp.linalg)
from lamina.lax.linalg.solves import *  # noqa: F403
from lamina.lax.linalg.svd import *  # noqa: F403
from lamina.lax.linalg.triangular_solve import *  # noqa: F403
