"""`lamina.extend.backend`: lamina's jaxlib clients for libraries (`jax.extend.backend`).

``backends()`` / ``get_backend()`` are the clients every lamina array lives on;
``register_backend_factory`` adds a platform before they start; ``clear_backends``
drops them (and everything compiled for them) so that they start afresh.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from jaxlib import xla_client

from lamina.interpreters import backend as _backend
from lamina.interpreters import backends, clear_caches, get_backend

__all__ = [
    "backend_xla_version",
    "backends",
    "clear_backends",
    "clear_in_memory_compilation_cache",
    "get_backend",
    "get_compile_options",
    "get_default_device",
    "ifrt_proxy",  # noqa: F822 (loaded by __getattr__)
    "register_backend_cache",
    "register_backend_factory",
]

register_backend_factory = _backend.register_backend_factory

_registered_caches: list[Any] = []


def register_backend_cache(cache: Any, for_what: str) -> None:
    """Have :func:`clear_backends` clear ``cache`` (anything with ``cache_clear``)."""
    del for_what
    _registered_caches.append(cache)


def clear_in_memory_compilation_cache() -> None:
    """Forget every compiled executable (and trace), so that calls compile again."""
    clear_caches()


def clear_backends() -> None:
    """Drop the clients and all that was compiled for them; they start again on next use."""
    clear_caches()
    _backend.clear_backends()
    for cache in _registered_caches:
        cache.cache_clear()


def backend_xla_version(platform=None) -> int | None:
    """The XLA version a plugin backend reports, or None (the built-in CPU client)."""
    return getattr(get_backend(platform), "xla_version", None)


def get_default_device():
    """The device that uncommitted values go to."""
    return _backend.default_device()


def get_compile_options(
    num_replicas: int,
    num_partitions: int,
    device_assignment=None,
    env_options_overrides: dict[str, str] | None = None,
    fdo_profile: bytes | None = None,
    detailed_logging: bool = True,
    backend=None,
) -> xla_client.CompileOptions:
    """XLA compile options for ``num_replicas`` x ``num_partitions`` devices, with
    ``device_assignment`` (device ids or devices, shaped ``(replicas, partitions)``)."""
    del fdo_profile, backend
    options = xla_client.CompileOptions()
    options.num_replicas = num_replicas
    options.num_partitions = num_partitions
    build = options.executable_build_options
    build.use_spmd_partitioning = True
    build.num_replicas = num_replicas
    build.num_partitions = num_partitions
    if device_assignment is not None:
        ids = np.vectorize(lambda d: getattr(d, "id", d), otypes=[np.int64])(
            np.asarray(device_assignment, dtype=object)
        )
        if ids.shape != (num_replicas, num_partitions):
            raise ValueError(
                f"device_assignment does not match num_replicas * num_partitions: "
                f"shape {ids.shape}, expected {(num_replicas, num_partitions)}"
            )
        options.device_assignment = xla_client.DeviceAssignment.create(ids)
    if env_options_overrides:
        options.env_option_overrides = list(env_options_overrides.items())
    if not detailed_logging:
        build.debug_options.xla_detailed_logging = False
    return options


def __getattr__(name: str):
    if name == "ifrt_proxy":  # jaxlib's IFRT proxy client module, loaded on first use
        return importlib.import_module("jaxlib._ifrt_proxy")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
