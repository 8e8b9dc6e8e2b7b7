"""``PartitionSpec`` (``P``): for each dimension of an array, the mesh axes it is split
over.

Each entry is ``None`` (not split), an axis name, a tuple of axis names (split over
their product, the first one major) or ``P.UNCONSTRAINED`` (left to the compiler).
``unreduced`` and ``reduced`` name mesh axes over which the value is a partial sum
still to be reduced, or already reduced and replicated.
"""

from __future__ import annotations

from typing import Any

__all__ = ["UNCONSTRAINED", "P", "PartitionSpec"]


class _Unconstrained:
    """The entry of a dimension whose sharding the compiler may choose."""

    def __repr__(self) -> str:
        return "UNCONSTRAINED"

    def __reduce__(self):
        return (_unconstrained, ())


UNCONSTRAINED = _Unconstrained()


def _unconstrained() -> _Unconstrained:
    return UNCONSTRAINED


def _canonical_entry(entry: Any) -> Any:
    """A one-name tuple is the name; an empty tuple is ``None``; lists are tuples."""
    if isinstance(entry, list):
        entry = tuple(entry)
    if isinstance(entry, tuple):
        if len(entry) == 0:
            return None
        if len(entry) == 1:
            return entry[0]
    return entry


def _axis_set(value: Any, name: str) -> frozenset:
    if isinstance(value, frozenset):
        return value
    if not isinstance(value, set):
        raise TypeError(
            f"{name} argument of PartitionSpec should of type `frozenset` or `set`. "
            f"Got type {value}"
        )
    return frozenset(value)


def _check(partitions: tuple, unreduced: frozenset, reduced: frozenset) -> None:
    if None in unreduced or None in reduced:
        which = "unreduced" if None in unreduced else "reduced"
        raise ValueError(
            f"{which} cannot contain None. All elements in {which} should refer to the mesh axes."
        )
    if unreduced & reduced:
        raise ValueError(
            "`unreduced` and `reduced` argument to PartitionSpec cannot overlap. "
            f"Got unreduced: {unreduced} and reduced: {reduced}"
        )
    for entry in partitions:
        for name in entry if isinstance(entry, tuple) else (entry,):
            for which, axes in (("unreduced", unreduced), ("reduced", reduced)):
                if name in axes:
                    raise ValueError(
                        f"partitions cannot overlap with {which} axes passed to "
                        f"PartitionSpec. Got partitions: {partitions} and {which} axes: "
                        f"{axes}"
                    )


class PartitionSpec:
    """How each dimension of an array is split over the axes of a mesh."""

    __slots__ = ("_partitions", "reduced", "unreduced")

    UNCONSTRAINED = UNCONSTRAINED

    def __init__(self, *partitions, unreduced=frozenset(), reduced=frozenset()):
        partitions = tuple(_canonical_entry(p) for p in partitions)
        unreduced = _axis_set(unreduced, "unreduced")
        reduced = _axis_set(reduced, "reduced")
        _check(partitions, unreduced, reduced)
        object.__setattr__(self, "_partitions", partitions)
        object.__setattr__(self, "unreduced", unreduced)
        object.__setattr__(self, "reduced", reduced)

    def __setattr__(self, name, value):
        raise AttributeError(f"PartitionSpec is immutable: cannot set {name!r}")

    def __init_subclass__(cls, **kwargs):
        raise TypeError("Subclassing `jax.P` is prohibited.")

    @property
    def partitions(self) -> tuple:
        return self._partitions

    def _key(self) -> tuple:
        return (self._partitions, self.unreduced, self.reduced)

    def __eq__(self, other) -> bool:
        return isinstance(other, PartitionSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        body = repr(self._partitions)[1:-1]
        extras = []
        if self.unreduced:
            extras.append(f"unreduced={set(self.unreduced)!r}")
        if self.reduced:
            extras.append(f"reduced={set(self.reduced)!r}")
        if not extras:
            return f"P({body})"
        if body:
            body = f"{body} " if body.endswith(",") else f"{body}, "
        return f"P({body}{', '.join(extras)})"

    def __reduce__(self):
        return _rebuild, (self._partitions, self.unreduced, self.reduced)

    def _check_plain(self, what: str, instead: str) -> None:
        if self.reduced or self.unreduced:
            raise ValueError(
                f"Using {what} is dangerous when PartitionSpec has non-empty "
                f"unreduced/reduced set. Please use {instead}"
            )

    def __getitem__(self, i):
        self._check_plain("pspec[...]", "spec.partitions[...]")
        return self._partitions[i]

    def __iter__(self):
        self._check_plain("*pspec", "*spec.partitions")
        return iter(self._partitions)

    def __len__(self) -> int:
        return len(self._partitions)

    def __add__(self, other):
        if isinstance(other, PartitionSpec):
            return PartitionSpec(
                *self._partitions,
                *other._partitions,
                unreduced={*self.unreduced, *other.unreduced},
                reduced={*self.reduced, *other.reduced},
            )
        if isinstance(other, tuple):
            self._check_no_tuple(other, "__add__")
            return PartitionSpec(*self._partitions, *other)
        return NotImplemented

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        self._check_no_tuple(other, "__radd__")
        return PartitionSpec(*other, *self._partitions)

    def _check_no_tuple(self, other: tuple, method: str) -> None:
        for which in ("unreduced", "reduced"):
            if getattr(self, which):
                raise TypeError(
                    f"other {other} cannot be of instance `tuple` when self {self} has "
                    f"{which} in `{method}` of PartitionSpec."
                )

    def index(self, value) -> int:
        return self._partitions.index(_canonical_entry(value))

    def count(self, value) -> int:
        return self._partitions.count(_canonical_entry(value))

    def update(self, partitions=None, unreduced=None, reduced=None) -> PartitionSpec:
        return PartitionSpec(
            *(self._partitions if partitions is None else partitions),
            unreduced=self.unreduced if unreduced is None else unreduced,
            reduced=self.reduced if reduced is None else reduced,
        )

    def _normalized_spec_for_aval(self, ndim: int) -> PartitionSpec:
        """Unconstrained entries as ``None``, padded with ``None`` to ``ndim``."""
        entries = [None if p is UNCONSTRAINED else p for p in self._partitions]
        entries += [None] * (ndim - len(entries))
        return self.update(partitions=entries)

    def _check_compatible_wrt_shape(self, shape: tuple) -> None:
        if len(shape) < len(self._partitions):
            extra = " For scalars the PartitionSpec should be P()" if len(shape) == 0 else ""
            raise ValueError(
                f"PartitionSpec {self} is only valid for values of rank at least "
                f"{len(self._partitions)}, but was applied to a value of rank "
                f"{len(shape)}.{extra}"
            )


def _rebuild(partitions, unreduced, reduced) -> PartitionSpec:
    return PartitionSpec(*partitions, unreduced=unreduced, reduced=reduced)


PartitionSpec.__name__ = PartitionSpec.__qualname__ = "P"
PartitionSpec.__module__ = "lamina"
P = PartitionSpec
