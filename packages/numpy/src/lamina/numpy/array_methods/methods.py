"""The methods of ``jax.Array`` that are more than a call of a ``lamina.numpy`` function
with the array as first argument: conversions (``astype``, ``view``, ``byteswap``),
views of the axes (``T``, ``mT``), complex parts, Python protocols (``in``, ``copy``,
``round``, iteration of traced arrays) and the attributes JAX refuses with a message.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np
from lamina import lax
from lamina.interpreters import Array, ConcretizationTypeError, Tracer, device_put
from lamina.ir import dtypes
from lamina.lax import (
    aval_of,
    bitcast_convert_type,
    equal,
    full_like,
    ne,
    reduce_or,
    reshape,
    rev,
    to_dtype,
)
from lamina.numpy.creation import conversion
from lamina.numpy.indexing.subscripting import _IndexUpdateHelper, getitem
from lamina.numpy.ufuncs import floating

__all__: list[str] = []


def _is_complex(dtype) -> bool:
    return dtypes.issubdtype(dtype, np.complexfloating)


# ------------------------------------------------------------------ conversions


def astype(self, dtype, copy=False, device=None):
    """The array converted to ``dtype`` (None: the default floating dtype); never weakly
    typed."""
    if dtype is None:
        dtype = dtypes.default_float_dtype()
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "astype")
    x = self
    if _is_complex(aval_of(x).dtype) and not _is_complex(dtype):
        warnings.warn(
            "Casting from complex to real dtypes will soon raise a ValueError. Please "
            "first use jnp.real or jnp.imag to take the real/imaginary component of your "
            "input.",
            DeprecationWarning,
            stacklevel=2,
        )
        x = lax.real(x)
    out = to_dtype(x, dtype, weak_type=False)
    if device is not None:
        out = device_put(out, device)
    return out


def _bits_of(x):
    """``x`` as an array of unsigned integers of the same width (complex: its real and
    imaginary parts along a new last axis, ``float`` width each)."""
    dtype = aval_of(x).dtype
    if _is_complex(dtype):
        parts = [lax.real(x), lax.imag(x)]
        shape = (*aval_of(x).shape, 1)
        x = lax.concatenate([reshape(p, shape) for p in parts], len(shape) - 1)
        x = reshape(x, (*shape[:-2], shape[-2] * 2) if len(shape) > 1 else (2,))
        dtype = aval_of(x).dtype
    if dtype == np.bool_:
        return to_dtype(x, np.uint8, weak_type=False)
    return bitcast_convert_type(x, np.dtype(f"uint{dtype.itemsize * 8}"))


def _from_bits(bits, dtype):
    """The inverse of :func:`_bits_of` for a target ``dtype``."""
    if dtype == np.bool_:
        return ne(bits, np.zeros((), aval_of(bits).dtype))
    if not _is_complex(dtype):
        return bitcast_convert_type(bits, dtype)
    part_dtype = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
    floats = bitcast_convert_type(bits, part_dtype)
    shape = aval_of(floats).shape
    pairs = reshape(floats, (*shape[:-1], shape[-1] // 2, 2))
    return lax.complex(getitem(pairs, (..., 0)), getitem(pairs, (..., 1)))


def _unsigned(itemsize: int) -> np.dtype:
    return np.dtype(f"uint{itemsize * 8}")


def view(self, dtype=None, type=None):
    """The array's bytes read as ``dtype``; a dtype of another size changes the length
    of the last axis, as NumPy's ``view`` does."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "view")
    aval = aval_of(self)
    if aval.dtype == dtype:
        return self
    bits = _bits_of(self)
    unit = dtype.itemsize // (2 if _is_complex(dtype) else 1)
    shape = aval_of(bits).shape
    width = aval_of(bits).dtype.itemsize
    if width != unit and not shape:
        raise ValueError(
            "Changing the dtype of a 0d array is only supported if the itemsize is unchanged"
        )
    if width > unit:  # each element splits into several
        bits = bitcast_convert_type(bits, _unsigned(unit))
        bits = reshape(bits, (*shape[:-1], shape[-1] * (width // unit)))
    elif width < unit:  # several elements join into one
        ratio = unit // width
        if shape[-1] % ratio:
            raise ValueError(
                "When changing to a larger dtype, its size must be a divisor of the total "
                "size in bytes of the last axis of the array."
            )
        bits = reshape(bits, (*shape[:-1], shape[-1] // ratio, ratio))
        bits = bitcast_convert_type(bits, _unsigned(unit))
    if _is_complex(dtype) and aval_of(bits).shape[-1] % 2:
        raise ValueError(
            "When changing to a larger dtype, its size must be a divisor of the total size "
            "in bytes of the last axis of the array."
        )
    return _from_bits(bits, dtype)


def byteswap(self):
    """The array with the bytes of each element in reverse order."""
    dtype = aval_of(self).dtype
    if dtype.itemsize == 1:
        return self
    if _is_complex(dtype):  # each part swapped on its own, as NumPy does
        return lax.complex(byteswap(lax.real(self)), byteswap(lax.imag(self)))
    as_bytes = bitcast_convert_type(self, np.uint8)
    swapped = rev(as_bytes, (aval_of(as_bytes).ndim - 1,))
    return bitcast_convert_type(swapped, dtype)


# ------------------------------------------------------------------ axes and parts


def transpose_property(self):
    ndim = aval_of(self).ndim
    return self if ndim < 2 else lax.transpose(self, tuple(reversed(range(ndim))))


def matrix_transpose_property(self):
    ndim = aval_of(self).ndim
    if ndim < 2:
        raise ValueError(
            f"x must be at least two-dimensional for matrix_transpose; got ndim={ndim}"
        )
    perm = (*range(ndim - 2), ndim - 1, ndim - 2)
    return lax.transpose(self, perm)


def real_property(self):
    return lax.real(self) if _is_complex(aval_of(self).dtype) else self


def imag_property(self):
    if _is_complex(aval_of(self).dtype):
        return lax.imag(self)
    return full_like(self, 0)


def conjugate(self):
    return lax.conj(self) if _is_complex(aval_of(self).dtype) else self


def conj(self):
    return conjugate(self)


def at_property(self):
    return _IndexUpdateHelper(self)


def flat_property(self):
    raise NotImplementedError(
        "JAX Arrays do not implement the arr.flat property: consider arr.flatten() instead."
    )


def device_buffer_property(self):
    raise AttributeError("arr.device_buffer has been deprecated. Use arr.addressable_data(0)")


def device_buffers_property(self):
    raise AttributeError(
        "arr.device_buffers has been deprecated. Use [x.data for x in arr.addressable_shards]"
    )


# ------------------------------------------------------------------ Python protocols


def contains(self, other):
    """``other in x`` for a one-dimensional ``x``: whether some element equals ``other``."""
    shape = aval_of(self).shape
    if len(shape) != 1:
        raise ValueError(
            f"Array.__contains__: search array must be one-dimensional, got arr.shape={shape}."
        )
    other_shape = np.shape(other) if not hasattr(other, "aval") else aval_of(other).shape
    if other_shape:
        raise ValueError(
            f"Array.__contains__: query value must be a scalar, got query.shape={other_shape}."
        )
    return reduce_or(equal(self, other), (0,))


def copy(self):
    """A copy of the array (a new buffer for concrete arrays)."""
    return conversion.array(self, copy=True)


def copy_protocol(self):
    return copy(self)


def deepcopy_protocol(self, memo):
    return copy(self)


def setitem(self, i, x):
    raise TypeError(
        "JAX arrays are immutable and do not support in-place item assignment. Instead "
        "of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
        "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"
    )


def round_protocol(number, ndigits=None):
    """``round(x)`` (an integer array) and ``round(x, n)``."""
    if ndigits is None:
        rounded = floating.round(number)
        return astype(rounded, dtypes.default_int_dtype())
    return floating.round(number, ndigits)


def hex_protocol(self):
    return hex(operator.index(self))


def oct_protocol(self):
    return oct(operator.index(self))


def namespace_methods(namespace) -> dict:
    """``__array_namespace__`` and ``__array_module__``, which answer ``namespace`` (the
    lamina.numpy package, which installs them)."""

    def array_namespace(self, *, api_version=None):
        return namespace

    def array_module(self, types):
        if all(issubclass(t, Array) for t in types):
            return namespace
        return NotImplemented

    return {"__array_namespace__": array_namespace, "__array_module__": array_module}


def traced_item(self, *args):
    """``x.item()`` of a traced array: its value, where the trace knows it."""
    value = self.to_concrete_value() if isinstance(self, Tracer) else None
    if value is None:
        raise ConcretizationTypeError(self, "This occurred in the item() method of jax.Array")
    return np.asarray(value).item(*args)


def traced_tolist(self):
    """``x.tolist()`` of a traced array: its value as nested lists, where known."""
    return np.asarray(self).tolist()  # a TracerArrayConversionError where not known


def traced_tobytes(self, order="C"):
    return np.asarray(self).tobytes(order)


def unstack(self):
    """The slices ``x[0], x[1], ...`` of a traced array (iteration)."""
    return [getitem(self, i) for i in range(aval_of(self).shape[0])]
