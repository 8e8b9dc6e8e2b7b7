"""lamina.ir: dtypes, abstract values, the Jaxpr IR, primitives, effects and pytrees.

This layer depends on numpy and ml_dtypes only: tools that read, write or check Jaxprs
need nothing else.
"""

from lamina.ir import dtypes, effects, tree, tree_util
from lamina.ir.checker import JaxprTypeError, check_jaxpr
from lamina.ir.core import (
    AbstractToken,
    AbstractValue,
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    ShapedArray,
    SourceInfo,
    Var,
    abstract_token,
    new_jaxpr_eqn,
)
from lamina.ir.effects import Effect, EffectTypeSet, no_effects, ordered_effects
from lamina.ir.lexer import JaxprSyntaxError
from lamina.ir.parser import parse_closed_jaxpr, parse_jaxpr
from lamina.ir.pretty import pp_eqn, pp_jaxpr
from lamina.ir.primitives import (
    MissingRuleError,
    Primitive,
    PrimitiveRegistry,
    RuleTable,
    default_registry,
)

__all__ = [
    "AbstractToken",
    "AbstractValue",
    "ClosedJaxpr",
    "DropVar",
    "Effect",
    "EffectTypeSet",
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
    "Var",
    "abstract_token",
    "check_jaxpr",
    "default_registry",
    "dtypes",
    "effects",
    "new_jaxpr_eqn",
    "no_effects",
    "ordered_effects",
    "parse_closed_jaxpr",
    "parse_jaxpr",
    "pp_eqn",
    "pp_jaxpr",
    "tree",
    "tree_util",
]
