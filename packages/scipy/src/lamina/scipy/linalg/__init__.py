"""lamina.scipy.linalg: JAX's ``jax.scipy.linalg``, on lax.linalg and lamina.numpy."""

# ruff: noqa: F401  (the names are re-exported)

from lamina.scipy.linalg.cholesky import cho_factor, cho_solve, cholesky
from lamina.scipy.linalg.eigh import eigh
from lamina.scipy.linalg.hessenberg import hessenberg
from lamina.scipy.linalg.lu import lu, lu_factor, lu_solve
from lamina.scipy.linalg.named_matrices import (
    dft,
    hadamard,
    helmert,
    hilbert,
    invhilbert,
    invpascal,
    pascal,
)
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
