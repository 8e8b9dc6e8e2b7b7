"""Collectives that exchange data between participants, with vmap semantics:
``all_gather``, ``psum_scatter``, ``all_to_all``, ``ppermute``, ``pshuffle``,
``pswapaxes`` (see :mod:`lamina.lax.parallel.collectives`)."""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad, batching, moveaxis, not_mapped
from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import Primitive, ShapedArray, spec_of, tree_util, vma_of
from lamina.lax.base.operands import aval_of
from lamina.lax.base.primitives import (
    broadcast_in_dim,
    mul,
    reduce_max,
    reduce_sum,
    reshape,
    select_n,
)
from lamina.lax.parallel.collectives import (
    axis_names,
    axis_size,
    axis_size_of,
    check_axes_bound,
    check_no_groups,
    dtype_of,
)
from lamina.lax.parallel.device_axes import (
    group_size,
    is_device_axis,
    permute_pairs,
    replica_groups,
    spmd_collective,
)

__all__ = [
    "all_gather",
    "all_gather_p",
    "all_to_all",
    "all_to_all_p",
    "ppermute",
    "ppermute_p",
    "pshuffle",
    "psum_scatter",
    "pswapaxes",
]


def _participants(name, axis_index_groups) -> int:
    """The number of participants in one group of a collective over ``name``."""
    if axis_index_groups is not None and is_device_axis(name):
        return group_size(name, axis_index_groups)
    return axis_size_of(name)


def _canonical_groups(axis_index_groups):
    return None if axis_index_groups is None else tuple(tuple(g) for g in axis_index_groups)


def _physical_axis(logical: int, bdim: int) -> int:
    return logical + (1 if logical >= bdim else 0)


def collective_primitive(name: str, abstract_eval, collective, names_of):
    prim = Primitive(name)

    def impl(*args, **params):
        check_axes_bound(axis_names(names_of(params)), name, staged=False)
        raise AssertionError("unreachable: a bound axis is handled by its vmap")

    def abstract(*avals, **params):
        check_axes_bound(axis_names(names_of(params)), name, staged=True)
        return abstract_eval(*avals, **params)

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract)
    prim.def_collective(lambda p: axis_names(names_of(p)), collective)
    # The operands are cast to vary over the axes; the results vary as they do.
    prim.def_vma(lambda *avals, **p: frozenset().union(*map(vma_of, avals)),
                 lambda p: [n for n in axis_names(names_of(p)) if is_device_axis(n)])  # fmt: skip
    return prim


def _single_name(axis_name, what: str):
    names = axis_names(axis_name)
    if len(names) != 1:
        raise NotImplementedError(f"{what} over several axis names at once is not supported")
    return names[0]


def _all_gather_abstract(aval, *, all_gather_dimension, axis_name, axis_index_groups,
                         axis_size, tiled):  # fmt: skip
    shape = list(aval.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return ShapedArray(tuple(shape), aval.dtype, weak_type=aval.weak_type)


def _all_gather_collective(axis_data, vals, dims, *, all_gather_dimension, axis_name,
                           axis_index_groups, axis_size, tiled):  # fmt: skip
    check_no_groups(axis_index_groups)
    (x,), (d,) = vals, dims
    aval = aval_of(x)
    if d is not_mapped:
        shape = list(aval.shape)
        shape.insert(all_gather_dimension, axis_size)
        kept = tuple(i for i in range(len(shape)) if i != all_gather_dimension)
        out = broadcast_in_dim(x, tuple(shape), kept)
    else:
        out = moveaxis(x, d, all_gather_dimension)
    if tiled:
        shape = list(aval_of(out).shape)
        merged = shape[all_gather_dimension] * shape[all_gather_dimension + 1]
        shape[all_gather_dimension : all_gather_dimension + 2] = [merged]
        out = reshape(out, tuple(shape))
    return out, not_mapped


all_gather_p = collective_primitive(
    "all_gather", _all_gather_abstract, _all_gather_collective, lambda p: p["axis_name"]
)


# Over explicit mesh axes the result keeps the operand's spec, position by position (the
# untiled form's extra dimension, last, has none), as JAX 0.10.2 types it.
all_gather_p.def_sharding(
    lambda aval, *, tiled, **_: spec_of(aval) + ((None,) if not tiled else ())
)


ad.deflinear(all_gather_p)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to="varying"):
    """Every participant's ``x`` stacked (or, ``tiled``, concatenated) along ``axis``."""
    axis_index_groups = _canonical_groups(axis_index_groups)
    name = _single_name(axis_name, "all_gather")

    def gather(leaf):
        size = _participants(name, axis_index_groups)
        ndim = len(aval_of(leaf).shape)
        dim = axis % (ndim + (0 if tiled else 1)) if ndim or not tiled else axis
        return all_gather_p.bind(leaf, all_gather_dimension=dim, axis_name=name,
                                 axis_index_groups=axis_index_groups, axis_size=size,
                                 tiled=tiled)  # fmt: skip

    return tree_util.tree_map(gather, x)


def _psum_scatter_abstract(aval, *, scatter_dimension, axis_name, axis_index_groups,
                           axis_size, tiled):  # fmt: skip
    shape = list(aval.shape)
    if tiled:
        if shape[scatter_dimension] % axis_size:
            raise ValueError(
                "tiled reduce_scatter operand scatter dimension size "
                f"{shape[scatter_dimension]} must be divisible by shard_count {axis_size}"
            )
        shape[scatter_dimension] //= axis_size
    else:
        if shape[scatter_dimension] != axis_size:
            raise ValueError(
                "reduce_scatter operand scatter dimension size "
                f"{shape[scatter_dimension]} must match shard count {axis_size}"
            )
        del shape[scatter_dimension]
    return ShapedArray(tuple(shape), aval.dtype, weak_type=aval.weak_type)


def _psum_scatter_collective(axis_data, vals, dims, *, scatter_dimension, axis_name,
                             axis_index_groups, axis_size, tiled):  # fmt: skip
    check_no_groups(axis_index_groups)
    (x,), (d,) = vals, dims
    if d is not_mapped:
        x = mul(x, np.asarray(axis_data.size, dtype_of(x)))
        summed, s = x, scatter_dimension
    else:
        summed = reduce_sum(x, (d,))
        s = scatter_dimension
    shape = list(aval_of(summed).shape)
    if tiled:
        shape[s : s + 1] = [axis_size, shape[s] // axis_size]
        summed = reshape(summed, tuple(shape))
    return summed, s


psum_scatter_p = collective_primitive(
    "reduce_scatter", _psum_scatter_abstract, _psum_scatter_collective, lambda p: p["axis_name"]
)
psum_scatter_p.def_sharding(
    lambda aval, *, scatter_dimension, tiled, **_: (
        spec_of(aval)
        if tiled
        else tuple(e for i, e in enumerate(spec_of(aval)) if i != scatter_dimension)
    )
)
ad.deflinear(psum_scatter_p)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """``psum`` whose result is split along ``scatter_dimension``: participant ``i``
    keeps block ``i``."""
    axis_index_groups = _canonical_groups(axis_index_groups)
    name = _single_name(axis_name, "psum_scatter")

    def scatter(leaf):
        size = _participants(name, axis_index_groups)
        return psum_scatter_p.bind(leaf, scatter_dimension=scatter_dimension, axis_name=name,
                                   axis_index_groups=axis_index_groups, axis_size=size,
                                   tiled=tiled)  # fmt: skip

    return tree_util.tree_map(scatter, x)


def _all_gather_transpose(ct, x, *, all_gather_dimension, axis_name, axis_index_groups,
                          axis_size, tiled):  # fmt: skip
    if type(ct) is ad.Zero:
        return [ad.Zero(x.aval)]
    return [psum_scatter_p.bind(ct, scatter_dimension=all_gather_dimension,
                                axis_name=axis_name, axis_index_groups=axis_index_groups,
                                axis_size=axis_size, tiled=tiled)]  # fmt: skip


def _psum_scatter_transpose(ct, x, *, scatter_dimension, axis_name, axis_index_groups,
                            axis_size, tiled):  # fmt: skip
    if type(ct) is ad.Zero:
        return [ad.Zero(x.aval)]
    return [all_gather_p.bind(ct, all_gather_dimension=scatter_dimension, axis_name=axis_name,
                              axis_index_groups=axis_index_groups, axis_size=axis_size,
                              tiled=tiled)]  # fmt: skip


all_gather_p.def_transpose(_all_gather_transpose)
psum_scatter_p.def_transpose(_psum_scatter_transpose)


def _all_to_all_abstract(aval, *, split_axis, concat_axis, axis_name, axis_index_groups,
                         tiled):  # fmt: skip
    # The primitive always splits and concatenates; ``all_to_all`` adds and removes the
    # unit axes of the untiled form around it.
    shape = list(aval.shape)
    size = _participants(axis_name, axis_index_groups)
    if shape[split_axis] % size:
        raise ValueError(
            f"all_to_all: dimension {split_axis} of size {shape[split_axis]} must be "
            f"divisible by the axis size {size}"
        )
    shape[split_axis] //= size
    shape[concat_axis] *= size
    return ShapedArray(tuple(shape), aval.dtype, weak_type=False)


def _all_to_all_collective(axis_data, vals, dims, *, split_axis, concat_axis, axis_name,
                           axis_index_groups, tiled):  # fmt: skip
    check_no_groups(axis_index_groups)
    (x,), (d,) = vals, dims
    n = axis_data.size
    if d is not_mapped:
        x = batching.broadcast(x, n, 0)
        d = 0
    x = moveaxis(x, d, 0)  # (source j, *per-example shape)
    shape = list(aval_of(x).shape)
    split = split_axis + 1
    # Split the split axis into (destination i, chunk); the destination becomes the
    # new batch axis and the source is placed before the concat axis, then merged.
    shape[split : split + 1] = [n, shape[split] // n]
    x = reshape(x, tuple(shape))
    x = moveaxis(x, split, 0)  # (destination i, source j, *shape with chunk at split+1)
    x = moveaxis(x, 1, concat_axis + 1)
    shape = list(aval_of(x).shape)
    c = concat_axis + 1
    shape[c : c + 2] = [shape[c] * shape[c + 1]]
    return reshape(x, tuple(shape)), 0


all_to_all_p = collective_primitive(
    "all_to_all", _all_to_all_abstract, _all_to_all_collective, lambda p: p["axis_name"]
)
all_to_all_p.def_sharding(lambda aval, **_: spec_of(aval))
ad.deflinear(all_to_all_p)


def _all_to_all_transpose(ct, x, *, split_axis, concat_axis, axis_name, axis_index_groups,
                          tiled):  # fmt: skip
    if type(ct) is ad.Zero:
        return [ad.Zero(x.aval)]
    return [all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis,
                              axis_name=axis_name, axis_index_groups=axis_index_groups,
                              tiled=tiled)]  # fmt: skip


all_to_all_p.def_transpose(_all_to_all_transpose)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Participant ``i`` receives block ``i`` (along ``split_axis``) of every
    participant's ``x``, stacked (or, ``tiled``, concatenated) along ``concat_axis``."""
    axis_index_groups = _canonical_groups(axis_index_groups)
    name = _single_name(axis_name, "all_to_all")

    def exchange(leaf):
        split, concat = split_axis, concat_axis
        size = _participants(name, axis_index_groups)
        shape = aval_of(leaf).shape
        if tiled:
            if shape[split] % size:
                raise ValueError(
                    f"The size of all_to_all split_axis ({shape[split]}) has to be "
                    f"divisible by the size of the named axis {name} ({size})"
                )
        else:
            if shape[split] != size:
                raise ValueError(
                    "all_to_all requires the size of the mapped axis axis_name to equal "
                    f"x.shape[split_axis], but they are {size} and {shape[split]} "
                    "respectively."
                )
            # Untiled: a unit axis where the sources stack, removed again after.
            if split < concat:
                concat += 1
            elif concat < split:
                split += 1
            if split != concat:
                leaf = _unit_axis(leaf, concat)
        out = all_to_all_p.bind(leaf, split_axis=split, concat_axis=concat, axis_name=name,
                                axis_index_groups=axis_index_groups, tiled=tiled)  # fmt: skip
        if not tiled and split != concat:
            out = reshape(out, _drop_axis(aval_of(out).shape, split))
        return out

    return tree_util.tree_map(exchange, x)


def _unit_axis(x, axis: int):
    shape = aval_of(x).shape
    kept = tuple(i if i < axis else i + 1 for i in range(len(shape)))
    return broadcast_in_dim(x, (*shape[:axis], 1, *shape[axis:]), kept)


def _drop_axis(shape, axis: int) -> tuple:
    return (*shape[:axis], *shape[axis + 1 :])


def _ppermute_abstract(aval, *, axis_name, perm):
    return aval


def _ppermute_collective(axis_data, vals, dims, *, axis_name, perm):
    (x,), (d,) = vals, dims
    n = axis_data.size
    if d is not_mapped:
        x, d = batching.broadcast(x, n, 0), 0
    x = moveaxis(x, d, 0)
    source = np.full(n, -1)
    for src, dst in perm:
        source[dst] = src
    # out[dst] = x[src]: a one-hot selection along the batch axis; receivers with no
    # source get zeros. Selecting (not multiplying) keeps infinities and NaNs exact.

    aval = aval_of(x)
    picks = np.arange(n)[None, :] == source[:, None]  # (dst, src)
    mask = broadcast_in_dim(picks, (n, n, *aval.shape[1:]), (0, 1))
    spread = broadcast_in_dim(x, (n, *aval.shape), tuple(range(1, aval.ndim + 1)))
    zeros = np.zeros((), aval.dtype)
    chosen = select_n(mask, broadcast_in_dim(zeros, (n, *aval.shape), ()), spread)
    out = reduce_max(chosen, (1,)) if aval.dtype == np.bool_ else reduce_sum(chosen, (1,))
    return out, 0


ppermute_p = collective_primitive(
    "ppermute", _ppermute_abstract, _ppermute_collective, lambda p: p["axis_name"]
)
ppermute_p.def_sharding(lambda aval, **_: spec_of(aval))
ad.deflinear(ppermute_p)


def _ppermute_transpose(ct, x, *, axis_name, perm):
    if type(ct) is ad.Zero:
        return [ad.Zero(x.aval)]
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((d, s) for s, d in perm))]


ppermute_p.def_transpose(_ppermute_transpose)


def ppermute(x, axis_name, perm):
    """Participant ``dst`` receives ``x`` of participant ``src`` for each ``(src, dst)``
    in ``perm``; participants receiving nothing get zeros."""
    name = _single_name(axis_name, "ppermute")
    perm = tuple((int(s), int(d)) for s, d in perm)
    size = axis_size(name)
    sources, dests = [s for s, _ in perm], [d for _, d in perm]
    if len(set(sources)) != len(sources) or len(set(dests)) != len(dests):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    if any(not 0 <= i < size for i in sources + dests):
        raise ValueError(f"ppermute permutation {perm} has indices outside the axis size {size}.")
    return tree_util.tree_map(lambda leaf: ppermute_p.bind(leaf, axis_name=name, perm=perm), x)


def pshuffle(x, axis_name, perm):
    """Participant ``i`` receives ``x`` of participant ``perm[i]``."""
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, [(src, dst) for dst, src in enumerate(perm)])


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swaps the named axis with positional ``axis`` (an all_to_all along ``axis``)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


# ---------------------------------------------------------------- lowering over devices
# Inside ``pmap`` these lower to XLA's cross-replica operations; elsewhere an unbound
# name raises ``NameError`` as the eager path does.


def _device_lowering(prim: Primitive, build):
    def rule(ctx, x, **params):
        name = params["axis_name"]
        check_axes_bound(axis_names(name), prim.name, staged=False)
        if not is_device_axis(name):
            raise NameError(f"unbound axis name: {name}")
        return [build(ctx, x, ctx.avals_in[0], ctx.avals_out[0], **params)]

    prim.def_lowering(rule)


def _mark_partially_manual(ctx, op) -> None:
    """In a partially manual region, give collective ``op`` the region's sharding (XLA's
    partitioner requires it of all-gathers and all-to-alls there)."""
    within = ctx.module_context.value_sharding
    if within is not None:
        rank = op.results[0].type.rank
        op.attributes["mhlo.sharding"] = ir.StringAttr.get(within(rank))


def _reshape(value, aval):
    return hlo.reshape(mb.ir_type(aval), value)


def _all_gather_lowering(ctx, x, aval, out_aval, *, all_gather_dimension, axis_name,
                         axis_index_groups, axis_size, tiled):  # fmt: skip
    dim = all_gather_dimension
    if not tiled:
        shape = list(aval.shape)
        shape.insert(dim, 1)
        x = _reshape(x, aval.update(shape=tuple(shape)))
    groups = replica_groups((axis_name,), axis_index_groups)
    op = hlo.AllGatherOp([mb.ir_type(out_aval)], [x], dim, groups)
    spmd_collective(op)
    _mark_partially_manual(ctx, op)
    return op.results[0]


def _psum_scatter_lowering(ctx, x, aval, out_aval, *, scatter_dimension, axis_name,
                           axis_index_groups, axis_size, tiled):  # fmt: skip
    shape = list(aval.shape)
    shape[scatter_dimension] //= axis_size
    piece = aval.update(shape=tuple(shape))
    groups = replica_groups((axis_name,), axis_index_groups)
    op = hlo.ReduceScatterOp(mb.ir_type(piece), x, scatter_dimension, groups)
    spmd_collective(op)
    scalar = mb.ir_type(aval.update(shape=()))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([hlo.add(*block.arguments)])
    return op.result if tiled else _reshape(op.result, out_aval)


def _all_to_all_lowering(ctx, x, aval, out_aval, *, split_axis, concat_axis, axis_name,
                         axis_index_groups, tiled):  # fmt: skip
    n = _participants(axis_name, axis_index_groups)
    groups = replica_groups((axis_name,), axis_index_groups)
    if split_axis == concat_axis or ctx.module_context.value_sharding is None:
        return _exchange(ctx, x, split_axis, concat_axis, n, groups)
    # In a partially manual region XLA's partitioner only accepts an exchange along
    # one dimension: the pieces are moved to a leading dimension, exchanged, and
    # placed along the concatenated dimension.
    shape = list(aval.shape)
    shape[split_axis : split_axis + 1] = [n, shape[split_axis] // n]
    lead = [split_axis] + [i for i in range(len(shape)) if i != split_axis]
    x = hlo.transpose(_reshape(x, aval.update(shape=tuple(shape))), lead)
    x = _exchange(ctx, x, 0, 0, n, groups)
    back = [*range(1, concat_axis + 1), 0, *range(concat_axis + 1, len(shape))]
    return hlo.reshape(mb.ir_type(out_aval), hlo.transpose(x, back))


def _exchange(ctx, x, split_axis, concat_axis, n, groups):
    op = hlo.AllToAllOp([x], split_axis, concat_axis, n, groups)
    spmd_collective(op)
    _mark_partially_manual(ctx, op)
    return op.results[0]


def _ppermute_lowering(ctx, x, aval, out_aval, *, axis_name, perm):
    op = hlo.CollectivePermuteOp(x, permute_pairs((axis_name,), perm))
    spmd_collective(op)
    return op.result


_device_lowering(all_gather_p, _all_gather_lowering)
_device_lowering(psum_scatter_p, _psum_scatter_lowering)
_device_lowering(all_to_all_p, _all_to_all_lowering)
_device_lowering(ppermute_p, _ppermute_lowering)
