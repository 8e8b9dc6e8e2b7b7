"""Reading printed Jaxprs (JAX 0.10.2's text) back into Jaxprs.

``parse_jaxpr(text)`` returns a ``Jaxpr`` equal (structurally, see
``lamina.ir.core.jaxpr``) to the one printed; ``parse_closed_jaxpr(text, consts)`` wraps
it in a ``ClosedJaxpr``.

The grammar, with whitespace (newlines included) free between tokens::

    text     := ('let' NAME '=' jaxpr 'in')* jaxpr
    jaxpr    := '{' 'lambda' binder* ';' binder* '.' 'let' (eqn ';'?)* 'in' outs '}'
    binder   := (NAME | '_') ':' type                  a:f32[3,4]  _:i32[]  t:Tok
    type     := 'Tok' | '~'? DTYPE ('<' ... '>')? '[' (INT (',' INT)*)? ']'
    eqn      := (binder+ '=')? PRIMITIVE ('[' (NAME '=' value)* ']')? atom*
    outs     := '(' (atom (',' atom)* ','?)? ')'
    atom     := NAME | LITERAL ':' type                b  1.0:f32[]  -inf:f32[]  True:bool[]

Each Jaxpr is its own scope: it sees none of the names of the Jaxpr around it, and binds
each name once, except ``_`` (see ``_Scope``). A leading ``let f = { ... } in`` binds a
Jaxpr that params may name (``jaxpr=f``), as JAX prints Jaxprs used more than once; the
name is JAX's function name and may be any text (``let lambda = ...``), and one let-bound
Jaxpr may name another bound after it. Param values are read by ``parse_params.py``,
which documents how their types are decided.

JAX's variable names include words like ``in`` and ``inf``, so keywords depend on
context: ``in`` ends the equations only where an output list ``(`` follows. Two cases
need the layout: a binder named like a literal (``inf:f32[] = ...``) and an equation
with neither outputs nor params (``name arg``) start a new equation only after ``;`` or
at the start of a line indented no deeper than the equation before it (otherwise they
are a literal operand, and an error).

Primitives are looked up by name in a registry, which knows JAX 0.10.2's (see
``PrimitiveRegistry``); a param of such a primitive is read as the table says its kind
is, unless a loaded layer declared it. A float literal whose text is not its dtype's
value as printed (``1e-05:f32[]``, not ``9.999999747378752e-06:f32[]``) held a Python
float in JAX: it reads as that float, weakly typed, and prints the same.

The text holds no constant values, no effects and no source info: parsed equations and
Jaxprs have no effects, and the consts of parsed ``ClosedJaxpr`` s (nested ones
included) are ``MissingConst`` placeholders unless given.
"""

from __future__ import annotations

import functools
import math
import re

import ml_dtypes
import numpy as np

from lamina.ir import dtypes
from lamina.ir.core.avals import AbstractValue, ShapedArray, abstract_token
from lamina.ir.core.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal, Var, new_jaxpr_eqn
from lamina.ir.core.primitives import (
    Primitive,
    PrimitiveRegistry,
    default_registry,
    param_completion_rules,
    pp_param_rules,
    shared_names_rules,
)
from lamina.ir.parsing.lexer import (
    PRIMITIVE_NAME,
    STRING,
    JaxprSyntaxError,
    Scanner,
    Token,
    describe,
)
from lamina.ir.parsing.parse_params import (
    COMPLEX,
    OpaqueParam,
    ValueParser,
    declare_param,
    parse_call_args,
    register_value_reader,
)

__all__ = [
    "JaxprSyntaxError",
    "MissingConst",
    "OpaqueParam",
    "declare_param",
    "parse_call_args",
    "parse_closed_jaxpr",
    "parse_jaxpr",
    "register_value_reader",
]


def parse_jaxpr(
    text: str,
    *,
    registry: PrimitiveRegistry = default_registry,
    unknown_primitives: str = "error",
    positions: dict | None = None,
) -> Jaxpr:
    """Reads a printed Jaxpr. Primitive names are looked up in ``registry`` (which
    knows JAX 0.10.2's primitives by name: see ``PrimitiveRegistry``); a name not there
    is an error, or with ``unknown_primitives="create"`` a new unregistered
    ``Primitive`` (one per name and parse), whose equations print their params in the
    order the text gives them. ``positions``, if given, receives each equation's
    ``(line, column)`` in the text, counting from 1. Raises ``JaxprSyntaxError``."""
    if not isinstance(text, str):
        raise TypeError(f"parse_jaxpr expects a string, got {type(text).__name__}")
    if unknown_primitives not in ("error", "create"):
        raise ValueError(
            f"unknown_primitives must be 'error' or 'create', got {unknown_primitives!r}"
        )
    parser = _JaxprParser(text, registry, unknown_primitives == "create")
    parser.positions = positions
    try:
        return parser.toplevel()
    except RecursionError:
        raise parser.s.error("the text is nested too deeply to read") from None


def parse_closed_jaxpr(
    text: str,
    consts=None,
    *,
    registry: PrimitiveRegistry = default_registry,
    unknown_primitives: str = "error",
) -> ClosedJaxpr:
    """Reads a printed Jaxpr as a ClosedJaxpr whose constvars take ``consts`` (the text
    holds none), or ``MissingConst`` placeholders when ``consts`` is None."""
    jaxpr = parse_jaxpr(text, registry=registry, unknown_primitives=unknown_primitives)
    if consts is None:
        return _close(jaxpr)
    return ClosedJaxpr(jaxpr, consts)


class MissingConst:
    """Stands for the value of a constvar of a parsed ClosedJaxpr. Placeholders of the
    same type are equal, so parsing the same text twice gives equal ClosedJaxprs."""

    __slots__ = ("aval",)

    def __init__(self, aval: AbstractValue):
        self.aval = aval

    def __eq__(self, other):
        return type(other) is MissingConst and other.aval == self.aval

    def __hash__(self):
        return hash((MissingConst, self.aval))

    def __repr__(self):
        return f"MissingConst({self.aval.str_short(short_dtypes=True)})"


def _close(jaxpr: Jaxpr) -> ClosedJaxpr:
    return ClosedJaxpr(jaxpr, [MissingConst(v.aval) for v in jaxpr.constvars])


# A complex literal, told apart from the output list that follows the keyword 'in'.
_COMPLEX_LITERAL = re.compile(COMPLEX.pattern + r"\s*:", re.ASCII)
_EXTENDED_DTYPE = re.compile(r"<[^<>\s\[\]]*>", re.ASCII)  # the <fry> of key<fry>
# 'let f = { lambda': the name is a word or, as JAX names Jaxprs after functions, any
# text before ' = {' (let lambda = ..., let unnamed wrapped function = ...).
_LET_NAME = re.compile(
    r"\s*(?:(\w+)\s*=\s*\{(?=\s*lambda\b)"  # let f = { lambda
    r"|([^\n]+?)\s+=\s+\{(?=\s*lambda\b))",  # let x={} = { lambda
    re.ASCII,
)
_AFTER = " \t\r\n,)]"  # what may follow the name of a let-bound Jaxpr where it is used
_SIMPLE_TYPE = re.compile(r"~?[A-Za-z_]\w*(?:<[^<>\s\[\]]*>)?\[(?:\d+(?:,\d+)*)?\]", re.ASCII)
_PRIMITIVE_WITH_PARAMS = re.compile(r"[A-Za-z_]\w*(?:-\w+)*\s*\[", re.ASCII)
_LITERAL_WORDS = ("True", "False", "inf", "nan", "infj", "nanj")
_FLOAT_TEXT = re.compile(r"-?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|nan)", re.ASCII)
_INT_TEXT = re.compile(r"-?\d+", re.ASCII)


_READER_OF_KIND = {"jaxpr": Jaxpr, "closed_jaxpr": ClosedJaxpr, "str": str}


class _Scope:
    """The names one Jaxpr binds, each once; but ``_`` binds afresh each time. JAX
    prints a variable ``_`` where it stands for an output that the equation outside a
    jit drops, and may then use it: a use of ``_`` means the latest ``_`` bound, which
    becomes a Var there (other ``_`` binders stay DropVars)."""

    def __init__(self):
        self.vars: dict[str, Var] = {}
        self.last_drop: tuple[list, int] | None = None  # where the latest '_' sits

    def bind(self, name: str, binders: list, index: int) -> bool:
        """Binds ``binders[index]`` to ``name``; False if ``name`` is bound already."""
        if name == "_":
            self.last_drop = (binders, index)
            return True
        if name in self.vars:
            return False
        self.vars[name] = binders[index]
        return True

    def lookup(self, name: str) -> Var | None:
        if name != "_":
            return self.vars.get(name)
        if self.last_drop is None:
            return None
        binders, index = self.last_drop
        if isinstance(binders[index], DropVar):
            binders[index] = Var(binders[index].aval)
        return binders[index]


class _JaxprParser(ValueParser):
    """One parse of one text: the grammar above, on a Scanner, with the let-bound
    Jaxprs and the primitives made for unknown names."""

    def __init__(self, text: str, registry: PrimitiveRegistry, create: bool):
        super().__init__(Scanner(text))
        self.registry = registry
        self.create = create
        self.created: dict[str, Primitive] = {}
        self.lets: dict[str, int] = {}  # let-bound name -> where its Jaxpr starts
        self.let_jaxprs: dict[str, Jaxpr | None] = {}  # None while being read
        self.wrapped: dict[tuple[str, bool], Jaxpr | ClosedJaxpr] = {}
        self.let_names: list[str] = []
        self.types: dict[str, AbstractValue] = {}  # text -> type, for speed
        self.names_of: dict[int, str] = {}  # id(var) -> its name in the text
        self.taken_lets: dict[str, str] = {}  # let name -> the field text it stands for
        self.positions: dict | None = None  # equation -> (line, column)
        self.undrop = False  # read the main Jaxpr's '_' outputs as variables
        self.in_main = False

    # -- the whole text ----------------------------------------------------------------

    def toplevel(self) -> Jaxpr:
        s = self.s
        self.find_lets()
        self.let_names = sorted(self.lets, key=len, reverse=True)  # longest match first
        main = s.pos
        for name in self.lets:
            self.let_jaxpr(name)
        s.pos = main
        self.in_main = True
        jaxpr = self.jaxpr()
        tok = s.peek()
        if tok.kind != "eof":
            raise s.error(f"unexpected {describe(tok)} after the Jaxpr", tok.start)
        return jaxpr

    def find_lets(self) -> None:
        """Notes each leading ``let name = { ... } in``; the Jaxprs are read later, so
        that one may name another bound after it (as JAX prints them)."""
        s = self.s
        while s.at("let") and s.peek2().text != "=":
            s.next()
            name = s.match(_LET_NAME)
            if name is None:
                s.expect_name("a name after 'let'")
                s.expect("=", "'=' after the let-bound name")
                raise s.error(
                    f"expected '{{' to start the let-bound Jaxpr, found {describe(s.peek())}"
                )
            brace = name.end() - 1
            group = 1 if name.group(1) else 2
            name = Token("name", name.group(group), name.start(group), name.end(group))
            if name.text in self.lets:
                raise s.error(f"'{name.text}' is bound by 'let' twice", name.start)
            end = _brace_end(s.text, brace)
            if end is None:
                raise s.error("this '{' is never closed", brace)
            self.lets[name.text] = brace
            s.pos = end
            s.expect("in", "'in' after the let-bound Jaxpr")

    def let_jaxpr(self, name: str) -> Jaxpr:
        if name in self.let_jaxprs:
            jaxpr = self.let_jaxprs[name]
            if jaxpr is None:
                raise self.s.error(f"the let-bound Jaxpr '{name}' refers to itself")
            return jaxpr
        self.let_jaxprs[name] = None
        saved = self.s.pos
        self.s.pos = self.lets[name]
        jaxpr = self.let_jaxprs[name] = self.jaxpr()
        self.s.pos = saved
        return jaxpr

    # hooks of ValueParser
    def nested_jaxpr(self, closed: bool):
        jaxpr = self.jaxpr()
        return _close(jaxpr) if closed else jaxpr

    def shared_jaxpr(self, closed: bool):
        if not self.lets:
            return None
        s = self.s
        start = s.skip_ws()
        for name in self.let_names:
            end = start + len(name)
            if s.text.startswith(name, start) and (end == len(s.text) or s.text[end] in _AFTER):
                break
        else:
            return None
        s.pos = end
        return self.shared(name, closed)

    def standalone_jaxpr(self, text: str, pos: int):
        parser = _JaxprParser(text, self.registry, self.create)
        parser.created = self.created
        # Printed on its own, the Jaxpr shows unused outputs as '_'; elsewhere it is
        # printed nested, with their names: read them as variables.
        parser.undrop = True
        try:
            jaxpr = parser.toplevel()
        except JaxprSyntaxError as e:
            raise self.s.error(f"in a Jaxpr printed on its own: {e.msg}", pos) from None
        # JAX also printed it up front, as 'let name = ...', if the whole text holds it
        # more than once: it is the first equal let-bound Jaxpr no other text took, or
        # else the one this same text took.
        same_text = None
        for name in self.lets:
            let = self.let_jaxpr(name)
            taken = self.taken_lets.get(name)
            if taken is None and let == jaxpr:
                self.taken_lets[name] = text
                return self.shared(name, closed=True)
            if taken == text and same_text is None:
                same_text = name
        return _close(jaxpr) if same_text is None else self.shared(same_text, closed=True)

    def shared(self, name: str, closed: bool):
        """The let-bound Jaxpr ``name``, as a ClosedJaxpr if ``closed``."""
        key = (name, closed)
        if key not in self.wrapped:
            jaxpr = self.let_jaxpr(name)
            self.wrapped[key] = _close(jaxpr) if closed else jaxpr
        return self.wrapped[key]

    def known_reader(self, primitive: str, key: str):
        return _READER_OF_KIND.get(self.registry.param_kind(primitive, key))

    # -- Jaxprs --------------------------------------------------------------------------

    def jaxpr(self) -> Jaxpr:
        s = self.s
        brace = s.expect("{", "'{' to start a Jaxpr")
        self.enter(brace.start)
        s.expect("lambda", "'lambda' after '{'")
        scope = _Scope()
        constvars = self.binders(scope, ";")
        invars = self.binders(scope, ".")
        s.expect("let", "'let' after the input variables")
        eqns = []
        while True:
            while s.accept(";"):
                pass
            if self.at_in():
                break
            eqns.append(self.eqn(scope))
        s.next()
        outvars = self.outs(scope)
        s.expect("}", "'}' to end the Jaxpr")
        self.leave()
        return Jaxpr(constvars, invars, outvars, eqns)

    def binders(self, scope: _Scope, stop: str) -> list[Var]:
        """Binders up to and including ``stop``."""
        s = self.s
        out = []
        while not s.accept(stop):
            tok = s.peek()
            if tok.kind != "name":
                raise s.error(
                    f"expected a variable like 'a:f32[3]' or {stop!r}, found {describe(tok)}"
                )
            name, var = self.binder()
            out.append(var)
            self.bind(scope, name, out)
        return out

    def binder(self) -> tuple[Token, Var]:
        s = self.s
        name = s.next()
        s.expect(":", f"':' and a type after '{name.text}'")
        aval = self.type()
        if name.text == "_":
            return name, DropVar(aval)
        return name, Var(aval, suffix=name.text[len(name.text.rstrip("'")) :])

    def bind(self, scope: _Scope, name: Token, binders: list, index: int = -1) -> None:
        if not scope.bind(name.text, binders, index % len(binders)):
            raise self.s.error(f"variable '{name.text}' is bound twice", name.start)
        self.names_of[id(binders[index])] = name.text

    def type(self) -> AbstractValue:
        s = self.s
        m = s.match(_SIMPLE_TYPE)
        if m is None:
            return self.full_type()
        aval = self.types.get(m.group())
        if aval is None:
            aval = self.types[m.group()] = self.full_type()
        s.pos = m.end()
        return aval

    def full_type(self) -> AbstractValue:
        s = self.s
        weak = s.accept("~")
        tok = s.expect_name("a type like f32[3]")
        if tok.text == "Tok" and not weak:
            return abstract_token
        name = tok.text
        if m := _EXTENDED_DTYPE.match(s.text, tok.end):
            name += m.group()
            s.pos = m.end()
        try:
            dtype = dtypes.dtype_from_short_name(name)
        except Exception:
            hint = " (extended dtypes must be registered)" if "<" in name else ""
            raise s.error(f"unknown dtype '{name}'{hint}", tok.start) from None
        s.expect("[", f"'[' and a shape after '{name}'")
        dims = []
        while not (not dims and s.accept("]")):
            dim = s.next()
            if dim.kind != "number" or not dim.text.isdigit():
                raise s.error(f"expected a dimension size, found {describe(dim)}", dim.start)
            dims.append(int(dim.text))
            if s.accept("]"):
                break
            s.expect(",", "',' or ']' in the shape")
        return ShapedArray(tuple(dims), dtype, weak_type=weak)

    def at_in(self) -> bool:
        """Whether the next token is the keyword ``in`` (not a variable named so)."""
        s = self.s
        tok = s.peek()
        if tok.kind != "name" or tok.text != "in":
            return False
        s.pos = tok.end
        is_keyword = s.at("(") and not s.match(_COMPLEX_LITERAL)
        s.pos = tok.start
        return is_keyword

    # -- equations -----------------------------------------------------------------------

    def eqn(self, scope: _Scope):
        s = self.s
        eqn_start = s.peek().start
        binders = []
        if s.peek().kind == "name" and s.peek2().text == ":":
            while not s.accept("="):
                tok = s.peek()
                if tok.kind != "name":
                    raise s.error(
                        f"expected a variable like 'a:f32[3]' or '=', found {describe(tok)}"
                    )
                binders.append(self.binder())
        if self.undrop and self.in_main and self.depth == 1:
            binders = [(t, Var(v.aval) if isinstance(v, DropVar) else v) for t, v in binders]
        name = s.primitive_name()
        if name is None:
            tok = s.peek()
            raise s.error(f"expected an equation or 'in', found {describe(tok)}", tok.start)
        primitive = self.primitive(name)
        params = self.params(name.text) if s.at("[") else {}
        invars = self.atoms(scope, eqn_start)
        outvars = [var for _, var in binders]
        complete = param_completion_rules.get(primitive)
        if complete is not None:
            try:
                params = complete(params, [x.aval for x in invars], [v.aval for v in outvars])
            except Exception as e:
                raise s.error(
                    f"cannot complete the params of '{name.text}': {e}", name.start
                ) from None
        eqn = new_jaxpr_eqn(invars, outvars, primitive, params)
        for i, (tok, _) in enumerate(binders):
            self.bind(scope, tok, eqn.outvars, i)
        if self.created.get(name.text) is primitive:
            self.share_names(eqn)
        if self.positions is not None:
            line = s.text.count("\n", 0, eqn_start) + 1
            self.positions[eqn] = (line, s.column(eqn_start) + 1)
        return eqn

    def primitive(self, name: Token) -> Primitive:
        primitive = self.registry.lookup(name.text)
        if primitive is not None:
            return primitive
        if name.text == "in":
            raise self.s.error("expected '(' and the output list after 'in'", self.s.peek().start)
        if not self.create:
            raise self.s.error(
                f"unknown primitive '{name.text}' (register it, or parse with "
                "unknown_primitives='create')",
                name.start,
            )
        if name.text not in self.created:
            primitive = self.created[name.text] = Primitive(name.text, registry=None)
            pp_param_rules[primitive] = _as_written
        return self.created[name.text]

    def share_names(self, eqn) -> None:
        """Prints a sub-Jaxpr of an equation of a created primitive with the equation's
        names for its inputs, where the text does so (as JAX prints ``jit``)."""
        names = self.names_of
        outer = [names.get(id(x)) for x in eqn.invars]
        for key, value in eqn.params.items():
            sub = value.jaxpr if isinstance(value, ClosedJaxpr) else value
            if isinstance(sub, Jaxpr) and sub.invars and not self.is_let_bound(sub):
                inner = [names.get(id(v)) for v in sub.invars]
                pairs = [(i, o) for i, o in zip(inner, outer, strict=False) if o is not None]
                if len(inner) == len(outer) and pairs and all(i == o for i, o in pairs):
                    shared_names_rules[eqn.primitive] = key
                    return

    def is_let_bound(self, jaxpr: Jaxpr) -> bool:
        return any(j is jaxpr for j in self.let_jaxprs.values())

    def params(self, primitive: str) -> dict:
        s = self.s
        s.next()
        params = {}
        while not s.accept("]"):
            key = s.peek()
            if key.kind != "name":
                raise s.error(f"expected a param name or ']', found {describe(key)}")
            s.next()
            if key.text in params:
                raise s.error(f"param '{key.text}' is given twice", key.start)
            s.expect("=", f"'=' after param name '{key.text}'")
            params[key.text] = self.param_value(primitive, key.text)
        return params

    def atoms(self, scope: _Scope, eqn_start: int) -> list:
        """The operands of an equation, up to where the next equation or 'in' starts.

        Where the text alone is ambiguous (a variable named ``inf`` binding the next
        equation's output, or an equation with neither outputs nor params), a token at
        the start of a line indented no deeper than this equation starts the next one.
        """
        s = self.s
        out = []
        while True:
            tok = s.peek()
            if tok.kind != "name":
                if tok.kind == "number" or tok.text in ("-", "("):
                    out.append(self.literal())
                    continue
                break
            after = s.peek2().text
            line_start = s.newline_before(tok)
            next_eqn = line_start and s.column(tok.start) <= s.column(eqn_start)
            if after == ":":
                if tok.text in _LITERAL_WORDS and not self.binders_ahead(next_eqn):
                    out.append(self.literal())
                    continue
                break  # the outputs of the next equation
            if after == "[" or (after == "-" and s.match(_PRIMITIVE_WITH_PARAMS)):
                break  # the next equation, which has no outputs
            if tok.text == "in" and self.at_in():
                break
            if next_eqn and (self.create or s.match(PRIMITIVE_NAME).group() in self.registry):
                break  # the next equation, which has no outputs and no params
            var = scope.lookup(tok.text)
            if var is not None:
                out.append(var)
                s.next()
                continue
            raise s.error(
                f"'{tok.text}' is not a variable in scope (nor a known primitive)", tok.start
            )
        return out

    def binders_ahead(self, at_eqn_start: bool) -> bool:
        """Whether ``name:type ... =``, the outputs of an equation, comes next rather
        than a literal: it must, and either start the equation's line or have a type no
        literal has."""
        s = self.s
        saved = s.pos
        try:
            avals = []
            while s.peek().kind == "name" and s.peek2().text == ":":
                avals.append(self.binder()[1].aval)
            if not s.at("="):
                return False
            first = avals[0]
            return at_eqn_start or not (isinstance(first, ShapedArray) and first.shape == ())
        except JaxprSyntaxError:
            return False
        finally:
            s.pos = saved

    def outs(self, scope: _Scope) -> list:
        s = self.s
        s.expect("(", "'(' and the output list after 'in'")
        out = []
        while not s.accept(")"):
            out.append(self.atom(scope))
            if not s.accept(","):
                s.expect(")", "',' or ')' in the output list")
                break
        return out

    def atom(self, scope: _Scope):
        s = self.s
        tok = s.peek()
        if tok.kind == "name" and s.peek2().text != ":":
            var = scope.lookup(tok.text)
            if var is None:
                raise s.error(f"'{tok.text}' is not a variable in scope", tok.start)
            s.next()
            return var
        if tok.kind in ("name", "number") or tok.text in ("-", "("):
            return self.literal()
        raise s.error(f"expected a variable or a literal, found {describe(tok)}", tok.start)

    def literal(self) -> Literal:
        s = self.s
        start = s.peek().start
        if m := s.match(COMPLEX):
            text = m.group()
            s.pos = m.end()
        else:
            sign = "-" if s.accept("-") else ""
            tok = s.next()
            if tok.kind not in ("number", "name") or (sign and tok.start != start + 1):
                raise s.error(f"expected a literal, found {describe(tok)}", tok.start)
            text = sign + tok.text
        s.expect(":", f"':' and a type after the literal {text}")
        aval = self.type()
        try:
            value = _literal_value(text, aval)
            if (
                isinstance(value, np.floating)
                and _FLOAT_TEXT.fullmatch(text)
                and str(np.asarray(value).item()) != text
            ):
                # JAX prints a Python float held by the literal (a weak type).
                return Literal(float(text), aval.update(weak_type=True))
            return Literal(value, aval)
        except (ValueError, OverflowError) as e:
            raise s.error(f"bad literal {text}:{aval.str_short(True)}: {e}", start) from None


def _as_written(params: dict) -> list:
    """Params of a created primitive print in the order the text gave them."""
    return list(params.items())


def _literal_value(text: str, aval: AbstractValue):
    """The NumPy scalar of ``aval``'s dtype that ``text`` denotes."""
    if not isinstance(aval, ShapedArray) or aval.shape != ():
        raise ValueError("a literal is a scalar, of a type like f32[]")
    dtype = aval.dtype
    numeric = isinstance(dtype, np.dtype) and (
        dtype.kind in "biufc" or dtype.type.__module__.startswith("ml_dtypes")
    )
    if not numeric:
        raise ValueError(f"there are no literals of dtype {dtype}")
    if dtype == np.bool_:
        if text not in ("True", "False"):
            raise ValueError("expected True or False")
        return np.bool_(text == "True")
    if dtype.kind == "c":
        if not (COMPLEX.fullmatch(text) or _FLOAT_TEXT.fullmatch(text.removesuffix("j"))):
            raise ValueError("expected a complex number")
        return dtype.type(complex(text))
    info = _int_info(dtype)
    if info is not None:
        if not _INT_TEXT.fullmatch(text):
            raise ValueError("expected an integer")
        value = int(text)
        if not info.min <= value <= info.max:
            raise ValueError(f"out of range [{info.min}, {info.max}]")
        return dtype.type(value)
    if not _FLOAT_TEXT.fullmatch(text):
        raise ValueError("expected a number")
    value = float(text)
    with np.errstate(over="ignore"):
        result = dtype.type(value)
    if math.isfinite(value) and not math.isfinite(float(result)):
        raise ValueError("out of range")
    return result


@functools.cache
def _int_info(dtype: np.dtype):
    try:
        return ml_dtypes.iinfo(dtype)
    except (ValueError, TypeError):
        return None


def _brace_end(text: str, i: int) -> int | None:
    """The index after the ``}`` matching the ``{`` at ``i`` (skipping quoted text)."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c in "'\"" and (m := STRING.match(text, i)):
            i = m.end()
            continue
        i += 1
    return None
