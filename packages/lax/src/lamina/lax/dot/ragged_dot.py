"""Products built from ``dot_general``: ``ragged_dot`` / ``ragged_dot_general``, where
consecutive rows of ``lhs`` belong to groups (``group_sizes`` long each) and each group
uses its own slice of ``rhs`` (rows past the last group give zeros), and
``scaled_dot``, a product of block-scaled operands.

Differentiation and vmap come from the primitives they are built from (JAX has
``ragged_dot_general`` and ``scaled_dot`` primitives; the Jaxprs differ).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from lamina.ir import dtypes
from lamina.lax.base.operands import aval_of
from lamina.lax.base.primitives import (
    broadcast_in_dim,
    broadcasted_iota,
    convert_element_type,
    ge,
    lt,
    mul,
    reduce_sum,
    reshape,
    sub,
)
from lamina.lax.dot.dot_general import dot_general

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general", "scaled_dot"]


@dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """The dot dimension numbers ``((lhs_contracting, rhs_contracting), (lhs_batch,
    rhs_batch))``, the ragged axis of ``lhs`` and the group axis of ``rhs``."""

    dot_dimension_numbers: Any
    lhs_ragged_dimensions: Any
    rhs_group_dimensions: Any


def _group_mask(group_sizes, rows: int, dtype):
    """``mask[g, m]`` = 1 where row ``m`` lies in group ``g``."""

    groups = aval_of(group_sizes).shape[0]
    size_dtype = aval_of(group_sizes).dtype
    upper = np.triu(np.ones((groups, groups), size_dtype))  # ends[j] = sum_{i<=j} sizes[i]
    ends = dot_general(group_sizes, upper, (((0,), (0,)), ((), ())))
    starts = sub(ends, group_sizes)
    row = broadcasted_iota(size_dtype, (groups, rows), 1)
    inside = mul(
        convert_element_type(ge(row, broadcast_in_dim(starts, (groups, rows), (0,))), dtype),
        convert_element_type(lt(row, broadcast_in_dim(ends, (groups, rows), (0,))), dtype),
    )
    return inside


def _expanded(x, mask, axis: int):
    """``x`` repeated once per group along a new leading axis, zero outside the group's
    stretch of ``axis`` (``mask[g, i]`` says whether index ``i`` is in group ``g``)."""

    shape = (aval_of(mask).shape[0], *aval_of(x).shape)
    return mul(
        broadcast_in_dim(mask, shape, (0, axis + 1)),
        broadcast_in_dim(x, shape, tuple(range(1, len(shape)))),
    )


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None,
                       out_sharding=None):  # fmt: skip
    """``dot_general`` of ``lhs`` and ``rhs`` with ``lhs``'s ragged axis split into
    consecutive groups of ``group_sizes`` each. By the kind of that axis (JAX's three
    modes): a free axis — group ``g`` is contracted with ``rhs`` at index ``g`` of its
    group axis; a contracting axis — the result gets a leading group axis, one partial
    product per group; a batch axis — the plain ``dot_general``."""

    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    numbers = ragged_dot_dimension_numbers
    (lc, rc), (lb, rb) = numbers.dot_dimension_numbers
    (ragged,) = numbers.lhs_ragged_dimensions
    lhs_aval, rhs_aval, sizes_aval = aval_of(lhs), aval_of(rhs), aval_of(group_sizes)
    if not dtypes.issubdtype(sizes_aval.dtype, np.integer):
        raise TypeError(
            "ragged_dot_general requires that group_sizes.dtype is subtype of np.integer."
        )
    dot = partial(dot_general, precision=precision, preferred_element_type=preferred_element_type)
    if ragged in lb:
        return dot(lhs, rhs, numbers.dot_dimension_numbers)
    if sizes_aval.ndim != 1:
        raise NotImplementedError(
            "ragged_dot_general: group_sizes with leading dimensions are not supported; "
            "vmap over them instead"
        )
    groups = sizes_aval.shape[0]
    dtype = dtypes.promote_types(lhs_aval.dtype, rhs_aval.dtype)
    mask = _group_mask(group_sizes, lhs_aval.shape[ragged], dtype)
    shift = lambda dims: tuple(d + 1 for d in dims)  # noqa: E731
    if ragged in lc:
        if tuple(numbers.rhs_group_dimensions):
            raise TypeError("ragged_dot_general: rhs must have no group dimension when the "
                            "lhs ragged dimension is contracting")  # fmt: skip
        rhs_ragged = rc[list(lc).index(ragged)]
        return dot(
            _expanded(lhs, mask, ragged),
            _expanded(rhs, mask, rhs_ragged),
            ((shift(lc), shift(rc)), ((0, *shift(lb)), (0, *shift(rb)))),
        )
    (group,) = numbers.rhs_group_dimensions
    if rhs_aval.shape[group] != groups:
        raise TypeError(
            f"expected rhs group dimension size to be {groups}, got {rhs_aval.shape[group]}."
        )
    out = dot(
        _expanded(lhs, mask, ragged), rhs, ((shift(lc), tuple(rc)), ((0, *shift(lb)), (group, *rb)))
    )
    # The group axis is the first batch axis: each row has one group, so summing it
    # picks that group's product.
    return reduce_sum(out, (0,))


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):  # fmt: skip
    """``lhs[m, k]`` times ``rhs[g, k, n]``: row ``m`` uses ``rhs[g]`` for the group
    ``g`` holding it (groups are consecutive runs of ``group_sizes[g]`` rows)."""
    numbers = RaggedDotDimensionNumbers(
        dot_dimension_numbers=(((1,), (1,)), ((), ())),
        lhs_ragged_dimensions=(0,),
        rhs_group_dimensions=(0,),
    )
    return ragged_dot_general(lhs, rhs, group_sizes, numbers, precision=precision,
                              preferred_element_type=preferred_element_type,
                              group_offset=group_offset, out_sharding=out_sharding)  # fmt: skip


def _scaled(x, scale, contracting: int):
    """``x * scale`` in bfloat16, each scale covering a block of consecutive elements
    along the contracting axis."""

    bf16 = np.dtype(dtypes.bfloat16)
    x = convert_element_type(x, bf16)
    if scale is None:
        return x
    shape, scale_shape = aval_of(x).shape, aval_of(scale).shape
    block = shape[contracting] // scale_shape[contracting]
    split = (*scale_shape[: contracting + 1], block, *scale_shape[contracting + 1 :])
    dims = tuple(i if i <= contracting else i + 1 for i in range(len(scale_shape)))
    scale = reshape(broadcast_in_dim(scale, split, dims), shape)
    return mul(x, convert_element_type(scale, bf16))


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):  # fmt: skip
    """``(lhs * lhs_scale) @ (rhs * rhs_scale)`` as ``dot_general``, each scale element
    covering a block of the contracting axis; operands are rounded to bfloat16 and the
    result is ``preferred_element_type`` (bfloat16 by default)."""

    if dimension_numbers is None:
        ndim = aval_of(lhs).ndim
        dimension_numbers = (((1,), (0,)), ((), ())) if ndim == 2 else (((2,), (1,)), ((0,), (0,)))
    (lc, rc), _ = dimension_numbers
    if preferred_element_type is None:
        preferred_element_type = dtypes.bfloat16
    return dot_general(
        _scaled(lhs, lhs_scale, lc[0]),
        _scaled(rhs, rhs_scale, rc[0]),
        dimension_numbers,
        preferred_element_type=preferred_element_type,
    )
