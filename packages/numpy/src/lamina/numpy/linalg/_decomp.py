"""Factorizations: ``cholesky``, ``qr``, ``eig``/``eigvals``, ``eigh``/``eigvalsh``,
``svd``/``svdvals``, with JAX's named-tuple results. The Hermitian SVD comes from
``eigh``: singular values are |eigenvalues|, sorted descending."""

from __future__ import annotations

from typing import NamedTuple

from lamina import lax
from lamina.lax.linalg import geqrf
from lamina.numpy.base.arguments import aval_of
from lamina.numpy.linalg._operands import adjoint, as_matrix, swap_last

__all__ = [
    "EigResult",
    "EighResult",
    "QRResult",
    "SVDResult",
    "cholesky",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "qr",
    "svd",
    "svdvals",
]


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


def cholesky(a, *, upper=False, symmetrize_input=True):
    """The Cholesky factor L (a = L·Lᴴ), or U = Lᴴ with ``upper``; NaNs where a is
    not positive definite."""
    a = as_matrix("cholesky", a, square=True)
    factor = lax.linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return adjoint(factor) if upper else factor


def qr(a, mode="reduced"):
    """``QRResult(Q, R)`` for mode "reduced" or "complete"; R alone for "r"; LAPACK's
    packed Householder form (h, tau) for "raw"."""
    a = as_matrix("qr", a)
    if mode == "raw":
        h, tau = geqrf(a)
        return QRResult(swap_last(h), tau)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax.linalg.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def _check_uplo(uplo):
    if uplo not in (None, "L", "U"):
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {uplo}")
    return uplo != "U"


def eigh(a, UPLO=None, symmetrize_input=True):
    """``EighResult(eigenvalues, eigenvectors)`` of each Hermitian matrix, eigenvalues
    ascending."""
    a = as_matrix("eigh", a, square=True)
    v, w = lax.linalg.eigh(a, lower=_check_uplo(UPLO), symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def eig(a):
    """``EigResult(eigenvalues, eigenvectors)`` (complex) of each square matrix; CPU
    only, as in JAX."""
    a = as_matrix("eig", a, square=True)
    w, v = lax.linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a):
    a = as_matrix("eigvals", a, square=True)
    (w,) = lax.linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    return w


def _hermitian_svd(a, compute_uv):
    """The SVD of a Hermitian matrix from its eigendecomposition: S = |w| descending,
    U the matching eigenvectors, Vh = (U·sign(w))ᴴ."""
    w, v = eigh(a)
    last = aval_of(w).ndim - 1
    key = lax.neg(lax.abs(w))
    _, w = lax.sort_key_val(key, w, dimension=last)
    s = lax.abs(w)
    if not compute_uv:
        return s
    nd = aval_of(v).ndim
    column_key = lax.broadcast_in_dim(key, aval_of(v).shape, (*range(nd - 2), nd - 1))
    _, u = lax.sort_key_val(column_key, v, dimension=nd - 1)
    signs = lax.convert_element_type(lax.sign(w), aval_of(u).dtype)
    return SVDResult(u, s, adjoint(lax.mul(u, lax.expand_dims(signs, (last,)))))


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """``SVDResult(U, S, Vh)`` with a = U·diag(S)·Vh and S descending; S alone without
    ``compute_uv``."""
    a = as_matrix("svd", a)
    if hermitian:
        return _hermitian_svd(a, compute_uv)
    if subset_by_index is not None and full_matrices and compute_uv:
        raise ValueError("full_matrices and subset_by_index cannot both be set")
    out = lax.linalg.svd(
        a, full_matrices=full_matrices, compute_uv=compute_uv, subset_by_index=subset_by_index
    )
    if not compute_uv:
        return out[0] if isinstance(out, (tuple, list)) else out
    return SVDResult(*out)


def svdvals(x, /):
    return svd(x, compute_uv=False)
