"""The Schur decomposition, ``schur``, and ``rsf2csf``, which turns a real Schur form
into a complex (upper triangular) one."""

import lamina.numpy as jnp
from lamina import lax
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.lax import linalg as lax_linalg
from lamina.scipy.linalg.operands import check_matrix, check_square, promote_complex


def schur(a, output="real"):
    """``[t, z]`` with ``a = z @ t @ zᴴ``, z unitary and t (quasi-)upper triangular: for
    ``output="real"`` a real matrix gets real 2×2 blocks for complex eigenvalue pairs;
    ``output="complex"`` gives a triangular complex t."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
    a = jnp.asarray(a)
    if output == "complex":
        a = a.astype(dtypes.to_complex_dtype(a.dtype))
    check_square("The input to schur must be a square matrix. Got shape {shape}.", a)
    check_matrix("schur", a)
    return list(_schur(a))


@jit
def _schur(a):
    return lax_linalg.schur(a)


def _rotate(m, t, z):
    """Zero t[m, m-1] with a Givens rotation G on rows and columns m-1, m (t <- G t Gᴴ,
    z <- z Gᴴ)."""
    n = t.shape[0]
    block = lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))
    mu = jnp.linalg.eigvals(block) - t[m, m]
    r = jnp.linalg.norm(jnp.stack([mu[0], t[m, m - 1]])).astype(t.dtype)
    c = mu[0] / r
    s = t[m, m - 1] / r
    g = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
    gh = jnp.conj(g.T)
    rows = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
    right = jnp.arange(n) >= m - 1
    rows = jnp.where(right, g @ jnp.where(right, rows, 0), rows)
    t = lax.dynamic_update_slice_in_dim(t, rows, m - 1, axis=0)
    cols = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=1)
    upper = (jnp.arange(n) < m + 1)[:, None]
    cols = jnp.where(upper, jnp.where(upper, cols, 0) @ gh, cols)
    t = lax.dynamic_update_slice_in_dim(t, cols, m - 1, axis=1)
    zcols = lax.dynamic_slice_in_dim(z, m - 1, 2, axis=1)
    z = lax.dynamic_update_slice_in_dim(z, zcols @ gh, m - 1, axis=1)
    return t, z


def _rsf2csf_matrix(t, z):
    t, z = promote_complex(t, z)
    n = t.shape[0]
    if n == 1:
        return t, z
    eps = dtypes.finfo(t.dtype).eps

    def step(i, tz):
        t, z = tz
        m = n - i
        below = jnp.abs(t[m, m - 1])
        big = below > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
        t, z = lax.cond(big, _rotate, lambda m, t, z: (t, z), m, t, z)
        return t.at[m, m - 1].set(0), z

    return lax.fori_loop(1, n, step, (t, z))


def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form ``(t, z)`` of a real Schur form ``(T, Z)`` from
    ``schur(a)``: the 2×2 blocks of T are made triangular by unitary rotations."""
    del check_finite
    T, Z = jnp.asarray(T), jnp.asarray(Z)
    if T.ndim < 2 or T.shape[-1] != T.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if Z.ndim < 2 or Z.shape[-1] != Z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if T.shape[-1] != Z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {Z.shape} vs. T: {T.shape}")
    return _rsf2csf(T, Z)


@jit
def _rsf2csf(T, Z):
    return jnp.vectorize(_rsf2csf_matrix, signature="(n,n),(n,n)->(n,n),(n,n)")(T, Z)
