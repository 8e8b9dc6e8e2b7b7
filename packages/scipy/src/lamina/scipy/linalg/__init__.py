"""lamina.scipy.linalg: JAX's ``jax.scipy.linalg``, on lax.linalg and lamina.numpy."""

from lamina.scipy.linalg.cholesky import cho_factor, cho_solve, cholesky
from lamina.scipy.linalg.eigh import eigh
from lamina.scipy.linalg.hessenberg import hessenberg
from lamina.scipy.linalg.lu import lu, lu_factor, lu_solve
from lamina.scipy.linalg.matrix_exponential import expm, expm_frechet
from lamina.scipy.linalg.matrix_function import funm
from lamina.scipy.linalg.matrix_square_root import sqrtm
from lamina.scipy.linalg.named_matrices import (
    dft,
    hadamard,
    helmert,
    hilbert,
    invhilbert,
    invpascal,
    pascal,
)
from lamina.scipy.linalg.polar import polar
from lamina.scipy.linalg.qr import qr, qr_multiply
from lamina.scipy.linalg.schur import rsf2csf, schur
from lamina.scipy.linalg.solve import det, inv, solve, solve_triangular
from lamina.scipy.linalg.structured_matrices import (
    block_diag,
    circulant,
    companion,
    convolution_matrix,
    fiedler,
    fiedler_companion,
    hankel,
    leslie,
    toeplitz,
)
from lamina.scipy.linalg.svd import svd
from lamina.scipy.linalg.sylvester import solve_sylvester
from lamina.scipy.linalg.tridiagonal_eigenvalues import eigh_tridiagonal

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "circulant",
    "companion",
    "convolution_matrix",
    "det",
    "dft",
    "eigh",
    "eigh_tridiagonal",
    "expm",
    "expm_frechet",
    "fiedler",
    "fiedler_companion",
    "funm",
    "hadamard",
    "hankel",
    "helmert",
    "hessenberg",
    "hilbert",
    "inv",
    "invhilbert",
    "invpascal",
    "leslie",
    "lu",
    "lu_factor",
    "lu_solve",
    "pascal",
    "polar",
    "qr",
    "qr_multiply",
    "rsf2csf",
    "schur",
    "solve",
    "solve_sylvester",
    "solve_triangular",
    "sqrtm",
    "svd",
    "toeplitz",
]
