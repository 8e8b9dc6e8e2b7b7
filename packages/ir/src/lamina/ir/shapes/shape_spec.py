"""Reading symbolic shape specifications (``"b, 2*n + 1, floordiv(b, 3), ..."``) into
tuples of dimensions, with JAX 0.10.2's grammar and error messages.

A specification is a comma-separated list (parentheses optional) of dimension
expressions: integers, variables, ``e1 + e2``, ``e1 - e2``, ``e1 * e2``, ``e ^ k``,
``floordiv(e1, e2)``, ``mod(e1, e2)``, ``max(e1, e2)``, ``min(e1, e2)``; with a ``like``
shape, ``_`` takes that dimension from it and ``...`` all the remaining ones.
"""

from __future__ import annotations

import io
import tokenize

from lamina.ir.shapes.dim_expr import FLOORDIV, MAX, MIN, MOD, DimExpr, max_dim, min_dim

__all__ = ["parse_shape_spec"]

_FOLLOW_SHAPE = (tokenize.ENDMARKER, tokenize.RPAR)
_FOLLOW_EXPR = (*_FOLLOW_SHAPE, tokenize.COMMA)
_FOLLOW_TERM = (*_FOLLOW_EXPR, tokenize.PLUS, tokenize.MINUS)


def parse_shape_spec(spec: str, like, spec_repr: str, scope) -> tuple:
    """The dimensions of ``spec``; ``ValueError`` describing where it went wrong."""
    return _Reader(spec, like, spec_repr, scope).shape_spec()


class _Reader:
    def __init__(self, spec, like, spec_repr, scope):
        self.spec = spec
        self.like = like
        self.spec_repr = spec_repr
        self.scope = scope
        self.dims: list = []
        self.tokens = tokenize.tokenize(io.BytesIO(spec.encode("utf-8")).readline)

    def error(self, tok, detail: str) -> ValueError:
        msg = (
            f"syntax error in symbolic shape {self.spec_repr} "
            f"in dimension {len(self.dims)}: {detail}. "
        )
        if tok is not None:
            col = tok.start[1]
            msg += f"Parsed '{tok.line[:col]}', remaining '{tok.line[col:]}'."
        return ValueError(msg)

    def next(self):
        while True:
            try:
                tok = next(self.tokens)
            except StopIteration:
                raise self.error(None, "unexpected end of string") from None
            except tokenize.TokenError as e:
                raise self.error(None, str(e)) from None
            if tok.exact_type not in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                return tok

    def expect(self, tok, kinds) -> None:
        if tok.exact_type not in kinds:
            names = ", ".join(tokenize.tok_name[k] for k in kinds)
            found = tokenize.tok_name[tok.exact_type]
            raise self.error(tok, f"expecting one of {{{names}}} but found {found}")

    def consume(self, tok, kind):
        self.expect(tok, (kind,))
        return self.next()

    def shape_spec(self) -> tuple:
        tok = self.consume(self.next(), tokenize.ENCODING)
        dims, tok = self.shape(tok)
        self.expect(tok, (tokenize.ENDMARKER,))
        return dims

    def add(self, d, tok) -> None:
        if d is None:
            raise self.error(tok, f"unexpected placeholder for unknown dimension; like={self.like}")
        if not isinstance(d, DimExpr) and self.like is not None and d != self.like[len(self.dims)]:
            raise self.error(tok, f"different size {d} for known dimension; like={self.like}")
        self.dims.append(d)

    def shape(self, tok):
        if tok.exact_type == tokenize.LPAR:
            dims, tok = self.shape(self.next())
            return dims, self.consume(tok, tokenize.RPAR)
        while tok.exact_type not in _FOLLOW_SHAPE:
            ellipsis = tok.exact_type == tokenize.ELLIPSIS
            if ellipsis or (tok.exact_type == tokenize.NAME and tok.string == "_"):
                if self.like is None:
                    raise self.error(tok, "spec contains ... but no 'like' shape was given")
                needed = len(self.dims) + (0 if ellipsis else 1)
                if len(self.like) < needed:
                    raise self.error(
                        tok,
                        f"cannot resolve placeholder '{tok.string}' because we parsed "
                        f"{len(self.dims)} already and 'like' shape has "
                        f"only {len(self.like)} dimensions",
                    )
            if ellipsis:
                for d in self.like[len(self.dims) :]:
                    self.add(d, tok)
                tok = self.next()
                break
            if tok.exact_type == tokenize.NAME and tok.string == "_":
                d, tok = self.like[len(self.dims)], self.next()
            else:
                d, tok = self.expr(tok)
            self.add(d, tok)
            if tok.exact_type in _FOLLOW_SHAPE:
                break
            tok = self.consume(tok, tokenize.COMMA)
        return tuple(self.dims), tok

    def expr(self, tok):
        negate = tok.exact_type == tokenize.MINUS
        if tok.exact_type in (tokenize.MINUS, tokenize.PLUS):
            tok = self.next()
        acc = None
        while True:
            t, tok = self.term(tok)
            t = -t if negate else t
            acc = t if acc is None else acc + t
            if tok.exact_type in _FOLLOW_EXPR:
                return acc, tok
            negate = tok.exact_type == tokenize.MINUS
            self.expect(tok, (tokenize.PLUS, tokenize.MINUS))
            tok = self.next()

    def term(self, tok):
        acc = None
        while True:
            f, tok = self.factor(tok)
            if tok.exact_type == tokenize.CIRCUMFLEX:
                tok = self.next()
                self.expect(tok, (tokenize.NUMBER,))
                power, tok = self.integer(tok)
                f = f**power
            acc = f if acc is None else acc * f
            if tok.exact_type in _FOLLOW_TERM:
                return acc, tok
            tok = self.consume(tok, tokenize.STAR)

    def integer(self, tok):
        self.expect(tok, (tokenize.NUMBER,))
        try:
            value = int(tok.string)
        except ValueError:
            raise self.error(tok, f"expecting integer, found {tok.string}") from None
        return value, self.next()

    def factor(self, tok):
        if tok.exact_type == tokenize.NAME:
            if tok.string in (FLOORDIV, MOD, MAX, MIN):
                return self.operation(tok.string, self.next())
            return DimExpr.from_var(tok.string, self.scope), self.next()
        sign = 1
        if tok.exact_type == tokenize.MINUS:
            sign = -1
            tok = self.next()
            self.expect(tok, (tokenize.NUMBER,))
        if tok.exact_type == tokenize.NUMBER:
            value, tok = self.integer(tok)
            return sign * value, tok
        self.expect(tok, (tokenize.NAME, tokenize.MINUS, tokenize.NUMBER))
        raise AssertionError("unreachable")

    def operation(self, name, tok):
        tok = self.consume(tok, tokenize.LPAR)
        e1, tok = self.expr(tok)
        tok = self.consume(tok, tokenize.COMMA)
        e2, tok = self.expr(tok)
        tok = self.consume(tok, tokenize.RPAR)
        if name == MAX:
            return max_dim(e1, e2), tok
        if name == MIN:
            return min_dim(e1, e2), tok
        return DimExpr.from_operation(name, e1, e2, scope=self.scope), tok
