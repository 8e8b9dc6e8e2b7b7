"""lamina: a JAX-compatible array library built from thin layers on jaxlib.

``import lamina as jax`` gives the public API as the layers provide it. Layers load on
first use of a name that needs them, so ``import lamina.ir`` stays free of jaxlib even
where the meta-package is installed, and a program pays only for what it touches.
"""

import importlib
import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)

__version__ = "0.1.0"

# Public submodules: lamina.<name>.
_SUBMODULES = (
    "ad",
    "ad_checkpoint",
    "api_util",
    "core",
    "custom_batching",
    "custom_derivatives",
    "debug",
    "distributed",
    "dlpack",
    "dtypes",
    "errors",
    "example_libraries",
    "experimental",
    "export",
    "extend",
    "ffi",
    "image",
    "interpreters",
    "lax",
    "lib",
    "memory",
    "monitoring",
    "nn",
    "numpy",
    "ops",
    "profiler",
    "random",
    "scipy",
    "sharding",
    "stages",
    "ref",
    "test_util",
    "tree",
    "tree_util",
    "typing",
    "version",
)
# Public names and the module that defines each. Runtime names load lamina.numpy as
# well, which installs the array operators and methods (x * 2 and x.sum() must work on
# any array a user can make).
_RUNTIME = "lamina.interpreters"
_NAMES = {
    "Partial": "lamina.tree_util",
    "float0": "lamina.dtypes",
    "print_environment_info": "lamina.environment_info",
    "pure_callback": "lamina.lax",
    **{name: "lamina.ref" for name in ("Ref", "empty_ref", "free_ref", "freeze", "new_ref")},
    "ds": "lamina.lax",
    **{
        name: "lamina.sharding"
        for name in (
            "NamedSharding",
            "P",
            "make_array_from_callback",
            "make_array_from_process_local_data",
            "make_array_from_single_device_arrays",
            "make_mesh",
            "pmap",
            "reshard",
            "set_mesh",
            "shard_map",
            "smap",
        )
    },
    **{
        name: _RUNTIME
        for name in (
            "Array",
            "ShapeDtypeStruct",
            "Shard",
            "allow_f16_reductions",
            "array_garbage_collection_guard",
            "auto_pcast",
            "block_until_ready",
            "check_tracer_leaks",
            "checking_leaks",
            "checkpoint",
            "checkpoint_policies",
            "clear_caches",
            "closure_convert",
            "config",
            "copy_to_host_async",
            "custom_gradient",
            "custom_jvp",
            "custom_vjp",
            "Device",
            "debug_infs",
            "debug_key_reuse",
            "debug_nans",
            "default_backend",
            "default_device",
            "default_matmul_precision",
            "default_prng_impl",
            "device_count",
            "device_get",
            "device_put",
            "devices",
            "disable_jit",
            "effects_barrier",
            "enable_x64",
            "ensure_compile_time_eval",
            "eval_shape",
            "fwd_and_bwd",
            "enable_checks",
            "enable_custom_prng",
            "explain_cache_misses",
            "grad",
            "hessian",
            "host_count",
            "host_id",
            "host_ids",
            "jacfwd",
            "jacobian",
            "jacrev",
            "jax2tf_associative_scan_reductions",
            "jit",
            "jvp",
            "legacy_prng_key",
            "linear_transpose",
            "linearize",
            "live_arrays",
            "local_device_count",
            "local_devices",
            "log_compiles",
            "make_jaxpr",
            "make_user_context",
            "named_call",
            "named_scope",
            "no_execution",
            "no_tracing",
            "numpy_dtype_promotion",
            "numpy_rank_promotion",
            "process_count",
            "process_index",
            "process_indices",
            "remat",
            "remove_size_one_mesh_axis_from_type",
            "softmax_custom_jvp",
            "thread_guard",
            "threefry_partitionable",
            "transfer_guard",
            "transfer_guard_device_to_device",
            "transfer_guard_device_to_host",
            "transfer_guard_host_to_device",
            "typeof",
            "value_and_grad",
            "vjp",
            "vmap",
        )
    },
}

# Layers reachable as lamina.<name> that JAX's top level does not have (so not listed
# in __all__): lamina.pallas is jax.experimental.pallas.
_LAYER_SHORT_NAMES = ("pallas",)

__all__ = sorted([*_SUBMODULES, *_NAMES])


def __getattr__(name: str):
    if name in _LAYER_SHORT_NAMES:
        importlib.import_module("lamina.numpy")
        value = importlib.import_module(f"lamina.{name}")
        globals()[name] = value
        return value
    if name not in _SUBMODULES and name not in _NAMES:
        raise AttributeError(f"module 'lamina' has no attribute {name!r}")
    try:
        value = _load(name)
    except AttributeError as e:
        # A failure inside a layer, not a missing name: left an AttributeError, it would
        # read as "cannot import name" to `from lamina import x`, and hasattr() hides it.
        raise ImportError(f"lamina could not load {name!r}: {type(e).__name__}: {e}") from e
    globals()[name] = value
    return value


def _load(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"lamina.{name}")
    if _NAMES[name].startswith(_RUNTIME):
        importlib.import_module("lamina.numpy")
        importlib.import_module("lamina.sharding")  # abstract values' `.sharding`
    return getattr(importlib.import_module(_NAMES[name]), name)


def __dir__():
    return sorted({*globals(), *__all__})
