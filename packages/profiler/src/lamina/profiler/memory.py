"""Device memory profiles: what the live arrays and executables of a backend hold, as
a gzipped ``pprof`` protocol buffer (``pprof --text file`` reads it)."""

from __future__ import annotations

import gzip

from lamina.interpreters import get_backend

__all__ = ["device_memory_profile", "save_device_memory_profile"]


def device_memory_profile(backend: str | None = None) -> bytes:
    """The memory profile of ``backend`` (the default one if None), in ``pprof``
    format: one sample per live buffer and executable, with its bytes."""
    return gzip.compress(get_backend(backend).heap_profile())


def save_device_memory_profile(filename, backend: str | None = None) -> None:
    """Write :func:`device_memory_profile` of ``backend`` to ``filename``."""
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)
