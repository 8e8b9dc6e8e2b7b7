"""`lamina.experimental.hijax`: the declarations of JAX's hi-level types
(``jax.experimental.hijax``).

A hi-level type is a user class whose values JAX's tracers carry as one value and
lower to several arrays. Libraries declare such types at import time (flax.nnx's
hijax ``Variable``, off by default): here they can subclass ``HiType``,
``MutableHiType`` and ``HiPrimitive``, mark methods with ``aval_method`` and
``aval_property``, pair a value class with its type by ``register_hitype``, and use
lamina's ``AbstractValue``, ``ShapedArray``, ``Zero``, ``instantiate_zeros``,
``is_undefined_primal``, ``control_flow_allowed_effects`` and ``AbstractRef``.
lamina's interpreters do not trace values of hi-level types: a program that makes one
(flax with ``flax_hijax_variable`` on) fails where the value is first traced.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import Any

from lamina.interpreters.ad import (
    Zero,
    instantiate_zeros,
    is_undefined_primal,
    primitive_jvps,
    primitive_transposes,
)
from lamina.ir import AbstractValue, Primitive, ShapedArray, control_flow_allowed_effects
from lamina.ref import AbstractRef

__all__ = [
    "AbstractRef",
    "AbstractValue",
    "AvalMutableQDD",
    "AvalQDD",
    "HiPrimitive",
    "HiType",
    "MutableHiType",
    "ShapedArray",
    "Zero",
    "aval_method",
    "aval_property",
    "control_flow_allowed_effects",
    "hitypes",
    "instantiate_zeros",
    "is_undefined_primal",
    "register_hitype",
]

aval_method = namedtuple("aval_method", ["fun"])  # a method a traced value forwards to
aval_property = namedtuple("aval_property", ["fget"])  # a property it forwards to


@dataclass(frozen=True, slots=True)
class AvalQDD:
    """A mutable hi-level type with its quasi-dynamic data (immutable)."""

    aval: Any
    qdd: Any


@dataclass(frozen=True, slots=True)
class AvalMutableQDD:
    """A mutable hi-level type with quasi-dynamic data that may change."""

    aval: Any
    mutable_qdd: Any


class HiType(AbstractValue):
    """The base of immutable hi-level types."""

    is_high = True
    has_qdd = False


class MutableHiType(AbstractValue):
    """The base of mutable hi-level types (whose values carry quasi-dynamic data)."""

    is_high = True
    has_qdd = True
    is_writer = False


class HiPrimitive(Primitive):
    """A primitive over hi-level values: its ``jvp`` and ``transpose`` methods are its
    rules (registered in lamina's tables when it is made)."""

    def __init__(self, name: str):
        super().__init__(name)
        primitive_jvps[self] = self.jvp
        primitive_transposes[self] = self.transpose

    def is_high(self, *avals, **params) -> bool:
        return True

    def jvp(self, primals, tangents, **params):
        raise NotImplementedError(f"{self.name} defines no jvp")

    def transpose(self, *args, **params):
        raise NotImplementedError(f"{self.name} defines no transpose")


hitypes: dict[type, Any] = {}  # value class -> the function giving its hi-level type


def register_hitype(value_class: type, typeof_fn) -> None:
    """Declare ``typeof_fn(value)`` the hi-level type of instances of ``value_class``."""
    hitypes[value_class] = typeof_fn
