"""Device memory profiles (pprof protocol buffers listing the live buffers' bytes) and
the profiler server's one-at-a-time rule."""

import gzip
import socket

import numpy as np
import pytest

import lamina.profiler as profiler
from lamina.interpreters import device_put


def _fields(buf: bytes):
    """(field number, wire type, value) of each field of a protobuf message."""
    i = 0

    def varint():
        nonlocal i
        shift = result = 0
        while True:
            b = buf[i]
            i += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return result

    while i < len(buf):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            yield number, wire, varint()
        elif wire == 2:
            n = varint()
            yield number, wire, buf[i : i + n]
            i += n
        elif wire == 1:
            yield number, wire, buf[i : i + 8]
            i += 8
        elif wire == 5:
            yield number, wire, buf[i : i + 4]
            i += 4
        else:
            raise ValueError(f"wire type {wire}")


def _ints(field) -> list[int]:
    """The integers of a repeated int64 field, packed or not."""
    _, wire, value = field
    return [value] if wire == 0 else _packed(value)


def _packed(data: bytes) -> list[int]:
    out, shift, cur = [], 0, 0
    for b in data:
        cur |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            out.append(cur)
            shift = cur = 0
    return out


def _samples(profile: bytes) -> tuple[list[str], list[dict[str, int]]]:
    """The sample types and each sample's values by type, of a pprof Profile."""
    fields = list(_fields(profile))
    strings = [v.decode() for n, _, v in fields if n == 6]
    types = []
    for n, _, v in fields:
        if n == 1:
            kv = {k: val for k, _, val in _fields(v)}
            types.append(f"{strings[kv.get(1, 0)]}/{strings[kv.get(2, 0)]}")
    samples = []
    for n, _, v in fields:
        if n == 2:
            values = [x for f in _fields(v) if f[0] == 2 for x in _ints(f)]
            samples.append(dict(zip(types, values, strict=True)))
    return types, samples


def test_memory_profile_lists_live_arrays_bytes(tmp_path):
    x = device_put(np.zeros(12345, np.float32))  # 49380 bytes
    raw = profiler.device_memory_profile()
    assert raw[:2] == b"\x1f\x8b"  # gzipped, as pprof reads it
    types, samples = _samples(gzip.decompress(raw))
    (space,) = [t for t in types if t.endswith("/bytes")]
    assert 49380 in [s[space] for s in samples]
    path = tmp_path / "memory.prof"
    profiler.save_device_memory_profile(path)
    _, saved = _samples(gzip.decompress(path.read_bytes()))
    assert 49380 in [s[space] for s in saved]
    del x


def test_memory_profile_of_an_unknown_backend():
    with pytest.raises(RuntimeError, match="Unknown backend"):
        profiler.device_memory_profile("nope")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_one_profiler_server_at_a_time():
    # JAX 0.10.2's errors, recorded.
    with pytest.raises(ValueError, match=r"^No active profiler server\.$"):
        profiler.stop_server()
    server = profiler.start_server(_free_port())
    try:
        assert server is not None
        with pytest.raises(ValueError, match=r"^Only one profiler server can be active"):
            profiler.start_server(_free_port())
    finally:
        profiler.stop_server()
