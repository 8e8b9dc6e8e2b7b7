"""Structural equality of Jaxprs: equal up to a consistent renaming of variables."""

from __future__ import annotations

import math

import numpy as np

from lamina.ir import dtypes
from lamina.ir.core import ClosedJaxpr, Jaxpr, Literal, Var

__all__ = ["jaxpr_fingerprint", "jaxprs_equal", "values_equal"]


def values_equal(a, b) -> bool:
    """Equality of constants and params: bitwise for floats (nan == nan, -0.0 != 0.0)."""
    if isinstance(a, (Jaxpr, ClosedJaxpr)) or isinstance(b, (Jaxpr, ClosedJaxpr)):
        return type(a) is type(b) and a == b
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (
            type(a) is type(b)
            and len(a) == len(b)
            and all(values_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            type(a) is type(b) and a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
        )
    if isinstance(a, float) and isinstance(b, float):
        return (a == b and math.copysign(1, a) == math.copysign(1, b)) or (a != a and b != b)
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        a, b = np.asarray(a), np.asarray(b)
        return (a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()) or (
            a.dtype == b.dtype and a.shape == b.shape and _same_with_nans(a, b)
        )
    try:
        return bool(a == b)
    except Exception:
        return a is b


def _same_with_nans(a: np.ndarray, b: np.ndarray) -> bool:
    # Different NaN payloads still denote the same printed literal.
    if not dtypes.issubdtype(a.dtype, np.inexact):
        return False
    both_nan = np.isnan(a) & np.isnan(b)
    return bool(np.all(both_nan | ((a == b) & (np.signbit(a) == np.signbit(b)))))


def _literal_array(lit: Literal) -> np.ndarray:
    dtype = getattr(lit.aval, "dtype", None)
    return np.asarray(lit.val, dtype=dtype if isinstance(dtype, np.dtype) else None)


def jaxprs_equal(a: Jaxpr, b: Jaxpr) -> bool:
    return _Matcher().jaxprs(a, b)


class _Matcher:
    def __init__(self):
        self.renaming: dict[Var, Var] = {}

    def bind(self, xs, ys) -> bool:
        if len(xs) != len(ys):
            return False
        for x, y in zip(xs, ys, strict=True):
            # A dropped binder equals one that nothing reads: printing writes both as `_`,
            # and a later read of the non-dropped side fails the atom comparison anyway.
            if x.aval != y.aval:
                return False
            self.renaming[x] = y
        return True

    def atom(self, x, y) -> bool:
        if isinstance(x, Literal) or isinstance(y, Literal):
            return (
                isinstance(x, Literal)
                and isinstance(y, Literal)
                and x.aval == y.aval
                and values_equal(_literal_array(x), _literal_array(y))
            )
        return self.renaming.get(x) is y

    def jaxprs(self, a: Jaxpr, b: Jaxpr) -> bool:
        if a is b:
            return True
        if a.effects != b.effects or len(a.eqns) != len(b.eqns):
            return False
        if not (self.bind(a.constvars, b.constvars) and self.bind(a.invars, b.invars)):
            return False
        for ea, eb in zip(a.eqns, b.eqns, strict=True):
            if (
                ea.primitive is not eb.primitive
                and getattr(ea.primitive, "name", ea.primitive)
                != getattr(eb.primitive, "name", eb.primitive)
            ) or ea.effects != eb.effects:
                return False
            if len(ea.invars) != len(eb.invars):
                return False
            if not all(self.atom(x, y) for x, y in zip(ea.invars, eb.invars, strict=True)):
                return False
            if ea.params.keys() != eb.params.keys():
                return False
            if not all(values_equal(ea.params[k], eb.params[k]) for k in ea.params):
                return False
            if not self.bind(ea.outvars, eb.outvars):
                return False
        return len(a.outvars) == len(b.outvars) and all(
            self.atom(x, y) for x, y in zip(a.outvars, b.outvars, strict=True)
        )


def jaxpr_fingerprint(j: Jaxpr) -> tuple:
    """A cheap summary that equal Jaxprs share, for hashing."""
    return (
        tuple(v.aval for v in j.invars),
        tuple(v.aval for v in j.outvars),
        tuple(getattr(e.primitive, "name", e.primitive) for e in j.eqns),
    )
