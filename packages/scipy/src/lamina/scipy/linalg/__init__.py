"""lamina.scipy.linalg: JAX's ``jax.scipy.linalg``."""

from lamina.scipy.linalg.matrix_exponential import expm, expm_frechet  # noqa: F401
from lamina.scipy.linalg.matrix_function import funm  # noqa: F401
from lamina.scipy.linalg.matrix_square_root import sqrtm  # noqa: F401
from lamina.scipy.linalg.polar import polar  # noqa: F401
from lamina.scipy.linalg.sylvester import solve_sylvester  # noqa: F401
from lamina.scipy.linalg.tridiagonal_eigenvalues import eigh_tridiagonal  # noqa: F401
