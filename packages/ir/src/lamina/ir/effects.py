"""Side effects of equations and Jaxprs.

An effect is an instance of an ``Effect`` subclass; sets of effects are frozensets.
Each effect *type* may be declared ordered (executions must keep program order, as with
IO that a user observes) or given other properties through the ``EffectTypeSet``
registries below. Higher layers declare their effect types here once.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "AccumEffect",
    "Effect",
    "EffectTypeSet",
    "Effects",
    "InternalMutableArrayEffect",
    "ReadEffect",
    "RefEffect",
    "WriteEffect",
    "control_flow_allowed_effects",
    "custom_derivatives_allowed_effects",
    "internal_mutable_array_effect",
    "is_ordered",
    "lowerable_effects",
    "no_effects",
    "ordered_effects",
    "ref_effects_of",
    "remat_allowed_effects",
]


class Effect:
    """Base class of effects. Subclasses define equality where instances carry data."""

    def __repr__(self) -> str:
        return type(self).__name__


Effects = frozenset
no_effects: frozenset[Effect] = frozenset()


class EffectTypeSet:
    """A set of effect types; an effect belongs when its type is (a subclass of) a member."""

    def __init__(self, types: Iterable[type[Effect]] = ()):
        self._types: set[type[Effect]] = set(types)

    def add_type(self, effect_type: type[Effect]) -> None:
        if not (isinstance(effect_type, type) and issubclass(effect_type, Effect)):
            raise TypeError(f"expected a subclass of Effect, got {effect_type!r}")
        self._types.add(effect_type)

    def contains(self, effect: Effect) -> bool:
        return isinstance(effect, tuple(self._types))

    def filter_in(self, effects: Iterable[Effect]) -> list[Effect]:
        return [e for e in effects if self.contains(e)]

    def filter_not_in(self, effects: Iterable[Effect]) -> list[Effect]:
        return [e for e in effects if not self.contains(e)]


ordered_effects = EffectTypeSet()
lowerable_effects = EffectTypeSet()
control_flow_allowed_effects = EffectTypeSet()
custom_derivatives_allowed_effects = EffectTypeSet()
remat_allowed_effects = EffectTypeSet()
# Ordered effects a program over several devices may have (others raise there).
shardable_ordered_effects = EffectTypeSet()


def is_ordered(effect: Effect) -> bool:
    return ordered_effects.contains(effect)


# ---------------------------------------------------------------- mutable array references


class RefEffect(Effect):
    """An access to a mutable array reference. ``input`` names the reference: the
    position of an equation's operand while a rule computes effects, the ``Var`` of
    that operand once the equation is staged."""

    name = "Ref"

    def __init__(self, input):
        self.input = input

    def _key(self):
        # A Var compares by identity, an operand position by value.
        return self.input if isinstance(self.input, int) else id(self.input)

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash((type(self), self._key()))

    def __str__(self):
        return f"{self.name}<{self.input}>"

    def __repr__(self):
        return f"{type(self).__name__}({self.input!r})"

    def pretty_print(self, context) -> str:
        ref = self.input if isinstance(self.input, int) else context.var_name(self.input)
        return f"{self.name}<{ref}>"

    def with_input(self, input) -> RefEffect:
        return type(self)(input)


class ReadEffect(RefEffect):
    name = "Read"


class WriteEffect(RefEffect):
    name = "Write"


class AccumEffect(RefEffect):
    name = "Accum"


class InternalMutableArrayEffect(Effect):
    """A program allocates mutable array references of its own."""


internal_mutable_array_effect = InternalMutableArrayEffect()

for _set in (control_flow_allowed_effects, custom_derivatives_allowed_effects,
             remat_allowed_effects):  # fmt: skip
    _set.add_type(RefEffect)
    _set.add_type(InternalMutableArrayEffect)
del _set


def ref_effects_of(effects: Iterable[Effect]) -> list[RefEffect]:
    return [e for e in effects if isinstance(e, RefEffect)]
