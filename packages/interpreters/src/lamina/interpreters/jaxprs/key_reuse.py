"""The PRNG key-reuse checker (``jax_debug_key_reuse``), as JAX 0.10.2 has it.

Every primitive gets a *signature* saying what it does to its key operands: a
:class:`Sink` consumes operand ``idx`` (the elements of ``mask``), a :class:`Source`
makes output ``idx`` a fresh key, a :class:`Forward` passes operand ``in_idx`` through
as output ``out_idx``. Primitives without one consume every key operand. A Jaxpr's
signature comes from walking its equations (:func:`jaxpr_type_signature`); a key
consumed twice on the way raises :class:`KeyReuseError`. Concrete key arrays carry
``_consumed`` (a bool, or a bool mask over their elements): with the option on, eager
primitives and eager calls of jitted functions refuse consumed keys where their
signature sinks them, and mark what they consumed.

Signatures live in ``key_reuse_signatures``, registered beside the primitives (lax's
key, structural and control-flow primitives in ``lamina.lax.prng.key_reuse``); this
module registers ``jit``'s.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from lamina.interpreters.core import tracing
from lamina.interpreters.core.errors import KeyReuseError
from lamina.interpreters.jaxprs.calls import jit_p
from lamina.interpreters.jaxprs.staging import trace_to_jaxpr
from lamina.ir import Literal, dtypes, tree_util

__all__ = [
    "DynamicKeyReuseSignature",
    "Forward",
    "KeyReuseSignature",
    "Sink",
    "Source",
    "call_with_key_reuse_checks",
    "check_jitted_call",
    "check_key_reuse",
    "check_key_reuse_jaxpr",
    "dynamic_key_reuse_signature",
    "function_type_signature",
    "jaxpr_type_signature",
    "key_reuse_signatures",
]


def _frozen_mask(mask):
    if isinstance(mask, np.ndarray):
        if not mask.any():
            return False
        if mask.all():
            return True
        mask = mask.copy()
        mask.flags.writeable = False
        return mask
    return bool(mask)


class _Marker:
    """An operand or output index with a mask of its elements (True: all of them)."""

    __slots__ = ("idx", "mask")

    def __init__(self, idx: int, mask=True):
        object.__setattr__(self, "idx", int(idx))
        object.__setattr__(self, "mask", _frozen_mask(mask))

    def __setattr__(self, name, value):
        raise ValueError(f"{type(self).__name__} is immutable")

    def _key(self):
        mask = self.mask
        if isinstance(mask, np.ndarray):
            mask = (mask.shape, tuple(mask.ravel().tolist()))
        return (type(self).__name__, self.idx, mask)

    def __eq__(self, other):
        return isinstance(other, _Marker) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        if self.mask is True:
            return f"{type(self).__name__}({self.idx})"
        return f"{type(self).__name__}({self.idx}, {self.mask})"


class Sink(_Marker):
    """Operand ``idx`` is consumed (where ``mask`` is true)."""


class Source(_Marker):
    """Output ``idx`` is a fresh key (where ``mask`` is true)."""


class Forward(NamedTuple):
    """Operand ``in_idx`` comes out unchanged as output ``out_idx``."""

    in_idx: int
    out_idx: int

    def __repr__(self):
        return f"Forward({self.in_idx}, {self.out_idx})"


def _sort_key(marker):
    if isinstance(marker, Forward):
        return (1, "Forward", marker.in_idx, marker.out_idx)
    return (0, type(marker).__name__, marker.idx, 0)


class KeyReuseSignature:
    """What a primitive or function does to keys: a set of sinks, sources, forwards."""

    def __init__(self, *markers):
        self._markers = frozenset(markers)

    def __repr__(self):
        return f"KeyReuseSignature{tuple(sorted(self._markers, key=_sort_key))}"

    def __eq__(self, other):
        return isinstance(other, KeyReuseSignature) and self._markers == other._markers

    def __hash__(self):
        return hash(self._markers)

    @property
    def sinks(self) -> Iterator[Sink]:
        return (m for m in self._markers if isinstance(m, Sink))

    @property
    def sources(self) -> Iterator[Source]:
        return (m for m in self._markers if isinstance(m, Source))

    @property
    def forwards(self) -> Iterator[Forward]:
        return (m for m in self._markers if isinstance(m, Forward))

    def check_signature(self, *args, funcname="function"):
        """Raise if a concrete key this signature sinks is already consumed there."""
        for sink in self.sinks:
            key = args[sink.idx]
            if _is_key_value(key) and np.any(np.logical_and(key._consumed, sink.mask)):
                raise KeyReuseError(
                    f"Previously-consumed key passed to {funcname} at index {sink.idx}"
                )

    def update_consumption(self, args_in, args_out):
        """Mark what was consumed; outputs are consumed unless sourced or forwarded."""
        forwarded = {f.out_idx: args_in[f.in_idx]._consumed for f in self.forwards
                     if _is_key_value(args_in[f.in_idx])}  # fmt: skip
        for sink in self.sinks:
            key = args_in[sink.idx]
            if _is_key_value(key):
                key._consumed = _frozen_mask(np.logical_or(key._consumed, sink.mask))
        for out in args_out:
            if _is_key_value(out):
                out._consumed = True
        for source in self.sources:
            out = args_out[source.idx]
            if _is_key_value(out):
                out._consumed = _frozen_mask(np.logical_not(source.mask))
        for idx, consumed in forwarded.items():
            if _is_key_value(args_out[idx]):
                args_out[idx]._consumed = consumed


class DynamicKeyReuseSignature(NamedTuple):
    """A signature computed from the equation (its params and operand types)."""

    signature: Callable


def dynamic_key_reuse_signature(f: Callable) -> DynamicKeyReuseSignature:
    return DynamicKeyReuseSignature(f)


# Primitive -> KeyReuseSignature or DynamicKeyReuseSignature.
key_reuse_signatures: dict[Any, KeyReuseSignature | DynamicKeyReuseSignature] = {}


def _is_key_aval(aval) -> bool:
    dtype = getattr(aval, "dtype", None)
    return dtype is not None and dtypes.issubdtype(dtype, dtypes.prng_key)


def _is_key_value(x) -> bool:
    # Concrete key arrays carry ``_consumed``.
    return hasattr(type(x), "_consumed")


def _unknown_signature(eqn) -> KeyReuseSignature:
    return KeyReuseSignature(*(Sink(i) for i, v in enumerate(eqn.invars) if _is_key_aval(v.aval)))


def signature_of_eqn(eqn) -> KeyReuseSignature:
    sig = key_reuse_signatures.get(eqn.primitive)
    if sig is None:
        return _unknown_signature(eqn)
    if isinstance(sig, DynamicKeyReuseSignature):
        return sig.signature(eqn)
    return sig


def _open(jaxpr):
    return getattr(jaxpr, "jaxpr", jaxpr)


@functools.lru_cache(maxsize=4096)
def _jaxpr_signature(jaxpr) -> KeyReuseSignature:
    consumed: dict = {}
    forwards: dict = {}

    def resolve(var):
        while not isinstance(var, Literal) and var in forwards:
            var = forwards[var]
        return var

    def sink(var, mask=True) -> bool:
        if not _is_key_aval(var.aval):
            return False
        var = resolve(var)
        before = consumed.get(var, False)
        if np.any(np.logical_and(before, mask)):
            return True
        consumed[var] = np.logical_or(before, mask)
        return False

    def source(var, mask=False):
        if _is_key_aval(var.aval):
            consumed[resolve(var)] = mask

    for eqn in jaxpr.eqns:
        signature = signature_of_eqn(eqn)
        for fwd in signature.forwards:
            forwards[eqn.outvars[fwd.out_idx]] = eqn.invars[fwd.in_idx]
        for snk in signature.sinks:
            if not 0 <= snk.idx < len(eqn.invars):
                raise KeyReuseError(
                    f"In {eqn.primitive}, sink {snk.idx} out of range [0, {len(eqn.invars)}]"
                )
            if sink(eqn.invars[snk.idx], snk.mask):
                raise KeyReuseError(f"In {eqn.primitive}, argument {snk.idx} is already consumed.")
        for var in eqn.outvars:
            if var not in forwards:
                source(var, True)  # consumed, unless a source says otherwise
        for src in signature.sources:
            if not 0 <= src.idx < len(eqn.outvars):
                raise KeyReuseError(
                    f"In {eqn.primitive}, source {src.idx} out of range [0, {len(eqn.outvars)}]"
                )
            source(eqn.outvars[src.idx])

    inputs = [*jaxpr.invars, *jaxpr.constvars]
    markers = [
        Sink(i, consumed[v])
        for i, v in enumerate(inputs)
        if _is_key_aval(v.aval) and np.any(consumed.get(v, False))
    ]
    for i, out in enumerate(jaxpr.outvars):
        if isinstance(out, Literal) or not _is_key_aval(out.aval):
            continue
        origin = resolve(out)
        if origin in inputs:
            markers.append(Forward(inputs.index(origin), i))
        elif not np.any(consumed.get(out, False)):
            markers.append(Source(i))
    return KeyReuseSignature(*markers)


def jaxpr_type_signature(jaxpr) -> KeyReuseSignature:
    """The key-reuse signature of a Jaxpr (or closed Jaxpr); raises
    :class:`KeyReuseError` if it consumes a key twice."""
    return _jaxpr_signature(_open(jaxpr))


def check_key_reuse_jaxpr(jaxpr) -> None:
    """Raise :class:`KeyReuseError` if ``jaxpr`` consumes a key twice."""
    jaxpr_type_signature(jaxpr)


def function_type_signature(fun: Callable, *args) -> KeyReuseSignature:
    leaves, tree = tree_util.tree_flatten(args)

    def flat(*xs):
        return tree_util.tree_leaves(fun(*tree_util.tree_unflatten(tree, xs)))

    closed, _ = trace_to_jaxpr(flat, [tracing.shaped_abstractify(x) for x in leaves])
    return jaxpr_type_signature(closed)


def check_key_reuse(fun: Callable, /, *args) -> None:
    """Raise :class:`KeyReuseError` if ``fun(*args)`` consumes a key twice."""
    function_type_signature(fun, *args)


# ---------------------------------------------------------------- eager checks


def _signature_of_call(primitive, args, params) -> KeyReuseSignature:
    sig = key_reuse_signatures[primitive]
    if isinstance(sig, KeyReuseSignature):
        return sig
    if primitive is jit_p:
        return jaxpr_type_signature(params["jaxpr"])
    closed, _ = trace_to_jaxpr(
        lambda *xs: primitive.bind(*xs, **params),
        [tracing.shaped_abstractify(x) for x in args],
    )
    return jaxpr_type_signature(closed)


def call_with_key_reuse_checks(primitive, rule, args, params):
    """``rule(*args, **params)`` (the primitive's impl) with the keys among ``args``
    checked and marked by the primitive's signature."""
    if primitive not in key_reuse_signatures:
        return rule(*args, **params)
    signature = _signature_of_call(primitive, args, params)
    consts = list(params["jaxpr"].consts) if primitive is jit_p else []
    funcname = "jit-compiled function" if primitive is jit_p else primitive.name
    signature.check_signature(*args, *consts, funcname=funcname)
    out = rule(*args, **params)
    outs = out if primitive.multiple_results else [out]
    signature.update_consumption([*args, *consts], outs)
    return out


def check_jitted_call(closed, leaves, run):
    """``run()``, the eager call of a jitted function of Jaxpr ``closed`` on
    ``leaves``, with the keys checked and marked."""
    signature = jaxpr_type_signature(closed)
    consts = list(closed.consts)
    signature.check_signature(*leaves, *consts, funcname="jit-compiled function")
    outs = run()
    signature.update_consumption([*leaves, *consts], outs)
    return outs


tracing.set_key_reuse_hook(call_with_key_reuse_checks)


@dynamic_key_reuse_signature
def _jit_signature(eqn):
    return jaxpr_type_signature(eqn.params["jaxpr"])


key_reuse_signatures[jit_p] = _jit_signature
