"""lamina.ir: dtypes, abstract values, the Jaxpr IR, primitives, effects and pytrees.

This layer depends on numpy and ml_dtypes only: tools that read, write or check Jaxprs
need nothing else.
"""

from lamina.ir import dtypes, effects, tree, tree_util
from lamina.ir.checker import JaxprTypeError, check_jaxpr
from lamina.ir.core.avals import (
    AbstractToken,
    AbstractValue,
    ShapedArray,
    abstract_token,
    is_extended_aval,
    physical_aval,
)
from lamina.ir.core.jaxpr import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    SourceInfo,
    Var,
    new_jaxpr_eqn,
    pp_eqn,
    pp_jaxpr,
)
from lamina.ir.core.primitives import (
    MissingRuleError,
    Primitive,
    PrimitiveRegistry,
    RuleTable,
    abstract_eval_rules,
    batching_rules,
    collective_rules,
    default_registry,
    impl_rules,
    jvp_rules,
    lowering_rules,
    partial_eval_rules,
    remat_split_rules,
    set_bind_handler,
    shared_names_rules,
    transpose_rules,
)
from lamina.ir.dtypes import enable_x64
from lamina.ir.dtypes.kinds import ExtendedDType, prng_key, register_extended_dtype
from lamina.ir.effects import (
    Effect,
    EffectTypeSet,
    control_flow_allowed_effects,
    lowerable_effects,
    no_effects,
    ordered_effects,
)
from lamina.ir.parsing.lexer import JaxprSyntaxError
from lamina.ir.parsing.parse_params import declare_param, parse_call_args, register_value_reader
from lamina.ir.parsing.parser import parse_closed_jaxpr, parse_jaxpr
from lamina.ir.tracebacks import (
    UnfilteredStackTrace,
    api_boundary,
    filter_traceback,
    is_lamina_file,
    register_boundary,
    set_traceback_filtering_source,
    transformation_boundary,
    wrap_api_functions,
)
from lamina.ir.trees.errors import prefix_errors

__all__ = [
    "AbstractToken",
    "AbstractValue",
    "ClosedJaxpr",
    "DropVar",
    "Effect",
    "EffectTypeSet",
    "ExtendedDType",
    "Jaxpr",
    "JaxprEqn",
    "JaxprSyntaxError",
    "JaxprTypeError",
    "Literal",
    "MissingRuleError",
    "Primitive",
    "PrimitiveRegistry",
    "RuleTable",
    "ShapedArray",
    "SourceInfo",
    "UnfilteredStackTrace",
    "Var",
    "abstract_eval_rules",
    "abstract_token",
    "api_boundary",
    "batching_rules",
    "check_jaxpr",
    "collective_rules",
    "control_flow_allowed_effects",
    "declare_param",
    "default_registry",
    "dtypes",
    "effects",
    "enable_x64",
    "filter_traceback",
    "impl_rules",
    "is_extended_aval",
    "is_lamina_file",
    "jvp_rules",
    "lowerable_effects",
    "lowering_rules",
    "new_jaxpr_eqn",
    "no_effects",
    "ordered_effects",
    "parse_call_args",
    "parse_closed_jaxpr",
    "parse_jaxpr",
    "partial_eval_rules",
    "physical_aval",
    "pp_eqn",
    "pp_jaxpr",
    "prefix_errors",
    "prng_key",
    "register_boundary",
    "register_extended_dtype",
    "register_value_reader",
    "remat_split_rules",
    "set_bind_handler",
    "set_traceback_filtering_source",
    "shared_names_rules",
    "transformation_boundary",
    "transpose_rules",
    "tree",
    "tree_util",
    "wrap_api_functions",
]
