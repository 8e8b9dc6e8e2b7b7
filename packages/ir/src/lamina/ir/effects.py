"""Side effects of equations and Jaxprs.

An effect is an instance of an ``Effect`` subclass; sets of effects are frozensets.
Each effect *type* may be declared ordered (executions must keep program order, as with
IO that a user observes) or given other properties through the ``EffectTypeSet``
registries below. Higher layers declare their effect types here once.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "Effect",
    "EffectTypeSet",
    "Effects",
    "control_flow_allowed_effects",
    "custom_derivatives_allowed_effects",
    "is_ordered",
    "lowerable_effects",
    "no_effects",
    "ordered_effects",
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


def is_ordered(effect: Effect) -> bool:
    return ordered_effects.contains(effect)
