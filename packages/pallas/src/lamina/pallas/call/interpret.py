"""Interpret mode: a ``pallas_call`` computed with ordinary lax operations, as one
program that loops over the grid.

The kernel's Jaxpr is discharged (its references become arrays in and out), and a
``fori_loop`` runs it once per grid point: the grid indices come from the step
number, each operand's block is cut from its array with ``dynamic_slice`` at the
start its index map gives, and the blocks the kernel wrote go back with
``dynamic_update_slice``. As in JAX, arrays are first padded to whole blocks with an
"uninitialized" value (NaN, the least integer, False), outputs start so, and scratch
buffers keep their values from one grid point to the next.
"""

from __future__ import annotations

import math

import numpy as np

from lamina.interpreters import discharge_state, eval_jaxpr
from lamina.ir import dtypes
from lamina.lax import (
    convert_element_type,
    div,
    dynamic_slice,
    dynamic_update_slice,
    fori_loop,
    full,
    mul,
    pad,
    rem,
    reshape,
    slice,
)
from lamina.pallas.call.block_mapping import BlockMapping, GridMapping
from lamina.pallas.core.specs import Blocked, Squeezed

__all__ = ["interpret_pallas_call", "uninitialized_value"]

_I32 = np.dtype(np.int32)


def uninitialized_value(shape, dtype):
    """What an unwritten buffer holds in interpret mode: NaN, the least integer, False."""
    dtype = np.dtype(dtype)
    if dtypes.issubdtype(dtype, np.inexact):
        return full(shape, np.nan, dtype)
    if dtypes.issubdtype(dtype, np.integer):
        return full(shape, dtypes.iinfo(dtype).min, dtype)
    return full(shape, 0, dtype)


def _padded(x, bm: BlockMapping):
    """``x`` with its ``Element`` padding, then padded up to whole blocks."""
    shape = bm.array_aval.shape
    config = []
    for (lo, hi), b, d in zip(bm.padding, bm.block_shape, shape, strict=True):
        total = lo + d + hi
        config.append((lo, hi + (-total) % b if b else hi, 0))
    if all(c == (0, 0, 0) for c in config):
        return x
    fill = uninitialized_value((), bm.array_aval.dtype)
    return pad(x, fill, config)


def _unpadded(x, bm: BlockMapping):
    starts = [lo for lo, _ in bm.padding]
    shape = bm.array_aval.shape
    if x.shape == tuple(shape):
        return x
    return slice(x, starts, [s + d for s, d in zip(starts, shape, strict=True)])


def _grid_indices(step, grid):
    indices = []
    stride = math.prod(grid)
    for size in grid:
        stride //= size
        idx = div(step, np.int32(stride)) if stride != 1 else step
        indices.append(rem(idx, np.int32(size)) if size != 1 else mul(idx, np.int32(0)))
    return indices


def _starts(bm: BlockMapping, indices):
    idx = eval_jaxpr(bm.index_map.jaxpr, bm.index_map.consts, *indices)
    return [mul(i, np.int32(d.block_size)) if type(d) is Blocked and d.block_size != 1 else i
            for i, d in zip(idx, bm.block_dims, strict=True)]  # fmt: skip


def _ref_shape(bm: BlockMapping):
    return tuple(d.block_size for d in bm.block_dims if type(d) is not Squeezed)


def interpret_pallas_call(*args, jaxpr, grid_mapping: GridMapping, input_output_aliases,
                          debug=False, **_):  # fmt: skip
    """The outputs of the ``pallas_call`` of ``jaxpr`` on ``args``, computed by looping
    over the grid in one program (with ``debug``, printing the discharged kernel)."""
    gm = grid_mapping
    grid = gm.grid
    n_grid, n_in, n_out = len(grid), gm.num_inputs, gm.num_outputs
    discharged = discharge_state(jaxpr)
    if debug:
        print(f"\nJaxpr of the kernel in pallas_call {jaxpr.jaxpr.debug_info}:")
        print(discharged.jaxpr)
    written = discharged.written[n_grid:]
    aliased = {o: i for i, o in input_output_aliases}
    outs0 = [
        args[aliased[k]] if k in aliased else uninitialized_value(bm.array_aval.shape,
                                                                  bm.array_aval.dtype)
        for k, bm in enumerate(gm.outputs)
    ]  # fmt: skip
    bms = gm.block_mappings
    arrays = [_padded(x, bm) for x, bm in zip([*args, *outs0], bms, strict=True)]
    carried = [k for k in range(n_in) if written[k]] + list(range(n_in, n_in + n_out))
    scratch = [uninitialized_value(a.shape, a.dtype) for a in gm.scratch_avals]
    n_kernel_outs = len(discharged.jaxpr.jaxpr.outvars) - sum(discharged.written)

    def body(step, carry):
        cur = list(arrays)
        for pos, k in enumerate(carried):
            cur[k] = carry[pos]
        scr = list(carry[len(carried) :])
        indices = _grid_indices(step, grid)
        starts = [_starts(bm, indices) for bm in bms]
        blocks = [
            reshape(dynamic_slice(x, s, bm.block_shape), _ref_shape(bm))
            for x, s, bm in zip(cur, starts, bms, strict=True)
        ]
        outs = eval_jaxpr(discharged.jaxpr.jaxpr, discharged.jaxpr.consts, *indices, *blocks, *scr)
        new = discharged.new_values(None, outs[n_kernel_outs:])[n_grid:]
        result = []
        for k in carried:
            x = cur[k]
            if new[k] is not None:
                block = reshape(new[k], bms[k].block_shape)
                x = dynamic_update_slice(x, block, starts[k])
            result.append(x)
        for j, s in enumerate(scr):
            value = new[n_in + n_out + j]
            result.append(s if value is None else value)
        return result

    carry = [arrays[k] for k in carried] + scratch
    total = math.prod(grid)
    if total == 1:
        carry = body(convert_element_type(np.int32(0), _I32), carry)
    else:
        carry = fori_loop(np.int32(0), np.int32(total), body, carry)
    finals = dict(zip(carried, carry, strict=False))
    return [_unpadded(finals[n_in + k], bm) for k, bm in enumerate(gm.outputs)]
