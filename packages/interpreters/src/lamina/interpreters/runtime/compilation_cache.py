"""The persistent compilation cache: compiled executables kept on disk across processes.

On by default: :func:`.backend.compile` looks each module up in
``jax_compilation_cache_dir`` (by default ``lamina/compilation_cache`` in the user's cache
directory, ``$XDG_CACHE_HOME`` or ``~/.cache``) before compiling it, and stores what it
compiles. ``jax_enable_compilation_cache=False`` or an empty/None directory turns it off
(``JAX_ENABLE_COMPILATION_CACHE=0`` or ``JAX_COMPILATION_CACHE_DIR=`` in the environment).

An entry's key hashes the module, the compile options, the devices (platform, kind, ids,
count), the platform version, the host CPU, ``XLA_FLAGS`` and the jaxlib version. Its file
holds a header (format, key, compile time, payload size and SHA-256) and jaxlib's
serialized executable, compressed; an entry that fails any check is removed and the
program compiled again, so jaxlib never sees damaged bytes. Writes go to a temporary file
renamed into place, so concurrent processes see a whole entry or none.

Entries are written when their compile took at least
``jax_persistent_cache_min_compile_time_secs`` and they are at least
``jax_persistent_cache_min_entry_size_bytes`` long (both 0 by default: every program is
kept); ``jax_compilation_cache_max_size`` (bytes, -1 for no limit) evicts the least
recently used. Problems reading or writing the cache are warnings, or errors with
``jax_raise_persistent_cache_errors``.

The cache is trusted: loading an entry may run any code, so never share a cache
directory with anyone you do not trust.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import pathlib
import platform
import re
import struct
import tempfile
import threading
import time
import warnings
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import jaxlib
from jaxlib import xla_client

from lamina.interpreters.core import monitoring
from lamina.interpreters.core.config import config
from lamina.interpreters.core.config import default_compilation_cache_dir as default_cache_dir

__all__ = ["cache_key", "compile_or_load", "default_cache_dir", "reset_cache", "set_cache_dir"]

logger = logging.getLogger("lamina.interpreters.compilation_cache")

_lock = threading.Lock()
_settings: tuple[bool, str | None] | None = None  # the options _path was made from
_path: pathlib.Path | None = None

_MAGIC = b"LAMINAXC"
_FORMAT = 1
# magic, format, key digest, compile time (ms), payload size, payload SHA-256
_HEADER = struct.Struct("<8sI32sqQ32s")


def set_cache_dir(path) -> None:
    """Keep compiled executables in ``path`` (sets ``jax_compilation_cache_dir``); None
    turns the cache off."""
    config.update("jax_compilation_cache_dir", None if path is None else os.fspath(path))


def reset_cache() -> None:
    """Forget the cache directory in use; the next compile reads the options again."""
    global _settings, _path
    with _lock:
        _settings = None
        _path = None


def _problem(what: str, error: Exception) -> None:
    if config.jax_raise_persistent_cache_errors:
        raise error
    warnings.warn(f"{what}: {type(error).__name__}: {error}", stacklevel=3)


def _cache_path() -> pathlib.Path | None:
    global _settings, _path
    settings = (config.jax_enable_compilation_cache, config.jax_compilation_cache_dir)
    with _lock:
        if settings != _settings:
            _settings = settings
            _path = None
            enabled, directory = settings
            if enabled and directory:
                try:
                    os.makedirs(directory, exist_ok=True)
                    _path = pathlib.Path(directory)
                except OSError as e:
                    _problem(f"Persistent compilation cache directory {directory!r} not usable", e)
        return _path


_host_cpu: bytes | None = None


def _host_fingerprint() -> bytes:
    """The host CPU's architecture and features: a CPU executable uses them."""
    global _host_cpu
    if _host_cpu is None:
        flags = ""
        try:
            with open("/proc/cpuinfo") as f:
                flags = next((line for line in f if line.startswith(("flags", "Features"))), "")
        except OSError:
            pass
        # (not platform.processor(): on Linux it runs `uname -p` in a subprocess)
        _host_cpu = f"{platform.machine()} {flags}".encode()
    return _host_cpu


def _module_bytes(module: Any) -> bytes:
    """MLIR text as bytes, bytecode as it is, a ``jaxlib.mlir`` module as its bytecode."""
    if isinstance(module, str):
        return module.encode()
    if isinstance(module, bytes):
        return module
    with module.context:
        buf = io.BytesIO()
        module.operation.write_bytecode(buf)
        return buf.getvalue()


def cache_key(module: Any, devices: Sequence[Any], options) -> str:
    """The hex digest naming ``module`` (MLIR text, bytecode or a ``jaxlib.mlir``
    module) compiled with ``options`` for ``devices``."""
    h = hashlib.sha256()
    for part in (
        str(_FORMAT).encode(),
        _module_bytes(module),
        options.SerializeAsString(),
        jaxlib.__version__.encode(),
        repr([(d.platform, d.device_kind, d.id) for d in devices]).encode(),
        str(len(devices)).encode(),
        devices[0].client.platform_version.encode(),
        os.environ.get("XLA_FLAGS", "").encode(),
        _host_fingerprint() if devices[0].platform == "cpu" else b"",
    ):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()


def encode_entry(key: str, serialized: bytes, compile_time: float) -> bytes:
    """The bytes of a cache file: the header, then the compressed executable."""
    payload = zlib.compress(serialized, 1)
    header = _HEADER.pack(
        _MAGIC,
        _FORMAT,
        bytes.fromhex(key),
        int(compile_time * 1000),
        len(payload),
        hashlib.sha256(payload).digest(),
    )
    return header + payload


def decode_entry(key: str, data: bytes) -> tuple[bytes, float]:
    """The serialized executable and compile time in a cache file's ``data``; ValueError
    when the file is not a whole, intact entry for ``key``."""
    if len(data) < _HEADER.size:
        raise ValueError(f"truncated entry ({len(data)} bytes)")
    magic, version, digest, millis, size, checksum = _HEADER.unpack_from(data)
    if magic != _MAGIC or version != _FORMAT:
        raise ValueError("not an entry of this cache format")
    if digest != bytes.fromhex(key):
        raise ValueError("entry of another key")
    payload = data[_HEADER.size :]
    if len(payload) != size:
        raise ValueError(f"truncated entry ({len(payload)} of {size} payload bytes)")
    if hashlib.sha256(payload).digest() != checksum:
        raise ValueError("checksum mismatch")
    return zlib.decompress(payload), millis / 1000


def _read(path: pathlib.Path, key: str) -> tuple[bytes, float] | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        found = decode_entry(key, data)
    except (ValueError, zlib.error) as e:
        logger.warning("Removing damaged persistent compilation cache entry %s: %s", path, e)
        path.unlink(missing_ok=True)
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used
    return found


def _write(directory: pathlib.Path, path: pathlib.Path, entry: bytes) -> None:
    directory.mkdir(parents=True, exist_ok=True)  # removed since it was first made?
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(entry)
        os.replace(tmp, path)  # readers see a whole entry or none
    except BaseException:
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise
    limit = config.jax_compilation_cache_max_size
    if limit >= 0:
        _evict(directory, limit)


def _evict(directory: pathlib.Path, limit: int) -> None:
    entries = []
    for p in directory.glob("*-cache"):
        with contextlib.suppress(FileNotFoundError):  # removed by another process
            entries.append((p.stat(), p))
    entries.sort(key=lambda e: e[0].st_mtime)
    total = sum(s.st_size for s, _ in entries)
    for stat, old in entries:
        if total <= limit:
            break
        total -= stat.st_size
        old.unlink(missing_ok=True)


def compile_or_load(
    module: Any,
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
    key = cache_key(module, devices, options)
    path = directory / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)[:64]}-{key}-cache"
    monitoring.record_event("/jax/compilation_cache/compile_requests_use_cache")
    level = logging.WARNING if config.jax_log_compiles else logging.DEBUG
    start = time.monotonic()
    found = None
    try:
        found = _read(path, key)
    except OSError as e:
        _problem(f"Error reading persistent compilation cache entry for '{name}'", e)
    if found is not None:
        serialized, compile_time = found
        try:
            executable = devices[0].client.deserialize_executable(
                serialized, xla_client.DeviceList(tuple(devices)), options
            )
        except Exception as e:  # an entry jaxlib cannot load: compile instead
            _problem(f"Error loading persistent compilation cache entry for '{name}'", e)
        else:
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
    try:
        entry = encode_entry(key, executable.serialize(), compile_time)
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
    except Exception as e:
        _problem(f"Error writing persistent compilation cache entry for '{name}'", e)
    return executable
