"""``lamina.config``: every configuration option of JAX 0.10.2, with JAX's kinds,
defaults, environment variables, checks and cache keys (the holders are described in
:mod:`.config_state`).

This module is the one place options are registered. An option whose effect lives
elsewhere is read there (``config.jax_debug_nans``); an option whose value must reach
state outside its holder is wired here: x64 mode and the promotion modes (kept by
:mod:`lamina.ir.dtypes`, which cannot see jaxlib), jaxlib's transfer and
garbage-collection guards, its thread guard, its traceback mode, and lamina's loggers.
Change x64 mode through this module (``update`` or :data:`enable_x64`), not through
``dtypes`` directly, or jaxlib's copy falls behind.

The options with a context manager at lamina's top level are the module attributes
named after them (``numpy_dtype_promotion``, ``debug_nans``, ...), plus
:func:`disable_jit`, :func:`transfer_guard` and :data:`checking_leaks`.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any

from jaxlib import _jax

from lamina.interpreters.core.config_state import (
    Config,
    Override,
    State,
    bool_state,
    config,
    enum_class_state,
    enum_state,
    flag,
    float_state,
    int_state,
    object_state,
    string_state,
)
from lamina.ir import dtypes, set_traceback_filtering_source

__all__ = [
    "Config",
    "ExplicitX64Mode",
    "LegacyPrngKeyState",
    "NumpyDtypePromotion",
    "RuntimeTracebackMode",
    "State",
    "allow_f16_reductions",
    "array_garbage_collection_guard",
    "auto_pcast",
    "check_tracer_leaks",
    "checking_leaks",
    "config",
    "debug_infs",
    "debug_key_reuse",
    "debug_nans",
    "default_device",
    "default_matmul_precision",
    "default_prng_impl",
    "detailed_logging_min_ops",
    "disable_jit",
    "enable_checks",
    "enable_custom_prng",
    "enable_x64",
    "explain_cache_misses",
    "jax2tf_associative_scan_reductions",
    "legacy_prng_key",
    "log_compiles",
    "no_execution",
    "no_tracing",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "remove_size_one_mesh_axis_from_type",
    "softmax_custom_jvp",
    "thread_guard",
    "threefry_partitionable",
    "trace_context",
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
]

MATMUL_PRECISIONS = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64",
)  # fmt: skip
TRANSFER_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_EFFORT_LEVELS = ("UNKNOWN", "O0", "O1", "O2", "O3")
_LOG_LEVELS = ("NOTSET", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


# --------------------------------------------------------------------- enum kinds


class NumpyDtypePromotion(enum.StrEnum):
    STANDARD = "standard"
    STRICT = "strict"


class LegacyPrngKeyState(enum.StrEnum):
    ALLOW = "allow"
    WARN = "warn"
    ERROR = "error"


class ExplicitX64Mode(enum.IntEnum):
    """What an explicitly requested 64-bit dtype does with x64 mode off."""

    WARN = 1
    ERROR = 2
    ALLOW = 3

    @classmethod
    def _missing_(cls, value: object) -> ExplicitX64Mode | None:
        return {"warn": cls.WARN, "error": cls.ERROR, "allow": cls.ALLOW}.get(value)


class RuntimeTracebackMode(enum.StrEnum):
    OFF = "off"
    ON = "on"
    FULL = "full"

    @classmethod
    def _missing_(cls, value: object) -> RuntimeTracebackMode | None:
        return cls.__members__.get(value.upper()) if isinstance(value, str) else None


# --------------------------------------------------------------------- hooks


def _guard_setter(kind: Any, field: str) -> tuple[Callable, Callable]:
    """Hooks putting a guard level into jaxlib's guard library: (process-wide setter,
    per-thread context)."""
    guard_lib = _jax.guard_lib

    def level(value: str | None):
        return None if value is None else getattr(kind, value.upper())

    def set_global(value: str | None) -> None:
        setattr(guard_lib.global_state(), field, level(value))

    @contextlib.contextmanager
    def local(value: str | None) -> Iterator[None]:
        state = guard_lib.thread_local_state()
        previous = getattr(state, field)
        setattr(state, field, level(value))
        try:
            yield
        finally:
            setattr(state, field, previous)

    return set_global, local


@contextlib.contextmanager
def _thread_guard_local(on: bool) -> Iterator[None]:
    _jax.guard_lib.update_thread_guard_global_state(bool(on))
    try:
        yield
    finally:
        _jax.guard_lib.update_thread_guard_global_state(bool(thread_guard.get_global()))


def _traceback_mode(value: RuntimeTracebackMode | None):
    return getattr(_jax.RuntimeTracebackMode, (value or RuntimeTracebackMode.OFF).name)


@contextlib.contextmanager
def _traceback_mode_local(value: RuntimeTracebackMode) -> Iterator[None]:
    _jax.set_send_traceback_to_runtime_thread_local(_traceback_mode(value))
    try:
        yield
    finally:
        _jax.set_send_traceback_to_runtime_thread_local(None)


_lamina_logger = logging.getLogger("lamina")
_debug_loggers: list[logging.Logger] = []


def _set_logging_level(name: str | None) -> None:
    """``jax_logging_level``: the level of lamina's loggers."""
    if name is not None:
        _lamina_logger.setLevel(name)


def _set_debug_log_modules(names: str) -> None:
    """``jax_debug_log_modules``: DEBUG logging for these comma-separated modules."""
    while _debug_loggers:
        _debug_loggers.pop().setLevel(logging.NOTSET)
    for name in filter(None, (n.strip() for n in (names or "").split(","))):
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        _debug_loggers.append(logger)


def _check_default_device(value: Any) -> None:
    if value is None or isinstance(value, _jax.Device) or value in ("cpu", "gpu", "tpu"):
        return
    raise ValueError(
        "jax.default_device must be passed either a Device object (e.g. "
        "`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or 'gpu', "
        f"got: {value!r}"
    )


def _check_client_options(value: Any) -> None:
    if value is not None and not isinstance(value, (str, dict)):
        raise ValueError(
            "new string config value must be None or of type dict | str, "
            f"got {value} of type {type(value)}."
        )


def _set_all_transfer_guards(value: str | None) -> None:
    for direction in (transfer_guard_host_to_device, transfer_guard_device_to_device,
                      transfer_guard_device_to_host):  # fmt: skip
        direction.set(value)


# --------------------------------------------------------------------- the options
# Alphabetical within groups. key="jit" puts an option in jaxlib's C++ jit cache key,
# key="trace" in trace_context(), as in JAX 0.10.2.

# Types, promotion and x64 mode.
enable_x64 = bool_state(
    "jax_enable_x64", False, key="jit+trace", on_global=dtypes.set_x64,
    local_context=dtypes.enable_x64,
)  # fmt: skip
explicit_x64_dtypes = enum_class_state(
    "jax_explicit_x64_dtypes", ExplicitX64Mode, ExplicitX64Mode.WARN, key="jit+trace",
    on_global=lambda m: dtypes.set_explicit_x64_mode(m.name.lower()),
    local_context=lambda m: dtypes.explicit_x64_mode(m.name.lower()),
)  # fmt: skip
numpy_dtype_promotion = enum_class_state(
    "jax_numpy_dtype_promotion", NumpyDtypePromotion, NumpyDtypePromotion.STANDARD,
    key="jit+trace", on_global=lambda m: dtypes.set_numpy_dtype_promotion(m.value),
    local_context=lambda m: dtypes.numpy_dtype_promotion(m.value),
)  # fmt: skip
numpy_rank_promotion = enum_state(
    "jax_numpy_rank_promotion", ("allow", "warn", "raise"), "allow", key="jit+trace"
)
default_matmul_precision = enum_state(
    "jax_default_matmul_precision", MATMUL_PRECISIONS, None, optional=True, key="jit+trace"
)
allow_f16_reductions = bool_state("jax_allow_f16_reductions", True, key="jit+trace")

# jit, tracing and checking.
_disable_jit = bool_state("jax_disable_jit", False, key="trace")
enable_checks = bool_state("jax_enable_checks", False)
check_tracer_leaks = bool_state("jax_check_tracer_leaks", False)
checking_leaks = functools.partial(check_tracer_leaks, True)
explain_cache_misses = bool_state("jax_explain_cache_misses", False)
log_compiles = bool_state("jax_log_compiles", False)
no_execution = bool_state("jax_no_execution", False, key="jit+trace")
no_tracing = bool_state("jax_no_tracing", False)
softmax_custom_jvp = bool_state("jax_softmax_custom_jvp", False, key="jit+trace")
default_device = object_state("jax_default_device", None, _check_default_device, key="jit+trace")

# Debugging and errors (their effects: lamina's failure handling).
debug_infs = bool_state("jax_debug_infs", False)
debug_nans = bool_state("jax_debug_nans", False)
enum_state("jax_error_checking_behavior_divide", ("ignore", "raise"), "ignore", key="jit+trace")
enum_state("jax_error_checking_behavior_nan", ("ignore", "raise"), "ignore", key="jit+trace")
enum_state("jax_error_checking_behavior_oob", ("ignore", "raise"), "ignore", key="jit+trace")
bool_state("jax_experimental_unsafe_xla_runtime_errors", False)
traceback_filtering = enum_state(
    "jax_traceback_filtering",
    ("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto"), "auto",
)  # fmt: skip
# lamina.ir filters tracebacks (lamina.ir.tracebacks) as this option says.
set_traceback_filtering_source(lambda: traceback_filtering.value)
enum_class_state(
    "jax_send_traceback_to_runtime", RuntimeTracebackMode, RuntimeTracebackMode.OFF,
    on_global=lambda m: _jax.set_send_traceback_to_runtime_global(_traceback_mode(m)),
    local_context=_traceback_mode_local,
)  # fmt: skip

# PRNG (their effects: lamina.lax.prng and lamina.random).
debug_key_reuse = bool_state("jax_debug_key_reuse", False, key="jit+trace")
default_prng_impl = enum_state(
    "jax_default_prng_impl",
    ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32"),
    "threefry2x32",
)  # fmt: skip
enable_custom_prng = bool_state("jax_enable_custom_prng", False)
bool_state("jax_high_dynamic_range_gumbel", False, key="trace")
legacy_prng_key = enum_class_state(
    "jax_legacy_prng_key", LegacyPrngKeyState, LegacyPrngKeyState.ALLOW
)
int_state("jax_random_seed_offset", 0, key="jit+trace")
bool_state("jax_threefry_gpu_kernel_lowering", False, key="jit+trace")
threefry_partitionable = bool_state("jax_threefry_partitionable", True, key="jit+trace")

# Transfers, garbage collection and threads: jaxlib's guard library enforces them.
_h2d = _guard_setter(_jax.guard_lib.TransferGuardLevel, "host_to_device")


class HostTransferWatch:
    """``on`` while a host-to-device transfer guard other than "allow" may be in force
    (set globally, or in a block of some thread). Caches of device scalars are
    bypassed then, so jaxlib's guard sees every transfer JAX makes."""

    __slots__ = ("_blocks", "_global", "on")

    def __init__(self):
        self._global, self._blocks, self.on = False, 0, False

    def set_global(self, value: str | None) -> None:
        _h2d[0](value)
        self._global = value not in (None, "allow")
        self.on = self._global or self._blocks > 0

    @contextlib.contextmanager
    def local(self, value: str | None) -> Iterator[None]:
        watched = value not in (None, "allow")
        self._blocks += watched
        self.on = True if watched else self.on
        try:
            with _h2d[1](value):
                yield
        finally:
            self._blocks -= watched
            self.on = self._global or self._blocks > 0


host_transfer_watch = HostTransferWatch()
_d2d = _guard_setter(_jax.guard_lib.TransferGuardLevel, "device_to_device")
_d2h = _guard_setter(_jax.guard_lib.TransferGuardLevel, "device_to_host")
_gc = _guard_setter(_jax.guard_lib.GarbageCollectionGuardLevel, "garbage_collect_array")
transfer_guard_host_to_device = enum_state(
    "jax_transfer_guard_host_to_device", TRANSFER_GUARD_LEVELS, None, optional=True,
    on_global=host_transfer_watch.set_global, local_context=host_transfer_watch.local,
)  # fmt: skip
transfer_guard_device_to_device = enum_state(
    "jax_transfer_guard_device_to_device", TRANSFER_GUARD_LEVELS, None, optional=True,
    on_global=_d2d[0], local_context=_d2d[1],
)  # fmt: skip
transfer_guard_device_to_host = enum_state(
    "jax_transfer_guard_device_to_host", TRANSFER_GUARD_LEVELS, None, optional=True,
    on_global=_d2h[0], local_context=_d2h[1],
)  # fmt: skip
_transfer_guard = enum_state(
    "jax_transfer_guard", TRANSFER_GUARD_LEVELS, None, optional=True,
    on_global=_set_all_transfer_guards,
)  # fmt: skip
array_garbage_collection_guard = enum_state(
    "jax_array_garbage_collection_guard", ("allow", "log", "fatal"), None, optional=True,
    on_global=_gc[0], local_context=_gc[1],
)  # fmt: skip
thread_guard = bool_state("jax_thread_guard", False, local_context=_thread_guard_local)

# Logging.
string_state("jax_debug_log_modules", "", optional=False, on_global=_set_debug_log_modules)
enum_state(
    "jax_logging_level", _LOG_LEVELS, logging.getLevelName(_lamina_logger.level),
    optional=True, on_global=_set_logging_level,
)  # fmt: skip
bool_state("jax_distributed_debug", False)
bool_state("jax_log_checkpoint_residuals", False)
bool_state("jax_pprint_use_color", True)

# Backends and devices.
int_state("jax_num_cpu_devices", -1)
int_state("jax_cpu_get_global_topology_timeout_minutes", 5)
int_state("jax_cpu_get_local_topology_timeout_minutes", 2)
enum_state(
    "jax_cpu_collectives_implementation", ("gloo", "mpi", "megascale"), "gloo", optional=True
)
bool_state("jax_debug_leaked_clients_on_clear_backends", False)
bool_state("jax_enable_preemption_service", True)
bool_state("jax_enable_recoverability", False)
object_state("jax_pjrt_client_create_options", None, _check_client_options)
string_state("jax_platforms", None)
enum_state("jax_use_magma", ("off", "on", "auto"), "auto")

# Compilation and the compilation cache. Unlike JAX, lamina keeps every compiled program
# in the user's cache directory by default (see runtime/compilation_cache.py).


def default_compilation_cache_dir() -> str:
    """``lamina/compilation_cache`` in ``$XDG_CACHE_HOME`` or else ``~/.cache``: where
    compiled executables are kept unless ``jax_compilation_cache_dir`` says otherwise."""
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(home, "lamina", "compilation_cache")


bool_state("jax_compilation_cache_check_contents", False)
string_state("jax_compilation_cache_dir", default_compilation_cache_dir())
bool_state("jax_compilation_cache_expect_pgle", False)
bool_state("jax_compilation_cache_include_metadata_in_key", False)
int_state("jax_compilation_cache_max_size", -1)
bool_state("jax_compiler_enable_remat_pass", True)
int_state("jax_embedded_constants_max_bytes", 32, key="jit+trace")
bool_state("jax_enable_compilation_cache", True)
bool_state("jax_enable_pgle", False, key="jit+trace")
float_state("jax_exec_time_optimization_effort", 0.0)
string_state("jax_hlo_source_file_canonicalization_regex", None, key="trace")
bool_state("jax_include_full_tracebacks_in_locations", True)
float_state("jax_memory_fitting_effort", 0.0)
enum_state("jax_memory_fitting_level", _EFFORT_LEVELS, "O2", key="jit")
enum_state("jax_optimization_level", _EFFORT_LEVELS, "UNKNOWN", key="jit")
string_state("jax_persistent_cache_enable_xla_caches", "xla_gpu_per_fusion_autotune_cache_dir")
float_state("jax_persistent_cache_min_compile_time_secs", 0.0)
int_state("jax_persistent_cache_min_entry_size_bytes", 0)
int_state("jax_pgle_aggregation_percentile", 90)
int_state("jax_pgle_profiling_runs", 3, key="jit+trace")
bool_state("jax_raise_persistent_cache_errors", False)
bool_state("jax_remove_custom_partitioning_ptr_from_cache_key", False)
bool_state("jax_share_binary_between_hosts", False)
int_state("jax_share_binary_between_hosts_timeout_ms", 1200000)
string_state("jax_source_url_schema", None)
int_state("jax_traceback_in_locations_limit", 100)
int_state("jax_captured_constants_report_frames", 0)
int_state("jax_captured_constants_warn_bytes", 2000000000)
int_state("jax_xla_profile_version", 0, key="jit+trace")

# Transformations and staging: switches between implementations in JAX.
auto_pcast = bool_state("jax_auto_pcast", True, key="jit+trace")
bool_state("check_vma", False, key="jit+trace")
bool_state("eager_constant_folding", False, key="jit+trace")
bool_state("jax_check_static_indices", False, key="jit+trace")
bool_state("jax_custom_vjp3", False, key="jit+trace")
bool_state("jax_disable_bwd_checks", False)
bool_state("jax_disable_vmap_shmap_error", False)
bool_state("jax_disallow_mesh_context_manager", False)
bool_state("jax_mutable_array_checks", True, key="trace")
bool_state("jax_refs_to_pins", False)
bool_state("jax_remat3", False, key="jit+trace")
remove_size_one_mesh_axis_from_type = bool_state(
    "jax_remove_size_one_mesh_axis_from_type", False, key="jit+trace"
)
bool_state("jax_scan3", False, key="jit+trace")
bool_state("jax_use_direct_linearize", True, key="jit+trace")
bool_state("jax_use_shardy_partitioner", True, key="jit+trace")
bool_state("jax_use_simplified_jaxpr_constants", False, key="jit+trace")

# Export, jax2tf, Pallas and sparse kernels.
jax2tf_associative_scan_reductions = bool_state("jax2tf_associative_scan_reductions", False)
bool_state("jax2tf_default_native_serialization", True)
int_state("jax_export_calling_convention_version", 10)
bool_state("jax_export_ignore_forward_compatibility", False)
int_state("jax_serialization_version", 0)
bool_state("jax_bcoo_cusparse_lowering", False)
bool_state("jax_mosaic_allow_hlo", False)
bool_state("jax_pallas_enable_debug_checks", False, key="jit+trace")
bool_state("jax_pallas_poison_buffers", False)
bool_state("jax_pallas_use_mosaic_gpu", True, key="jit+trace")
bool_state("jax_ragged_dot_use_gpu_pallas_triton_lowering", False, key="jit+trace")
bool_state("jax_ragged_dot_use_ragged_dot_instruction", True)
bool_state("jax_use_emit_pipeline_primitive", False, key="jit+trace")

# Flags: process-wide values without context managers, not attributes of `config`.
flag("jax_backend_target", "")
flag("jax_check_proxy_envs", True)
# XLA logs a compilation in detail only for modules with more operations than this.
detailed_logging_min_ops = flag("jax_compiler_detailed_logging_min_ops", 10)
flag("jax_cpu_enable_async_dispatch", True)
flag("jax_cross_host_transfer_socket_address", "")
flag("jax_cross_host_transfer_timeout_seconds", None, env_parse=int)
flag("jax_cross_host_transfer_transfer_size", None, env_parse=int)
flag("jax_cross_host_transport_addresses", "")
flag("jax_cuda_visible_devices", "all")
flag("jax_disable_most_optimizations", False)
flag("jax_dump_ir_modes", "stablehlo")
flag("jax_dump_ir_to", "")
flag("jax_force_dcn_cross_host_transfers", False)
flag("jax_include_debug_info_in_dumps", True)
flag("jax_mock_gpu_topology", "")
flag("jax_oneapi_visible_devices", "all")
flag("jax_pallas_verbose_errors", False)
flag("jax_platform_name", "")
flag("jax_rocm_visible_devices", "all")
flag("jax_sort_devices_by_process_index", True)
flag("jax_tracer_error_num_traceback_frames", 5)
flag("jax_xla_backend", "")
flag("mock_num_gpu_processes", 0)

# jaxlib's C++ code reads these two holders directly.
_jax.jax_jit.set_enable_x64_state(enable_x64)
_jax.jax_jit.set_disable_jit_state(_disable_jit)


# --------------------------------------------------------------------- context managers


def disable_jit(disable: bool = True) -> Override:
    """Within the block (or decorated function), in this thread, ``jit`` runs
    functions without compiling them."""
    return _disable_jit(disable)


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """Within the block, in this thread, every kind of transfer has guard level
    ``new_val`` (``"allow"``, ``"log"``, ``"disallow"``, ``"log_explicit"`` or
    ``"disallow_explicit"``)."""
    with contextlib.ExitStack() as stack:
        for state in (transfer_guard_host_to_device, transfer_guard_device_to_device,
                      transfer_guard_device_to_host, _transfer_guard):  # fmt: skip
            stack.enter_context(state(new_val))
        yield


def trace_context() -> tuple:
    """The values of the options lamina's caches key on, as jaxlib's C++ side sees them."""
    return _jax.config.trace_context()
