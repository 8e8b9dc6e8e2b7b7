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

# The package's modules are attributes of the namespace (lamina.interpreters.batching, ...).
# The modules of JAX's ``jax.interpreters``, over the modules above (their names are
# JAX's, so lamina.interpreters.ad is JAX's ad; the internal modules keep their places).
from lamina.interpreters import ad as ad
from lamina.interpreters import batching as batching
from lamina.interpreters import mlir as mlir
from lamina.interpreters import partial_eval as partial_eval
from lamina.interpreters import pxla as pxla
from lamina.interpreters import xla as xla
from lamina.interpreters.core import errors as errors
from lamina.interpreters.core import monitoring as monitoring
from lamina.interpreters.core import naming as naming
from lamina.interpreters.core import tracing as tracing
from lamina.interpreters.core.config import (
    Config,
    HostTransferWatch,
    allow_f16_reductions,
    array_garbage_collection_guard,
    auto_pcast,
    check_tracer_leaks,
    checking_leaks,
    config,
    debug_infs,
    debug_key_reuse,
    debug_nans,
    default_device,
    default_matmul_precision,
    default_prng_impl,
    disable_jit,
    enable_checks,
    enable_custom_prng,
    enable_x64,
    explain_cache_misses,
    host_transfer_watch,
    jax2tf_associative_scan_reductions,
    legacy_prng_key,
    log_compiles,
    no_execution,
    no_tracing,
    numpy_dtype_promotion,
    numpy_rank_promotion,
    remove_size_one_mesh_axis_from_type,
    softmax_custom_jvp,
    thread_guard,
    threefry_partitionable,
    trace_context,
    transfer_guard,
    transfer_guard_device_to_device,
    transfer_guard_device_to_host,
    transfer_guard_host_to_device,
)
from lamina.interpreters.core.errors import (
    ConcretizationTypeError,
    InconclusiveDimensionOperation,
    JAXIndexError,
    JaxRuntimeError,
    JAXTypeError,
    KeyReuseError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from lamina.interpreters.core.naming import named_call, named_scope
from lamina.interpreters.core.tangents import Zero
from lamina.interpreters.core.tracing import (
    JAX_ARRAY_ABSTRACTIFY,
    EvalTrace,
    Trace,
    Tracer,
    array_methods,
    ensure_compile_time_eval,
    eval_trace,
    find_current_trace,
    ref_methods,
    set_current_trace,
    shaped_abstractify,
    take_current_trace,
    typeof,
)
from lamina.interpreters.core.user_context import UserConfig, make_user_context
from lamina.interpreters.jaxprs import calls as calls
from lamina.interpreters.jaxprs import discharge as discharge
from lamina.interpreters.jaxprs import host_callbacks as host_callbacks
from lamina.interpreters.jaxprs import jaxpr_cache as jaxpr_cache
from lamina.interpreters.jaxprs import key_reuse as key_reuse
from lamina.interpreters.jaxprs import lowering as lowering
from lamina.interpreters.jaxprs import mlir_builders as mlir_builders
from lamina.interpreters.jaxprs import staging as staging
from lamina.interpreters.jaxprs import tokens as tokens
from lamina.interpreters.jaxprs import trace_api as trace_api
from lamina.interpreters.jaxprs.calls import call_jaxpr, call_staged, eval_jaxpr, jit_p
from lamina.interpreters.jaxprs.dim_as_value import dim_as_value, dim_as_value_p
from lamina.interpreters.jaxprs.discharge import (
    Discharged,
    discharge_state,
    has_refs,
    run_discharged,
)
from lamina.interpreters.jaxprs.host_callbacks import emit_python_callback
from lamina.interpreters.jaxprs.lowering import (
    LoweredModule,
    LoweringRuleContext,
    call_lowering,
    get_lowering_rule,
    lower_fun,
    lower_jaxpr,
    lower_jaxpr_body,
)
from lamina.interpreters.jaxprs.staging import (
    DynamicJaxprTrace,
    describe_function,
    params_effects,
    trace_to_jaxpr,
)
from lamina.interpreters.jaxprs.tokens import Token
from lamina.interpreters.jaxprs.trace_api import ShapeDtypeStruct, eval_shape, make_jaxpr
from lamina.interpreters.jit_functions import fastpath as fastpath
from lamina.interpreters.jit_functions import jit_args as jit_args
from lamina.interpreters.jit_functions.fwd_and_bwd import fwd_and_bwd
from lamina.interpreters.jit_functions.jit import clear_caches, jit
from lamina.interpreters.jit_functions.stages import ArgInfo, Compiled, Lowered, Traced
from lamina.interpreters.runtime import array as array
from lamina.interpreters.runtime import backend as backend
from lamina.interpreters.runtime import compilation_cache as compilation_cache
from lamina.interpreters.runtime import cpp_classes as cpp_classes
from lamina.interpreters.runtime import device_put_primitive as device_put_primitive
from lamina.interpreters.runtime import dispatch as dispatch
from lamina.interpreters.runtime import dlpack as dlpack
from lamina.interpreters.runtime import executables as executables
from lamina.interpreters.runtime import execute as execute
from lamina.interpreters.runtime import extended as extended
from lamina.interpreters.runtime import float_checks as float_checks
from lamina.interpreters.runtime import polymorphic_calls as polymorphic_calls
from lamina.interpreters.runtime import runtime_tokens as runtime_tokens
from lamina.interpreters.runtime import sharding as sharding
from lamina.interpreters.runtime import transfer as transfer
from lamina.interpreters.runtime.array import (
    Array,
    ArrayImpl,
    Shard,
    register_tracer_class,
    set_array_attribute,
)
from lamina.interpreters.runtime.backend import (
    Device,
    backends,
    default_backend,
    device_count,
    devices,
    get_backend,
    host_count,
    host_id,
    host_ids,
    local_device_count,
    local_devices,
    process_count,
    process_index,
    process_indices,
)
from lamina.interpreters.runtime.cpp_pjit import FastpathData
from lamina.interpreters.runtime.device_put_primitive import device_put_p
from lamina.interpreters.runtime.dispatch import (
    apply_extended,
    apply_primitive,
    compile_count,
    def_standard_impl,
    primitive_executable,
    scalar_array,
)
from lamina.interpreters.runtime.dlpack import from_dlpack
from lamina.interpreters.runtime.execute import CompiledModule, execute_stablehlo
from lamina.interpreters.runtime.extended import physical_value
from lamina.interpreters.runtime.extended_array import EArray
from lamina.interpreters.runtime.ffi_targets import (
    include_dir,
    pycapsule,
    register_ffi_target,
    register_ffi_target_as_batch_partitionable,
    register_ffi_type,
    register_ffi_type_id,
)
from lamina.interpreters.runtime.partitioning import check_fits
from lamina.interpreters.runtime.polymorphic_calls import call_polymorphic, refine_module
from lamina.interpreters.runtime.refs import Ref
from lamina.interpreters.runtime.runtime_tokens import effects_barrier
from lamina.interpreters.runtime.sharding import (
    GSPMDSharding,
    Sharding,
    SingleDeviceSharding,
    first_device,
    sharding_for_device,
    sharding_with_new_dim,
)
from lamina.interpreters.runtime.transfer import (
    block_until_ready,
    copy_array,
    copy_to_host_async,
    device_get,
    device_put,
    device_put_value,
    live_arrays,
    placement,
    put_on_device,
)
from lamina.interpreters.transformations import checkpoint_partial_eval as checkpoint_partial_eval
from lamina.interpreters.transformations import custom_calls as custom_calls
from lamina.interpreters.transformations import custom_derivatives as custom_derivatives
from lamina.interpreters.transformations import jacobians as jacobians
from lamina.interpreters.transformations import reverse as reverse
from lamina.interpreters.transformations.ad import JVPTrace, JVPTracer, jvp
from lamina.interpreters.transformations.batching import (
    AxisData,
    BatchTrace,
    BatchTracer,
    axis_env,
    moveaxis,
    not_mapped,
    vmap,
)
from lamina.interpreters.transformations.checkpoint import (
    checkpoint,
    checkpoint_name,
    checkpoint_p,
    checkpoint_policies,
    remat,
)
from lamina.interpreters.transformations.checkpoint_markers import (
    Offloadable,
    Recompute,
    Saveable,
)
from lamina.interpreters.transformations.custom_derivatives import (
    CustomVJPException,
    CustomVJPPrimal,
    SymbolicZero,
    closure_convert,
    custom_gradient,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)
from lamina.interpreters.transformations.custom_vmap import custom_vmap, custom_vmap_p
from lamina.interpreters.transformations.extended_lowering import allow_extended, lower_on_physical
from lamina.interpreters.transformations.jacobians import (
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    linear_transpose,
)
from lamina.interpreters.transformations.linear_call import linear_call, linear_call_p
from lamina.interpreters.transformations.partial_eval import (
    partial_eval_jaxpr,
)
from lamina.interpreters.transformations.remat_opt import remat_opt_p
from lamina.interpreters.transformations.reverse import (
    VJP,
    DidntWant,
    DontWant,
    GradRef,
    GradValue,
    RefCotangent,
    UndefinedPrimal,
    accept_ref_cotangents,
    backward_pass,
    grad,
    is_undefined_primal,
    linearize,
    register_ref_cotangent_ops,
    value_and_grad,
    vjp,
)
from lamina.interpreters.transformations.saved_residuals import (
    print_saved_residuals,
    saved_residuals,
)
from lamina.interpreters.transformations.stop_gradient import stop_gradient, stop_gradient_p

# Tracers are arrays too: isinstance(tracer, lamina.Array) holds, as in JAX.
register_tracer_class(Tracer)

__all__ = [
    "JAX_ARRAY_ABSTRACTIFY",
    "VJP",
    "ArgInfo",
    "Array",
    "ArrayImpl",
    "AxisData",
    "BatchTrace",
    "BatchTracer",
    "Compiled",
    "CompiledModule",
    "ConcretizationTypeError",
    "Config",
    "CustomVJPException",
    "CustomVJPPrimal",
    "Device",
    "DidntWant",
    "Discharged",
    "DontWant",
    "DynamicJaxprTrace",
    "EArray",
    "EvalTrace",
    "FastpathData",
    "GSPMDSharding",
    "GradRef",
    "GradValue",
    "HostTransferWatch",
    "InconclusiveDimensionOperation",
    "JAXIndexError",
    "JAXTypeError",
    "JVPTrace",
    "JVPTracer",
    "JaxRuntimeError",
    "KeyReuseError",
    "Lowered",
    "LoweredModule",
    "LoweringRuleContext",
    "NonConcreteBooleanIndexError",
    "Offloadable",
    "Recompute",
    "Ref",
    "RefCotangent",
    "Saveable",
    "ShapeDtypeStruct",
    "Shard",
    "Sharding",
    "SingleDeviceSharding",
    "SymbolicZero",
    "Token",
    "Trace",
    "Traced",
    "Tracer",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UndefinedPrimal",
    "UnexpectedTracerError",
    "UserConfig",
    "Zero",
    "accept_ref_cotangents",
    "allow_extended",
    "allow_f16_reductions",
    "apply_extended",
    "apply_primitive",
    "array_garbage_collection_guard",
    "array_methods",
    "auto_pcast",
    "axis_env",
    "backends",
    "backward_pass",
    "block_until_ready",
    "call_jaxpr",
    "call_lowering",
    "call_polymorphic",
    "call_staged",
    "check_fits",
    "check_tracer_leaks",
    "checking_leaks",
    "checkpoint",
    "checkpoint_name",
    "checkpoint_p",
    "checkpoint_policies",
    "clear_caches",
    "closure_convert",
    "compile_count",
    "config",
    "copy_array",
    "copy_to_host_async",
    "custom_gradient",
    "custom_jvp",
    "custom_jvp_call_p",
    "custom_vjp",
    "custom_vjp_call_p",
    "custom_vjp_primal_tree_values",
    "custom_vmap",
    "custom_vmap_p",
    "debug_infs",
    "debug_key_reuse",
    "debug_nans",
    "def_standard_impl",
    "default_backend",
    "default_device",
    "default_matmul_precision",
    "default_prng_impl",
    "describe_function",
    "device_count",
    "device_get",
    "device_put",
    "device_put_p",
    "device_put_value",
    "devices",
    "dim_as_value",
    "dim_as_value_p",
    "disable_jit",
    "discharge_state",
    "effects_barrier",
    "emit_python_callback",
    "enable_checks",
    "enable_custom_prng",
    "enable_x64",
    "ensure_compile_time_eval",
    "eval_jaxpr",
    "eval_shape",
    "eval_trace",
    "execute_stablehlo",
    "explain_cache_misses",
    "find_current_trace",
    "first_device",
    "from_dlpack",
    "fwd_and_bwd",
    "get_backend",
    "get_lowering_rule",
    "grad",
    "has_refs",
    "hessian",
    "host_count",
    "host_id",
    "host_ids",
    "host_transfer_watch",
    "include_dir",
    "is_undefined_primal",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jax2tf_associative_scan_reductions",
    "jit",
    "jit_p",
    "jvp",
    "legacy_prng_key",
    "linear_call",
    "linear_call_p",
    "linear_transpose",
    "linearize",
    "live_arrays",
    "local_device_count",
    "local_devices",
    "log_compiles",
    "lower_fun",
    "lower_jaxpr",
    "lower_jaxpr_body",
    "lower_on_physical",
    "make_jaxpr",
    "make_user_context",
    "moveaxis",
    "named_call",
    "named_scope",
    "no_execution",
    "no_tracing",
    "not_mapped",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "params_effects",
    "partial_eval_jaxpr",
    "physical_value",
    "placement",
    "primitive_executable",
    "print_saved_residuals",
    "process_count",
    "process_index",
    "process_indices",
    "put_on_device",
    "pycapsule",
    "ref_methods",
    "refine_module",
    "register_ffi_target",
    "register_ffi_target_as_batch_partitionable",
    "register_ffi_type",
    "register_ffi_type_id",
    "register_ref_cotangent_ops",
    "register_tracer_class",
    "remat",
    "remat_opt_p",
    "remove_size_one_mesh_axis_from_type",
    "run_discharged",
    "saved_residuals",
    "scalar_array",
    "set_array_attribute",
    "set_current_trace",
    "shaped_abstractify",
    "sharding_for_device",
    "sharding_with_new_dim",
    "softmax_custom_jvp",
    "stop_gradient",
    "stop_gradient_p",
    "take_current_trace",
    "thread_guard",
    "threefry_partitionable",
    "trace_context",
    "trace_to_jaxpr",
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
    "typeof",
    "value_and_grad",
    "vjp",
    "vmap",
    "zero_from_primal",
]
