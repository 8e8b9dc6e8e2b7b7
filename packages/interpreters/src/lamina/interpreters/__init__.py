"""lamina.interpreters: the runtime under lamina (see this package's README.md).

Built so far: configuration (:mod:`.config`), the jaxlib backends and compilation
(:mod:`.backend`), shardings (:mod:`.sharding`), ``Array`` (:mod:`.array`), host/device
transfers (:mod:`.transfer`), DLPack (:mod:`.dlpack`) and running compiled StableHLO
(:mod:`.execute`). Tracing, jit, AD and lowering come next.
"""

import os as _os

# jaxlib's C++ logging prints INFO lines (device counts, ...) unless told otherwise;
# quiet it as JAX does, before jaxlib loads, leaving a user's own setting alone.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from lamina.interpreters.array import (
    Array,
    ArrayImpl,
    Shard,
    register_tracer_class,
    set_array_attribute,
)
from lamina.interpreters.backend import (
    Device,
    backends,
    default_backend,
    device_count,
    devices,
    get_backend,
    local_device_count,
    local_devices,
    process_count,
    process_index,
)
from lamina.interpreters.config import Config, config, disable_jit, enable_x64
from lamina.interpreters.dlpack import from_dlpack
from lamina.interpreters.execute import CompiledModule, execute_stablehlo
from lamina.interpreters.sharding import Sharding, SingleDeviceSharding
from lamina.interpreters.transfer import (
    block_until_ready,
    device_get,
    device_put,
    live_arrays,
)

__all__ = [
    "Array",
    "ArrayImpl",
    "CompiledModule",
    "Config",
    "Device",
    "Shard",
    "Sharding",
    "SingleDeviceSharding",
    "backends",
    "block_until_ready",
    "config",
    "default_backend",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "disable_jit",
    "enable_x64",
    "execute_stablehlo",
    "from_dlpack",
    "get_backend",
    "live_arrays",
    "local_device_count",
    "local_devices",
    "process_count",
    "process_index",
    "register_tracer_class",
    "set_array_attribute",
]
