"""``Token``: the value of a token (``Tok``) outside a trace, and how a jitted call
passes tokens in and out.

A token carries no data, only ordering inside a program, so no buffer ever holds one:
a compiled call takes its token inputs as constants made inside the program
(``stablehlo.create_token``) and hands back a fresh ``Token`` for each token result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina.interpreters.jaxprs.jaxpr_cache import weak_entry_key
from lamina.ir import AbstractToken, ClosedJaxpr, abstract_token

__all__ = ["Token", "TokenSplit", "split_tokens"]


class Token:
    """A token value; every token is interchangeable with every other."""

    __slots__ = ()
    aval = abstract_token

    def block_until_ready(self):
        return self


class TokenSplit:
    """``closed`` with its token inputs turned into constants and its token results
    dropped, plus where those inputs and results were."""

    __slots__ = ("closed", "in_kept", "out_is_token")

    def __init__(self, closed: ClosedJaxpr):
        jaxpr = closed.jaxpr
        is_tok = [isinstance(v.aval, AbstractToken) for v in jaxpr.invars]
        self.in_kept = tuple(i for i, t in enumerate(is_tok) if not t)
        self.out_is_token = tuple(isinstance(a.aval, AbstractToken) for a in jaxpr.outvars)
        token_vars = [v for v, t in zip(jaxpr.invars, is_tok, strict=True) if t]
        stripped = jaxpr.replace(
            constvars=[*jaxpr.constvars, *token_vars],
            invars=[jaxpr.invars[i] for i in self.in_kept],
            outvars=[a for a, t in zip(jaxpr.outvars, self.out_is_token, strict=True) if not t],
        )
        self.closed = ClosedJaxpr(stripped, [*closed.consts, *(Token() for _ in token_vars)])

    def inputs(self, values: Sequence[Any]) -> list:
        return [values[i] for i in self.in_kept]

    def outputs(self, values: Sequence[Any]) -> list:
        rest = iter(values)
        return [Token() if t else next(rest) for t in self.out_is_token]


_splits: dict[int, tuple[Any, TokenSplit | None]] = {}  # id -> (weak reference, split)


def clear_cache() -> None:
    """Forget the token splits of every Jaxpr seen (``clear_caches`` calls this)."""
    _splits.clear()


def split_tokens(closed: ClosedJaxpr) -> TokenSplit | None:
    """The token-free form of ``closed``, or None when it takes and gives no tokens."""
    entry = _splits.get(id(closed))
    if entry is None or entry[0]() is not closed:
        jaxpr = closed.jaxpr
        has_tokens = any(isinstance(v.aval, AbstractToken) for v in jaxpr.invars) or any(
            isinstance(a.aval, AbstractToken) for a in jaxpr.outvars
        )
        split = TokenSplit(closed) if has_tokens else None
        entry = _splits[id(closed)] = (weak_entry_key(closed, _splits, id(closed)), split)
    return entry[1]
