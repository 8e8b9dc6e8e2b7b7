"""Collectives over named axes, with the semantics ``vmap(..., axis_name=...)`` gives
them: ``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``all_to_all``,
``ppermute``, ``psum_scatter``, ``axis_index``, ``axis_size``.

Under the vmap whose ``axis_name`` a collective names, its batching rule (registered in
``collective_rules``) rewrites it into array operations over the batch axis:
``psum`` over a named axis becomes ``psum`` over the positional batch dimension, as in
JAX. Positional axes (integers in ``axis_name``) reduce array dimensions directly.
Inside ``pmap`` the axis name is bound over devices (:mod:`.device_axes`) and the
collectives lower to XLA's cross-replica operations. A name nothing binds raises
``NameError``.
"""

from __future__ import annotations

import numpy as np
from jaxlib import xla_client

from lamina.interpreters import ad, axis_env, batching, is_undefined_primal, lower_fun, not_mapped
from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import (
    Primitive,
    ShapedArray,
    is_checking_vma,
    register_pvary,
    spec_of,
    tree_util,
    vma_of,
)
from lamina.lax.base.operands import aval_of
from lamina.lax.base.primitives import (
    add,
    broadcast_in_dim,
    convert_element_type,
    div,
    eq,
    iota,
    mul,
    reduce_max,
    reduce_min,
    reduce_sum,
    select_n,
)
from lamina.lax.parallel.device_axes import (
    all_reduce,
    device_axis_size,
    is_device_axis,
    mesh_axes,
    mesh_axis_index,
)

__all__ = [
    "axis_index",
    "axis_index_p",
    "axis_size",
    "pbroadcast",
    "pcast",
    "pmax",
    "pmax_p",
    "pmean",
    "pmin",
    "pmin_p",
    "psum",
    "psum_p",
]


def axis_names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def check_axes_bound(names, primitive: str, staged: bool) -> None:
    bound = {frame.name for frame in axis_env()}
    for name in names:
        if isinstance(name, int) or name in bound or is_device_axis(name):
            continue
        if staged:
            raise NameError(
                f"Found an unbound axis name: {name}. To fix this, please call {primitive} "
                "under `jax.shard_map`."
            )
        raise NameError(f"unbound axis name: {name}")


def _size_of(names) -> int:
    size = 1
    for name in names:
        on_devices = device_axis_size(name)
        size *= on_devices if on_devices is not None else batching.axis_frame(name).size
    return size


def axis_size_of(name) -> int:
    """The size of one bound axis name (vmapped or mapped over devices)."""
    return _size_of((name,))


def check_no_groups(axis_index_groups) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError(
            "axis_index_groups not supported in vmap collectives. Please open a feature request!"
        )


def reduction_groups(axis_index_groups):
    """``axis_index_groups`` of a reduction checked to hold each index once, as a
    tuple of tuples (None stays None)."""
    if axis_index_groups is None:
        return None
    seen = {i for g in axis_index_groups for i in g}
    if seen != set(range(sum(len(g) for g in axis_index_groups))):
        raise ValueError("axis_index_groups must cover all indices exactly once")
    return tuple(tuple(g) for g in axis_index_groups)


def _positional(axes) -> tuple[int, ...]:
    return tuple(a for a in axes if isinstance(a, int))


def _named(axes) -> tuple:
    return tuple(a for a in axes if not isinstance(a, int))


# ---------------------------------------------------------------- reductions


def _reduction(name: str, reduce_positional, unbatched_scale: bool, kind: str):
    """A collective reduction primitive (psum, pmax, pmin) of one operand; as in JAX,
    reducing a pytree binds it once per leaf."""
    prim = Primitive(name)

    def impl(x, *, axes, axis_index_groups):
        check_axes_bound(_named(axes), name, staged=False)
        return reduce_positional(x, _positional(axes))

    def abstract_eval(aval, *, axes, axis_index_groups):
        # JAX names psum in this message for pmax and pmin too.
        check_axes_bound(_named(axes), "psum", staged=True)
        pos = {a % max(len(aval.shape), 1) for a in _positional(axes)}
        shape = tuple(d for i, d in enumerate(aval.shape) if i not in pos)
        return ShapedArray(shape, aval.dtype, weak_type=aval.weak_type)

    def collective(axis_data, vals, dims, *, axes, axis_index_groups):
        check_no_groups(axis_index_groups)
        (x,), (d,) = vals, dims
        rest = tuple(a for a in axes if a != axis_data.name)
        if d is not_mapped:
            if unbatched_scale:
                x = mul(x, np.asarray(axis_data.size, aval_of(x).dtype))
            return (prim.bind(x, axes=rest, axis_index_groups=None) if rest else x), not_mapped
        # The batch dim d replaces the name; positional axes shift past it.
        shifted = tuple(a + 1 if isinstance(a, int) and a >= d else a for a in rest)
        return prim.bind(x, axes=(*shifted, d), axis_index_groups=None), not_mapped

    def sharding(aval, *, axes, axis_index_groups):
        # Over explicit mesh axes the kept dimensions keep their splits.
        pos = {a % max(len(aval.shape), 1) for a in _positional(axes)}
        return tuple(e for i, e in enumerate(spec_of(aval)) if i not in pos)

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    prim.def_sharding(sharding)
    positional_lowering = lower_fun(impl, multiple_results=False)

    def lowering(ctx, x, *, axes, axis_index_groups):
        named = _named(axes)
        if not named or not all(is_device_axis(n) for n in named):
            return positional_lowering(ctx, x, axes=axes, axis_index_groups=axis_index_groups)
        if _positional(axes):
            (x,) = positional_lowering(ctx, x, axes=_positional(axes), axis_index_groups=None)
        return [all_reduce(ctx, x, ctx.avals_out[0], named, kind, axis_index_groups)]

    prim.def_lowering(lowering)
    prim.def_collective(lambda params: _named(params["axes"]), collective)
    prim.def_batching(_positional_batching(prim))
    return prim


def _positional_batching(prim):
    """Batching of a positional-only reduction: the axes move past the batch dim."""

    def rule(axis_data, vals, dims, *, axes, axis_index_groups):
        (x,), (d,) = vals, dims
        if d is not_mapped:
            return prim.bind(x, axes=axes, axis_index_groups=axis_index_groups), not_mapped
        ndim = len(aval_of(x).shape) - 1
        logical = [a % max(ndim, 1) for a in _positional(axes)]
        physical = tuple(a + (1 if a >= d else 0) for a in logical)
        out = prim.bind(x, axes=(*_named(axes), *physical), axis_index_groups=axis_index_groups)
        return out, d - sum(1 for a in physical if a < d)

    return rule


def _reduce_min(x, axes):
    return reduce_min(x, axes)


psum_p = _reduction("psum", lambda x, axes: reduce_sum(x, axes) if axes else x, True, "add")
pmax_p = _reduction("pmax", lambda x, axes: reduce_max(x, axes) if axes else x, False, "max")
pmin_p = _reduction("pmin", lambda x, axes: _reduce_min(x, axes) if axes else x, False, "min")
ad.deflinear(psum_p)


def _psum_transpose(ct, x, *, axes, axis_index_groups):
    """The transpose of a sum over named axes sums the cotangent over them too; over
    positional axes it broadcasts it back."""
    if not is_undefined_primal(x):
        return [None]
    if type(ct) is ad.Zero:
        return [ad.Zero(x.aval)]
    names, pos = _named(axes), _positional(axes)
    if names:
        ct = psum_p.bind(ct, axes=names, axis_index_groups=axis_index_groups)
    if pos:
        ndim = len(x.aval.shape)
        kept = tuple(i for i in range(ndim) if i not in {a % ndim for a in pos})
        ct = broadcast_in_dim(ct, x.aval.shape, kept)
    return [ct]


psum_p.def_transpose(_psum_transpose)

# Under shard_map's varying-axes checks (``check_vma=True``) a sum over mesh axes is
# ``psum_invariant`` of a value cast to vary over them (``pvary``): each is the
# other's transpose, so a replicated input's cotangents are summed over devices.
psum_invariant_p = _reduction(
    "psum_invariant", lambda x, axes: reduce_sum(x, axes) if axes else x, True, "add"
)
ad.deflinear(psum_invariant_p)
psum_invariant_p.def_pp_params(
    lambda params: {"axes": params["axes"]},
    lambda params, in_avals, out_avals: {**params, "axis_index_groups": None},
)
pvary_p = Primitive("pvary")
pvary_p.def_impl(lambda x, *, axes: x)
pvary_p.def_abstract_eval(lambda aval, *, axes: aval)
pvary_p.def_lowering(lambda ctx, x, *, axes: [x])
pvary_p.def_batching(
    lambda axis_data, vals, dims, *, axes: (pvary_p.bind(*vals, axes=axes), dims[0])
)
ad.deflinear(pvary_p)


def _transposed_as(prim):
    def rule(ct, x, *, axes, **params):
        if not is_undefined_primal(x):
            return [None]
        if type(ct) is ad.Zero:
            return [ad.Zero(x.aval)]
        return [prim.bind(ct, axes=axes, **params)]

    return rule


pvary_p.def_transpose(
    lambda ct, x, *, axes: _transposed_as(psum_invariant_p)(
        ct, x, axes=axes, axis_index_groups=None
    )
)
psum_invariant_p.def_transpose(
    lambda ct, x, *, axes, axis_index_groups: _transposed_as(pvary_p)(ct, x, axes=axes)
)


def _mesh_named(names) -> frozenset:
    return frozenset(n for n in names if not isinstance(n, int) and is_device_axis(n))


def _add_vma(aval, *, axes):
    return vma_of(aval) | frozenset(axes)


def _reduced_vma(aval, *, axes, axis_index_groups):
    return vma_of(aval) - _mesh_named(axes)


pvary_p.def_vma(_add_vma)
for _prim in (psum_p, pmax_p, pmin_p, psum_invariant_p):
    _prim.def_vma(_reduced_vma, lambda params: _mesh_named(params["axes"]))
register_pvary(lambda x, axes: pvary_p.bind(x, axes=tuple(axes)))


def _bind_each(prim, x, axis_name, axis_index_groups):
    axes = axis_names(axis_name)
    axis_index_groups = reduction_groups(axis_index_groups)
    return tree_util.tree_map(
        lambda leaf: prim.bind(leaf, axes=axes, axis_index_groups=axis_index_groups), x
    )


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of ``x`` (a pytree) over the named (or positional) axes; booleans are
    counted (summed as int32), as in JAX."""

    def counted(leaf):
        if dtype_of(leaf) == np.dtype(bool):
            return convert_element_type(leaf, np.dtype(np.int32))
        return leaf

    x = tree_util.tree_map(counted, x)
    if is_checking_vma() and axis_index_groups is not None:
        raise NotImplementedError()  # as JAX 0.10.2 under shard_map's check_vma
    if is_checking_vma() and _mesh_named(axis_names(axis_name)) == set(axis_names(axis_name)):
        return _bind_each(psum_invariant_p, x, axis_name, axis_index_groups)
    return _bind_each(psum_p, x, axis_name, axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
    return _bind_each(pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    return _bind_each(pmin_p, x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """``psum(x) / n`` where ``n`` is the number of participants."""
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)
    count = psum(1, axis_name, axis_index_groups=axis_index_groups)

    return tree_util.tree_map(lambda t: div(t, convert_element_type(count, dtype_of(t))), total)


def dtype_of(x):
    return aval_of(x).dtype


# ---------------------------------------------------------------- axis_index / axis_size

axis_index_p = Primitive("axis_index")


def _axis_index_impl(*, axis_name):
    check_axes_bound(axis_names(axis_name), "axis_index", staged=False)
    raise AssertionError("unreachable: a bound axis is handled by its vmap")


def _axis_index_abstract_eval(*, axis_name):
    check_axes_bound(axis_names(axis_name), "axis_index", staged=True)
    return ShapedArray((), np.dtype(np.int32))


def _axis_index_collective(axis_data, vals, dims, *, axis_name):
    names = axis_names(axis_name)
    # Over several names the index is mixed-radix, the last name varying fastest.
    strides = [_size_of(names[k + 1 :]) for k in range(len(names))]
    position = names.index(axis_data.name)
    index = iota(np.int32, axis_data.size)
    if strides[position] != 1:
        index = mul(index, np.int32(strides[position]))
    for k, other in enumerate(names):
        if k != position:
            term = axis_index_p.bind(axis_name=other)
            index = add(index, mul(term, np.int32(strides[k])) if strides[k] != 1 else term)
    return index, 0


def _axis_index_lowering(ctx, *, axis_name):
    names = axis_names(axis_name)
    if not all(is_device_axis(n) for n in names):
        _axis_index_impl(axis_name=axis_name)
    (out_aval,) = ctx.avals_out
    if mesh_axes() is not None:
        index = mesh_axis_index(names)
        within = ctx.module_context.value_sharding
        if within is not None:
            # In a partially manual region: computed fully manually, then handed over.
            index = _custom_call("Sharding", index, str(xla_client.HloSharding.manual()))
            index = _custom_call("SPMDShardToFullShape", index, within(0))
        return [index]
    replica = hlo.ReplicaIdOp().result  # the position among all replicas, a ui32
    return [hlo.convert(mb.ir_type(out_aval), replica)]


def _custom_call(target: str, x: ir.Value, sharding: str) -> ir.Value:
    op = hlo.CustomCallOp.build_generic(
        results=[x.type],
        operands=[x],
        attributes={
            "call_target_name": ir.StringAttr.get(target),
            "backend_config": ir.StringAttr.get(""),
            "mhlo.sharding": ir.StringAttr.get(sharding),
        },
    )
    return op.result


axis_index_p.def_impl(_axis_index_impl)
axis_index_p.def_lowering(_axis_index_lowering)
axis_index_p.def_abstract_eval(_axis_index_abstract_eval)
ad.zero_jvp(axis_index_p)
axis_index_p.def_collective(lambda p: axis_names(p["axis_name"]), _axis_index_collective)
axis_index_p.def_vma(lambda *, axis_name: _mesh_named(axis_names(axis_name)))


def axis_index(axis_name):
    """The position along the named mapped axis (an int32 scalar per example)."""
    return axis_index_p.bind(axis_name=axis_name if not isinstance(axis_name, list)
                             else tuple(axis_name))  # fmt: skip


def axis_size(axis_name):
    """The size of the named mapped axis (a product for several names), a Python int."""
    names = axis_names(axis_name)
    check_axes_bound(names, "axis_size", staged=False)
    return _size_of(names)


def pbroadcast(x, axis_name, source):
    """Every participant receives ``x`` of participant ``source``."""

    is_source = eq(axis_index(axis_name), np.int32(source))

    def keep_source(leaf):
        zeros = broadcast_in_dim(np.zeros((), dtype_of(leaf)), aval_of(leaf).shape, ())
        return select_n(broadcast_in_dim(is_source, aval_of(leaf).shape, ()), zeros, leaf)

    return psum(tree_util.tree_map(keep_source, x), axis_name)


def pvary(x, axis_name):
    """``x`` (a pytree) typed as varying over ``axis_name`` too (a no-op on values)."""
    names = axis_names(axis_name)
    if not names or not is_checking_vma():
        return x
    return tree_util.tree_map(lambda leaf: pvary_p.bind(leaf, axes=names), x)


def pcast(x, axis_name, *, to):
    """Changes how a value varies across ``axis_name`` in shard_map's type system; under
    vmap every value is per-example already, so the value is returned unchanged."""
    if to not in ("varying", "invariant", "unreduced", "reduced"):
        raise ValueError(f"pcast: unknown target {to!r}")
    check_axes_bound(axis_names(axis_name), "pcast", staged=False)
    return pvary(x, axis_name) if to == "varying" else x
