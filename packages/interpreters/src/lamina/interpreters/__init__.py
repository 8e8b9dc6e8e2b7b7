"""lamina.interpreters: the runtime under lamina (see this package's README.md).

Built so far: configuration (:mod:`.config`), the jaxlib backends and compilation
(:mod:`.backend`), shardings (:mod:`.sharding`), ``Array`` (:mod:`.array`), host/device
transfers (:mod:`.transfer`), DLPack (:mod:`.dlpack`) and running compiled StableHLO
(:mod:`.execute`), tracing (:mod:`.tracing`, :mod:`.staging`, :mod:`.trace_api`) and
the staged call primitive ``jit`` (:mod:`.calls`), ``jit`` (:mod:`.jit`, :mod:`.stages`,
:mod:`.fastpath`), forward-mode AD (:mod:`.ad`), batching (:mod:`.batching`),
reverse mode (:mod:`.partial_eval`, :mod:`.reverse`, :mod:`.jacobians`), custom
derivative rules (:mod:`.custom_derivatives`) and rematerialisation (:mod:`.checkpoint`).
"""

import os as _os

# jaxlib's C++ logging prints INFO lines (device counts, ...) unless told otherwise;
# quiet it as JAX does, before jaxlib loads, leaving a user's own setting alone.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from lamina.interpreters.ad import JVPTrace, JVPTracer, jvp
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
from lamina.interpreters.batching import (
    AxisData,
    BatchTrace,
    BatchTracer,
    axis_env,
    moveaxis,
    not_mapped,
    vmap,
)
from lamina.interpreters.calls import call_jaxpr, call_staged, eval_jaxpr, jit_p
from lamina.interpreters.checkpoint import (
    checkpoint,
    checkpoint_name,
    checkpoint_p,
    checkpoint_policies,
    remat,
)
from lamina.interpreters.config import (
    Config,
    config,
    disable_jit,
    enable_x64,
    softmax_custom_jvp,
)
from lamina.interpreters.cpp_pjit import FastpathData
from lamina.interpreters.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    closure_convert,
    custom_gradient,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
    zero_from_primal,
)
from lamina.interpreters.device_put_primitive import device_put_p
from lamina.interpreters.dispatch import (
    apply_extended,
    apply_primitive,
    compile_count,
    def_standard_impl,
    primitive_executable,
    scalar_array,
)
from lamina.interpreters.dlpack import from_dlpack
from lamina.interpreters.errors import (
    ConcretizationTypeError,
    JAXIndexError,
    JAXTypeError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from lamina.interpreters.execute import CompiledModule, execute_stablehlo
from lamina.interpreters.extended import physical_value
from lamina.interpreters.extended_lowering import allow_extended, lower_on_physical
from lamina.interpreters.jacobians import hessian, jacfwd, jacobian, jacrev, linear_transpose
from lamina.interpreters.jit import clear_caches, jit
from lamina.interpreters.lowering import (
    LoweredModule,
    LoweringRuleContext,
    call_lowering,
    get_lowering_rule,
    lower_fun,
    lower_jaxpr,
    lower_jaxpr_body,
)
from lamina.interpreters.partial_eval import (
    PartialEvalTrace,
    partial_eval_jaxpr,
)
from lamina.interpreters.reverse import (
    UndefinedPrimal,
    backward_pass,
    grad,
    is_undefined_primal,
    linearize,
    value_and_grad,
    vjp,
)
from lamina.interpreters.sharding import Sharding, SingleDeviceSharding, sharding_for_device
from lamina.interpreters.staging import DynamicJaxprTrace, describe_function, trace_to_jaxpr
from lamina.interpreters.stop_gradient import stop_gradient, stop_gradient_p
from lamina.interpreters.tangents import Zero
from lamina.interpreters.tokens import Token
from lamina.interpreters.trace_api import ShapeDtypeStruct, eval_shape, make_jaxpr
from lamina.interpreters.tracing import (
    EvalTrace,
    Trace,
    Tracer,
    array_methods,
    eval_trace,
    find_current_trace,
    set_current_trace,
    shaped_abstractify,
    take_current_trace,
)
from lamina.interpreters.transfer import (
    block_until_ready,
    copy_array,
    device_get,
    device_put,
    device_put_value,
    live_arrays,
    placement,
)

# Tracers are arrays too: isinstance(tracer, lamina.Array) holds, as in JAX.
register_tracer_class(Tracer)

__all__ = [
    "Array",
    "ArrayImpl",
    "AxisData",
    "BatchTrace",
    "BatchTracer",
    "CompiledModule",
    "ConcretizationTypeError",
    "Config",
    "CustomVJPPrimal",
    "Device",
    "DynamicJaxprTrace",
    "EvalTrace",
    "FastpathData",
    "JAXIndexError",
    "JAXTypeError",
    "JVPTrace",
    "JVPTracer",
    "LoweredModule",
    "LoweringRuleContext",
    "NonConcreteBooleanIndexError",
    "PartialEvalTrace",
    "ShapeDtypeStruct",
    "Shard",
    "Sharding",
    "SingleDeviceSharding",
    "SymbolicZero",
    "Token",
    "Trace",
    "Tracer",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UndefinedPrimal",
    "UnexpectedTracerError",
    "Zero",
    "allow_extended",
    "apply_extended",
    "apply_primitive",
    "array_methods",
    "axis_env",
    "backends",
    "backward_pass",
    "block_until_ready",
    "call_jaxpr",
    "call_lowering",
    "call_staged",
    "checkpoint",
    "checkpoint_name",
    "checkpoint_p",
    "checkpoint_policies",
    "clear_caches",
    "closure_convert",
    "compile_count",
    "config",
    "copy_array",
    "custom_gradient",
    "custom_jvp",
    "custom_jvp_call_p",
    "custom_vjp",
    "custom_vjp_call_p",
    "def_standard_impl",
    "default_backend",
    "describe_function",
    "device_count",
    "device_get",
    "device_put",
    "device_put_p",
    "device_put_value",
    "devices",
    "disable_jit",
    "enable_x64",
    "eval_jaxpr",
    "eval_shape",
    "eval_trace",
    "execute_stablehlo",
    "find_current_trace",
    "from_dlpack",
    "get_backend",
    "get_lowering_rule",
    "grad",
    "hessian",
    "is_undefined_primal",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jit",
    "jit_p",
    "jvp",
    "linear_transpose",
    "linearize",
    "live_arrays",
    "local_device_count",
    "local_devices",
    "lower_fun",
    "lower_jaxpr",
    "lower_jaxpr_body",
    "lower_on_physical",
    "make_jaxpr",
    "moveaxis",
    "not_mapped",
    "partial_eval_jaxpr",
    "physical_value",
    "placement",
    "primitive_executable",
    "process_count",
    "process_index",
    "register_tracer_class",
    "remat",
    "scalar_array",
    "set_array_attribute",
    "set_current_trace",
    "shaped_abstractify",
    "sharding_for_device",
    "softmax_custom_jvp",
    "stop_gradient",
    "stop_gradient_p",
    "take_current_trace",
    "trace_to_jaxpr",
    "value_and_grad",
    "vjp",
    "vmap",
    "zero_from_primal",
]
