"""How the compiler treats each axis of a mesh (``AxisType``), and the manual-axis
type of values inside ``shard_map`` (``ManualAxisType``)."""

from __future__ import annotations

import enum

__all__ = ["AxisType", "ManualAxisType", "normalize_axis_types"]


class AxisType(enum.Enum):
    """``Auto``: the compiler picks the shardings; ``Explicit``: shardings are part of
    the types; ``Manual``: the program handles each shard itself (``shard_map``)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


AxisType.__module__ = "lamina.sharding"


def normalize_axis_types(axis_names: tuple, axis_types, owner: str) -> tuple:
    """``axis_types`` as a tuple with one ``AxisType`` per axis name (``Auto`` by
    default); ``owner`` names the caller in errors."""
    if axis_types is None:
        axis_types = (AxisType.Auto,) * len(axis_names)
    if not isinstance(axis_types, tuple):
        axis_types = (axis_types,)
    if not all(isinstance(t, AxisType) for t in axis_types):
        raise TypeError(
            f"axis_types passed to {owner} must be of type `jax.sharding.AxisType`. Got "
            f"{axis_types} of type {tuple(type(t) for t in axis_types)}"
        )
    if len(axis_types) != len(axis_names):
        raise ValueError(
            "Number of axis names should match the number of axis_types. Got "
            f"axis_names={axis_names} and axis_types={axis_types}"
        )
    return axis_types


class ManualAxisType:
    """The mesh axes over which a value inside ``shard_map`` varies, is unreduced, or
    is reduced."""

    __slots__ = ("reduced", "unreduced", "varying")

    def __init__(self, *, varying=frozenset(), unreduced=frozenset(), reduced=frozenset()):
        varying, unreduced, reduced = frozenset(varying), frozenset(unreduced), frozenset(reduced)
        for name, other in (("unreduced", unreduced), ("reduced", reduced)):
            if varying & other:
                raise ValueError(
                    f"varying and {name} cannot have common mesh axes. Got "
                    f"varying={varying} and {name}={other}"
                )
        object.__setattr__(self, "varying", varying)
        object.__setattr__(self, "unreduced", unreduced)
        object.__setattr__(self, "reduced", reduced)

    def __setattr__(self, name, value):
        raise AttributeError(f"ManualAxisType is immutable: cannot set {name!r}")

    def _key(self) -> tuple:
        return (self.varying, self.unreduced, self.reduced)

    def __eq__(self, other) -> bool:
        return isinstance(other, ManualAxisType) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, "
            f"reduced={self.reduced})"
        )

    def __reduce__(self):
        return _rebuild, self._key()

    def update(self, **kwargs) -> ManualAxisType:
        fields = dict(zip(("varying", "unreduced", "reduced"), self._key(), strict=True))
        fields.update(kwargs)
        return ManualAxisType(**fields)


def _rebuild(varying, unreduced, reduced) -> ManualAxisType:
    return ManualAxisType(varying=varying, unreduced=unreduced, reduced=reduced)
