"""Malformed bytes given to ``deserialize`` raise ValueError and never end the process:
thousands of mutated copies of the recorded artifacts, deserialized in a subprocess so
that a crash fails this test instead of ending pytest."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from lamina import export

HERE = Path(__file__).parent


def test_mutated_artifacts_raise_value_errors():
    outside, inside = 2500, 200
    result = subprocess.run(
        [sys.executable, str(HERE / "fuzz_deserialize.py"), "0", str(outside), str(inside)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    outcomes = ast.literal_eval(result.stdout.strip().splitlines()[-1])
    assert set(outcomes) <= {"ValueError", "deserialized"}, result.stdout[-2000:]
    assert sum(outcomes.values()) == outside + inside
    assert outcomes["ValueError"] > (outside + inside) // 2


@pytest.mark.parametrize(
    "blob",
    [b"", b"\x00" * 7, b"\x10\x00\x00\x00" * 4, bytes(range(256)) * 4, b"ML\xefR" * 100],
)
def test_random_bytes(blob):
    with pytest.raises(ValueError):
        export.deserialize(blob)


def test_corrupt_module_bytes_are_refused_before_jaxlib_reads_them():
    blob = bytearray((HERE / "data" / "jax_sin.bin").read_bytes())
    module = export.deserialize(bytes(blob)).mlir_module_serialized
    start = bytes(blob).find(module)
    blob[start + len(module) // 2 : start + len(module) // 2 + 4] = b"\xff\xff\xff\xff"
    with pytest.raises(ValueError, match="serialized StableHLO module"):
        export.deserialize(bytes(blob))


def test_not_bytes():
    with pytest.raises(TypeError, match="deserialize takes bytes"):
        export.deserialize("abc")
