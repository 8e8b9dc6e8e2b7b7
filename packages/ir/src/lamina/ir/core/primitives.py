"""Primitives and the tables that hold their rules.

A primitive is a name plus rules. Each kind of rule (abstract evaluation, JVP,
transpose, batching, lowering, ...) lives in one ``RuleTable`` defined here, so the
interpreters that use a table need not know any primitive, and the file that defines a
primitive registers all of its rules in one place through ``Primitive.def_*``.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Mapping
from typing import Any

from lamina.ir.core import known_primitives, type_sharding, vma
from lamina.ir.tracebacks import filter_traceback, register_boundary

__all__ = [
    "MissingRuleError",
    "Primitive",
    "PrimitiveRegistry",
    "RuleTable",
    "abstract_eval_rules",
    "batching_rules",
    "collective_rules",
    "default_registry",
    "discharge_rules",
    "impl_rules",
    "jvp_rules",
    "lowering_rules",
    "param_completion_rules",
    "partial_eval_rules",
    "pp_eqn_rules",
    "pp_param_rules",
    "remat_split_rules",
    "set_bind_handler",
    "shared_names_rules",
    "transpose_rules",
]


class MissingRuleError(NotImplementedError):
    """A transformation met a primitive that has no rule for it."""


class RuleTable:
    """Rules of one kind, keyed by primitive. ``what`` names the kind in error messages."""

    def __init__(self, what: str):
        self.what = what
        self._rules: dict[Primitive, Any] = {}

    def __setitem__(self, primitive: Primitive, rule) -> None:
        self._rules[primitive] = rule

    def __getitem__(self, primitive: Primitive):
        try:
            return self._rules[primitive]
        except KeyError:
            raise MissingRuleError(
                f"{self.what} rule for primitive '{primitive.name}' not implemented"
            ) from None

    def __delitem__(self, primitive: Primitive) -> None:
        del self._rules[primitive]

    def __contains__(self, primitive) -> bool:
        return primitive in self._rules

    def get(self, primitive, default=None):
        return self._rules.get(primitive, default)


abstract_eval_rules = RuleTable("Abstract evaluation")
impl_rules = RuleTable("Evaluation")
jvp_rules = RuleTable("Differentiation")
transpose_rules = RuleTable("Transpose")
batching_rules = RuleTable("Batching")
# Lowering rules are keyed by primitive; each entry maps a platform (None = any) to a rule.
lowering_rules = RuleTable("Lowering")
# Printing may hide params implied by types (JAX hides broadcast_in_dim's shape, say);
# a pp rule returns the params to print and a completion rule restores them when parsing.
pp_param_rules = RuleTable("Pretty-printing")
param_completion_rules = RuleTable("Parameter completion")
# Primitives printed in a form of their own (``c:f32[3] <- a[0,:]``):
# ``rule(eqn, names) -> str``, where ``names.binder(v)`` is ``v``'s typed text as an
# output, ``names.use(atom)`` its text as an operand and ``names.is_unused(v)`` whether
# it prints ``_``; names are given in the order the rule asks for them.
pp_eqn_rules = RuleTable("Equation printing")
# Discharging mutable array references (turning a Jaxpr that reads and writes ``Ref``s
# into one that passes arrays): ``rule(in_avals, out_avals, *args, **params) ->
# (new_values, outs)``. ``args`` holds, for each operand of type ``AbstractRef``, the
# array it refers to now; ``new_values`` has, per operand, the array it refers to after
# the equation (None: unchanged); an output of type ``AbstractRef`` is given as the
# array a new reference starts with.
discharge_rules = RuleTable("Discharge")
# Primitives that need more than "stage the whole equation" when some operand is
# unknown during partial evaluation: ``rule(trace, args, **params) -> outs``.
partial_eval_rules = RuleTable("Partial evaluation")
# Printing: the param holding a sub-Jaxpr whose inputs and outputs are the equation's own
# (JAX's jit), so they print with the equation's names.
shared_names_rules = RuleTable("Shared-names printing")
# Call-like primitives that rematerialization splits recursively:
# ``rule(eqn, in_unknown, policy) -> (known_eqn, unknown_eqn, saved_vars)``.
remat_split_rules = RuleTable("Rematerialization split")
# Collectives over named axes (psum, axis_index, ...): ``(axis_names, rule)``, where
# ``axis_names(params)`` gives the names the equation reduces over and the batching trace
# of such a name runs ``rule(axis_data, vals, dims, **params)``.
collective_rules = RuleTable("Collective batching")


class PrimitiveRegistry:
    """Primitives by name, for the parser. The first primitive to take a name keeps it.

    A registry may know primitives that no loaded layer defines: ``known`` maps each
    name to ``(multiple_results, param kinds)`` (``lamina.ir.core.known_primitives``).
    Looking such a name up makes a placeholder ``Primitive`` (without rules) and
    registers it; the layer that defines the primitive later gets that very object from
    ``Primitive(name)``, so Jaxprs read before and after it loads hold the same objects.
    """

    def __init__(self, known: Mapping[str, tuple] | None = None):
        self._by_name: dict[str, Primitive] = {}
        self._known = dict(known or {})
        self._placeholders: set[str] = set()

    def register(self, primitive: Primitive) -> None:
        self._by_name.setdefault(primitive.name, primitive)

    def lookup(self, name: str) -> Primitive | None:
        primitive = self._by_name.get(name)
        if primitive is None and name in self._known:
            primitive = self._placeholder(name)
        return primitive

    def __contains__(self, name: str) -> bool:
        return name in self._by_name or name in self._known

    def names(self) -> list[str]:
        """The names of the primitives defined by loaded layers (not placeholders)."""
        return sorted(n for n in self._by_name if n not in self._placeholders)

    def known_names(self) -> list[str]:
        """Every name the registry can look up: defined and known ones."""
        return sorted(set(self._by_name) | set(self._known))

    def known(self, name: str) -> tuple[bool, dict] | None:
        """``(multiple_results, param kinds)`` of the known primitive ``name``, or None."""
        return self._known.get(name)

    def param_kind(self, name: str, param: str) -> str | None:
        """How the known primitive ``name`` holds ``param``: ``jaxpr``,
        ``closed_jaxpr``, ``str``, ``dtype`` or ``value``; None if not recorded."""
        known = self._known.get(name)
        return None if known is None else known[1].get(param)

    def is_placeholder(self, primitive: Primitive) -> bool:
        return primitive.name in self._placeholders and self._by_name[primitive.name] is primitive

    def _placeholder(self, name: str) -> Primitive:
        primitive = Primitive(name, registry=None)
        primitive.multiple_results = self._known[name][0]
        first = known_primitives.PRINTED_FIRST.get(name)
        if first is not None:
            pp_param_rules[primitive] = functools.partial(_params_printed_first, first)
        param = known_primitives.SHARED_NAMES.get(name)
        if param is not None:
            shared_names_rules[primitive] = param
        self._by_name[name] = primitive
        self._placeholders.add(name)
        return primitive

    def claim(self, name: str) -> Primitive | None:
        """The placeholder named ``name``, emptied for the layer that defines it, or
        None if there is none."""
        if name not in self._placeholders:
            return None
        self._placeholders.discard(name)
        primitive = self._by_name[name]
        for table in (pp_param_rules, shared_names_rules):
            if primitive in table:
                del table[primitive]
        vars(primitive).clear()
        return primitive


def _params_printed_first(first: tuple[str, ...], params: dict) -> list:
    """Params as JAX prints a few primitives' (``jit[name=f jaxpr=...]``): ``first``,
    then the rest sorted."""
    rest = sorted(k for k in params if k not in first)
    return [(k, params[k]) for k in (*first, *rest) if k in params]


default_registry = PrimitiveRegistry(known_primitives.PRIMITIVES)

_bind_handler: Callable[..., Any] | None = None


def set_bind_handler(handler: Callable[..., Any]) -> None:
    """Installed by lamina.interpreters: ``handler(primitive, args, params)`` binds."""
    global _bind_handler
    _bind_handler = handler


class Primitive:
    """An operation of the IR. ``multiple_results`` primitives return a list."""

    multiple_results = False
    # Whether the primitive makes a mutable array reference: batching and JVP apply its
    # rule even when no operand is batched or differentiated (the new reference may be
    # written with batched or differentiated values later).
    ref_allocating = False

    def __new__(cls, *args, **kwargs):
        # A placeholder made for a known name becomes the primitive that defines it.
        name = args[0] if args else kwargs.get("name")
        registry = kwargs.get("registry", _default_registry_of(cls))
        if registry is not None and isinstance(name, str):
            placeholder = registry.claim(name)
            if placeholder is not None:
                placeholder.__class__ = cls
                return placeholder
        return super().__new__(cls)

    def __init__(self, name: str, *, registry: PrimitiveRegistry | None = default_registry):
        if not isinstance(name, str) or not name:
            raise TypeError(f"a primitive needs a non-empty string name, got {name!r}")
        self.name = name
        if registry is not None:
            registry.register(self)

    def __repr__(self):
        return self.name

    def bind(self, *args, **params):
        if vma.checking.on:  # in a shard_map body with check_vma
            args = vma.joined_operands(self, args, params)
        try:
            return _bind_handler(self, args, params)
        except Exception as e:  # an API boundary (lamina.ir.tracebacks)
            if _bind_handler is None:
                raise RuntimeError(
                    f"cannot evaluate primitive '{self.name}': lamina.ir holds no interpreter; "
                    "install and import lamina.interpreters (or the lamina meta-package)"
                ) from None
            filter_traceback(e, sys._getframe())
            raise

    def abstract_eval(self, *avals, **params):
        out = abstract_eval_rules[self](*avals, **params)
        if any(getattr(a, "type_sharding", None) is not None for a in avals) or (
            params.get("sharding") is not None or params.get("out_sharding") is not None
        ):
            if getattr(self, "effectful", False):
                out = type_sharding.with_type_sharding(self, avals, params, out[0]), out[1]
            else:
                out = type_sharding.with_type_sharding(self, avals, params, out)
        if not vma.checking.on:
            return out
        if getattr(self, "effectful", False):
            return vma.with_vma(self, avals, params, out[0]), out[1]
        return vma.with_vma(self, avals, params, out)

    def def_vma(self, rule, operand_axes=None):
        """``rule(*avals, **params)``: the manual axes the results vary over;
        ``operand_axes(params)``: the axes the operands are made to vary over first."""
        vma.vma_rules[self] = rule
        if operand_axes is not None:
            vma.operand_axes_rules[self] = operand_axes
        return rule

    def def_sharding(self, rule):
        """``rule(*avals, **params)``: the spec entries of the results' types when the
        operands' types carry shardings (see :mod:`lamina.ir.core.type_sharding`)."""
        type_sharding.sharding_rules[self] = rule
        return rule

    def impl(self, *args, **params):
        return impl_rules[self](*args, **params)

    def def_abstract_eval(self, rule):
        abstract_eval_rules[self] = rule
        return rule

    def def_effectful_abstract_eval(self, rule):
        """``rule(*avals, **params)`` returns ``(out, effects)``: the primitive's
        equations carry those effects."""
        self.effectful = True
        abstract_eval_rules[self] = rule
        return rule

    def def_impl(self, rule):
        impl_rules[self] = rule
        return rule

    def def_jvp(self, rule):
        jvp_rules[self] = rule
        return rule

    def def_transpose(self, rule):
        transpose_rules[self] = rule
        return rule

    def def_batching(self, rule):
        batching_rules[self] = rule
        return rule

    def def_partial_eval(self, rule):
        partial_eval_rules[self] = rule
        return rule

    def def_remat_split(self, rule):
        remat_split_rules[self] = rule
        return rule

    def def_collective(self, axis_names: Callable[[dict], Any], rule):
        """``axis_names(params)``: the named axes the primitive works over; ``rule``
        runs under the batching trace of such an axis."""
        collective_rules[self] = (axis_names, rule)
        return rule

    def def_discharge(self, rule):
        discharge_rules[self] = rule
        return rule

    def def_pp_eqn(self, rule):
        """Print this primitive's equations as ``rule(eqn, names)`` says."""
        pp_eqn_rules[self] = rule
        return rule

    def def_lowering(self, rule, platform: str | None = None):
        lowering_rules._rules.setdefault(self, {})[platform] = rule
        return rule

    def def_shared_names(self, param: str = "jaxpr"):
        """Print the Jaxpr in ``param`` of this primitive's equations with the caller's
        names for its inputs and outputs (as JAX prints ``jit``)."""
        shared_names_rules[self] = param

    def def_pp_params(self, hide: Callable[[dict], dict], complete: Callable[..., dict]):
        """``hide(params) -> printed params``; ``complete(params, in_avals, out_avals)``
        rebuilds the full params from parsed ones."""
        pp_param_rules[self] = hide
        param_completion_rules[self] = complete


@functools.cache
def _default_registry_of(cls: type) -> PrimitiveRegistry | None:
    """The registry ``cls(name)`` registers in when given none."""
    param = inspect.signature(cls.__init__).parameters.get("registry")
    return default_registry if param is None else param.default


register_boundary(Primitive.bind)
