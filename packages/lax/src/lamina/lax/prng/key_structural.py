"""The lax primitives that take typed key arrays, as JAX's do: those that only move
whole elements around (reshape, slice, gather, select, ...), and ``eq``/``ne``. The
structural ones lower on key operands through
:func:`lamina.interpreters.allow_extended`, the one rule that maps them over
the key data's trailing dimension; the comparisons compare whole keys. Every other
primitive rejects keys in its abstract evaluation (``add does not accept dtype
key<fry> ...``).
"""

from __future__ import annotations

from lamina.interpreters import allow_extended, lower_on_physical
from lamina.lax.base.operands import aval_of
from lamina.lax.base.primitives import (
    broadcast_in_dim,
    broadcast_in_dim_p,
    copy_p,
    eq,
    eq_p,
    ne,
    ne_p,
    reduce_and,
    reduce_or,
    reshape,
    reshape_p,
    select_n_p,
    transpose_p,
)
from lamina.lax.base.reshaping import concatenate_p, rev_p, slice_p, split_p, squeeze_p
from lamina.lax.base.stacking import stack_p, tile_p, unstack_p
from lamina.lax.slicing.dynamic_slicing import dynamic_slice_p, dynamic_update_slice_p
from lamina.lax.slicing.gather_scatter import gather_p, scatter_p

__all__ = ["KEY_COMPARISONS", "KEY_STRUCTURAL_PRIMITIVES"]

KEY_STRUCTURAL_PRIMITIVES = (
    broadcast_in_dim_p,
    concatenate_p,
    copy_p,
    dynamic_slice_p,
    dynamic_update_slice_p,
    gather_p,
    rev_p,
    reshape_p,
    scatter_p,
    select_n_p,
    slice_p,
    split_p,
    squeeze_p,
    stack_p,
    tile_p,
    transpose_p,
    unstack_p,
)

for _primitive in KEY_STRUCTURAL_PRIMITIVES:
    allow_extended(_primitive)


def _broadcast_physical(x, shape):
    """The key data ``x`` broadcast NumPy-style (trailing axes aligned, size-1 axes
    stretched) to ``shape``."""
    x_shape = tuple(aval_of(x).shape)
    if x_shape == shape:
        return x
    offset = len(shape) - len(x_shape)
    keep = [i for i, d in enumerate(x_shape) if d == shape[i + offset]]
    if len(keep) != len(x_shape):
        x = reshape(x, tuple(x_shape[i] for i in keep))
    return broadcast_in_dim(x, shape, tuple(i + offset for i in keep))


def _whole_element_comparison(compare, combine):
    """Lowering of ``==``/``!=`` on keys: compare the key data, then combine (all /
    any) over each key's trailing dimensions."""

    def rule(ctx, x, y):
        element = ctx.avals_in[0].dtype.physical_element_shape
        shape = (*ctx.avals_out[0].shape, *element)

        def fun(px, py):
            # lax lets a scalar meet an array: broadcast both keys' data to one shape.
            px, py = (_broadcast_physical(v, shape) for v in (px, py))
            same = compare(px, py)
            return [combine(same, tuple(range(len(shape) - len(element), len(shape))))]

        return lower_on_physical(ctx, fun, x, y, name="key comparison")

    return rule


KEY_COMPARISONS = {eq_p: (eq, reduce_and), ne_p: (ne, reduce_or)}
for _primitive, (_compare, _combine) in KEY_COMPARISONS.items():
    allow_extended(_primitive, _whole_element_comparison(_compare, _combine))
