"""Reading the values of equation params in printed Jaxprs.

The printer writes a param as ``key=str(value)``, so a param value is Python's text for
some object. The parser reads these forms:

- ``True``, ``False``, ``None``; ints; floats (``1e-05``, ``inf``, ``-inf``, ``nan``,
  ``-0.0``); complex numbers (``(1+2j)``);
- tuples and lists (``((1, 2), [3])``), dicts (``{'a': 1}``), sets, ``frozenset(...)``
  and, inside them, quoted strings (``'edgeitems'``);
- NumPy scalars and dtypes as NumPy 2 writes them (``np.int64(0)``, ``np.True_``,
  ``dtype('float32')``), and avals as their repr writes them (``ShapedArray(float32[3])``);
- nested Jaxprs (``{ lambda ; a:f32[]. let ... }``) and tuples of them separated by
  spaces (``branches=( {...} {...} )``); in params whose name holds ``jaxpr`` or is
  ``branches`` (or declared, see below), also the names of Jaxprs bound by a leading
  ``let name = { ... } in``;
- a dtype name (``new_dtype=int32``) at the top level of a value: an ``np.dtype``;
- a constructor call ``Name(k=v, ...)`` spanning lines, whose values are Jaxprs printed
  on their own (custom_linear_solve's ``jaxprs=_LinearSolveTuple(matvec={ lambda ...``):
  a named tuple called ``Name``, which prints the same;
- a constructor call ``Name(...)`` or an enum-like dotted name ``Name.MEMBER``: passed
  to the reader registered for ``Name`` (see ``register_value_reader``), or else kept as
  an ``OpaqueParam``, a value object that prints as its text and equals another with the
  same text;
- anything else at the top level (``name=<lambda>``, ``fmt=x={}``, ``jvp=jvp``) is a
  string: the raw text up to the next ``key=``, the closing ``]`` or the end of the line.
  Inside a tuple or list, an element that is none of the above is an ``OpaqueParam``.

A printed value does not always say which Python type it had: ``name=int32`` is a
string but ``new_dtype=int32`` a dtype, and a nested Jaxpr may be a ``Jaxpr`` or a
``ClosedJaxpr``. Where the rules above guess wrong, a primitive declares the param:
``declare_param(primitive_name, param_name, reader)``. A reader is ``Jaxpr`` or
``ClosedJaxpr`` (how the Jaxprs inside the value are returned; ``ClosedJaxpr`` unless
declared), or any other callable, which gets the raw text of the value (``str`` keeps
it as a string). The ``name`` and ``fmt`` params of every primitive are declared
strings (JAX's function names, like ``name=<lambda>``, and debug_print's format).

A value that opens a bracket must be well formed (a tuple, list, dict, set or Jaxpr);
other text that is not a value of the forms above is read as a string.
"""

from __future__ import annotations

import ast
import collections
import functools
import math
import re
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from lamina.ir import dtypes
from lamina.ir.core.avals import ShapedArray
from lamina.ir.core.jaxpr import ClosedJaxpr, Jaxpr
from lamina.ir.parsing.lexer import STRING, JaxprSyntaxError, Scanner, describe

__all__ = [
    "OpaqueParam",
    "declare_param",
    "param_readers",
    "parse_call_args",
    "register_value_reader",
    "value_readers",
]


class OpaqueParam:
    """A param value the parser could not give a Python type: it prints as ``text`` and
    equals another ``OpaqueParam`` with the same text."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __str__(self):
        return self.text

    __repr__ = __str__

    def __eq__(self, other):
        return type(other) is OpaqueParam and other.text == self.text

    def __hash__(self):
        return hash((OpaqueParam, self.text))


# Readers of ``Name(...)`` and ``Name.MEMBER`` values, by ``Name`` (which may be dotted,
# like ``np.int64``); each gets the whole text of the value.
value_readers: dict[str, Callable[[str], Any]] = {}
# Declared params, by (primitive name or None for every primitive, param name).
param_readers: dict[tuple[str | None, str], Any] = {}


def register_value_reader(head: str, reader: Callable[[str], Any]) -> None:
    """Reads values printed as ``head(...)`` or ``head.MEMBER`` with ``reader(text)``.

    For a dotted value the longest registered prefix wins: a reader for ``Precision``
    reads ``Precision.HIGHEST``; one for ``np.int64`` reads ``np.int64(3)``."""
    value_readers[head] = reader


def declare_param(primitive, param: str, reader) -> None:
    """Declares how to read ``param`` of ``primitive`` (a Primitive, its name, or None for
    every primitive): ``Jaxpr`` or ``ClosedJaxpr`` for params holding Jaxprs, or a
    callable taking the raw text of the value."""
    name = getattr(primitive, "name", primitive)
    param_readers[(name, param)] = reader


# JAX's names of functions (jit, custom_jvp_call, ...) and debug_print's format.
declare_param(None, "name", str)
declare_param(None, "fmt", str)


def parse_call_args(text: str) -> tuple[tuple, dict]:
    """Splits a printed constructor call ``Name(a, b, k=v)`` into ``((a, b), {k: v})``,
    reading each argument as an element of a tuple; for value readers."""
    p = ValueParser(Scanner(text))
    s = p.s
    try:
        s.expect_name("a constructor name")
        while s.text.startswith(".", s.pos):
            s.pos += 1
            s.expect_name("a name after '.'")
        s.expect("(")
        args, kwargs = [], {}
        while not s.accept(")"):
            if s.peek().kind == "name" and s.peek2().text == "=":
                key = s.next().text
                s.next()
                kwargs[key] = p.element(_IN_CALLS)
            else:
                args.append(p.element(_IN_CALLS))
            if not s.accept(","):
                s.expect(")")
                break
        if s.peek().kind != "eof":
            raise s.error(f"unexpected {describe(s.peek())} after the call")
    except _NotStructured as e:
        raise s.error("cannot read this value", e.pos) from None
    return tuple(args), kwargs


class JaxprsIn(NamedTuple):
    """How to read the Jaxprs in a value: as ClosedJaxprs or Jaxprs, and whether the
    names of let-bound Jaxprs stand for them there."""

    closed: bool
    shared: bool


_IN_CALLS = JaxprsIn(closed=True, shared=False)


class _NotStructured(Exception):
    """The text is not a structured value; the caller may read it another way."""

    def __init__(self, pos: int):
        self.pos = pos


MAX_DEPTH = 100
# Where a top-level value ends: before ``]`` or before whitespace and the next ``key=``.
_NEXT_KEY = re.compile(r"\s+[A-Za-z_]\w*=(?!=)", re.ASCII)
COMPLEX = re.compile(
    r"\((?:[-+]?(?:\d[\d.]*(?:[eE][-+]?\d+)?|inf|nan))?"
    r"[-+](?:\d[\d.]*(?:[eE][-+]?\d+)?|inf|nan)j\)",
    re.ASCII,
)
_OPENERS, _CLOSERS = "([{", ")]}"


class ValueParser:
    """Reads param values from a Scanner; the Jaxpr parser extends it with Jaxprs."""

    def __init__(self, scanner: Scanner):
        self.s = scanner
        self.depth = 0

    # -- hooks for the Jaxpr parser --------------------------------------------------

    def nested_jaxpr(self, closed: bool):
        """The Jaxpr that starts here (``{ lambda``), as a ClosedJaxpr if ``closed``."""
        raise self.s.error("a Jaxpr cannot appear here")

    def shared_jaxpr(self, closed: bool):
        """The Jaxpr bound by a leading ``let`` whose name comes next, or None."""
        return None

    def known_reader(self, primitive: str, key: str):
        """The reader for ``key`` of a primitive known by name only, or None."""
        return None

    # -- nesting ---------------------------------------------------------------------

    def enter(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.s.error(f"nested more than {MAX_DEPTH} levels deep", pos)

    def leave(self) -> None:
        self.depth -= 1

    # -- params ----------------------------------------------------------------------

    def param_value(self, primitive: str, key: str):
        """Reads the value after ``key=``; the scanner stands just after the ``=``."""
        s = self.s
        reader = param_readers.get((primitive, key), param_readers.get((None, key)))
        if reader is None:
            reader = self.known_reader(primitive, key)
        start = s.pos
        if reader is not None and reader is not Jaxpr and reader is not ClosedJaxpr:
            text = self.raw_value()
            try:
                return reader(text)
            except Exception as e:
                raise s.error(f"cannot read param {key}={text}: {_reason(e)}", start) from None
        # Where the printer writes a Jaxpr its let-bound name may stand for it.
        declared = reader is not None
        shared = declared or "jaxpr" in key or key == "branches"
        how = JaxprsIn(closed=reader is not Jaxpr, shared=shared)
        tok = s.peek()
        # A value opening a bracket must be well formed; other text may be a string.
        bracketed = tok.kind == "punct" and tok.text in _OPENERS
        if tok.kind != "string":
            depth = self.depth
            try:
                value = self.value(top=True, how=how)
                if self.at_param_end():
                    return value
                if bracketed:
                    after = s.peek()
                    raise s.error(f"unexpected {describe(after)} after param {key}", after.start)
            except _NotStructured as e:
                self.depth = depth
                if bracketed:
                    raise s.error(f"cannot read the value of param {key}", e.pos) from None
        s.pos = start
        return self.raw_value()

    def at_param_end(self) -> bool:
        s = self.s
        end = s.pos
        return s.peek().text in ("]", "") or bool(_NEXT_KEY.match(s.text, end))

    def raw_value(self) -> str:
        """The text from here to the end of the value, as a string (see module doc)."""
        s, text = self.s, self.s.text
        start = i = s.pos
        open_brackets = []
        while i < len(text):
            c = text[i]
            if c == "\n" or (not open_brackets and c.isspace() and _NEXT_KEY.match(text, i)):
                break
            if c in _OPENERS:
                open_brackets.append(_CLOSERS[_OPENERS.index(c)])
            elif c in _CLOSERS:
                if not open_brackets and c == "]":
                    break
                if not open_brackets or open_brackets.pop() != c:
                    raise s.error(f"unbalanced {c!r} in param value", i)
            elif c in "'\"" and (m := STRING.match(text, i)):
                i = m.end()
                continue
            i += 1
        if open_brackets:
            raise s.error("unbalanced brackets in param value", start)
        s.pos = i
        return text[start:i].strip()

    # -- structured values -----------------------------------------------------------

    def value(self, top: bool, how: JaxprsIn):
        s = self.s
        shared = self.shared_jaxpr(how.closed) if how.shared else None
        if shared is not None:
            return shared
        tok = s.peek()
        if tok.kind == "punct":
            if tok.text == "{":
                if s.peek2().text == "lambda":
                    return self.nested_jaxpr(how.closed)
                return self.dict_value(how)
            if tok.text == "(":
                if m := s.match(COMPLEX):
                    s.pos = m.end()
                    return complex(m.group())
                return self.sequence(how, ")")
            if tok.text == "[":
                return self.sequence(how, "]")
            if tok.text == "-":
                return self.number()
        elif tok.kind == "number":
            return self.number()
        elif tok.kind == "string" and not top:
            try:
                value = ast.literal_eval(tok.text)
            except (ValueError, SyntaxError):
                raise _NotStructured(tok.start) from None
            s.next()
            return value
        elif tok.kind == "name":
            return self.word(top, how)
        raise _NotStructured(tok.start)

    def number(self):
        s = self.s
        start = s.peek().start
        sign = -1 if s.accept("-") else 1
        tok = s.next()
        if tok.kind == "name" and tok.text in ("inf", "nan"):
            return sign * float(tok.text)
        if tok.kind != "number" or (sign < 0 and tok.start != start + 1):
            raise _NotStructured(start)
        t = tok.text
        if t.endswith("j"):
            return complex(t if sign > 0 else "-" + t)  # -2j has a real part of +0.0
        if t.isdigit():
            return sign * int(t)
        return sign * float(t)

    def word(self, top: bool, how: JaxprsIn):
        s, text = self.s, self.s.text
        tok = s.next()
        head_end = tok.end
        while text.startswith(".", head_end) and (m := _NAME_AT.match(text, head_end + 1)):
            head_end = m.end()
        head = text[tok.start : head_end]
        if text.startswith("(", head_end):
            end = _balanced_end(text, head_end)
            if end is None:
                # A call spanning lines holds Jaxprs printed on their own
                # (custom_linear_solve's jaxprs=_LinearSolveTuple(...)): kept as text.
                end = _balanced_end(text, head_end, one_line=False)
                if end is None:
                    raise _NotStructured(tok.start)
                value = self.record_value(head, head_end + 1, end - 1)
                s.pos = end
                return value
            s.pos = end
            return self.read_head(head, text[tok.start : end], tok.start)
        s.pos = head_end
        if head != tok.text:
            return self.read_head(head, head, tok.start)
        if head in _KEYWORDS:
            return _KEYWORDS[head]
        if not top:
            return OpaqueParam(head)
        dtype = dtype_named(head)
        return head if dtype is None else dtype

    def record_value(self, head: str, start: int, end: int):
        """``head(k=v, ...)`` spanning lines (custom_linear_solve's
        ``jaxprs=_LinearSolveTuple(matvec={ lambda ...}, ...)``), the fields between
        ``start`` and ``end``: a named tuple called ``head``, whose fields hold Jaxprs,
        each printed on its own (with its own ``let``s), or other values."""
        text = self.s.text
        fields, values = [], []
        i = start
        while i < end:
            m = _FIELD.match(text, i, end)
            if m is None:
                raise self.s.error(f"cannot read the fields of {head}(...)", i)
            value_end = _field_end(text, m.end(), end)
            field = text[m.end() : value_end].strip()
            fields.append(m.group(1))
            if field.startswith(("{", "let ")):
                values.append(self.standalone_jaxpr(field, m.end()))
            else:
                values.append(_simple_value(field))
            i = value_end + 1
        try:
            return _record_type(head, tuple(fields))(*values)
        except (ValueError, TypeError) as e:
            raise self.s.error(f"cannot read {head}(...): {e}", start) from None

    def standalone_jaxpr(self, text: str, pos: int):
        """The ClosedJaxpr printed on its own as ``text`` (which starts at ``pos``)."""
        raise self.s.error("a Jaxpr cannot appear here", pos)

    def read_head(self, head: str, text: str, pos: int):
        parts = head.split(".")
        for n in range(len(parts), 0, -1):
            reader = value_readers.get(".".join(parts[:n]))
            if reader is not None:
                try:
                    return reader(text)
                except Exception as e:
                    raise self.s.error(f"cannot read {text}: {_reason(e)}", pos) from None
        return OpaqueParam(text)

    def sequence(self, how: JaxprsIn, closer: str):
        s = self.s
        start = s.next().start
        self.enter(start)
        items, trailing_comma, spaced = [], False, False
        while not s.at(closer):
            item_start = s.peek().start
            item = self.element(how)
            if spaced and not _is_jaxpr(item):
                raise _NotStructured(item_start)
            items.append(item)
            trailing_comma = s.accept(",")
            # JAX separates the Jaxprs of a tuple (cond's branches) by spaces only.
            spaced = not trailing_comma and _is_jaxpr(item)
            if not (trailing_comma or spaced or s.at(closer)):
                raise _NotStructured(s.peek().start)
        s.next()
        self.leave()
        if closer == "]":
            return items
        if len(items) == 1 and not trailing_comma and not _is_jaxpr(items[0]):
            raise _NotStructured(start)
        return tuple(items)

    def dict_value(self, how: JaxprsIn):
        """``{k: v, ...}`` as a dict, or ``{a, b}`` as a set."""
        s = self.s
        start = s.next().start
        self.enter(start)
        items = []
        is_dict = None
        while not s.at("}"):
            key = self.element(how)
            if is_dict is None:
                is_dict = s.at(":")
            if is_dict:
                if not s.accept(":"):
                    raise _NotStructured(s.peek().start)
                items.append((key, self.element(how)))
            else:
                items.append(key)
            if not s.accept(","):
                break
        if not s.accept("}"):
            raise _NotStructured(s.peek().start)
        self.leave()
        try:
            return set(items) if is_dict is False else dict(items)
        except TypeError:  # unhashable keys
            raise _NotStructured(start) from None

    def element(self, how: JaxprsIn):
        """An item of a tuple, list or dict: a value, or else (if it starts with neither
        a number, a string nor a bracket) an OpaqueParam holding the text up to the next
        ``,`` or closing bracket, such as ``<function f at 0x7f...>``."""
        s = self.s
        first = s.peek()
        start = first.start
        depth = self.depth
        try:
            value = self.value(top=False, how=how)
            if _is_jaxpr(value) or s.peek().text in (",", ")", "]", "}", ":"):
                return value
        except _NotStructured:
            self.depth = depth
        if first.kind in ("number", "string", "eof") or first.text in ("(", "[", "{", "-"):
            raise _NotStructured(s.peek().start)
        end = _element_end(s.text, start)
        if end is None or not s.text[start:end].strip():
            raise _NotStructured(start)
        s.pos = end
        return OpaqueParam(s.text[start:end].rstrip())


_NAME_AT = re.compile(r"[A-Za-z_]\w*", re.ASCII)
_FIELD = re.compile(r"\s*([A-Za-z_]\w*)=", re.ASCII)


@functools.cache
def _record_type(head: str, fields: tuple[str, ...]) -> type:
    return collections.namedtuple(head, fields, rename=False)


def _field_end(text: str, i: int, end: int) -> int:
    """Where the field value starting at ``i`` ends: at a ``,`` outside brackets."""
    depth = 0
    while i < end:
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            return i
        elif c in "'\"" and (m := STRING.match(text, i)):
            i = m.end()
            continue
        i += 1
    return end


def _simple_value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return OpaqueParam(text)


_KEYWORDS = {"True": True, "False": False, "None": None, "inf": math.inf, "nan": math.nan}


def _reason(e: Exception) -> str:
    return e.msg if isinstance(e, JaxprSyntaxError) else str(e)


def _is_jaxpr(x) -> bool:
    return isinstance(x, (Jaxpr, ClosedJaxpr))


def _balanced_end(text: str, i: int, one_line: bool = True) -> int | None:
    """The index after the bracket matching the one at ``i``, on the same line unless
    not ``one_line``."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c in _OPENERS:
            depth += 1
        elif c in _CLOSERS:
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == "\n" and one_line:
            return None
        elif c in "'\"" and (m := STRING.match(text, i)):
            i = m.end()
            continue
        i += 1
    return None


def _element_end(text: str, i: int) -> int | None:
    """The index of the ``,`` or unmatched closing bracket that ends an element."""
    depth = 0
    angles = text.startswith("<", i)  # reprs like <function f at 0x7f...>
    while i < len(text):
        c = text[i]
        if c in _OPENERS or (angles and c == "<"):
            depth += 1
        elif c in _CLOSERS or (angles and c == ">"):
            if depth == 0:
                return i if c != ">" else None
            depth -= 1
        elif c == "," and depth == 0:
            return i
        elif c == "\n":
            return None
        elif c in "'\"" and (m := STRING.match(text, i)):
            i = m.end()
            continue
        i += 1
    return None


_DTYPES_BY_NAME = {dt.name: dt for dt in dtypes.ALL_DTYPES}


def dtype_named(name: str) -> np.dtype | None:
    """The dtype whose name is exactly ``name`` (``float32``, ``bfloat16``), or None."""
    return _DTYPES_BY_NAME.get(name)


def _read_numpy(text: str):
    """``np.int64(3)``, ``np.float32(nan)``, ``np.True_``: NumPy scalars as NumPy 2
    prints them."""
    if text in ("np.True_", "np.False_"):
        return np.bool_(text == "np.True_")
    head = text.partition("(")[0]
    cls = getattr(np, head[3:], None)
    if not (isinstance(cls, type) and issubclass(cls, np.generic)) or head == text:
        raise ValueError(f"not a NumPy scalar: {text}")
    args, kwargs = parse_call_args(text)
    if len(args) != 1 or kwargs:
        raise ValueError(f"expected one argument: {text}")
    return cls(args[0])


def _read_dtype(text: str):
    """``dtype('float32')``; and ``dtype(bfloat16)``, as ml_dtypes' dtypes print."""
    args, kwargs = parse_call_args(text)
    dtype = dtype_named(str(args[0])) if len(args) == 1 else None
    if dtype is None or kwargs:
        raise ValueError(f"unknown dtype: {text}")
    return dtype


_SHAPED_ARRAY = re.compile(
    r"ShapedArray\(([A-Za-z_]\w*(?:<[^<>\s]*>)?)\[(\d+(?:,\d+)*)?\](, weak_type=True)?\)",
    re.ASCII,
)


def _read_shaped_array(text: str):
    """``ShapedArray(float32[3])``, ``ShapedArray(float32[], weak_type=True)``: avals as
    their repr writes them (pure_callback's ``result_avals``)."""
    m = _SHAPED_ARRAY.fullmatch(text)
    if m is None:
        raise ValueError(f"not a ShapedArray: {text}")
    name, dims, weak = m.groups()
    dtype = dtype_named(name) or dtypes.dtype_from_short_name(name)
    shape = tuple(int(d) for d in dims.split(",")) if dims else ()
    return ShapedArray(shape, dtype, weak_type=weak is not None)


def _read_frozenset(text: str):
    args, kwargs = parse_call_args(text)
    if len(args) > 1 or kwargs or (args and not isinstance(args[0], (set, dict))):
        raise ValueError(f"not a frozenset: {text}")
    return frozenset(args[0] if args else ())


register_value_reader("np", _read_numpy)
register_value_reader("frozenset", _read_frozenset)
register_value_reader("dtype", _read_dtype)
register_value_reader("ShapedArray", _read_shaped_array)
