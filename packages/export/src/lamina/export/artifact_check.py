"""Checking a StableHLO portable artifact before this process parses it.

jaxlib's bytecode reader can corrupt its heap and abort the process on malformed input
(measured with jaxlib 0.10.2: a few bytes changed in an artifact end some runs with
``double free or corruption``). So an artifact that did not come from this process is
first read by a helper process, started once and kept: it answers with the signature of
the module's ``main``, or with the reader's error; if the helper dies on the bytes, they
are refused. Artifacts already read, and those this process wrote, are not sent again.
"""

from __future__ import annotations

import hashlib
import select
import struct
import subprocess
import sys
import threading

__all__ = ["ArtifactSignature", "check_artifact", "trust_artifact"]

# The helper: says "ready", then reads length-prefixed artifacts on stdin and writes one
# line per artifact: "ok <number of inputs> <number of results>" or "error <message>".
_HELPER = r"""
import struct, sys
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo, sdy, chlo
context = ir.Context()
stablehlo.register_dialect(context)
chlo.register_dialect(context)
sdy.register_dialect(context)
out = sys.stdout
out.write("ready\n")
out.flush()
while True:
    head = sys.stdin.buffer.read(4)
    if len(head) < 4:
        break
    data = sys.stdin.buffer.read(struct.unpack("<I", head)[0])
    try:
        module = stablehlo.deserialize_portable_artifact(context, data)
        main = ir.SymbolTable(module.operation)["main"]
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        line = f"ok {len(ftype.inputs)} {len(ftype.results)}"
    except Exception as e:
        line = "error " + " ".join(str(e).split())
    out.write(line + "\n")
    out.flush()
"""


class ArtifactSignature:
    """How many inputs and results the artifact's ``main`` has."""

    def __init__(self, num_inputs: int, num_results: int):
        self.num_inputs, self.num_results = num_inputs, num_results


# Seconds the helper may spend on one artifact (reading a large module takes well
# under a second).
CHECK_TIMEOUT_S = 30.0
_START_TIMEOUT_S = 120.0

_lock = threading.Lock()
_helper: subprocess.Popen | None = None
_checked: dict[bytes, ArtifactSignature] = {}


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def trust_artifact(data: bytes, num_inputs: int, num_results: int) -> None:
    """Record an artifact this process wrote, so that reading it back needs no check."""
    _checked[_digest(data)] = ArtifactSignature(num_inputs, num_results)


def _ask(data: bytes) -> str:
    global _helper
    if _helper is None or _helper.poll() is not None:
        _helper = subprocess.Popen(
            [sys.executable, "-c", _HELPER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        ready, _, _ = select.select([_helper.stdout], [], [], _START_TIMEOUT_S)
        if not ready or _helper.stdout.readline() != b"ready\n":
            _helper.kill()
            _helper.wait()
            _helper = None
            raise RuntimeError("the process that checks StableHLO modules did not start")
    line = ""
    try:
        _helper.stdin.write(struct.pack("<I", len(data)) + data)
        _helper.stdin.flush()
        ready, _, _ = select.select([_helper.stdout], [], [], CHECK_TIMEOUT_S)
        if ready:
            line = _helper.stdout.readline().decode("utf-8", "replace").strip()
    except (BrokenPipeError, OSError):
        pass
    if not line:  # the helper died on these bytes, or did not finish reading them
        _helper.kill()
        _helper.wait()
        _helper = None
        return "error the StableHLO reader crashed or did not finish on it"
    return line


def check_artifact(data: bytes) -> ArtifactSignature:
    """The signature of the artifact's ``main``; ValueError if it cannot be read."""
    key = _digest(data)
    if key in _checked:
        return _checked[key]
    if not data.startswith(b"ML\xefR"):
        raise ValueError("the serialized module is not a StableHLO portable artifact")
    with _lock:
        answer = _ask(data)
    kind, _, rest = answer.partition(" ")
    if kind != "ok":
        raise ValueError(f"cannot read the serialized StableHLO module: {rest}")
    n_in, n_out = (int(x) for x in rest.split())
    signature = _checked[key] = ArtifactSignature(n_in, n_out)
    return signature
