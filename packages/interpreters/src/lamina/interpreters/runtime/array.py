"""``lamina.Array``: arrays whose data lives in device buffers owned by jaxlib.

``Array`` is jaxlib's C++ base class ``Array``. Its metaclass answers
``isinstance(x, Array)`` for two kinds of objects: jaxlib's concrete ``ArrayImpl``
(every array with data) and instances of the one *tracer class* registered with
:func:`register_tracer_class` whose ``_is_traced_array()`` returns true. The tracing
layer registers its tracer class there.

``ArrayImpl`` is made in C++ (result handlers, device puts and dlpack imports all build
it) and refuses Python subclasses, so its Python behaviour is added to the C++ class
(see :mod:`lamina.interpreters.runtime.cpp_classes`). jaxlib's C++ side stores an array's
``aval`` (anything with ``shape``, ``dtype`` and ``weak_type``; lamina passes a
``ShapedArray``), ``_sharding``, ``_committed``, ``_arrays`` (its single-device pieces)
and ``_npy_value`` (a host copy cache), and itself implements ``delete``,
``is_deleted``, ``block_until_ready``, ``is_ready``, ``platform``,
``on_device_size_in_bytes``, ``unsafe_buffer_pointer`` and
``_single_device_array_to_np_array_did_copy`` (a NumPy view of the buffer when the
platform allows, so reading a CPU array copies nothing).

Operators (``__add__``, ``__getitem__``, ``.T``, ...) need the tracing and ``lax``
layers; those layers install them with :func:`set_array_attribute`.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from jaxlib import xla_client

from lamina.interpreters.runtime import dlpack
from lamina.interpreters.runtime.cpp_classes import extends, install
from lamina.interpreters.runtime.execute import unstack
from lamina.interpreters.runtime.jax_in_process import register_tracer_class, without_jax_import
from lamina.interpreters.runtime.sharding import first_device
from lamina.interpreters.runtime.transfer import device_put_value
from lamina.ir import AbstractValue, dtypes

__all__ = [
    "Array",
    "ArrayImpl",
    "Shard",
    "check_bool_conversion",
    "check_integer_conversion",
    "check_scalar_conversion",
    "register_tracer_class",
    "set_array_attribute",
]

_BUFFER_PROTOCOL_KINDS = frozenset("biufc")  # NumPy's own dtypes; not ml_dtypes' (kind V)

Array = xla_client.Array
Array.__doc__ = "The type of lamina arrays: ``isinstance(x, lamina.Array)``."
Array.__module__ = "lamina"


def set_array_attribute(name: str, value: Any) -> None:
    """Install a method or property on concrete arrays (the extension point for the
    operator methods that higher layers define)."""
    install(xla_client.ArrayImpl, name, value)


def _is_lamina_array(x) -> bool:
    """Whether a concrete array is lamina's (not JAX's, where both share a process)."""
    aval = x.aval
    return aval is None or isinstance(aval, AbstractValue)


# --------------------------------------------------------------------- conversion checks
# Shared with tracers, which raise their own errors before reaching these.


def check_scalar_conversion(x) -> None:
    if x.ndim > 0:
        raise TypeError(
            f"Only scalar arrays can be converted to Python scalars; got arr.ndim={x.ndim}"
        )


def check_integer_conversion(x) -> None:
    if not (x.shape == () and dtypes.issubdtype(x.dtype, np.integer)):
        raise TypeError("Only integer scalar arrays can be converted to a scalar index.")


def check_bool_conversion(x) -> None:
    if x.size == 0:
        raise ValueError(
            "The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
            "that an array is not empty."
        )
    if x.size > 1:
        raise ValueError(
            "The truth value of an array with more than one element is ambiguous. "
            "Use a.any() or a.all()"
        )


# --------------------------------------------------------------------- shards


def _index_key(index: tuple) -> tuple:
    return tuple((s.start, s.stop, s.step) if isinstance(s, slice) else s for s in index)


class Shard:
    """One addressable piece of an array: its device, its index into the whole array,
    which replica of that piece it is, and its data (a single-device array)."""

    def __init__(self, device, sharding, global_shape: tuple, data=None):
        self.device = device
        self._sharding = sharding
        self._global_shape = global_shape
        self.data = data

    @property
    def index(self) -> tuple:
        return self._sharding.devices_indices_map(self._global_shape)[self.device]

    @property
    def replica_id(self) -> int:
        seen: dict[tuple, int] = {}
        for device, index in self._sharding.devices_indices_map(self._global_shape).items():
            key = _index_key(index)
            if device == self.device:
                return seen.get(key, 0)
            seen[key] = seen.get(key, 0) + 1
        raise ValueError(f"{self.device} is not a device of {self._sharding}")

    def __repr__(self) -> str:
        return (
            f"Shard(device={self.device!r}, index={self.index}, "
            f"replica_id={self.replica_id}, data={self.data})"
        )


# --------------------------------------------------------------------- ArrayImpl


def _host_copy(x) -> tuple[np.ndarray, bool]:
    """jaxlib's host copy of a single-device array, and whether it copied. (jaxlib
    tries ``import jax`` there; lamina must not load JAX, and the failing import is a
    full ``sys.path`` scan, so it fails at once.)"""
    with without_jax_import():
        return x._single_device_array_to_np_array_did_copy()


def _format_repr(x) -> str:
    prefix = "Array("
    dtype_text = f"dtype={x.dtype.name}" + (", weak_type=True" if x.weak_type else "")
    if not (x.is_fully_addressable or x.is_fully_replicated):
        return f"{prefix}shape={x.shape}, {dtype_text})"
    width = np.get_printoptions()["linewidth"]
    if x.size == 0:
        body = f"[], shape={x.shape}"
    elif not x.sharding.has_addressable_devices:
        body = f"shape={x.shape}"
    else:
        body = np.array2string(
            x._value, prefix=prefix, suffix=",", separator=", ", max_line_width=width
        )
    last_line = len(body) - body.rfind("\n") + 1
    separator = " " * len(prefix) if last_line + len(dtype_text) + 2 > width else " "
    return f"{prefix}{body},{separator}{dtype_text})"


@extends(xla_client.ArrayImpl, is_ours=_is_lamina_array)
class ArrayImpl:
    """A lamina array with data: device buffers and their layout (``sharding``)."""

    __array_priority__ = 100
    __hash__ = None

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: math.prod(self.aval.shape))
    nbytes = property(lambda self: math.prod(self.aval.shape) * self.aval.dtype.itemsize)
    weak_type = property(lambda self: self.aval.weak_type)
    sharding = property(lambda self: self._sharding)
    committed = property(lambda self: self._committed)
    is_fully_addressable = property(lambda self: self._sharding.is_fully_addressable)
    is_fully_replicated = property(lambda self: self._sharding.is_fully_replicated)

    def _check_if_deleted(self) -> None:
        if self.is_deleted():
            raise RuntimeError(f"Array has been deleted with shape={self.aval.str_short()}.")

    @property
    def device(self):
        """The array's device if it has one, else its sharding."""
        self._check_if_deleted()
        devices = self._sharding.device_set
        return first_device(self._sharding) if len(devices) == 1 else self._sharding

    def devices(self) -> set:
        self._check_if_deleted()
        return self._sharding.device_set

    def _with_aval(self, piece):
        """A single-device piece of this array, given the aval that jaxlib leaves off
        (it would import one from ``jax``; JAX's, where JAX is loaded)."""
        if isinstance(piece.aval, AbstractValue):
            return piece
        aval = self.aval.update(shape=self._sharding.shard_shape(self.shape))
        return xla_client.ArrayImpl(
            aval, piece._sharding, [piece], committed=self._committed, _skip_checks=True
        )

    def addressable_data(self, index: int):
        self._check_if_deleted()
        return self._with_aval(self._arrays[index])

    @property
    def addressable_shards(self) -> list[Shard]:
        self._check_if_deleted()
        return [
            Shard(piece._sharding._device, self._sharding, self.shape, self._with_aval(piece))
            for piece in self._arrays
        ]

    def _check_and_rearrange(self, pieces: list, sharding, aval) -> list:
        """Called by jaxlib when an array is built from single-device pieces without
        ``_skip_checks``: check them against ``sharding`` and ``aval``, and return them
        in the order of the sharding's addressable devices."""
        by_device = {piece._sharding._device: piece for piece in pieces}
        expected = list(sharding._addressable_device_assignment)
        if len(pieces) != len(expected):
            raise ValueError(
                f"Expected {len(expected)} per-device arrays (this is how many devices are "
                f"addressable by the sharding), but got {len(pieces)}"
            )
        if len(by_device) != len(pieces) or set(by_device) != set(expected):
            raise ValueError(
                "The per-device arrays must lie one on each addressable device of the "
                f"sharding {sharding}, but they lie on {[p._sharding._device for p in pieces]}"
            )
        shard_shape = sharding.shard_shape(aval.shape)
        for piece in pieces:
            if piece.aval is not None and (piece.shape, piece.dtype) != (shard_shape, aval.dtype):
                raise ValueError(
                    f"A per-device array has shape {piece.shape} and dtype {piece.dtype}; "
                    f"expected shape {shard_shape} and dtype {aval.dtype}."
                )
        return [by_device[d] for d in expected]

    @property
    def global_shards(self) -> list[Shard]:
        if self.is_fully_addressable:
            return self.addressable_shards
        raise NotImplementedError("global_shards of arrays spanning several processes")

    # --- host values

    @property
    def _value(self) -> np.ndarray:
        """The array as a read-only NumPy array (a view of the buffer where possible)."""
        self._check_if_deleted()
        if self._npy_value is not None:
            return self._npy_value
        if self.is_fully_replicated and self._sharding.has_addressable_devices:
            if self.dtype.kind in _BUFFER_PROTOCOL_KINDS:
                try:
                    return np.asarray(memoryview(self))
                except BufferError:  # not a host buffer (a GPU array)
                    pass
            value, did_copy = _host_copy(self)
            value.flags.writeable = False
            if did_copy:
                self._npy_value = value
            return value
        if not self.is_fully_addressable:
            raise RuntimeError(
                "Fetching value for an Array that spans non-addressable (non process "
                "local) devices is not possible. Use `.addressable_shards` to inspect the "
                "addressable (process local) shards."
            )
        indices = self._sharding.addressable_devices_indices_map(self.shape)
        for piece in self._arrays:
            piece._copy_single_device_array_to_host_async()
        value = np.empty(self.shape, self.dtype)
        for piece in self._arrays:
            value[indices[piece._sharding._device]] = _host_copy(piece)[0]
        value.flags.writeable = False
        self._npy_value = value
        return value

    def copy_to_host_async(self) -> None:
        """Start copying the data to host memory, so that a later read is quick."""
        self._check_if_deleted()
        if self._npy_value is None:
            for piece in self._arrays:
                piece._copy_single_device_array_to_host_async()

    def __array__(self, dtype=None, context=None, copy=None):
        kwargs = {} if copy is None else {"copy": copy}
        return np.asarray(self._value, dtype=dtype, **kwargs)

    def item(self, *args):
        return self._value.item(*args)

    def tolist(self):
        return self._value.tolist()

    def tobytes(self, order: str = "C") -> bytes:
        return self._value.tobytes(order)

    # --- printing

    def __repr__(self) -> str:
        return _format_repr(self)

    def __str__(self) -> str:
        if self.is_fully_addressable or (
            self.is_fully_replicated and self._sharding.has_addressable_devices
        ):
            return str(self._value)
        return repr(self)

    def __format__(self, format_spec: str) -> str:
        if self.is_fully_addressable or (
            self.is_fully_replicated and self._sharding.has_addressable_devices
        ):
            return format(self._value if self.ndim else self._value[()], format_spec)
        return repr(self)

    # --- Python protocols

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return iter(unstack(self))

    def __bool__(self) -> bool:
        check_bool_conversion(self)
        return bool(self._value)

    def __float__(self) -> float:
        check_scalar_conversion(self)
        return self._value.__float__()

    def __int__(self) -> int:
        check_scalar_conversion(self)
        return self._value.__int__()

    def __complex__(self) -> complex:
        check_scalar_conversion(self)
        return self._value.__complex__()

    def __index__(self) -> int:
        check_integer_conversion(self)
        return operator.index(self._value)

    def __reduce__(self):
        return _reconstruct_array, (np.asarray(self._value), self.weak_type)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return dlpack.to_dlpack(
            self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy
        )

    def __dlpack_device__(self) -> tuple:
        return dlpack.dlpack_device(self)


def _reconstruct_array(value: np.ndarray, weak_type: bool):
    """Unpickle an array: its value goes to the default device, uncommitted."""
    return device_put_value(value, weak_type=weak_type)
