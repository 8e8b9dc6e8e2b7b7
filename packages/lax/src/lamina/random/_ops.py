"""NumPy-style helpers for the samplers, written with lax (lamina.random sits in the lax
layer and cannot use lamina.numpy): array conversion with JAX's dtype rules, NumPy
broadcasting, ``where``/``clip``/``take`` and the argument checks the samplers share."""

from __future__ import annotations

import numpy as np

from lamina.interpreters import Array, jit
from lamina.ir import dtypes
from lamina.lax import (
    GatherDimensionNumbers,
    GatherScatterMode,
    broadcast_in_dim,
    broadcast_shapes,
    convert_element_type,
    exp,
    expand_dims,
    gather,
    max,
    min,
    reduce_max,
    reduce_sum,
    select_n,
    stop_gradient,
)
from lamina.lax._common import aval_of

__all__ = [
    "asarray",
    "astype",
    "broadcast_to",
    "check_all_safe_to_cast",
    "check_arraylike",
    "check_broadcast_shapes",
    "check_shape",
    "clip",
    "dtype_of",
    "promote_inexact",
    "sampler_jit",
    "shape_of",
    "softmax_last",
    "take",
    "where",
]


def sampler_jit(fun=None, **options):
    """``jit`` for the samplers, naming ``foo_raw`` ``_foo`` as JAX names its jitted
    sampler functions (Jaxprs print the name: ``jit[name=_uniform ...]``)."""
    if fun is None:
        return lambda f: sampler_jit(f, **options)
    name = fun.__name__
    if name.endswith("_raw"):
        fun.__name__ = fun.__qualname__ = "_" + name[: -len("_raw")]
    return jit(fun, **options)


def shape_of(x) -> tuple[int, ...]:
    return tuple(aval_of(x).shape)


def dtype_of(x) -> np.dtype:
    return aval_of(x).dtype


def check_arraylike(name: str, *args) -> None:
    for i, arg in enumerate(args):
        if not isinstance(arg, (Array, np.ndarray, np.generic, int, float, complex, bool)):
            raise TypeError(
                f"{name} requires ndarray or scalar arguments, got {type(arg)} at position {i}."
            )


def asarray(x):
    """``x`` as an array or tracer; Python scalars stay weakly typed."""
    if isinstance(x, Array) or hasattr(x, "aval"):
        return x
    if isinstance(x, (int, float, complex, bool)):
        return _weak(x)
    x = np.asarray(x)
    return convert_element_type(x, dtypes.canonicalize_dtype(x.dtype))


def _weak(x):
    # A weakly typed 0-d array holding the Python scalar x (lax keeps weak types of
    # Python scalars through convert_element_type with a matching dtype).
    from lamina.lax import full

    return full((), x)


def astype(x, dtype):
    return convert_element_type(x, dtype)


def promote_inexact(x):
    """``x`` with an integer or boolean dtype promoted to the default float (weakness kept)."""
    aval = aval_of(x)
    if dtypes.issubdtype(aval.dtype, np.inexact):
        return asarray(x)
    if aval.weak_type:
        return asarray(float(x)) if isinstance(x, (int, bool)) else _to_weak_float(x)
    return convert_element_type(x, dtypes.to_inexact_dtype(aval.dtype))


def _to_weak_float(x):
    from lamina.lax.conversion import to_dtype

    return to_dtype(x, dtypes.default_float_dtype(), weak_type=True)


def broadcast_to(x, shape):
    """``x`` broadcast NumPy-style (trailing axes aligned) to ``shape``."""
    shape = tuple(shape)
    xshape = shape_of(x)
    if xshape == shape:
        return asarray(x)
    if broadcast_shapes(xshape, shape) != shape:
        raise ValueError(
            f"Incompatible shapes for broadcasting: {xshape} and requested shape {shape}"
        )
    offset = len(shape) - len(xshape)
    keep = [i for i, d in enumerate(xshape) if d == shape[i + offset]]
    squeezed = x
    if len(keep) != len(xshape):
        from lamina.lax import reshape

        squeezed = reshape(x, tuple(xshape[i] for i in keep))
    return broadcast_in_dim(squeezed, shape, tuple(i + offset for i in keep))


def _broadcast_all(*xs):
    shape = broadcast_shapes(*(shape_of(x) for x in xs))
    return [broadcast_to(x, shape) for x in xs]


def where(cond, x, y):
    """NumPy's ``where`` for operands of one dtype (Python scalars take the others')."""
    dtype = next((dtype_of(v) for v in (x, y) if not aval_of(v).weak_type), dtype_of(x))
    x, y = convert_element_type(x, dtype), convert_element_type(y, dtype)
    cond, x, y = _broadcast_all(cond, x, y)
    return select_n(cond, y, x)


def clip(x, lo, hi):
    """``min(hi, max(lo, x))`` with NumPy broadcasting (as ``jnp.clip``)."""
    x, lo = _broadcast_all(x, convert_element_type(lo, dtype_of(x)))
    x = max(lo, x)
    x, hi = _broadcast_all(x, convert_element_type(hi, dtype_of(x)))
    return min(hi, x)


def take(arr, indices, axis: int):
    """``arr`` indexed by the (in-bounds) integer array ``indices`` along ``axis``; the
    index dimensions replace ``axis`` in the result (as ``jnp.take``)."""
    shape = shape_of(arr)
    ind_ndim = len(shape_of(indices))
    offset_dims = tuple(range(axis)) + tuple(range(axis + ind_ndim, len(shape) - 1 + ind_ndim))
    dnums = GatherDimensionNumbers(
        offset_dims=offset_dims, collapsed_slice_dims=(axis,), start_index_map=(axis,)
    )
    slice_sizes = tuple(1 if i == axis else d for i, d in enumerate(shape))
    return gather(
        arr,
        expand_dims(indices, (ind_ndim,)),
        dnums,
        slice_sizes,
        mode=GatherScatterMode.PROMISE_IN_BOUNDS,
    )


def softmax_last(x):
    """``jax.nn.softmax(x, axis=-1)``, computed as JAX computes it."""
    axis = len(shape_of(x)) - 1
    x_max = max(np.array(-np.inf, dtype_of(x)), reduce_max(x, (axis,)))
    x_max = stop_gradient(expand_dims(x_max, (axis,)))
    unnormalized = exp(x - x_max)
    return unnormalized / expand_dims(reduce_sum(unnormalized, (axis,)), (axis,))


def check_shape(name: str, shape, *param_shapes) -> None:
    if param_shapes:
        full = broadcast_shapes(shape, *param_shapes)
        if tuple(shape) != full:
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, "
                "and the result of broadcasting the shapes must equal the shape argument, "
                f"but got result {full} for shape argument {tuple(shape)}."
            )


def check_broadcast_shapes(name: str, shape, *args):
    from lamina.random._keys import canonicalize_shape

    arg_shapes = [np.shape(a) if not hasattr(a, "aval") else shape_of(a) for a in args]
    if shape is None:
        return broadcast_shapes(*arg_shapes) if arg_shapes else ()
    shape = canonicalize_shape(shape, name)
    check_shape(name, shape, *arg_shapes)
    return shape


def check_all_safe_to_cast(name: str, dtype, *args) -> None:
    for arg in args:
        if not dtypes.safe_to_cast(arg, dtype):
            raise dtypes.TypePromotionError(
                f"In arguments to {name}, cannot safely cast argument of type "
                f"{dtype_of(arg)} to {np.dtype(dtype)}"
            )
