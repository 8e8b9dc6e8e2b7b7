"""lamina: a JAX-compatible array library built from thin layers on jaxlib.

``import lamina as jax`` gives the public API as the layers provide it.
"""

import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)

from lamina import dtypes, errors, lax, tree, tree_util
from lamina.interpreters import (
    Array,
    ShapeDtypeStruct,
    block_until_ready,
    clear_caches,
    config,
    default_backend,
    device_count,
    device_get,
    device_put,
    devices,
    disable_jit,
    enable_x64,
    eval_shape,
    jit,
    live_arrays,
    local_device_count,
    local_devices,
    make_jaxpr,
    process_count,
    process_index,
)
from lamina.tree_util import Partial

__version__ = "0.1.0"
__all__ = [
    "Array",
    "Partial",
    "ShapeDtypeStruct",
    "block_until_ready",
    "clear_caches",
    "config",
    "default_backend",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "disable_jit",
    "dtypes",
    "enable_x64",
    "errors",
    "eval_shape",
    "jit",
    "lax",
    "live_arrays",
    "local_device_count",
    "local_devices",
    "make_jaxpr",
    "process_count",
    "process_index",
    "tree",
    "tree_util",
]
