"""``EArray``: a concrete array of a user-defined extended dtype over its physical data.

An extended dtype written the JAX way carries ``_rules``: ``physical_element_aval``
gives how one element is stored, and ``global_sharded_result_handler(aval, sharding,
committed)`` gives the function that turns a computation's physical result into an
array of that dtype (in lamina it is called with the physical ``Array``; a dtype whose
results are ``EArray`` s returns ``lambda data: EArray(aval, data)``). ``jit`` takes an
``EArray`` as one value of type ``aval`` and runs on its data (:mod:`.extended`).
"""

from __future__ import annotations

import math

from lamina.interpreters.runtime.array import Array

__all__ = ["EArray"]


class EArray(Array):
    """An array of the extended dtype of ``aval`` whose physical data is ``data``."""

    __slots__ = ("_aval", "_data")
    __hash__ = None
    __array_priority__ = 100

    def __init__(self, aval, data):
        self._aval = aval
        self._data = data

    aval = property(lambda self: self._aval)
    _base_array = property(lambda self: self._data)  # what jit and lowering read

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: len(self._aval.shape))
    size = property(lambda self: math.prod(self._aval.shape))
    itemsize = property(lambda self: self._aval.dtype.itemsize)
    weak_type = False

    devices = property(lambda self: self._data.devices)
    is_deleted = property(lambda self: self._data.is_deleted)
    delete = property(lambda self: self._data.delete)
    is_fully_addressable = property(lambda self: self._data.is_fully_addressable)
    is_fully_replicated = property(lambda self: self._data.is_fully_replicated)
    on_device_size_in_bytes = property(lambda self: self._data.on_device_size_in_bytes)
    unsafe_buffer_pointer = property(lambda self: self._data.unsafe_buffer_pointer)
    committed = property(lambda self: self._data.committed)
    _committed = property(lambda self: self._data.committed)
    # Each element's physical data lies on the devices of the whole array's data.
    sharding = property(lambda self: self._data.sharding)

    @property
    def device(self):
        if len(self.sharding.device_set) == 1:
            return self._data.device
        return self.sharding

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        raise NotImplementedError("iterating over an EArray")

    def block_until_ready(self):
        self._data.block_until_ready()
        return self

    def copy_to_host_async(self) -> None:
        self._data.copy_to_host_async()

    def copy(self) -> EArray:
        return EArray(self._aval, self._data.copy())

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError("an EArray has no NumPy value; convert it under jit")

    def __repr__(self) -> str:
        return "E" + repr(self._data)

    def addressable_data(self, index: int):
        raise NotImplementedError("EArray.addressable_data")

    @property
    def addressable_shards(self):
        raise NotImplementedError("EArray.addressable_shards")

    @property
    def global_shards(self):
        raise NotImplementedError("EArray.global_shards")
