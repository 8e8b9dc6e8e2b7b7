"""Converting values to arrays: ``array``/``asarray`` (nested lists of scalars, NumPy
values, arrays and tracers), ``astype``, ``copy`` and ``from_dlpack``, and committing a
result to a requested device (:func:`place`), which every creation function does last.
"""

from __future__ import annotations

import operator

import numpy as np
from lamina import lax
from lamina.interpreters import Tracer, copy_array, device_put_value, dlpack, placement
from lamina.ir import dtypes, out_type_sharding, type_placements, typed_result
from lamina.lax import to_dtype
from lamina.numpy.base.arguments import aval_of, check_arraylike, to_array

__all__ = [
    "array",
    "asarray",
    "astype",
    "copy",
    "from_dlpack",
]

_PY_SCALARS = (bool, int, float, complex)


def place(out, device):
    """``out`` committed to ``device`` (a Device or a Sharding); tracers are left as
    they are."""
    if device is None or isinstance(out, Tracer) or out.dtype == dtypes.float0:
        return out  # float0 values stay on the host, as in JAX

    return copy_array(out, placement(device)[0])


def chosen_sharding(device, out_sharding, api_name: str):
    """The ``out_sharding=`` argument of a creation function as a sharding over the
    abstract mesh (``None`` when not given); JAX's error when ``device`` is given too."""
    if device is not None and out_sharding is not None:
        raise ValueError(
            "Only one of `device` or `out_sharding` can be set. Got "
            f"device={device!r} and out_sharding={out_sharding!r}"
        )
    return out_type_sharding(out_sharding, api_name)


def place_typed(out, sharding):
    """``out`` laid out by ``sharding`` (over the abstract mesh) on the devices of the
    mesh in force; tracers are left as they are."""
    if sharding is None or isinstance(out, Tracer):
        return out
    (concrete,) = type_placements([typed_result(out.aval, sharding)])
    return out if concrete is None else copy_array(out, concrete)


# --------------------------------------------------------------------- array / asarray


def _put(value, dtype=None, weak_type=False):
    """The host value ``value`` (as NumPy makes it of ``dtype``) on the device. An
    allowed explicit 64-bit ``dtype`` (x64 off) is reached through its 32-bit
    counterpart, as JAX does."""
    if dtype is None or dtypes.canonicalize_dtype(dtype) == dtype:
        return device_put_value(np.asarray(value, dtype), weak_type=weak_type)
    narrow = np.asarray(value, dtype).astype(dtypes.canonicalize_dtype(dtype))
    return device_put_value(narrow.astype(dtype), weak_type=weak_type, dtype=dtype)


def _is_traced_or_array(x) -> bool:
    return isinstance(x, Tracer) or hasattr(x, "aval")


def _invalid_dtype_error(x, dt) -> TypeError:
    return TypeError(
        f"Value '{x}' with dtype {dt} is not a valid JAX array type. Only arrays of numeric "
        "types are supported by JAX."
    )


def _host_leaf(x, dtype=None) -> np.ndarray | np.generic:
    """A leaf that is neither array, tracer nor Python scalar, as a NumPy value (of
    ``dtype`` if given: NumPy then also parses strings such as ``"1.5"``)."""
    if x is None:
        raise ValueError("None is not a valid value for jnp.array")
    if dtype is not None and not isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(x, dtype)
    value = x if isinstance(x, (np.ndarray, np.generic)) else np.asarray(x)
    if value.dtype not in dtypes.ALL_DTYPES:
        raise _invalid_dtype_error(x, value.dtype)
    return value


def _flatten(obj, leaves: list) -> None:
    """Append the leaves of nested lists/tuples ``obj`` to ``leaves`` (``__jax_array__``
    objects replaced by their arrays, other host values by NumPy values)."""
    if isinstance(obj, (list, tuple)):
        for item in obj:
            _flatten(item, leaves)
    elif type(obj) in _PY_SCALARS or _is_traced_or_array(obj):
        leaves.append(obj)
    elif hasattr(obj, "__jax_array__"):
        leaves.append(obj.__jax_array__())
    else:
        leaves.append(_host_leaf(obj))


def _leaves_dtype(leaves) -> np.dtype:
    """The common dtype of a list's leaves (one representative per kind of leaf)."""
    representatives: dict = {}
    for leaf in leaves:
        if type(leaf) in _PY_SCALARS:
            representatives.setdefault(type(leaf), leaf)
        else:
            aval = aval_of(leaf) if _is_traced_or_array(leaf) else None
            key = (aval.dtype, aval.weak_type) if aval else (leaf.dtype, False)
            representatives.setdefault(key, aval or leaf.dtype)
    if not representatives:
        return dtypes.default_float_dtype()
    return dtypes.result_type(*representatives.values())


def _replace_leaves(obj, leaves_iter):
    if isinstance(obj, (list, tuple)):
        return [_replace_leaves(item, leaves_iter) for item in obj]
    return next(leaves_iter)


def _stack_nested(obj, dtype):
    """Nested lists holding tracers as one array, built with lax (stack level by level)."""
    if not isinstance(obj, list):
        if _is_traced_or_array(obj):
            return obj if (obj.dtype, obj.weak_type) == (dtype, False) else to_dtype(obj, dtype)
        return _put(obj, dtype)
    parts = [_stack_nested(item, dtype) for item in obj]
    if not parts:
        return lax.full((0,), 0, dtype)
    shapes = {tuple(p.shape) for p in parts}
    if len(shapes) > 1:
        raise TypeError(
            "jnp.array got a ragged nested sequence: its items at one level have "
            f"different shapes {sorted(shapes)}; all must have the same shape."
        )
    return lax.concatenate([lax.expand_dims(p, (0,)) for p in parts], 0)


def _from_sequence(obj, dtype):
    leaves: list = []
    _flatten(obj, leaves)
    if dtype is None:
        dtype = _leaves_dtype(leaves)
        if not leaves:  # e.g. [[], []]: NumPy's shape, the default float dtype
            return device_put_value(np.array(obj, dtype))
    if not any(isinstance(leaf, Tracer) for leaf in leaves):
        # Concrete values: NumPy assembles them on the host (and finds ragged input).
        host = [np.asarray(leaf) if hasattr(leaf, "aval") else leaf for leaf in leaves]
        return _put(np.array(_replace_leaves(obj, iter(host)), dtype), dtype)
    return _stack_nested(_replace_leaves(obj, iter(leaves)), dtype)


def _check_order(order) -> None:
    if order is not None and order != "K":
        raise NotImplementedError("Only implemented for order='K'")


def _python_scalar(x, dtype):
    if dtype is None:
        dtype = dtypes.scalar_type_to_dtype(type(x), x)
        return device_put_value(np.asarray(x, dtype), weak_type=type(x) is not bool)
    return _put(x, dtype)


def _to_array_of(obj, dtype, copy: bool):
    """``obj`` as an array of ``dtype`` (None: inferred, weak types kept)."""
    if hasattr(obj, "__jax_array__") and not _is_traced_or_array(obj):
        obj = obj.__jax_array__()
    if _is_traced_or_array(obj):
        if dtype is not None and (obj.dtype != dtype or obj.weak_type):
            return to_dtype(obj, dtype)
        return lax.copy_p.bind(obj) if copy else obj
    if type(obj) in _PY_SCALARS:
        return _python_scalar(obj, dtype)
    if isinstance(obj, (list, tuple)):
        return _from_sequence(obj, dtype)
    if dtype == dtypes.float0 or getattr(obj, "dtype", None) == dtypes.float0:
        return np.zeros(np.shape(obj), dtypes.float0)  # a host value, as in JAX
    value = _host_leaf(obj, dtype)
    if dtype is None:
        return device_put_value(np.asarray(value, dtypes.canonicalize_dtype(value.dtype)))
    return _put(value, dtype)


def array(
    object,
    dtype=None,
    *args,
    copy=True,
    order="K",
    ndmin=0,
    device=None,
    out_sharding=None,
):
    """A new array from ``object``: a scalar, a NumPy value, an array or tracer, an
    object with ``__jax_array__``, or nested lists/tuples of those (tracers are stacked
    with lax, so ``jit(lambda x: jnp.array([x, 2 * x]))`` works).

    Without ``dtype``, the dtype follows JAX's promotion of the elements; a lone Python
    scalar or weakly typed array stays weakly typed, a list never is.
    """
    if args:
        import warnings

        warnings.warn(
            "Passing the copy, order, and ndmin arguments to jnp.array positionally is "
            "deprecated. Use keyword arguments instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        copy, order, ndmin, *_ = (*args, *(copy, order, ndmin)[len(args) :])
    _check_order(order)
    if dtype is not None:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "array")
    out = _to_array_of(object, dtype, bool(copy))
    ndmin = operator.index(ndmin)
    if out.ndim < ndmin:
        out = lax.reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return place_typed(place(out, device), chosen_sharding(device, out_sharding, "jnp.array"))


def asarray(a, dtype=None, order=None, *, copy=None, device=None, out_sharding=None):
    """``a`` as an array, without copying when it already is one of ``dtype``."""
    _check_order(order)
    if dtype is not None:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "asarray")
    out = _to_array_of(a, dtype, bool(copy))
    sharding = chosen_sharding(device, out_sharding, "jnp.array")
    if not copy and device is None and type(a) is np.ndarray and dtype in (None, a.dtype):
        return out  # as in JAX, a NumPy array taken without a copy skips out_sharding
    return place_typed(place(out, device), sharding)


def astype(x, dtype, /, *, copy=False, device=None):
    """``x`` converted to ``dtype`` (None: the default float dtype)."""
    check_arraylike("astype", x)
    x = to_array(x)
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "astype")
    if dtypes.issubdtype(x.dtype, np.complexfloating) and not dtypes.issubdtype(
        dtype, np.complexfloating
    ):
        import warnings

        warnings.warn(
            "Casting from complex to real dtypes will soon raise a ValueError. Please first "
            "use jnp.real or jnp.imag to take the real/imaginary component of your input.",
            DeprecationWarning,
            stacklevel=2,
        )
        x = lax.real(x)
    if x.dtype == dtype and not x.weak_type:
        out = lax.copy_p.bind(x) if copy else x
    else:
        out = to_dtype(x, dtype)
    return place(out, device)


def copy(a, order=None):
    """A copy of ``a``."""
    check_arraylike("copy", a)
    return array(a, copy=True, order=order)


def from_dlpack(x, /, *, device=None, copy=None):
    """An array sharing (or, with ``copy=True``, copying) the memory of a DLPack object."""
    return dlpack.from_dlpack(x, device=device, copy=copy)
