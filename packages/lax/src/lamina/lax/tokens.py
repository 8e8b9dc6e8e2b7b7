"""Tokens, which order effectful operations: ``create_token`` and ``after_all``."""

from __future__ import annotations

from lamina.interpreters import Token, not_mapped
from lamina.interpreters.mlir import hlo
from lamina.ir import AbstractToken, Primitive, abstract_token

__all__ = [
    "after_all",
    "after_all_p",
    "create_token",
    "create_token_p",
]


# ---------------------------------------------------------------- tokens


def _create_token_lowering(ctx, *operands):
    return [hlo.create_token()]


def _after_all_abstract_eval(*operands):
    if any(not isinstance(a, AbstractToken) for a in operands):
        raise TypeError("Arguments to after_all must be tokens")
    return abstract_token


def _after_all_lowering(ctx, *operands):
    return [hlo.AfterAllOp(list(operands)).result] if operands else [hlo.create_token()]


create_token_p = Primitive("create_token")
create_token_p.def_abstract_eval(lambda *operands: abstract_token)
create_token_p.def_lowering(_create_token_lowering)
create_token_p.def_impl(lambda *operands: Token())
create_token_p.def_batching(lambda axis_data, vals, dims: (create_token_p.bind(), not_mapped))


def _after_all_impl(*operands):
    _after_all_abstract_eval(*(getattr(x, "aval", None) for x in operands))
    return Token()


after_all_p = Primitive("after_all")
after_all_p.def_abstract_eval(_after_all_abstract_eval)
after_all_p.def_lowering(_after_all_lowering)
after_all_p.def_impl(_after_all_impl)
after_all_p.def_batching(lambda axis_data, vals, dims: (after_all_p.bind(*vals), not_mapped))


def create_token(_=None):
    """A new token, which orders effectful operations (its argument is ignored)."""
    return create_token_p.bind()


def after_all(*operands):
    """A token that comes after every token in ``operands``."""
    return after_all_p.bind(*operands)
