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
    "ad_checkpoint",
    "custom_derivatives",
    "dtypes",
    "errors",
    "image",
    "lax",
    "nn",
    "numpy",
    "ops",
    "random",
    "test_util",
    "tree",
    "tree_util",
    "typing",
)
# Public names and the module that defines each. Runtime names load lamina.numpy as
# well, which installs the array operators and methods (x * 2 and x.sum() must work on
# any array a user can make).
_RUNTIME = "lamina.interpreters"
_NAMES = {
    "Partial": "lamina.tree_util",
    "float0": "lamina.dtypes",
    **{
        name: _RUNTIME
        for name in (
            "Array",
            "ShapeDtypeStruct",
            "Shard",
            "block_until_ready",
            "checkpoint",
            "checkpoint_policies",
            "clear_caches",
            "closure_convert",
            "config",
            "copy_to_host_async",
            "custom_gradient",
            "custom_jvp",
            "custom_vjp",
            "debug_infs",
            "debug_nans",
            "Device",
            "default_backend",
            "device_count",
            "device_get",
            "device_put",
            "devices",
            "disable_jit",
            "enable_x64",
            "ensure_compile_time_eval",
            "eval_shape",
            "grad",
            "hessian",
            "host_count",
            "host_id",
            "host_ids",
            "jacfwd",
            "jacobian",
            "jacrev",
            "jit",
            "jvp",
            "linear_transpose",
            "linearize",
            "live_arrays",
            "local_device_count",
            "local_devices",
            "log_compiles",
            "make_jaxpr",
            "named_call",
            "named_scope",
            "process_count",
            "process_index",
            "process_indices",
            "remat",
            "softmax_custom_jvp",
            "typeof",
            "value_and_grad",
            "vjp",
            "vmap",
        )
    },
}

# Layers that are not built yet, with their issues: lamina.<name> raises saying so.
_NOT_BUILT = {"scipy": 16, "sharding": 17, "export": 18, "pallas": 19, "profiler": 20}

__all__ = sorted([*_SUBMODULES, *_NAMES])


def __getattr__(name: str):
    if name in _NOT_BUILT:
        raise AttributeError(f"lamina.{name} is not built yet (issue {_NOT_BUILT[name]})")
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
    return getattr(importlib.import_module(_NAMES[name]), name)


def __dir__():
    return sorted({*globals(), *__all__})
