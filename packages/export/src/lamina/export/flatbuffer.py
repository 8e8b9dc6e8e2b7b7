"""A small FlatBuffers writer and a checking reader (the binary format of
https://flatbuffers.dev/internals/), enough for the schema of serialized exports.

``Builder`` writes buffers back to front, aligning and sharing vtables the way the
reference Python builder does, so the same sequence of calls gives the same bytes.
``Table`` reads a buffer and checks every offset, size and length against the buffer
before using it: malformed input raises ``FlatbufferError`` (a ``ValueError``).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

__all__ = ["Builder", "FlatbufferError", "Table", "root_table"]

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U16 = struct.Struct("<H")


class FlatbufferError(ValueError):
    """The bytes are not a well-formed flatbuffer of the expected shape."""


class Builder:
    """Builds a flatbuffer from its leaves up; each ``create_*`` / ``end_table``
    returns the offset (from the buffer's end) that parents refer to."""

    def __init__(self, size: int = 1024):
        self._buf = bytearray(size)
        self._head = size
        self._minalign = 1
        self._vtable: list[int] | None = None
        self._object_end = 0
        self._vtables: dict[tuple, int] = {}

    def offset(self) -> int:
        return len(self._buf) - self._head

    def _prep(self, size: int, additional: int) -> None:
        """Pad so that an item of ``size`` bytes lands aligned after ``additional``."""
        self._minalign = max(self._minalign, size)
        pad = (-(self.offset() + additional)) % size
        needed = pad + size + additional
        while self._head < needed:
            old = len(self._buf)
            self._buf = bytearray(old) + self._buf  # double, keeping data at the end
            self._head += old
        self._head -= pad
        self._buf[self._head : self._head + pad] = bytes(pad)

    def _place(self, fmt: struct.Struct, value) -> None:
        self._head -= fmt.size
        fmt.pack_into(self._buf, self._head, value)

    def _place_bytes(self, data: bytes) -> None:
        self._head -= len(data)
        self._buf[self._head : self._head + len(data)] = data

    def _prepend(self, fmt: struct.Struct, value) -> None:
        self._prep(fmt.size, 0)
        self._place(fmt, value)

    def _prepend_uoffset(self, off: int) -> None:
        self._prep(4, 0)
        if off > self.offset():
            raise ValueError("flatbuffer offset refers forward")
        self._place(_U32, self.offset() - off + 4)

    # ------------------------------------------------------------------ leaves

    def create_string(self, s: str | bytes) -> int:
        data = s.encode("utf-8") if isinstance(s, str) else bytes(s)
        self._prep(4, len(data) + 1)
        self._place_bytes(data + b"\0")
        self._place(_U32, len(data))
        return self.offset()

    def create_byte_vector(self, data: bytes) -> int:
        data = bytes(data)
        self._prep(4, len(data))
        self._place_bytes(data)
        self._place(_U32, len(data))
        return self.offset()

    def create_scalar_vector(self, values: Sequence[int], dtype) -> int:
        """A vector of numbers, as NumPy writes ``np.array(values, dtype)``."""
        arr = np.asarray(values, dtype=np.dtype(dtype).newbyteorder("<"))
        n, size = arr.size, arr.dtype.itemsize
        self._prep(4, size * n)
        self._prep(size, size * n)
        self._place_bytes(arr.tobytes())
        self._place(_U32, n)
        return self.offset()

    def create_offset_vector(self, offsets: Sequence[int]) -> int:
        """A vector of offsets to tables or strings made before."""
        self._prep(4, 4 * len(offsets))
        for off in reversed(offsets):
            self._prepend_uoffset(off)
        self._place(_U32, len(offsets))
        return self.offset()

    # ------------------------------------------------------------------ tables

    def start_table(self, num_fields: int) -> None:
        self._vtable = [0] * num_fields
        self._object_end = self.offset()

    def add_scalar(self, slot: int, fmt: str, value, default) -> None:
        """A scalar field (``fmt`` a ``struct`` code); omitted when it is the default."""
        if value == default:
            return
        self._prepend(struct.Struct("<" + fmt), value)
        self._vtable[slot] = self.offset()

    def add_offset(self, slot: int, off: int) -> None:
        """A field referring to a table, string or vector; omitted when ``off`` is 0."""
        if not off:
            return
        self._prepend_uoffset(off)
        self._vtable[slot] = self.offset()

    def end_table(self) -> int:
        self._prepend(_I32, 0)  # the offset to the vtable, filled in below
        obj = self.offset()
        fields = [obj - f if f else 0 for f in self._vtable]
        while fields and not fields[-1]:
            fields.pop()
        size = obj - self._object_end
        key = (tuple(fields), size)
        vt = self._vtables.get(key)
        if vt is None:
            for f in reversed(fields):
                self._prepend(_U16, f)
            self._prepend(_U16, size)
            self._prepend(_U16, 2 * (len(fields) + 2))
            vt = self._vtables[key] = self.offset()
            _I32.pack_into(self._buf, len(self._buf) - obj, self.offset() - obj)
        else:
            self._head = len(self._buf) - obj
            _I32.pack_into(self._buf, self._head, vt - obj)
        self._vtable = None
        return obj

    def finish(self, root: int) -> bytes:
        self._prep(self._minalign, 4)
        self._prepend_uoffset(root)
        return bytes(self._buf[self._head :])


class Table:
    """A table of a flatbuffer at ``pos``, its vtable checked on construction."""

    __slots__ = ("_buf", "_pos", "_size", "_vt", "_vt_size")

    def __init__(self, buf: memoryview, pos: int):
        self._buf, self._pos = buf, pos
        n = len(buf)
        if not 0 <= pos <= n - 4:
            raise FlatbufferError(f"table at {pos} lies outside the buffer")
        vt = pos - _I32.unpack_from(buf, pos)[0]
        if not 0 <= vt <= n - 4:
            raise FlatbufferError(f"vtable of the table at {pos} lies outside the buffer")
        vt_size, size = _U16.unpack_from(buf, vt)[0], _U16.unpack_from(buf, vt + 2)[0]
        if vt_size < 4 or vt_size % 2 or vt + vt_size > n:
            raise FlatbufferError(f"bad vtable size {vt_size} at {vt}")
        if size < 4 or pos + size > n:
            raise FlatbufferError(f"bad table size {size} at {pos}")
        self._vt, self._vt_size, self._size = vt, vt_size, size

    def _field(self, slot: int, width: int) -> int | None:
        """The position of field ``slot`` (``width`` bytes), None when absent."""
        at = 4 + 2 * slot
        if at >= self._vt_size:
            return None
        off = _U16.unpack_from(self._buf, self._vt + at)[0]
        if off == 0:
            return None
        if off < 4 or off + width > self._size:
            raise FlatbufferError(f"field {slot} of the table at {self._pos} is out of bounds")
        return self._pos + off

    def scalar(self, slot: int, fmt: str, default=0):
        s = struct.Struct("<" + fmt)
        at = self._field(slot, s.size)
        return default if at is None else s.unpack_from(self._buf, at)[0]

    def _target(self, slot: int) -> int | None:
        at = self._field(slot, 4)
        if at is None:
            return None
        target = at + _U32.unpack_from(self._buf, at)[0]
        if target > len(self._buf) - 4:
            raise FlatbufferError(f"field {slot} of the table at {self._pos} points outside")
        return target

    def _vector(self, slot: int, elem_size: int) -> tuple[int, int] | None:
        """(start of the elements, count) of a vector field."""
        at = self._target(slot)
        if at is None:
            return None
        n = _U32.unpack_from(self._buf, at)[0]
        if n * elem_size > len(self._buf) - at - 4:
            raise FlatbufferError(f"vector at {at} of {n} elements overruns the buffer")
        return at + 4, n

    def has(self, slot: int) -> bool:
        return self._field(slot, 1) is not None

    def table(self, slot: int) -> Table | None:
        at = self._target(slot)
        return None if at is None else Table(self._buf, at)

    def bytes(self, slot: int) -> bytes | None:
        vec = self._vector(slot, 1)
        return None if vec is None else bytes(self._buf[vec[0] : vec[0] + vec[1]])

    def string(self, slot: int) -> str | None:
        data = self.bytes(slot)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise FlatbufferError(f"field {slot} is not UTF-8: {e}") from None

    def scalars(self, slot: int, dtype) -> list[int]:
        dt = np.dtype(dtype).newbyteorder("<")
        vec = self._vector(slot, dt.itemsize)
        if vec is None:
            return []
        start, n = vec
        return np.frombuffer(self._buf[start : start + n * dt.itemsize], dt).tolist()

    def _offsets(self, slot: int) -> list[int]:
        vec = self._vector(slot, 4)
        if vec is None:
            return []
        start, n = vec
        out = []
        for i in range(n):
            at = start + 4 * i
            target = at + _U32.unpack_from(self._buf, at)[0]
            if target > len(self._buf) - 4:
                raise FlatbufferError(f"vector element at {at} points outside the buffer")
            out.append(target)
        return out

    def tables(self, slot: int) -> list[Table]:
        return [Table(self._buf, at) for at in self._offsets(slot)]

    def strings(self, slot: int) -> list[str]:
        out = []
        for at in self._offsets(slot):
            n = _U32.unpack_from(self._buf, at)[0]
            if n > len(self._buf) - at - 4:
                raise FlatbufferError(f"string at {at} overruns the buffer")
            try:
                out.append(bytes(self._buf[at + 4 : at + 4 + n]).decode("utf-8"))
            except UnicodeDecodeError as e:
                raise FlatbufferError(f"string at {at} is not UTF-8: {e}") from None
        return out


def root_table(data: bytes) -> Table:
    """The root table of the flatbuffer ``data``."""
    buf = memoryview(bytes(data))
    if len(buf) < 8:
        raise FlatbufferError(f"a flatbuffer has at least 8 bytes, got {len(buf)}")
    return Table(buf, _U32.unpack_from(buf, 0)[0])
