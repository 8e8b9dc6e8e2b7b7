"""The persistent compilation cache: compiled executables kept on disk across processes.

With ``jax_compilation_cache_dir`` set (and ``jax_enable_compilation_cache`` on),
:func:`.backend.compile` looks each module up here before compiling it and stores what
it compiles. An entry's key hashes the module, the compile options, the devices
(platform, kind, ids) and the jaxlib version; its value is jaxlib's serialized
executable with the time its compile took. Entries are written only when that time is
at least ``jax_persistent_cache_min_compile_time_secs`` and their size at least
``jax_persistent_cache_min_entry_size_bytes``; ``jax_compilation_cache_max_size``
(bytes, -1 for no limit) evicts the least recently used.

The directory is read when the cache is first used; :func:`reset_cache` forgets it, so
that the next compile reads the options again. The cache is trusted: loading an entry
may run any code, so never share a cache directory with anyone you do not trust.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pathlib
import re
import struct
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import jaxlib
from jaxlib import xla_client

from lamina.interpreters.core import monitoring
from lamina.interpreters.core.config import config

__all__ = ["cache_key", "compile_or_load", "reset_cache", "set_cache_dir"]

logger = logging.getLogger("lamina.interpreters.compilation_cache")

_lock = threading.Lock()
_checked = False
_path: pathlib.Path | None = None

_HEADER = struct.Struct("<q")  # the compile time in milliseconds, before the executable


def set_cache_dir(path) -> None:
    """Keep compiled executables in ``path`` (sets ``jax_compilation_cache_dir``), so
    that later processes load them instead of compiling again."""
    config.update("jax_compilation_cache_dir", None if path is None else os.fspath(path))


def reset_cache() -> None:
    """Forget the cache directory in use; the next compile reads the options again."""
    global _checked, _path
    with _lock:
        _checked = False
        _path = None


def _cache_path() -> pathlib.Path | None:
    global _checked, _path
    with _lock:
        if not _checked:
            _checked = True
            directory = config.jax_compilation_cache_dir
            if config.jax_enable_compilation_cache and directory:
                _path = pathlib.Path(directory)
                _path.mkdir(parents=True, exist_ok=True)
        return _path


def cache_key(module: str | bytes, devices: Sequence[Any], options) -> str:
    """The hex digest naming ``module`` compiled with ``options`` for ``devices``."""
    h = hashlib.sha256()
    for part in (
        module.encode() if isinstance(module, str) else module,
        options.SerializeAsString(),
        jaxlib.__version__.encode(),
        repr([(d.platform, d.device_kind, d.id) for d in devices]).encode(),
        devices[0].client.platform_version.encode(),
    ):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()


def _read(path: pathlib.Path) -> tuple[bytes, float] | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    os.utime(path)  # recently used
    (millis,) = _HEADER.unpack_from(data)
    return zlib.decompress(data[_HEADER.size :]), millis / 1000


def _write(directory: pathlib.Path, path: pathlib.Path, entry: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(entry)
    os.replace(tmp, path)  # readers see a whole entry or none
    limit = config.jax_compilation_cache_max_size
    if limit >= 0:
        entries = sorted(directory.glob("*-cache"), key=lambda p: p.stat().st_mtime)
        total = sum(p.stat().st_size for p in entries)
        for old in entries:
            if total <= limit:
                break
            total -= old.stat().st_size
            old.unlink(missing_ok=True)


def compile_or_load(
    module: str | bytes,
    devices: Sequence[Any],
    options,
    name: str,
    compile_fn: Callable[[], Any],
):
    """The executable of ``module`` from the cache, else ``compile_fn()`` (stored in
    the cache when it qualifies). Without a cache, just ``compile_fn()``."""
    directory = _cache_path()
    if directory is None:
        return compile_fn()
    key = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}-{cache_key(module, devices, options)}"
    path = directory / f"{key}-cache"
    monitoring.record_event("/jax/compilation_cache/compile_requests_use_cache")
    level = logging.WARNING if config.jax_log_compiles else logging.DEBUG
    start = time.monotonic()
    found = _read(path)
    if found is not None:
        serialized, compile_time = found
        client = devices[0].client
        executable = client.deserialize_executable(
            serialized, xla_client.DeviceList(tuple(devices)), options
        )
        retrieval = time.monotonic() - start
        logger.log(level, "Persistent compilation cache hit for '%s' with key %r", name, key)
        monitoring.record_event("/jax/compilation_cache/cache_hits")
        monitoring.record_event_duration_secs(
            "/jax/compilation_cache/compile_time_saved_sec", compile_time - retrieval
        )
        monitoring.record_event_duration_secs(
            "/jax/compilation_cache/cache_retrieval_time_sec", retrieval
        )
        return executable
    miss_level = logging.WARNING if config.jax_explain_cache_misses else logging.DEBUG
    logger.log(miss_level, "PERSISTENT COMPILATION CACHE MISS for '%s' with key %r", name, key)
    start = time.monotonic()
    executable = compile_fn()
    compile_time = time.monotonic() - start
    if compile_time < config.jax_persistent_cache_min_compile_time_secs:
        logger.log(
            miss_level,
            "Not writing persistent cache entry for '%s' because it took < %.2f seconds"
            " to compile (%.2fs)",
            name,
            config.jax_persistent_cache_min_compile_time_secs,
            compile_time,
        )
        return executable
    entry = _HEADER.pack(int(compile_time * 1000)) + zlib.compress(executable.serialize())
    if len(entry) < config.jax_persistent_cache_min_entry_size_bytes:
        logger.log(
            miss_level,
            "Not writing persistent cache entry with key %r since its size (%d bytes)"
            " is less than threshold (%d bytes)",
            key,
            len(entry),
            config.jax_persistent_cache_min_entry_size_bytes,
        )
        return executable
    logger.log(miss_level, "Writing %s to persistent compilation cache with key %r", name, key)
    monitoring.record_event("/jax/compilation_cache/cache_misses")
    _write(directory, path, entry)
    return executable
