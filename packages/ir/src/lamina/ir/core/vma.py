"""Varying manual axes (``vma``): in a ``shard_map`` body checked for replication, each
array's type names the manual mesh axes its value may differ over. A primitive's result
varies over the axes its operands vary over; an operand lacking an axis another one has
is cast first (``pvary``, which the collectives layer registers); collectives give their
own rule (``Primitive.def_vma``)."""

from __future__ import annotations

import contextlib
import threading

from lamina.ir.core.avals import ShapedArray, axis_ordered

__all__ = [
    "checking",
    "checking_vma",
    "is_checking_vma",
    "register_pvary",
    "vary_over",
    "vma_of",
    "vma_rules",
]

# primitive -> rule(*avals, **params) giving the frozenset its results vary over.
vma_rules: dict = {}
# primitive -> operand_axes(params): the axes every operand is cast to vary over first
# (a collective over an axis works on values varying over it).
operand_axes_rules: dict = {}


class _Checking(threading.local):
    on = False  # per thread, as tracing is


checking = _Checking()
_pvary: list = [None]


@contextlib.contextmanager
def checking_vma(on: bool):
    """Track varying axes while tracing in this block (a ``shard_map`` body with
    ``check_vma=True``); ``on=False`` turns the tracking off (``check_vma=False``)."""
    prev = checking.on
    checking.on = bool(on)
    try:
        yield
    finally:
        checking.on = prev


def is_checking_vma() -> bool:
    return checking.on


def register_pvary(bind) -> None:
    """``bind(x, axes)``: ``x`` cast to vary over ``axes`` too."""
    _pvary[0] = bind


def vary_over(x, axes):
    """``x`` cast to vary over ``axes`` (``pvary``); as it is when ``axes`` is empty."""
    return _pvary[0](x, axis_ordered(axes)) if axes else x


def vma_of(x) -> frozenset:
    aval = x if isinstance(x, ShapedArray) else getattr(x, "aval", None)
    return getattr(aval, "vma", frozenset()) if isinstance(aval, ShapedArray) else frozenset()


def _is_call(params) -> bool:
    """Whether a primitive runs a Jaxpr of its own (its results' types come from it)."""
    for v in params.values():
        if isinstance(v, (tuple, list)) and v:
            v = v[0]
        if hasattr(v, "eqns") or hasattr(getattr(v, "jaxpr", None), "eqns"):
            return True
    return False


def joined_operands(primitive, args, params) -> tuple:
    """``args`` with ``pvary`` inserted where an operand lacks an axis another has."""
    if primitive in operand_axes_rules:
        axes = frozenset(operand_axes_rules[primitive](params))
        return tuple(a if axes <= vma_of(a) else _pvary[0](a, axis_ordered(axes - vma_of(a)))
                     for a in args)  # fmt: skip
    if len(args) < 2 or primitive in vma_rules or _is_call(params):
        return args
    vmas = [vma_of(a) for a in args]
    every = frozenset().union(*vmas)
    if all(v == every for v in vmas):
        return args
    return tuple(a if v == every else _pvary[0](a, axis_ordered(every - v))
                 for a, v in zip(args, vmas, strict=True))  # fmt: skip


def with_vma(primitive, avals, params, out):
    """The results ``out`` of an abstract evaluation given the axes they vary over."""
    if primitive in vma_rules:
        vma = vma_rules[primitive](*avals, **params)
    elif _is_call(params):
        return out
    else:
        vma = frozenset().union(*[vma_of(a) for a in avals])
    if not vma:
        return out

    def mark(a):
        return a.update(vma=vma) if isinstance(a, ShapedArray) else a

    return [mark(a) for a in out] if isinstance(out, (list, tuple)) else mark(out)
