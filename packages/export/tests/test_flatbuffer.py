"""The flatbuffer writer and its checking reader."""

import numpy as np
import pytest

from lamina.export.flatbuffer import Builder, FlatbufferError, Table, root_table


def _example() -> bytes:
    b = Builder(16)  # small, so the buffer grows while building
    s = b.create_string("hi")
    v = b.create_scalar_vector([1, 2, 3], np.uint16)
    b.start_table(3)
    b.add_scalar(0, "b", 5, 0)
    b.add_offset(1, s)
    b.add_scalar(2, "I", 0, 0)  # the default: omitted
    t1 = b.end_table()
    b.start_table(3)
    b.add_scalar(0, "b", 7, 0)
    b.add_offset(1, v)
    t2 = b.end_table()
    vec = b.create_offset_vector([t1, t2])
    b.start_table(2)
    b.add_offset(1, vec)
    b.add_scalar(0, "H", 300, 0)
    return b.finish(b.end_table())


def test_bytes_are_those_of_the_reference_builder():
    # Recorded from the flatbuffers Python package (25.12.19) making the same calls.
    expected = bytes.fromhex(
        "0c00000008000c00060008000800000000002c0104000000020000001c00000004000000f4ffffff"
        "1c0000000000000708000c000b0004000800000014000000000000050300000001000200030000"
        "000200000068690000"
    )
    assert _example() == expected


def test_reading_back():
    root = root_table(_example())
    assert root.scalar(0, "H") == 300
    first, second = root.tables(1)
    assert (first.scalar(0, "b"), first.string(1), first.scalar(2, "I", 9)) == (5, "hi", 9)
    assert (second.scalar(0, "b"), second.scalars(1, np.uint16)) == (7, [1, 2, 3])
    assert not second.has(2) and second.table(2) is None and second.tables(5) == []


def test_identical_layouts_share_a_vtable():
    b = Builder()
    offsets = []
    for value in (1, 2):
        b.start_table(2)
        b.add_scalar(1, "i", value, 0)
        offsets.append(b.end_table())
    data = b.finish(b.create_offset_vector(offsets))
    buf = memoryview(data)
    vector = int.from_bytes(data[:4], "little")
    positions = [vector + 4 + 4 * i + int.from_bytes(data[vector + 4 + 4 * i :][:4], "little")
                 for i in range(2)]  # fmt: skip
    tables = [Table(buf, p) for p in positions]
    assert [t.scalar(1, "i") for t in tables] == [1, 2]
    assert tables[0]._vt == tables[1]._vt


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "at least 8 bytes"),
        (b"\xff\xff\x00\x00" + bytes(8), "outside the buffer"),
        (bytes.fromhex("0400000000010000"), "vtable"),
    ],
)
def test_malformed_buffers_raise_value_errors(data, message):
    with pytest.raises(FlatbufferError, match=message):
        root_table(data)
    assert issubclass(FlatbufferError, ValueError)


def test_every_truncation_and_byte_change_is_caught_or_read_safely():
    data = _example()
    for n in range(len(data)):
        for blob in (data[:n], data[:n] + bytes([data[n] ^ 0xFF]) + data[n + 1 :]):
            try:
                root = root_table(blob)
                for t in root.tables(1):
                    t.string(1) if t.scalar(0, "b") == 5 else t.scalars(1, np.uint16)
            except ValueError:
                pass
