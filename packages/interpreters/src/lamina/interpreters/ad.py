"""``jax.interpreters.ad``: JAX's forward- and reverse-mode rule API.

``primitive_jvps[p] = rule`` registers ``rule(primals, tangents, **params) ->
(primal_out, tangent_out)`` and ``primitive_transposes[p] = rule`` registers
``rule(cts, *operands, **params) -> cotangents`` (linear operands given as
:class:`UndefinedPrimal`); both signatures are lamina's own, so the dicts write straight
into ``lamina.ir.jvp_rules`` / ``transpose_rules`` and read every primitive's rule.
``defjvp``, ``defjvp2``, ``deflinear``, ``deflinear2`` and ``defbilinear`` build the
usual rules as JAX's do.

``jvp`` and ``linearize`` take a callable or a ``WrappedFun`` (``linear_util``'s, or
anything with ``call_wrapped``) with primals as ``jax.jvp`` / ``jax.linearize`` take them
(tuples of pytrees; JAX 0.10.2's internal versions take its ``FlatTree``s). Names
imported ``as`` themselves are not JAX's: lamina's other layers use them.
"""

from __future__ import annotations

from lamina.interpreters.core.rule_registries import RuleRegistry
from lamina.interpreters.core.tangents import Zero, instantiate_zeros, zeros_like_aval
from lamina.interpreters.core.tangents import (
    is_zero as is_zero,
)
from lamina.interpreters.core.tangents import (
    register_zeros_maker as register_zeros_maker,
)
from lamina.interpreters.core.tangents import (
    tangent_aval as tangent_aval,
)
from lamina.interpreters.core.tangents import (
    tangent_dtype as tangent_dtype,
)
from lamina.interpreters.transformations.ad import (
    JVPTrace,
    JVPTracer,
    add_any_p,
    add_tangents,
    defjvp,
    defjvp2,
    deflinear,
    deflinear2,
)
from lamina.interpreters.transformations.ad import jvp as _jvp
from lamina.interpreters.transformations.ad import jvp_flat as jvp_flat
from lamina.interpreters.transformations.ad import jvp_jaxpr as jvp_jaxpr
from lamina.interpreters.transformations.ad import on_tangent_side as on_tangent_side
from lamina.interpreters.transformations.ad import split_jvp_outputs as split_jvp_outputs
from lamina.interpreters.transformations.ad import zero_jvp as zero_jvp
from lamina.interpreters.transformations.reverse import (
    UndefinedPrimal,
    defbilinear,
    is_undefined_primal,
)
from lamina.interpreters.transformations.reverse import linearize as _linearize
from lamina.ir import Primitive, jvp_rules, transpose_rules

__all__ = [
    "JVPTrace",
    "JVPTracer",
    "UndefinedPrimal",
    "Zero",
    "add_jaxvals",
    "add_jaxvals_p",
    "add_tangents",
    "defbilinear",
    "defjvp",
    "defjvp2",
    "deflinear",
    "deflinear2",
    "get_primitive_transpose",
    "instantiate_zeros",
    "is_undefined_primal",
    "jvp",
    "linearize",
    "primitive_jvps",
    "primitive_transposes",
    "zeros_like_aval",
]

primitive_jvps = RuleRegistry(jvp_rules)
primitive_transposes = RuleRegistry(transpose_rules)

add_jaxvals_p = add_any_p  # JAX's name for the primitive ``add_any``


def add_jaxvals(x, y):
    """``x + y`` of two tangents or cotangents of the same type (``add_any``)."""
    return add_jaxvals_p.bind(x, y)


def _callable(fun):
    """A ``WrappedFun`` (anything with ``call_wrapped``) as a plain function."""
    call = getattr(fun, "call_wrapped", None)
    return fun if call is None else call


def jvp(fun, primals, tangents, has_aux: bool = False):
    """``jax.jvp`` of ``fun``, a callable or a ``WrappedFun``."""
    return _jvp(_callable(fun), primals, tangents, has_aux=has_aux)


def linearize(fun, *primals):
    """``jax.linearize`` of ``fun``, a callable or a ``WrappedFun``: ``(fun(*primals),
    f_jvp)``."""
    return _linearize(_callable(fun), *primals)


def get_primitive_transpose(p: Primitive):
    """The transpose rule of ``p``; ``NotImplementedError`` when it has none."""
    rule = transpose_rules.get(p)
    if rule is None:
        raise NotImplementedError(
            f"Transpose rule (for reverse-mode differentiation) for '{p}' not implemented"
        )
    return rule
