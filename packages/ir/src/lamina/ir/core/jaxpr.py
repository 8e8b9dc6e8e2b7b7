"""The Jaxpr IR: variables, literals, equations, Jaxprs, their equality and their text.

A Jaxpr's ``==`` is its structural equality and its ``str`` its printed text; the
matcher and the printer walk these very classes, so they are part of this module.

Equality. Variables are compared by identity, as binders are; whole Jaxprs are compared
structurally, up to a consistent renaming of variables, so a Jaxpr read back from its
printed text equals the original. Constants and params compare with ``values_equal``:
bitwise for floats (nan == nan, -0.0 != 0.0).

Printing. Jaxprs print in JAX's text form, character for character:

    { lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) }

The text is a document of ``lamina.ir.core.pretty_doc`` laid out in 80 columns; a Jaxpr
that does not fit on one line puts one equation on a line, and an equation that does
not fit puts its params one on a line.

Names. Variables are named ``a``, ``b``, ..., ``z``, ``ba``, ``bb``, ... in the order
they are first printed: constvars, invars, then each equation's outputs, its params
(nested Jaxprs), its inputs, and at last the outputs. One counter runs through nested
Jaxprs too, so each name denotes one variable. Two exceptions, both as in JAX:

- in the Jaxpr being printed (not in nested ones), outputs of equations that nothing
  uses are printed ``_``;
- a primitive registered with ``Primitive.def_shared_names`` (JAX's ``jit``) prints the
  inputs and outputs of its sub-Jaxpr with the names of the equation's own inputs and
  outputs.

A Jaxpr that occurs more than once below the printed one, or has more than ten
equations and is not the printed one, is printed once up front as
``let name = { ... } in`` and referred to by its name. Its name is the ``name`` param of
the first equation that holds it (``<lambda>`` -> ``lambda``), else ``jaxpr``, with a
number added to tell equal names apart; variables are never given these names.

Params print sorted by key as ``key=str(value)``; Jaxprs (and tuples of them) print as
nested Jaxprs. A primitive's ``pp_param_rules`` entry, given the params, returns the
params to print: a dict (printed sorted by key) or a sequence of ``(key, value)`` pairs
(printed in that order, as JAX prints ``jit``'s ``name`` first).

Literals print as ``str(np.asarray(val).item())`` of the value they hold, as JAX's do:
a weak-typed ``0.1:f32[]`` holds the Python float 0.1, while a float32 scalar 0.1 prints
``0.10000000149011612:f32[]``; literals that are not scalars print ``[...]``.

Weak types. JAX does not mark weak-typed values in Jaxpr text (``f32[]`` either way),
so by default neither does lamina. With ``print_weak_types=True`` a weak type gets the
``~`` that marks it in ``str(aval)``: ``a:~f32[]``, ``2.0:~f32[]``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from lamina.ir import dtypes
from lamina.ir.core import pretty_doc as pd
from lamina.ir.core.avals import AbstractValue
from lamina.ir.core.primitives import pp_eqn_rules, pp_param_rules, shared_names_rules
from lamina.ir.effects import Effect, RefEffect, no_effects

__all__ = [
    "ClosedJaxpr",
    "DropVar",
    "EqnNames",
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "PpContext",
    "PpSettings",
    "SourceInfo",
    "Var",
    "eqn_doc",
    "jaxpr_doc",
    "jaxpr_fingerprint",
    "jaxprs_equal",
    "new_jaxpr_eqn",
    "pp_eqn",
    "pp_jaxpr",
    "printed_names",
    "source_summary",
    "values_equal",
]


_var_ids = itertools.count()


class Var:
    """A binder in a Jaxpr. Identity is the variable; ``suffix`` decorates printed names."""

    __slots__ = ("_id", "aval", "suffix")

    def __init__(self, aval: AbstractValue, suffix: str = ""):
        if not isinstance(aval, AbstractValue):
            raise TypeError(f"Var needs an abstract value, got {aval!r}")
        self.aval = aval
        self.suffix = suffix
        self._id = next(_var_ids)

    def __lt__(self, other: Var) -> bool:
        return self._id < other._id

    def __repr__(self):
        return f"Var(id={self._id}){self.suffix}:{self.aval.str_short()}"


class DropVar(Var):
    """An output binder whose value is unused; printed as ``_``."""

    __slots__ = ()

    def __repr__(self):
        return f"_:{self.aval.str_short()}"


class Literal:
    """A constant scalar written inline in an equation, e.g. ``2.0:f32[]``."""

    __slots__ = ("aval", "val")

    def __init__(self, val, aval: AbstractValue):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"Literal({self.val!r}:{self.aval.str_short(short_dtypes=True)})"


class SourceInfo:
    """Where an equation came from: a traceback (list of frames) and a name stack.
    Compared by value; a plain class with slots, cheaper to make than a frozen
    dataclass (every staged equation makes one)."""

    __slots__ = ("name_stack", "traceback")

    def __init__(self, traceback: tuple = (), name_stack: str = ""):
        self.traceback = traceback
        self.name_stack = name_stack

    def replace(self, *, traceback=None, name_stack=None) -> SourceInfo:
        return SourceInfo(
            self.traceback if traceback is None else traceback,
            self.name_stack if name_stack is None else name_stack,
        )

    def __eq__(self, other):
        if type(other) is not SourceInfo:
            return NotImplemented
        return self.traceback == other.traceback and self.name_stack == other.name_stack

    def __hash__(self):
        return hash((self.traceback, self.name_stack))

    def __repr__(self):
        return f"SourceInfo(traceback={self.traceback!r}, name_stack={self.name_stack!r})"


_no_source_info = SourceInfo()


class JaxprEqn:
    """``outvars = primitive[params] invars``, with its effects and provenance."""

    __slots__ = ("ctx", "effects", "invars", "outvars", "params", "primitive", "source_info")

    def __init__(self, invars, outvars, primitive, params, effects, source_info, ctx=None):
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.primitive = primitive
        self.params = dict(params)
        self.effects = frozenset(effects)
        self.source_info = source_info
        self.ctx = ctx

    def replace(self, **changes) -> JaxprEqn:
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return JaxprEqn(**fields)

    def __repr__(self):
        return pp_eqn(self)


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=no_effects, source_info=None):
    return JaxprEqn(invars, outvars, primitive, params, effects, source_info or _no_source_info)


class Jaxpr:
    """A closed-scope program: constants and inputs bound, equations in order, outputs."""

    __slots__ = ("_hash", "constvars", "debug_info", "effects", "eqns", "invars", "outvars")

    def __init__(
        self,
        constvars: Sequence[Var],
        invars: Sequence[Var],
        outvars: Sequence[Var | Literal],
        eqns: Sequence[JaxprEqn],
        effects: frozenset[Effect] = no_effects,
        debug_info: Any = None,
    ):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self.effects = frozenset(effects)
        self.debug_info = debug_info
        self._hash = None

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def replace(self, **changes) -> Jaxpr:
        fields = {n: getattr(self, n) for n in self.__slots__ if n != "_hash"}
        fields.update(changes)
        return Jaxpr(**fields)

    def pretty_print(self, **settings) -> str:
        return pp_jaxpr(self, **settings)

    def __str__(self):
        return self.pretty_print()

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, Jaxpr) and jaxprs_equal(self, other)

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(jaxpr_fingerprint(self))
        return self._hash


class ClosedJaxpr:
    """A Jaxpr together with the values of its constvars."""

    __slots__ = ("__weakref__", "consts", "jaxpr")  # weak: caches forget a dead one

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]):
        if len(jaxpr.constvars) != len(consts):
            raise ValueError(
                f"ClosedJaxpr got {len(consts)} constants for {len(jaxpr.constvars)} constvars"
            )
        self.jaxpr = jaxpr
        self.consts = list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    effects = property(lambda self: self.jaxpr.effects)
    literals = property(lambda self: self.consts)

    def map_jaxpr(self, f) -> ClosedJaxpr:
        return ClosedJaxpr(f(self.jaxpr), self.consts)

    def replace(self, *, jaxpr=None, consts=None) -> ClosedJaxpr:
        return ClosedJaxpr(
            self.jaxpr if jaxpr is None else jaxpr, self.consts if consts is None else consts
        )

    def pretty_print(self, **settings) -> str:
        return self.jaxpr.pretty_print(**settings)

    def __str__(self):
        return self.pretty_print()

    __repr__ = __str__

    def __eq__(self, other):
        return (
            isinstance(other, ClosedJaxpr)
            and self.jaxpr == other.jaxpr
            and len(self.consts) == len(other.consts)
            and all(values_equal(a, b) for a, b in zip(self.consts, other.consts, strict=True))
        )

    def __hash__(self):
        return hash(self.jaxpr)


# ---------------------------------------------------------------- equality


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

    def effects(self, xs, ys) -> bool:
        """Equal effect sets, a reference's effects matched through the renaming."""
        if xs == ys:
            return True
        renamed = {
            x.with_input(self.renaming.get(x.input, x.input))
            if isinstance(x, RefEffect) and not isinstance(x.input, int)
            else x
            for x in xs
        }
        return renamed == set(ys)

    def jaxprs(self, a: Jaxpr, b: Jaxpr) -> bool:
        if a is b:
            return True
        if len(a.eqns) != len(b.eqns):
            return False
        if not (self.bind(a.constvars, b.constvars) and self.bind(a.invars, b.invars)):
            return False
        if not self.effects(a.effects, b.effects):
            return False
        for ea, eb in zip(a.eqns, b.eqns, strict=True):
            if (
                ea.primitive is not eb.primitive
                and getattr(ea.primitive, "name", ea.primitive)
                != getattr(eb.primitive, "name", eb.primitive)
            ) or not self.effects(ea.effects, eb.effects):
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


# ---------------------------------------------------------------- printing


@dataclass(frozen=True)
class PpSettings:
    """What to print besides the program itself (the defaults are JAX's)."""

    print_shapes: bool = True  # types of binders: ``a:f32[3]`` rather than ``a``
    source_info: bool = False  # each equation's source line, as a ``# file:line`` note
    name_stack: bool = False  # each equation's name stack, as a ``# [...]`` note
    custom_pp_eqn_rules: bool = True  # apply pp_param_rules and name sharing
    print_effects: bool = False  # ``in (a,) : { Effect }``
    print_weak_types: bool = False  # ``~f32[]`` for weak types (not a JAX setting)


_SETTING_NAMES = frozenset(f.name for f in fields(PpSettings))
_FORMAT_NAMES = frozenset({"width", "annotation_prefix"})
_IGNORED_NAMES = frozenset({"use_color"})  # accepted as JAX does; lamina never colors


def pp_jaxpr(jaxpr: Jaxpr | ClosedJaxpr, **options) -> str:
    """The text of ``jaxpr``. Options: the fields of ``PpSettings``, ``width`` (80),
    ``annotation_prefix`` (``" # "``, before source-info notes) and ``use_color``
    (ignored: the text is never colored)."""
    settings, layout = _split_options(options)
    return jaxpr_doc(jaxpr, settings).format(**layout)


def pp_eqn(eqn: JaxprEqn, context: PpContext | None = None, **options) -> str:
    """The text of one equation, e.g. ``a:f32[] = mul b 2.0:f32[]`` (trailing spaces
    removed). Its variables are named afresh unless a ``context`` is given."""
    settings, layout = _split_options(options)
    doc = eqn_doc(eqn, PpContext() if context is None else context, settings)
    return doc.format(**layout).rstrip()


def _split_options(options: dict) -> tuple[PpSettings, dict]:
    known = _SETTING_NAMES | _FORMAT_NAMES | _IGNORED_NAMES
    unknown = set(options) - known
    if unknown:
        raise TypeError(
            f"unknown printing option(s) {sorted(unknown)}; expected some of {sorted(known)}"
        )
    settings = PpSettings(**{k: v for k, v in options.items() if k in _SETTING_NAMES})
    return settings, {k: v for k, v in options.items() if k in _FORMAT_NAMES}


class PpContext:
    """The names given so far: variables (by identity) and shared Jaxprs (by identity)."""

    def __init__(self, var_names: Mapping[Var, str] | None = None):
        self.var_names: dict[Var, str] = dict(var_names or {})
        self.shared_jaxprs: dict[int, str] = {}  # id(jaxpr) -> name
        self._next = 0

    def _fresh_name(self) -> str:
        while True:
            name = _alphabetic(self._next)
            self._next += 1
            if not self.shared_jaxprs or name not in self.shared_jaxprs.values():
                return name

    def base_name(self, v: Var) -> str:
        """The name of ``v`` without its suffix, chosen now if ``v`` has none yet."""
        if isinstance(v, DropVar):
            return "_"
        name = self.var_names.get(v)
        if name is None:
            name = self.var_names[v] = self._fresh_name()
        return name

    def var_name(self, v: Var) -> str:
        return "_" if isinstance(v, DropVar) else self.base_name(v) + v.suffix

    def share_names(self, inner: list, outer: list) -> None:
        """Name the (not yet named) variables ``inner`` like their partners ``outer``,
        each outer variable lending its name once."""
        if len(inner) != len(outer):
            return
        lent: set[Var] = set()
        for v, like in zip(inner, outer, strict=True):
            if (
                isinstance(like, Var)
                and like not in lent
                and isinstance(v, Var)
                and v not in self.var_names
            ):
                lent.add(like)
                self.var_names[v] = self.base_name(like)


def _alphabetic(n: int) -> str:
    # Digits of n in base 26 written a..z: 0 -> a, 25 -> z, 26 -> ba, 27 -> bb.
    name = ""
    while True:
        n, digit = divmod(n, 26)
        name = chr(ord("a") + digit) + name
        if n == 0:
            return name


# ---------------------------------------------------------------- whole Jaxprs


def jaxpr_doc(jaxpr: Jaxpr | ClosedJaxpr, settings: PpSettings | None = None) -> pd.Doc:
    """The document of a Jaxpr printed at top level, shared sub-Jaxprs first."""
    return _top_level_doc(jaxpr, settings or PpSettings())[0]


def printed_names(jaxpr: Jaxpr | ClosedJaxpr) -> PpContext:
    """A context naming each variable of ``jaxpr`` (sub-Jaxprs included) as ``print``
    shows it: ``context.var_name(v)``, ``pp_eqn(eqn, context)``."""
    return _top_level_doc(jaxpr, PpSettings())[1]


def _top_level_doc(jaxpr: Jaxpr | ClosedJaxpr, settings: PpSettings) -> tuple[pd.Doc, PpContext]:
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    context = PpContext(_unused_outputs(jaxpr))
    shared = _shared_jaxprs(jaxpr)
    for name, sub in shared:
        context.shared_jaxprs[id(sub)] = name
    docs = [
        pd.concat(
            [
                pd.text(f"let {name} = "),
                _skeleton_doc(sub, context, settings),
                pd.text(" in"),
                pd.brk(),
            ]
        )
        for name, sub in shared
    ]
    docs.append(_jaxpr_doc(jaxpr, context, settings))
    return pd.concat(docs), context


def _unused_outputs(jaxpr: Jaxpr) -> dict[Var, str]:
    """Outputs of equations that no later equation and no output reads, named ``_``."""
    used = {id(v) for v in jaxpr.outvars if isinstance(v, Var)}
    names: dict[Var, str] = {}
    for eqn in reversed(jaxpr.eqns):
        for v in eqn.outvars:
            if id(v) not in used:
                names[v] = "_"
        used.update(id(v) for v in eqn.invars if isinstance(v, Var))
    return names


def _jaxprs_in_params(params: Mapping) -> Iterator[Jaxpr]:
    for value in params.values():
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, Jaxpr):
                yield v
            elif isinstance(v, ClosedJaxpr):
                yield v.jaxpr


def _shared_jaxprs(top: Jaxpr) -> list[tuple[str, Jaxpr]]:
    """Sub-Jaxprs to print once up front: those met more than once in a walk of the
    whole tree (a big one, of more than ten equations, counts twice), with names."""
    counts: dict[int, int] = {}
    by_id: dict[int, Jaxpr] = {}
    names: dict[int, str] = {}
    queue = deque([top])
    while queue:
        jaxpr = queue.popleft()
        by_id[id(jaxpr)] = jaxpr
        big = jaxpr is not top and len(jaxpr.eqns) > 10
        counts[id(jaxpr)] = counts.get(id(jaxpr), 0) + (2 if big else 1)
        for eqn in jaxpr.eqns:
            subs = list(_jaxprs_in_params(eqn.params))
            queue.extend(subs)
            name = eqn.params.get("name")
            if name is not None:
                for sub in subs:
                    names.setdefault(id(sub), str(name).strip("<>"))
    taken: Counter[str] = Counter()
    shared = []
    for key, count in counts.items():
        if count == 1:
            continue
        name = names.get(key, "jaxpr")
        if taken[name]:
            taken[name] += 1
            name += str(taken[name] - 1)
        taken[name] += 1
        shared.append((name, by_id[key]))
    return shared


def _jaxpr_doc(jaxpr: Jaxpr, context: PpContext, settings: PpSettings) -> pd.Doc:
    name = context.shared_jaxprs.get(id(jaxpr))
    if name is not None:
        return pd.text(name)
    return _skeleton_doc(jaxpr, context, settings)


def _skeleton_doc(jaxpr: Jaxpr, context: PpContext, settings: PpSettings) -> pd.Doc:
    # Built in this order, as names are given in the order variables are first printed.
    constvars = _vars_doc(jaxpr.constvars, context, settings, typed=settings.print_shapes)
    invars = _vars_doc(jaxpr.invars, context, settings, typed=settings.print_shapes)
    eqns = pd.join(pd.brk("; "), [eqn_doc(e, context, settings) for e in jaxpr.eqns])
    outvars = pd.concat(
        [
            pd.text("("),
            _vars_doc(jaxpr.outvars, context, settings, separator=","),
            pd.text(",)" if len(jaxpr.outvars) == 1 else ")"),
        ]
    )
    effects = pd.nil()
    if settings.print_effects:
        shown = sorted(_effect_text(e, context) for e in jaxpr.effects)
        effects = pd.text(" : { " + ", ".join(shown) + " }")
    body = pd.concat(
        [
            pd.text("{ lambda "),
            constvars,
            pd.text("; "),
            invars,
            pd.text(". let"),
            pd.nest(2, pd.brk() + eqns),
            pd.brk(),
            pd.text("in "),
            outvars,
            effects,
        ]
    )
    return pd.group(pd.nest(2, body) + pd.text(" }"))


def _effect_text(effect, context: PpContext) -> str:
    # An effect may name a variable (a read of an input, say): it then defines
    # ``pretty_print(context)``, using ``context.var_name(v)``.
    if hasattr(effect, "pretty_print"):
        return effect.pretty_print(context)
    return str(effect)


# ---------------------------------------------------------------- equations


class EqnNames:
    """What a ``pp_eqn_rules`` entry prints an equation with: the text of its atoms."""

    def __init__(self, context: PpContext, settings: PpSettings):
        self.context = context
        self.settings = settings

    def binder(self, v: Var) -> str:
        name = _atom_text(v, self.context, self.settings)
        if not self.settings.print_shapes:
            return name
        return f"{name}:{_aval_text(v.aval, self.settings)}"

    def use(self, atom, literal_dtype: bool = True) -> str:
        if isinstance(atom, Literal) and not literal_dtype:
            return str(np.asarray(atom.val).item())
        return _atom_text(atom, self.context, self.settings)

    def is_unused(self, v: Var) -> bool:
        return isinstance(v, DropVar) or self.context.var_names.get(v) == "_"


def eqn_doc(eqn: JaxprEqn, context: PpContext, settings: PpSettings) -> pd.Doc:
    """``outvars = primitive[params] invars``; without outputs, ``primitive[...] invars``."""
    if settings.custom_pp_eqn_rules:
        rule = pp_eqn_rules.get(eqn.primitive)
        if rule is not None:
            return pd.text(rule(eqn, EqnNames(context, settings)))
    params = _printed_params(eqn, context, settings)
    source_note = source_summary(eqn.source_info) if settings.source_info else None
    stack_note = f"[{_name_stack(eqn.source_info)}]" if settings.name_stack else None
    # Outputs are named before the params' Jaxprs, and those before the inputs.
    lhs = _vars_doc(eqn.outvars, context, settings, typed=settings.print_shapes)
    rhs = [
        pd.text(getattr(eqn.primitive, "name", str(eqn.primitive)), annotation=stack_note),
        _params_doc(params, context, settings),
        pd.text(" ") + _vars_doc(eqn.invars, context, settings),
    ]
    if not eqn.outvars:
        return pd.concat(rhs)
    return pd.concat([lhs, pd.text(" = ", annotation=source_note), *rhs])


def _printed_params(eqn: JaxprEqn, context: PpContext, settings: PpSettings) -> list:
    params = eqn.params
    if not settings.custom_pp_eqn_rules:
        return [(k, params[k]) for k in sorted(params)]
    rule = pp_param_rules.get(eqn.primitive)
    shown = params if rule is None else rule(dict(params))
    param = shared_names_rules.get(eqn.primitive)
    if param is not None and param in params:
        sub = params[param]
        sub = sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub
        if id(sub) not in context.shared_jaxprs:
            context.share_names(sub.invars, eqn.invars)
            context.share_names(sub.outvars, eqn.outvars)
    if isinstance(shown, Mapping):
        return [(k, shown[k]) for k in sorted(shown)]
    return list(shown)


def _params_doc(params: list, context: PpContext, settings: PpSettings) -> pd.Doc:
    if not params:
        return pd.nil()
    pairs = [pd.text(f"{k}=") + _value_doc(v, context, settings) for k, v in params]
    return pd.group(
        pd.concat(
            [
                pd.nest(2, pd.concat([pd.text("["), pd.brk(""), pd.join(pd.brk(), pairs)])),
                pd.brk(""),
                pd.text("]"),
            ]
        )
    )


_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


def _value_doc(value, context: PpContext, settings: PpSettings) -> pd.Doc:
    if type(value) is tuple and all(isinstance(v, (Jaxpr, ClosedJaxpr)) for v in value):
        subs = [_jaxpr_doc(_open(v), context, settings) for v in value]
        inner = pd.concat([pd.text("("), pd.brk(""), pd.join(pd.brk(), subs)])
        return pd.group(pd.concat([pd.nest(2, inner), pd.brk(""), pd.text(")")]))
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        return _jaxpr_doc(_open(value), context, settings)
    if isinstance(value, frozenset):
        return pd.text(f"frozenset({{{', '.join(repr(e) for e in sorted(value))}}})")
    # Object addresses vary from run to run: print them as X's.
    return pd.text(_ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), str(value)))


def _open(j: Jaxpr | ClosedJaxpr) -> Jaxpr:
    return j.jaxpr if isinstance(j, ClosedJaxpr) else j


# ---------------------------------------------------------------- variables


def _vars_doc(
    atoms: list,
    context: PpContext,
    settings: PpSettings,
    *,
    separator: str = "",
    typed: bool = False,
) -> pd.Doc:
    """``a:f32[] b:f32[]`` (binders, ``typed``) or ``a 2.0:f32[]`` (uses)."""
    if typed:
        docs = [
            pd.text(f"{_atom_text(a, context, settings)}:{_aval_text(a.aval, settings)}")
            for a in atoms
        ]
    else:
        docs = [pd.text(_atom_text(a, context, settings)) for a in atoms]
    return pd.nest(2, pd.group(pd.join(pd.text(separator) + pd.group(pd.brk()), docs)))


def _atom_text(atom, context: PpContext, settings: PpSettings) -> str:
    if not isinstance(atom, Literal):
        return context.var_name(atom)
    val = atom.val
    text = str(np.asarray(val).item()) if np.shape(val) == () else "[...]"
    if getattr(atom.aval, "dtype", None) is not None:
        text += ":" + _aval_text(atom.aval, settings)
    return text


def _aval_text(aval, settings: PpSettings) -> str:
    weak = settings.print_weak_types and getattr(aval, "weak_type", False)
    return ("~" if weak else "") + aval.str_short(short_dtypes=True)


# ---------------------------------------------------------------- source info


def source_summary(source_info) -> str:
    """``file:line:column (function)`` of the innermost frame of the traceback (a
    sequence of frames, innermost first, with JAX's frame fields ``file_name``,
    ``function_name``, ``start_line``, ``start_column``; a string frame prints as is)."""
    frames = getattr(source_info, "traceback", None) or ()
    if not frames:
        return ""
    frame = frames[0]
    if isinstance(frame, str):
        return frame
    where = f"{frame.file_name}:{frame.start_line}"
    if frame.start_column != 0:
        where += f":{frame.start_column}"
    return f"{where} ({frame.function_name})"


def _name_stack(source_info) -> str:
    return str(getattr(source_info, "name_stack", "") or "")
