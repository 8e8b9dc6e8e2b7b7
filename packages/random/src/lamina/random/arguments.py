"""The argument checks the samplers share, with JAX's errors: shapes (``shape`` given as
an int or a sequence, and broadcast against the parameters' shapes), dtypes (the
default float, safe casts of the parameters) and concrete integer arguments."""

from __future__ import annotations

import functools
import operator

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import ConcretizationTypeError, Tracer
from lamina.ir import dtypes, out_type_sharding, reshard_to

__all__ = [
    "canonical_axis",
    "canonicalize_shape",
    "check_all_safe_to_cast",
    "check_broadcast_shapes",
    "check_shape",
    "checked_float_sampling",
    "concrete_index",
    "float_dtype",
    "optional_shape",
    "promote_inexact",
    "promote_inexact_pair",
    "with_out_sharding",
]


def canonicalize_shape(shape, name: str = "") -> tuple[int, ...]:
    """``shape`` (an int or a sequence of ints) as a tuple, with JAX's errors."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(
            "Shapes must be 1D sequences of concrete values of integer type, got "
            f"{tuple(shape) if isinstance(shape, (list, tuple)) else shape}."
        ) from None
    if any(d < 0 for d in out):
        raise ValueError(f"{name or 'shape'}: negative dimensions are not allowed, got {out}.")
    return out


def optional_shape(shape, name: str):
    """``None`` (the parameters' shape), or ``shape`` canonicalized."""
    return None if shape is None else canonicalize_shape(shape, name)


def check_shape(name: str, shape, *param_shapes) -> None:
    """JAX's error unless the parameters' shapes broadcast to exactly ``shape``."""
    if param_shapes:
        full = lax.broadcast_shapes(shape, *param_shapes)
        if tuple(shape) != full:
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, "
                "and the result of broadcasting the shapes must equal the shape argument, "
                f"but got result {full} for shape argument {tuple(shape)}."
            )


def check_broadcast_shapes(name: str, shape, *args):
    """``shape`` checked against the shapes of ``args``; their broadcast shape if None."""
    arg_shapes = [tuple(a.aval.shape) if hasattr(a, "aval") else np.shape(a) for a in args]
    if shape is None:
        return lax.broadcast_shapes(*arg_shapes) if arg_shapes else ()
    shape = canonicalize_shape(shape, name)
    check_shape(name, shape, *arg_shapes)
    return shape


def float_dtype(name: str, dtype, kinds=np.floating, what="a float") -> np.dtype:
    """The canonical ``dtype`` (default: the default float), checked to be of ``kinds``."""
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, kinds):
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")
    return np.dtype(dtype)


def check_all_safe_to_cast(name: str, dtype, *args) -> None:
    for arg in args:
        if not dtypes.safe_to_cast(arg, dtype):
            raise dtypes.TypePromotionError(
                f"In arguments to {name}, cannot safely cast argument of type "
                f"{lax.aval_of(arg).dtype} to {np.dtype(dtype)}"
            )


def checked_float_sampling(name: str, key, shape, dtype, *params):
    """The checks of a sampler of floats with parameters ``params``, in JAX's order: the
    key, the dtype (default: the default float), ``shape`` against the parameters' shapes
    (their broadcast shape if None), and safe casts of the parameters. Returns the key,
    the shape and the dtype."""
    key, _ = lax.check_prng_key(name, key)
    dtype = float_dtype(name, dtype)
    shape = check_broadcast_shapes(name, shape, *params)
    check_all_safe_to_cast(name, dtype, *params)
    return key, shape, dtype


def promote_inexact(x):
    """``x`` as an array, an integer or boolean dtype promoted to the default float
    (weakness kept)."""
    aval = lax.aval_of(x)
    if dtypes.issubdtype(aval.dtype, np.inexact):
        return jnp.asarray(x)
    if aval.weak_type:
        if isinstance(x, (int, bool)):
            return jnp.asarray(float(x))
        return lax.to_dtype(x, dtypes.default_float_dtype(), weak_type=True)
    return lax.convert_element_type(x, dtypes.to_inexact_dtype(aval.dtype))


def promote_inexact_pair(a, b):
    """``a`` and ``b`` as arrays of their common dtype, made inexact."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    dtype = dtypes.to_inexact_dtype(dtypes.result_type(a, b))
    return lax.convert_element_type(a, dtype), lax.convert_element_type(b, dtype)


def concrete_index(x, context: str) -> int:
    """``x`` as a Python int; JAX's error for a traced value."""
    if hasattr(x, "aval") and not hasattr(x, "_value") and type(x).__name__.endswith("Tracer"):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {x}\n{context}"
        )
    return operator.index(x)


def canonical_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _replicated(sharding):
    """``sharding`` (a spec or a ``NamedSharding``) with no dimension split."""
    spec = getattr(sharding, "spec", None)
    if spec is None:
        return type(sharding)()
    return sharding.update(spec=type(spec)())


def with_out_sharding(sampler):
    """``sampler`` taking ``out_sharding=``, as JAX's samplers do: the key is resharded
    unsplit (under a trace), the draw made, and the result resharded to
    ``out_sharding``. A sharding over no mesh counts as none, as in JAX."""

    @functools.wraps(sampler)
    def draw(key, *args, out_sharding=None, **kwargs):
        out_sharding = out_type_sharding(out_sharding, sampler.__name__)
        if out_sharding is None:
            return sampler(key, *args, **kwargs)
        if isinstance(key, Tracer):  # eagerly the key stays where it is: same draws
            key = reshard_to(key, _replicated(out_sharding))
        return reshard_to(sampler(key, *args, **kwargs), out_sharding)

    return draw
