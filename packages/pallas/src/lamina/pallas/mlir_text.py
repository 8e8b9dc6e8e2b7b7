"""``lower_as_mlir``: the StableHLO text of a function (with its kernels)."""

from __future__ import annotations

from lamina.interpreters import jit

__all__ = ["lower_as_mlir"]


def lower_as_mlir(f, *args, dynamic_shapes=False, device=None, static_argnames=(),
                  platforms=None, **kwargs) -> str:  # fmt: skip
    """The StableHLO text of ``f`` lowered for ``args``."""
    lowered = jit(f, static_argnames=static_argnames).lower(*args, **kwargs)
    return lowered.as_text()
