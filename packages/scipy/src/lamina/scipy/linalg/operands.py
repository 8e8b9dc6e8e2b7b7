"""What the matrix functions share: dtype promotion as JAX's ``promote_dtypes*``, the
shape and dtype checks ``jax.scipy.linalg`` reports, the gufunc signature of a solve
against ``b``, and a triangular solve that takes vectors."""

import warnings

import numpy as np

import lamina.numpy as jnp
from lamina import lax
from lamina.ir import dtypes
from lamina.lax import linalg as lax_linalg


def _promote(arrays, convert):
    dtype, weak = dtypes.result_type(*arrays, return_weak_type_flag=True)
    dtype = convert(dtype)
    return [
        x
        if (x.dtype, dtypes.is_weakly_typed(x)) == (dtype, weak)
        else lax.to_dtype(x, dtype, weak_type=weak)
        for x in arrays
    ]


def promote_common(*args):
    """``args`` as arrays of their common dtype."""
    return _promote([jnp.asarray(a) for a in args], lambda dtype: dtype)


def promote_inexact(*args):
    """``args`` as arrays of their common inexact dtype (integers go to the default
    float)."""
    return _promote([jnp.asarray(a) for a in args], dtypes.to_inexact_dtype)


def promote_complex(*args):
    """``args`` as arrays of their common complex dtype."""
    return _promote([jnp.asarray(a) for a in args], dtypes.to_complex_dtype)


def strong(x):
    """``x`` without a weak type, as the results of JAX's kernels are."""
    return lax.to_dtype(x, x.dtype, weak_type=False) if dtypes.is_weakly_typed(x) else x


def check_square(message: str, a) -> None:
    """ValueError ``message`` (formatted with ``shape``) unless ``a`` is a stack of
    square matrices; rank-1 inputs are left to ``check_matrix``."""
    shape = np.shape(a)
    if len(shape) >= 2 and shape[-1] != shape[-2]:
        raise ValueError(message.format(shape=tuple(shape)))


def check_matrix(name: str, a) -> None:
    """JAX's TypeErrors for a decomposition given fewer than two dimensions or an integer
    or bool matrix."""
    if a.ndim < 2:
        raise TypeError(f"Input 0 to {name} must have rank at least 2, but got shape={a.shape}")
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        raise TypeError(
            f"{name} does not accept dtype {a.dtype} at position 0. Accepted dtypes at "
            "position 0 are subtypes of floating, complexfloating."
        )


def solve_signature(fun_name: str, first: str, a, b, *extra: str) -> str:
    """The gufunc signature for solving square ``a`` against ``b``: a vector, a batch of
    vectors (deprecated, with JAX's FutureWarning; ``first`` names the function's first
    argument in it) or a batch of matrices."""
    head = ",".join(("(n,n)", *extra))
    if b.ndim == 1:
        return f"{head},(n)->(n)"
    if a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        warnings.warn(
            f"jax.scipy.linalg.{fun_name}: batched 1D solves with b.ndim > 1 are "
            "deprecated, and in the future will be treated as a batched 2D solve. Use "
            f"{fun_name}({first}, b[..., None]).squeeze(-1) to avoid this warning.",
            category=FutureWarning,
            stacklevel=3,
        )
        return f"{head},(n)->(n)"
    return f"{head},(n,k)->(n,k)"


def triangular_solve(a, b, **params):
    """``lax.linalg.triangular_solve`` (left side) that also takes a vector ``b``."""
    if b.ndim == a.ndim - 1:
        return lax_linalg.triangular_solve(a, b[..., None], left_side=True, **params)[..., 0]
    return lax_linalg.triangular_solve(a, b, left_side=True, **params)
