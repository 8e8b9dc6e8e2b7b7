"""What a ``checkpoint`` policy may return besides a bool, as in JAX: ``Saveable``
(save the value), ``Recompute`` (recompute it) or ``Offloadable(src, dst)`` (save it in
another memory space). Lamina's arrays live in one memory space, so an offloadable
value is saved where it is: the values computed are the same as JAX's.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Offloadable", "Recompute", "RecomputeType", "Saveable", "SaveableType", "saves"]


class RecomputeType:
    """The type of ``Recompute``."""


class SaveableType:
    """The type of ``Saveable``."""


Recompute = RecomputeType()
Saveable = SaveableType()


class Offloadable(NamedTuple):
    """Save the value, moved from memory kind ``src`` to ``dst`` (e.g. ``"device"``
    to ``"pinned_host"``)."""

    src: str
    dst: str


def saves(decision) -> bool:
    """Whether a policy's result ``decision`` keeps the value for the backward pass."""
    if isinstance(decision, bool):
        return decision
    if isinstance(decision, RecomputeType):
        return False
    if isinstance(decision, SaveableType | Offloadable):
        return True
    msg = (
        "Value returned by a remat policy should be a bool or `ad_checkpoint.Recompute`, "
        "`ad_checkpoint.Saveable` or `ad_checkpoint.Offloadable(...)`. "
        f"Got {decision} of type {type(decision)}."
    )
    if decision is Offloadable:
        msg += " Did you return `Offloadable` instead of an instantiated `Offloadable(...)`?"
    raise TypeError(msg)
