"""``ragged_all_to_all``: an ``all_to_all`` of ragged slices, with vmap semantics.

Participant ``s`` sends slice ``i`` of its ``operand`` (rows ``input_offsets[i]`` to
``input_offsets[i] + send_sizes[i]``) to participant ``i // (K / n)`` (K slices, n
participants), which writes it into its copy of ``output`` at row
``output_offsets[i]`` (an offset on the receiver, chosen by the sender). Under
``vmap`` all participants are rows of one batch, so each receiver's result is built
at once: for every output row, find the (at most one) sender slice covering it and
gather that operand row. JAX 0.10.2 runs this collective only in ``shard_map``
programs (its vmap rule asks for a feature request); lamina's compiled programs are
single-device, so vmap is where it runs here.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad, batching, moveaxis, not_mapped
from lamina.ir import ShapedArray
from lamina.lax.base.filling import full, full_like
from lamina.lax.base.operands import aval_of
from lamina.lax.base.primitives import (
    add,
    bitwise_and,
    broadcast_in_dim,
    broadcasted_iota,
    clamp,
    convert_element_type,
    ge,
    lt,
    mul,
    reduce_max,
    reduce_or,
    reshape,
    select_n,
    sub,
    transpose,
)
from lamina.lax.parallel.collectives import axis_names, check_no_groups
from lamina.lax.parallel.exchange import all_to_all, collective_primitive
from lamina.lax.slicing.gather_scatter import index_take

__all__ = ["ragged_all_to_all", "ragged_all_to_all_p"]

_OFFSET_NAMES = ("input_offsets", "send_sizes", "output_offsets", "recv_sizes")


def _abstract(operand, output, *offsets, axis_name, axis_index_groups):
    if operand.dtype != output.dtype:
        raise ValueError("ragged_all_to_all input and output dtypes must be equal.")
    if operand.shape[1:] != output.shape[1:] or not operand.shape:
        raise ValueError(
            "ragged_all_to_all input and output shapes must be equal, except for the "
            f"outermost dimension, but got {operand.shape} and {output.shape}"
        )
    for name, aval in zip(_OFFSET_NAMES, offsets, strict=True):
        if not np.issubdtype(aval.dtype, np.integer):
            raise ValueError(f"ragged_all_to_all {name} must be integer type.")
        if len(aval.shape) != 1 or aval.shape[0] < 1:
            raise ValueError(
                f"ragged_all_to_all {name} must be rank 1 with positive dimension size, "
                f"but got shape {aval.shape}"
            )
    return ShapedArray(output.shape, output.dtype)


def _front(x, d, n):
    return batching.broadcast(x, n, 0) if d is not_mapped else moveaxis(x, d, 0)


def _collective(axis_data, vals, dims, *, axis_name, axis_index_groups):
    check_no_groups(axis_index_groups)
    n = axis_data.size
    fronted = [_front(v, d, n) for v, d in zip(vals, dims, strict=True)]
    per_participant = [ShapedArray(aval_of(v).shape[1:], aval_of(v).dtype) for v in fronted]
    _abstract(*per_participant, axis_name=axis_name, axis_index_groups=axis_index_groups)
    operand, output, in_off, send, out_off, _ = fronted
    rows_in, rows_out = aval_of(operand).shape[1], aval_of(output).shape[1]
    k = aval_of(in_off).shape[1]
    if k % n:
        raise ValueError(
            f"ragged_all_to_all: the {k} slices must divide evenly among the {n} participants"
        )
    per = k // n
    index = np.int32

    def by_receiver(a):  # (sender, K) -> (receiver, sender, slice): slices sent to each
        a = convert_element_type(a, index)
        return transpose(reshape(a, (n, n, per)), (1, 0, 2))

    in_off, send, out_off = by_receiver(in_off), by_receiver(send), by_receiver(out_off)
    shape = (n, rows_out, n, per)  # (receiver, row, sender, slice)
    row = broadcasted_iota(index, shape, 1)
    start = broadcast_in_dim(out_off, shape, (0, 2, 3))
    size = broadcast_in_dim(send, shape, (0, 2, 3))
    covered = bitwise_and(ge(row, start), lt(row, add(start, size)))
    source_row = add(broadcast_in_dim(in_off, shape, (0, 2, 3)), sub(row, start))
    sender = broadcasted_iota(index, shape, 2)
    flat_source = add(mul(sender, index(rows_in)), source_row)
    candidates = select_n(covered, full_like(flat_source, -1), flat_source)
    source = reduce_max(candidates, (2, 3))  # (receiver, row); -1: keep output
    flat_operand = reshape(operand, (n * rows_in, *aval_of(operand).shape[2:]))
    safe = clamp(index(0), source, index(n * rows_in - 1))
    taken = index_take(flat_operand, (reshape(safe, (n * rows_out,)),), (0,))
    taken = reshape(taken, aval_of(output).shape)
    keep = broadcast_in_dim(lt(source, index(0)), aval_of(output).shape, (0, 1))
    return select_n(keep, taken, output), 0


ragged_all_to_all_p = collective_primitive(
    "ragged_all_to_all", _abstract, _collective, lambda p: p["axis_name"]
)


def _jvp(primals, tangents, **params):
    out = ragged_all_to_all_p.bind(*primals, **params)
    operand_dot, output_dot = tangents[:2]
    if type(operand_dot) is ad.Zero and type(output_dot) is ad.Zero:
        return out, ad.Zero(ad.tangent_aval(aval_of(out)))
    operand_dot, output_dot = ad.instantiate_zeros(operand_dot), ad.instantiate_zeros(output_dot)
    return out, ragged_all_to_all_p.bind(operand_dot, output_dot, *primals[2:], **params)


def _transpose(ct, operand, output, in_off, send, out_off, recv, *, axis_name,
               axis_index_groups):  # fmt: skip
    """Cotangent rows travel back: the receiver's window at its local offsets goes to
    the sender's input rows; rows the collective overwrote get no output cotangent."""
    operand_aval, output_aval = operand.aval, output.aval
    if type(ct) is ad.Zero:
        return [ad.Zero(operand_aval), ad.Zero(output_aval), None, None, None, None]
    local_out_off = all_to_all(out_off, axis_name, 0, 0, tiled=True)
    local_in_off = all_to_all(in_off, axis_name, 0, 0, tiled=True)
    zeros = full(operand_aval.shape, 0, operand_aval.dtype)
    operand_ct = ragged_all_to_all_p.bind(
        ct, zeros, local_out_off, recv, local_in_off, send,
        axis_name=axis_name, axis_index_groups=axis_index_groups,
    )  # fmt: skip
    rows = output_aval.shape[0]
    k = aval_of(recv).shape[0]
    row = broadcasted_iota(np.int32, (rows, k), 0)
    start = broadcast_in_dim(convert_element_type(local_out_off, np.int32), (rows, k), (1,))
    size = broadcast_in_dim(convert_element_type(recv, np.int32), (rows, k), (1,))
    inside = bitwise_and(ge(row, start), lt(row, add(start, size)))
    written = broadcast_in_dim(reduce_or(inside, (1,)), output_aval.shape, (0,))
    output_ct = select_n(written, ct, full_like(ct, 0))
    return [operand_ct, output_ct, None, None, None, None]


ragged_all_to_all_p.def_jvp(_jvp)
ragged_all_to_all_p.def_transpose(_transpose)


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                      *, axis_name, axis_index_groups=None):  # fmt: skip
    """``output`` with the ragged slices other participants sent written into it (see
    the module docstring)."""
    names = axis_names(axis_name)
    if len(names) != 1:
        raise NotImplementedError("ragged_all_to_all over several axis names is not supported")
    return ragged_all_to_all_p.bind(
        operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
        axis_name=names[0], axis_index_groups=axis_index_groups,
    )  # fmt: skip
