"""The jaxlib clients ("backends") and their devices, created on first use.

A backend is a jaxlib ``Client`` for one platform: ``"cpu"`` always, ``"cuda"`` when a
``jax-cuda12-pjrt`` / ``jax-cuda13-pjrt`` plugin of jaxlib's own version is installed.
Clients are process-wide and made once, the first time anything asks for a device;
options that shape them (``jax_num_cpu_devices``, ``jax_platforms``) must be set
before that. ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` is read by jaxlib
itself when ``jax_num_cpu_devices`` is left unset.

``compile`` turns a StableHLO module into a loaded executable on given devices.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import pathlib
import threading
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import xla_client

from lamina.interpreters.core.config import config, detailed_logging_min_ops
from lamina.interpreters.core.monitoring import BACKEND_COMPILE_EVENT, compile_step
from lamina.interpreters.runtime.compilation_cache import compile_or_load

__all__ = [
    "backend_compile_and_load",
    "backends",
    "backends_are_initialized",
    "clear_backends",
    "compile",
    "compile_options",
    "compiler_option_overrides",
    "cpu_client_options",
    "default_backend",
    "default_device",
    "device_count",
    "devices",
    "get_backend",
    "host_count",
    "host_id",
    "host_ids",
    "local_device_count",
    "local_devices",
    "process_count",
    "process_index",
    "process_indices",
    "register_backend_factory",
]

logger = logging.getLogger("lamina.interpreters.backend")

Client = xla_client.Client
Device = xla_client.Device

_CUDA_PLUGINS = ("jax_plugins.xla_cuda13", "jax_plugins.xla_cuda12")
_ALIASES = {"gpu": ("cuda",)}

_lock = threading.RLock()
_clients: dict[str, Client] = {}
_default: Client | None = None
_errors: dict[str, str] = {}

# Extra keyword arguments for jaxlib's ``make_cpu_client``, set before the backends
# start: the multi-process runtime (``lamina.distributed``) puts its
# ``distributed_client``, ``node_id``, ``num_nodes`` and ``collectives`` here.
cpu_client_options: dict[str, Any] = {}


# --------------------------------------------------------------------- client factories


def _make_cpu_client() -> Client:
    n = config.jax_num_cpu_devices
    return xla_client.make_cpu_client(
        asynchronous=True,
        num_devices=None if n < 0 else n,
        get_local_topology_timeout_minutes=config.jax_cpu_get_local_topology_timeout_minutes,
        get_global_topology_timeout_minutes=config.jax_cpu_get_global_topology_timeout_minutes,
        **cpu_client_options,
    )


def _cuda_plugin_library() -> str | None:
    """The path of an installed CUDA PJRT plugin matching jaxlib's version, if any."""
    # Imported here, not at the top: importlib.metadata is slow to import (~20 ms).
    import importlib.metadata
    import importlib.util

    jaxlib_version = importlib.metadata.version("jaxlib")
    for module in _CUDA_PLUGINS:
        try:
            spec = importlib.util.find_spec(module)
        except ImportError:
            spec = None
        if spec is None or not spec.submodule_search_locations:
            continue
        library = pathlib.Path(next(iter(spec.submodule_search_locations))) / "xla_cuda_plugin.so"
        distribution = "jax-cuda" + module[-2:] + "-pjrt"
        try:
            version = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            version = None
        if library.exists() and version == jaxlib_version:
            return str(library)
        logger.warning(
            "Ignoring the CUDA plugin %s (version %s): it does not match jaxlib %s.",
            module, version, jaxlib_version,
        )  # fmt: skip
    return None


def _make_cuda_client() -> Client:
    library = _cuda_plugin_library()
    if library is None:
        raise RuntimeError("no jax-cuda PJRT plugin matching jaxlib is installed")
    if not xla_client.pjrt_plugin_loaded("cuda"):
        xla_client.load_pjrt_plugin_dynamically("cuda", library)
    if not xla_client.pjrt_plugin_initialized("cuda"):
        xla_client.initialize_pjrt_plugin("cuda")
    options = xla_client.generate_pjrt_gpu_plugin_options()
    return xla_client.make_c_api_client("cuda", options, None)


# Platform name -> (priority, factory). Higher priority wins as the default backend.
_FACTORIES = {"cpu": (0, _make_cpu_client), "cuda": (500, _make_cuda_client)}
# Platforms whose client must start when backends are created (the others may fail).
_REQUIRED = {"cpu"}


def register_backend_factory(
    name: str,
    factory,
    *,
    priority: int = 0,
    fail_quietly: bool = True,
    experimental: bool = False,
    make_topology=None,
    c_api=None,
) -> None:
    """Add a platform: ``factory()`` makes its client when backends are created (a
    failure is logged, or raised unless ``fail_quietly``); the available platform of
    highest ``priority`` is the default backend."""
    del experimental, make_topology, c_api
    with _lock:
        if name in _clients:
            raise RuntimeError(f"Backend {name} already initialized")
        _FACTORIES[name] = (priority, factory)
        if fail_quietly:
            _REQUIRED.discard(name)
        else:
            _REQUIRED.add(name)


# --------------------------------------------------------------------- backends


def _start(platforms: list[tuple[str, int, bool]]) -> None:
    """Create clients for (platform, priority, must_succeed) entries; pick the default."""
    global _default
    best = None
    for platform, priority, must_succeed in platforms:
        try:
            if platform not in _FACTORIES:
                raise RuntimeError(
                    f"Backend '{platform}' is not in the list of known backends: "
                    f"{list(_FACTORIES)}."
                )
            client = _FACTORIES[platform][1]()
            if not client.devices():
                raise RuntimeError(f"Backend '{platform}' provides no devices.")
        except Exception as err:
            if must_succeed:
                hint = (
                    "set JAX_PLATFORMS='' to automatically choose an available backend"
                    if config.jax_platforms
                    else "set JAX_PLATFORMS=cpu to skip the failing backend"
                )
                raise RuntimeError(
                    f"Unable to initialize backend '{platform}': {err} ({hint})"
                ) from err
            _errors[platform] = str(err)
            logger.info("Unable to initialize backend '%s': %s", platform, err)
            continue
        _clients[platform] = client
        if best is None or priority > best:
            best, _default = priority, client


def backends() -> dict[str, Client]:
    """All initialized clients by platform name, creating them on the first call."""
    with _lock:
        if not _clients:
            requested = config.jax_platforms
            if requested:
                names = [p for name in requested.split(",") for p in _ALIASES.get(name, (name,))]
                _start([(p, len(names) - i, True) for i, p in enumerate(names)])
            else:
                _start([(p, prio, p in _REQUIRED) for p, (prio, _) in _FACTORIES.items()])
        return _clients


def backends_are_initialized() -> bool:
    """Whether the clients have been created (by any use of a device)."""
    return bool(_clients)


def _refuse_after_start(name: str):
    def validate(new_value: Any) -> None:
        if _clients and new_value != config._read(name):
            raise RuntimeError(
                f"{name} config should be updated before backends are initialized i.e. "
                "before any JAX operation is executed. You should initialize this config "
                "immediately after `import jax`."
            )

    return validate


for _name in ("jax_num_cpu_devices", "jax_cpu_get_local_topology_timeout_minutes",
              "jax_cpu_get_global_topology_timeout_minutes"):  # fmt: skip
    config._add_validator(_name, _refuse_after_start(_name))


def get_backend(platform: str | Client | None = None) -> Client:
    """The client for ``platform`` (``"cpu"``, ``"gpu"``, ``"cuda"``), or the default one."""
    if platform is not None and not isinstance(platform, str):
        return platform
    clients = backends()
    if platform is None:
        return _default
    if platform in _ALIASES:
        for concrete in _ALIASES[platform]:
            if concrete in clients:
                return clients[concrete]
        raise RuntimeError(
            f"Unknown backend: '{platform}' requested, but no platforms that are instances "
            f"of {platform} are present. Platforms present are: " + ",".join(clients)
        )
    if platform in clients:
        return clients[platform]
    if platform in _errors:
        raise RuntimeError(
            f"Backend '{platform}' failed to initialize: {_errors[platform]}. "
            f"Available backends are {list(clients)}"
        )
    raise RuntimeError(f"Unknown backend {platform}. Available backends are {list(clients)}")


def default_backend() -> str:
    """The platform name of the default backend: ``"cpu"``, or ``"gpu"`` with a GPU."""
    platform = get_backend().platform
    return "gpu" if platform == "cuda" else platform


def devices(backend: str | Client | None = None) -> list[Device]:
    """All devices of ``backend`` (default: the default backend), in every process."""
    return get_backend(backend).devices()


def local_devices(
    process_index: int | None = None, backend: str | Client | None = None
) -> list[Device]:
    """The devices of ``backend`` that process ``process_index`` (default: this one) drives."""
    client = get_backend(backend)
    if process_index is None:
        process_index = client.process_index()
    if not 0 <= process_index < process_count(backend):
        raise ValueError(f"Unknown process_index {process_index}")
    return [d for d in client.devices() if d.process_index == process_index]


def device_count(backend: str | Client | None = None) -> int:
    return int(get_backend(backend).device_count())


def local_device_count(backend: str | Client | None = None) -> int:
    return int(get_backend(backend).local_device_count())


def process_index(backend: str | Client | None = None) -> int:
    return get_backend(backend).process_index()


def process_count(backend: str | Client | None = None) -> int:
    return max((d.process_index for d in devices(backend)), default=0) + 1


def process_indices(backend: str | Client | None = None) -> list[int]:
    """The indices of the processes holding devices of ``backend``, in order."""
    return sorted({d.process_index for d in devices(backend)})


def _renamed(old: str, new):
    def alias(backend: str | Client | None = None):
        warnings.warn(
            f"jax.{old} has been renamed to jax.{new.__name__}. This alias will eventually "
            "be removed; please update your code.",
            stacklevel=2,
        )
        return new(backend)

    alias.__name__ = alias.__qualname__ = old
    return alias


# JAX's old names, which warn (UserWarning) and call the new ones.
host_count = _renamed("host_count", process_count)
host_id = _renamed("host_id", process_index)
host_ids = _renamed("host_ids", process_indices)

_default_device: Device | None = None


def clear_backends() -> None:
    """Forget every client: the next use of a device creates them anew. (Caches of
    compiled code refer to the old clients; clear them too.)"""
    global _default, _default_device
    with _lock:
        _clients.clear()
        _errors.clear()
        _default = _default_device = None


def default_device() -> Device:
    """Where uncommitted values go: the ``jax_default_device`` option's device (for a
    platform name, that platform's first device), else the first local device of the
    default backend."""
    global _default_device
    chosen = config.jax_default_device
    if chosen is not None:
        return get_backend(chosen).local_devices()[0] if isinstance(chosen, str) else chosen
    if _default_device is None:
        _default_device = get_backend().local_devices()[0]
    return _default_device


# --------------------------------------------------------------------- compiling


def compile_options(devices: Sequence[Device]) -> xla_client.CompileOptions:
    """Options for one SPMD program partitioned over ``devices``, in that order.

    XLA otherwise assigns a one-device program to device 0 whatever devices the
    executable is loaded on.
    """
    options = xla_client.CompileOptions()
    options.num_replicas = 1
    options.num_partitions = len(devices)
    build = options.executable_build_options
    build.use_spmd_partitioning = True
    # XLA's effort options, from their jax_* options (as JAX passes them).
    build.exec_time_optimization_effort = config.jax_exec_time_optimization_effort
    build.memory_fitting_effort = config.jax_memory_fitting_effort
    build.optimization_level = _EFFORT_LEVELS[config.jax_optimization_level]
    build.memory_fitting_level = _EFFORT_LEVELS[config.jax_memory_fitting_level]
    # An XLA-AutoFDO profile only when asked for; -1: XLA does not look for one.
    options.profile_version = max(config.jax_xla_profile_version, 0) or -1
    ids = np.array([[d.id for d in devices]], dtype=np.int64)
    options.device_assignment = xla_client.DeviceAssignment.create(ids)
    return options


# XLA's values for the effort levels of ``jax_optimization_level`` and
# ``jax_memory_fitting_level``.
_EFFORT_LEVELS = {"UNKNOWN": 0, "O0": 9, "O1": 19, "O2": 29, "O3": 39}
# ``compiler_options`` that are fields of the build options, not XLA flags.
_BUILD_OPTIONS = frozenset(
    {"exec_time_optimization_effort", "memory_fitting_effort", "optimization_level",
     "memory_fitting_level"}
)  # fmt: skip


_option_overrides: contextvars.ContextVar[tuple] = contextvars.ContextVar(
    "compiler_option_overrides", default=()
)


@contextlib.contextmanager
def compiler_option_overrides(options: dict[str, Any] | None):
    """XLA options (``{name: value}``) that the compilations inside the block pass to
    XLA, as ``Lowered.compile(compiler_options=...)`` gives them; XLA rejects an unknown
    name."""
    token = _option_overrides.set(tuple((options or {}).items()))
    try:
        yield
    finally:
        _option_overrides.reset(token)


def _ops_left(op, left: int) -> int:
    """``left`` less the operations in ``op`` (itself and those nested), stopping once
    below 0."""
    left -= 1
    for region in op.regions:
        for block in region:
            for inner in block:
                if left < 0:
                    return left
                left = _ops_left(inner, left)
    return left


def backend_compile_and_load(
    client: Client,
    module: Any,
    devices: xla_client.DeviceList,
    options: xla_client.CompileOptions,
    host_callbacks: Sequence[Any] = (),
) -> xla_client.LoadedExecutable:
    """jaxlib's compile of ``module`` on ``client``: every compilation goes through this
    module attribute, so a wrapper put in its place (``jax._src.compiler``'s, which
    chex's ``restrict_backends`` patches) sees them all."""
    if host_callbacks:
        return client.compile_and_load(module, devices, options, list(host_callbacks))
    return client.compile_and_load(module, devices, options)


def compile(
    module: Any,
    devices: Sequence[Device],
    options: xla_client.CompileOptions | None = None,
    *,
    name: str = "module",
    host_callbacks: Sequence[Any] = (),
) -> xla_client.LoadedExecutable:
    """Compile a StableHLO module (MLIR text or bytecode, or a ``jaxlib.mlir`` module)
    for ``devices``, returning jaxlib's loaded executable. A ``jaxlib.mlir`` module is
    handed to XLA as it is, which spares XLA parsing it again in a fresh context.

    ``host_callbacks`` are the Python functions the program calls by index (its
    ``xla_ffi_python_*_callback`` custom calls); jaxlib takes them only with a
    ``jaxlib.mlir`` module.

    ``options`` default to :func:`compile_options` for ``devices``. With a persistent
    cache (:mod:`.compilation_cache`) the executable may come from disk instead. Logs how long XLA
    took: at WARNING level with ``jax_log_compiles``, else DEBUG.
    """
    if options is None:
        options = compile_options(devices)
        if hasattr(module, "operation"):  # XLA logs in detail only for larger programs
            bound = detailed_logging_min_ops.value
            options.executable_build_options.debug_options.xla_detailed_logging = (
                _ops_left(module.operation, bound) < 0
            )
    if overrides := _option_overrides.get():
        rest = []
        for key, value in overrides:
            if key in _BUILD_OPTIONS:  # set on the build options, as JAX does
                setattr(options.executable_build_options, key, value)
            else:
                rest.append((key, value))
        options.env_option_overrides = rest
    device_list = xla_client.DeviceList(tuple(devices))
    client = device_list[0].client

    def compile_now():
        start = time.perf_counter()
        with compile_step(BACKEND_COMPILE_EVENT, name):
            executable = backend_compile_and_load(
                client, module, device_list, options, host_callbacks
            )
        level = logging.WARNING if config.jax_log_compiles else logging.DEBUG
        logger.log(
            level, "Finished XLA compilation of %s in %.9f sec", name, time.perf_counter() - start
        )
        return executable

    if host_callbacks:  # the callbacks are live Python objects: never from disk
        return compile_now()
    return compile_or_load(module, devices, options, name, compile_now)
