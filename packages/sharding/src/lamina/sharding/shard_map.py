"""``shard_map``: a function written for one device's block of its inputs, run on every
device of a mesh at once (the ``shard_map`` primitive and its rules).

``shard_map(f, mesh=mesh, in_specs=..., out_specs=...)(x)`` splits each input over the
mesh by its ``PartitionSpec`` (a dimension named after mesh axes is cut into that many
blocks; every other dimension is whole on each device) and traces ``f`` once on one
block, with the mesh's axes bound for collectives (``psum``, ``all_gather``,
``ppermute``, ``axis_index``, ...). Each result block becomes part of one global array
laid out by its out spec; a mesh axis an out spec does not name means the result is the
same on all devices along it, which ``check_vma`` verifies.

Lowered, the body is an XLA SPMD program in manual mode: each input is constrained to
its global sharding (``@Sharding``) and cut into the device's block
(``@SPMDFullToShardShape``, sharding ``{manual}``); each result block goes back to a
global array (``@SPMDShardToFullShape``). Called outside ``jit`` it runs as a ``jit``
over the mesh's devices.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
from collections.abc import Callable

import numpy as np
from jaxlib import xla_client

from lamina.interpreters import (
    Tracer,
    ad,
    backward_pass,
    batching,
    eval_jaxpr,
    eval_trace,
    find_current_trace,
    is_undefined_primal,
    jit,
    jvp,
    partial_eval,
    partial_eval_jaxpr,
    set_current_trace,
    shaped_abstractify,
    trace_to_jaxpr,
    vmap,
)
from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import (
    ClosedJaxpr,
    Primitive,
    checking_vma,
    declare_param,
    dtypes,
    parse_call_args,
    set_vma_axis_order,
    spec_of,
    tree_util,
)
from lamina.lax import bind_mesh_axes, div, psum, reshape
from lamina.sharding.axis_types import AxisType
from lamina.sharding.mesh import AbstractMesh, Mesh
from lamina.sharding.mesh_context import current_mesh, get_abstract_mesh
from lamina.sharding.mesh_state import abstract_mesh
from lamina.sharding.named_sharding import NamedSharding
from lamina.sharding.partition_spec import PartitionSpec
from lamina.sharding.reshard import typed_like

__all__ = ["Infer", "body_mesh", "check_context_mesh", "shard_map", "shard_map_p"]


class _InferFromArgs:
    """``in_specs`` left to be taken from the arguments' shardings."""

    def __repr__(self):
        return "jax.sharding.Infer"


Infer = _InferFromArgs()

shard_map_p = Primitive("shard_map")
shard_map_p.multiple_results = True


def _axes_of(entry) -> tuple:
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, tuple) else (entry,)


def _spec_axes(spec) -> set:
    return {a for entry in spec for a in _axes_of(entry) if a is not PartitionSpec.UNCONSTRAINED}


def _factor(mesh, entry) -> int:
    return int(np.prod([mesh.shape[a] for a in _axes_of(entry)], dtype=np.int64))


def _entries(spec, ndim: int) -> tuple:
    """The spec's entry for each of ``ndim`` dimensions (None past its end)."""
    return (*spec, *[None] * (ndim - len(spec)))


def _local_shape(mesh, spec, shape) -> tuple:
    entries = _entries(spec, len(shape))
    return tuple(d // _factor(mesh, e) for d, e in zip(shape, entries, strict=True))


def _global_shape(mesh, spec, shape) -> tuple:
    entries = _entries(spec, len(shape))
    return tuple(d * _factor(mesh, e) for d, e in zip(shape, entries, strict=True))


# ---------------------------------------------------------------- the primitive


def _abstract_eval(*avals, mesh, in_specs, out_specs, jaxpr, newly_manual_axes=(), **_):
    mesh = _mesh_of(mesh)
    return [_outer_aval(a, _typed_outer(mesh, s, a), newly_manual_axes)
            for a, s in zip(jaxpr.out_avals, out_specs, strict=True)]  # fmt: skip


def _names(entry) -> tuple:
    return () if entry is None else entry if isinstance(entry, tuple) else (entry,)


def _entry(names: tuple):
    return None if not names else names[0] if len(names) == 1 else names


def _typed_outer(mesh, spec, inner):
    """The type of a result outside the body: over the mesh's ``Explicit`` axes, split
    as ``spec`` says and as its type in the body is (over the axes left explicit)."""
    aval = inner.update(shape=_global_shape(mesh, spec, inner.shape))
    outer = mesh.abstract_mesh
    explicit = set(outer.explicit_axes)
    if not explicit:
        return typed_like(aval, None)
    body = spec_of(inner)
    entries = [
        _entry(tuple(n for n in (*_names(e), *_names(b)) if n in explicit))
        for e, b in zip(_entries(spec, aval.ndim), body, strict=True)
    ]
    return typed_like(aval, NamedSharding(outer, PartitionSpec(*entries)))


def _typed_local(mesh, manual, spec, aval):
    """The type of an argument in the body: its block, split over the axes that stay
    ``Explicit`` as its type says."""
    local = aval.update(shape=_local_shape(mesh, spec, aval.shape))
    within = _within(mesh, manual)
    keep = set(within.explicit_axes)
    if not keep or getattr(aval, "type_sharding", None) is None:
        return typed_like(local, None)
    entries = [_entry(tuple(n for n in _names(e) if n in keep)) for e in spec_of(aval)]
    return typed_like(local, NamedSharding(within, PartitionSpec(*entries)))


def _outer_aval(inner, aval, manual):
    """Outside the body a value no longer varies over the body's manual axes."""
    vma = getattr(inner, "vma", None)
    return aval.update(vma=vma - frozenset(manual)) if vma else aval


def _body_aval(aval, spec, manual, check_vma: bool):
    """Inside a checked body a value varies over the manual axes its spec splits it
    over (and those it varied over outside)."""
    if not check_vma or not hasattr(aval, "vma"):
        return aval
    return aval.update(vma=aval.vma | (frozenset(_spec_axes(spec)) & frozenset(manual)))


_compiled: dict[tuple, tuple] = {}


def _impl(*args, **params):
    """Run as a ``jit`` over the mesh's devices (one per body and specs, kept)."""
    key = (id(params["jaxpr"]), *sorted((k, v) for k, v in params.items() if k != "jaxpr"))
    found = _compiled.get(key)
    if found is None or found[0] is not params["jaxpr"]:
        if len(_compiled) > 256:
            _compiled.clear()
        mesh = _with_devices(params["mesh"])
        # as JAX: with axes left out of the manual ones, results over Explicit axes are
        # laid out by their types (one entry a dimension), else by out_specs as given
        partial = frozenset(params["newly_manual_axes"]) != frozenset(mesh.axis_names)
        pad = partial and bool(mesh.explicit_axes)
        outs = tuple(
            NamedSharding(mesh, PartitionSpec(*_entries(s, a.ndim)) if pad else s)
            for s, a in zip(params["out_specs"], params["jaxpr"].out_avals, strict=True)
        )
        run = jit(lambda *xs: tuple(shard_map_p.bind(*xs, **params)), out_shardings=outs)
        found = _compiled[key] = (params["jaxpr"], run)
    return list(found[1](*args))


def _custom_call(target: str, x, aval, sharding: str, open_dims: int = 0):
    """``open_dims``: the rank whose dimensions XLA may lay out further over the
    automatic axes (0: none)."""
    dims = ",".join(str(d) for d in range(open_dims))
    op = hlo.CustomCallOp.build_generic(
        results=[mb.ir_type(aval)],
        operands=[x],
        attributes={
            "call_target_name": ir.StringAttr.get(target),
            "backend_config": ir.StringAttr.get(f"unspecified_dims=[{dims}]" if dims else ""),
            "mhlo.sharding": ir.StringAttr.get(sharding),
        },
    )
    return op.result


@functools.cache
def _manual_sharding(mesh, manual, ndim: int, spec: tuple = ()) -> str:
    """The sharding of a body value: manual over the axes in ``manual``; with other
    axes of size above one, a subgroup sharding that leaves XLA those axes (``spec``:
    how the value's dimensions are split over them, as a sharding constraint asks)."""
    auto = [a for a in mesh.axis_names if a not in manual]
    if all(mesh.shape[a] == 1 for a in auto):
        return str(xla_client.HloSharding.manual())
    names = list(mesh.axis_names)
    entries = [() if e is PartitionSpec.UNCONSTRAINED else _axes_of(e)
               for e in _entries(spec, ndim)]  # fmt: skip
    used = [a for e in entries for a in e]
    rest = [a for a in auto if a not in used]
    manual_axes = [a for a in names if a in manual]
    proto = xla_client.OpSharding()
    proto.type = xla_client.OpSharding.Type.OTHER
    replicas = int(np.prod([mesh.shape[a] for a in rest]))
    kinds = xla_client.OpSharding.Type
    dims = [_factor(mesh, e) for e in entries]
    dims.append(int(np.prod([mesh.shape[a] for a in manual_axes])))
    last = [kinds.MANUAL]
    if replicas > 1 or not used:
        dims.append(replicas)
        last.append(kinds.REPLICATED)
    proto.tile_assignment_dimensions = dims
    proto.last_tile_dims = last
    proto.iota_reshape_dims = [mesh.shape[a] for a in names]
    proto.iota_transpose_perm = [names.index(a) for a in used + manual_axes + rest]
    return str(xla_client.HloSharding.from_proto(proto))


def _no_partial_callbacks(rank: int) -> str:
    raise NotImplementedError(
        "callbacks are only supported in spmd computations when all mesh axes are "
        "partitioned manually (no partial automatic sharding)."
    )


def _outside(mesh, outer, spec, ndim: int) -> str:
    """The sharding of a value outside the body: laid out by ``spec``, and manual over
    the axes ``outer`` when this ``shard_map`` is in the body of another."""
    if outer:
        return _manual_sharding(mesh, outer, ndim, tuple(spec))
    return str(NamedSharding(mesh, spec)._to_xla_hlo_sharding(ndim))


def _lowering(ctx, *args, mesh, in_specs, out_specs, jaxpr, **params):
    outer = frozenset(mesh.manual_axes)  # manual already, in an enclosing body
    manual = params["newly_manual_axes"] | outer
    within = functools.partial(_manual_sharding, mesh, manual)
    partial = within(0) != str(xla_client.HloSharding.manual())
    # With automatic axes (here or around), XLA may refine the layouts over them.
    loose = partial or bool(outer)
    blocks = []
    for x, aval, local, spec in zip(args, ctx.avals_in, jaxpr.in_avals, in_specs, strict=True):
        n = aval.ndim if loose else 0
        x = _custom_call("Sharding", x, aval, _outside(mesh, outer, spec, aval.ndim), n)
        blocks.append(_custom_call("SPMDFullToShardShape", x, local, within(aval.ndim), n))
    mctx = ctx.module_context
    saved = mctx.value_sharding, mctx.callback_sharding
    # Values are manual over the manual axes (XLA partitions the others); host
    # callbacks run on every device, each on its own block.
    mctx.value_sharding = within if partial else None
    mctx.callback_sharding = _no_partial_callbacks if partial else within
    try:
        with _binding(mesh, params):
            outs = ctx.call(jaxpr, blocks, name="shmap_body")
    finally:
        mctx.value_sharding, mctx.callback_sharding = saved
    results = []
    for y, local, aval, spec in zip(outs, jaxpr.out_avals, ctx.avals_out, out_specs, strict=True):
        n = aval.ndim if loose else 0
        full = _outside(mesh, outer, spec, aval.ndim)
        y = _custom_call("Sharding", y, local, within(aval.ndim), n)
        results.append(_custom_call("SPMDShardToFullShape", y, aval, full, n))
    return results


def _with_devices(mesh):
    """``mesh`` with its devices: a ``Mesh`` as it is; an abstract mesh (the mesh of
    ``set_mesh``, recorded as JAX records it) as the mesh in force of that shape."""
    if isinstance(mesh, Mesh):
        return mesh
    held = current_mesh()
    return held if not held.empty and held.abstract_mesh == mesh else mesh


def _bind(closed, params, in_specs, out_specs) -> dict:
    """The params of a ``shard_map`` of ``closed`` with these specs."""
    new = dict(params, jaxpr=closed, in_specs=in_specs, out_specs=out_specs)
    mesh = _with_devices(params["mesh"])
    new["shardings"] = (
        tuple(NamedSharding(mesh, s) for s in in_specs + out_specs)
        if isinstance(mesh, Mesh)
        else ()
    )
    return new


def _differentiable(aval) -> bool:
    return np.issubdtype(aval.dtype, np.inexact)


def _zero_tangent(aval):
    if _differentiable(aval):
        return ad.zeros_like_aval(aval)
    return np.zeros(aval.shape, dtypes.float0)


def _float0(aval):
    return aval.update(dtype=dtypes.float0, weak_type=False)


def _jvp(primals, tangents, *, jaxpr, in_specs, out_specs, **params):
    """A ``shard_map`` of the body's JVP; only nonzero tangents of inexact values
    enter it, and only those of inexact results leave it."""
    given = [type(t) is not ad.Zero and _differentiable(a)
             for t, a in zip(tangents, jaxpr.in_avals, strict=True)]  # fmt: skip
    out_diff = [_differentiable(a) for a in jaxpr.out_avals]
    n = len(primals)

    def body(*xs):
        ts = iter(xs[n:])
        tans = [next(ts) if g else _zero_tangent(a)
                for a, g in zip(jaxpr.in_avals, given, strict=True)]  # fmt: skip
        fun = lambda *p: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *p)  # noqa: E731
        outs, touts = jvp(fun, tuple(xs[:n]), tuple(tans))
        return [*outs, *[t for t, d in zip(touts, out_diff, strict=True) if d]]

    t_avals = [a for a, g in zip(jaxpr.in_avals, given, strict=True) if g]
    with _tracing(params["mesh"], params):
        closed, _ = trace_to_jaxpr(body, [*jaxpr.in_avals, *t_avals], "shard_map jvp",
                                   what="shard_map")  # fmt: skip
    t_specs = tuple(s for s, g in zip(in_specs, given, strict=True) if g)
    t_out_specs = tuple(s for s, d in zip(out_specs, out_diff, strict=True) if d)
    new = _bind(closed, params, in_specs + t_specs, out_specs + t_out_specs)
    given_tangents = [t for t, g in zip(tangents, given, strict=True) if g]
    outs = shard_map_p.bind(*primals, *given_tangents, **new)
    m = len(out_specs)
    touts = iter(outs[m:])
    out_avals = _abstract_eval(mesh=params["mesh"], in_specs=in_specs, out_specs=out_specs,
                               jaxpr=jaxpr)  # fmt: skip
    return outs[:m], [next(touts) if d else ad.Zero(_float0(a))
                      for a, d in zip(out_avals, out_diff, strict=True)]  # fmt: skip


def _binding(mesh, params):
    """The mesh's manual axes bound for the collectives of the body."""
    return bind_mesh_axes(mesh.axis_names, mesh.axis_sizes, params["newly_manual_axes"])


@contextlib.contextmanager
def _tracing(mesh, params):
    """While a body is traced: its axes bound, varying axes tracked if it is checked."""
    with _binding(mesh, params), checking_vma(params.get("check_vma", False)):
        yield


def _unmentioned(mesh, spec, manual) -> tuple:
    """The manual axes ``spec`` does not split over (the value is the same along them)."""
    used = _spec_axes(spec)
    return tuple(a for a in mesh.axis_names if a not in used and a in manual)


def _transpose(cts, *args, mesh, jaxpr, in_specs, out_specs, **params):
    """Cotangents of the linear inputs: the body transposed, as a ``shard_map``. A
    result the same on all devices of an axis gets its cotangent split evenly over them,
    and an input the same on all devices of an axis sums its cotangents over them."""
    manual = params["newly_manual_axes"]
    check = params.get("check_vma", False)
    linear = [is_undefined_primal(x) for x in args]
    known = [x for x, lin in zip(args, linear, strict=True) if not lin]
    known_specs = tuple(s for s, lin in zip(in_specs, linear, strict=True) if not lin)
    lin_specs = tuple(s for s, lin in zip(in_specs, linear, strict=True) if lin)
    cts = [ad.instantiate_zeros(c) for c in cts]
    local_known = [a for a, lin in zip(jaxpr.in_avals, linear, strict=True) if not lin]
    n_known = len(known)

    def body(*xs):
        ks, cs = iter(xs[:n_known]), xs[n_known:]
        # Checked bodies carry the sums in their types (pvary's transpose is a psum).
        cs = [c if check or not _unmentioned(mesh, s, manual) else
              div(c, np.asarray(_factor(mesh, _unmentioned(mesh, s, manual)), c.dtype))
              for c, s in zip(cs, out_specs, strict=True)]  # fmt: skip
        primals = [ad.UndefinedPrimal(a) if lin else next(ks)
                   for a, lin in zip(jaxpr.in_avals, linear, strict=True)]  # fmt: skip
        outs = backward_pass(jaxpr.jaxpr, jaxpr.consts, primals, cs)
        outs = [o for o, lin in zip(outs, linear, strict=True) if lin]
        result = []
        for o, s in zip(outs, lin_specs, strict=True):
            o = ad.instantiate_zeros(o) if type(o) is ad.Zero else o
            rest = () if check else _unmentioned(mesh, s, manual)
            result.append(psum(o, rest) if rest else o)
        return result

    params = dict(params, mesh=mesh)
    with _tracing(mesh, params):
        closed, _ = trace_to_jaxpr(
            body, [*local_known, *jaxpr.out_avals], "shard_map transpose", what="shard_map"
        )
    new = _bind(closed, params, known_specs + tuple(out_specs), lin_specs)
    outs = iter(shard_map_p.bind(*known, *cts, **new))
    return [next(outs) if lin else None for lin in linear]


def _batching(axis_data, vals, dims, *, jaxpr, in_specs, out_specs, **params):
    """A mapped axis is one more dimension, whole on every device."""
    size = axis_data.size
    vals = [batching.moveaxis(v, d, 0) if d is not batching.not_mapped else v
            for v, d in zip(vals, dims, strict=True)]  # fmt: skip
    mapped = [d is not batching.not_mapped for d in dims]
    in_avals = [a.update(shape=(size, *a.shape)) if m else a
                for a, m in zip(jaxpr.in_avals, mapped, strict=True)]  # fmt: skip
    new_in = tuple(PartitionSpec(None, *s) if m else s
                   for s, m in zip(in_specs, mapped, strict=True))  # fmt: skip
    new_out = tuple(PartitionSpec(None, *s) for s in out_specs)

    def body(*xs):
        f = lambda *p: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *p)  # noqa: E731
        axes = [0 if m else None for m in mapped]
        return vmap(f, in_axes=axes, out_axes=0, axis_size=size,
                    spmd_axis_name=None, axis_name=axis_data.name)(*xs)  # fmt: skip

    mesh = params["mesh"]
    with _tracing(mesh, params):
        closed, _ = trace_to_jaxpr(body, in_avals, "shard_map batched", what="shard_map")
    new = _bind(closed, params, new_in, new_out)
    return shard_map_p.bind(*vals, **new), [0] * len(out_specs)


def _partial_eval(trace, args, *, jaxpr, in_specs, out_specs, **params):
    """The known part runs as one ``shard_map``; its residuals (each device's own
    values) leave it stacked along a new leading axis split over the whole mesh, and
    enter the ``shard_map`` of the unknown part the same way."""
    mesh = params["mesh"]
    unknown = [trace.is_unknown(x) for x in args]
    with _tracing(mesh, params):
        known_c, unknown_c, out_unknown, forwarded = partial_eval_jaxpr(jaxpr, unknown, "shard_map")
    known_args = [x for x, u in zip(args, unknown, strict=True) if not u]
    known_specs = tuple(s for s, u in zip(in_specs, unknown, strict=True) if not u)
    n_out = len(out_unknown) - sum(out_unknown)
    computed = known_c.out_avals[n_out:]
    stacked = PartitionSpec(tuple(mesh.axis_names))

    def known_body(*xs):
        outs = eval_jaxpr(known_c.jaxpr, known_c.consts, *xs)
        return [*outs[:n_out], *[reshape(r, (1, *r.shape)) for r in outs[n_out:]]]

    with _tracing(mesh, params):
        k_closed, _ = trace_to_jaxpr(known_body, known_c.in_avals, "shard_map known",
                                     what="shard_map")  # fmt: skip
    known_out_specs = tuple(s for s, u in zip(out_specs, out_unknown, strict=True) if not u)
    k_params = _bind(k_closed, params, known_specs, known_out_specs + (stacked,) * len(computed))
    with set_current_trace(trace.parent):
        known_res = shard_map_p.bind(*known_args, **k_params)
    known_outs, res_it = known_res[:n_out], iter(known_res[n_out:])
    residuals = [next(res_it) if i is None else known_args[i] for i in forwarded]
    res_specs = tuple(stacked if i is None else known_specs[i] for i in forwarded)
    n_res = len(forwarded)
    res_avals = unknown_c.in_avals[:n_res]
    res_local = [a.update(shape=(1, *a.shape)) if i is None else a
                 for a, i in zip(res_avals, forwarded, strict=True)]  # fmt: skip

    def unknown_body(*xs):
        res = [reshape(r, r.shape[1:]) if i is None else r
               for r, i in zip(xs[:n_res], forwarded, strict=True)]  # fmt: skip
        return eval_jaxpr(unknown_c.jaxpr, unknown_c.consts, *res, *xs[n_res:])

    with _tracing(mesh, params):
        u_closed, _ = trace_to_jaxpr(
            unknown_body, [*res_local, *unknown_c.in_avals[n_res:]], "shard_map unknown",
            what="shard_map",
        )  # fmt: skip
    unknown_args = [x for x, u in zip(args, unknown, strict=True) if u]
    unknown_specs = tuple(s for s, u in zip(in_specs, unknown, strict=True) if u)
    u_out_specs = tuple(s for s, u in zip(out_specs, out_unknown, strict=True) if u)
    u_params = _bind(u_closed, params, res_specs + unknown_specs, u_out_specs)
    unknown_outs = trace.staging.process_primitive(
        shard_map_p, [*residuals, *unknown_args], u_params
    )
    k_it, u_it = iter(known_outs), iter(unknown_outs)
    return [next(u_it) if u else next(k_it) for u in out_unknown]


def _printed(params) -> dict:
    """The params as JAX prints them (the shardings derive from mesh and specs)."""
    return {k: v for k, v in params.items() if k != "shardings"}


def _mesh_of(mesh):
    """The mesh param; read from Jaxpr text, its printed form as an abstract mesh."""
    return mesh if isinstance(mesh, (Mesh, AbstractMesh)) else _read_mesh(str(mesh))


def _completed(params, in_avals, out_avals) -> dict:
    mesh = params["mesh"]
    if not isinstance(mesh, Mesh):  # read from text: no devices to lay out on
        return dict(params, shardings=())
    specs = (*params["in_specs"], *params["out_specs"])
    return dict(params, shardings=tuple(NamedSharding(mesh, s) for s in specs))


def _read_mesh(text: str) -> AbstractMesh:
    """A printed ``Mesh('x': 2, 'y': 4, axis_types=(Auto, Auto))`` as the abstract
    mesh of that shape."""
    pairs = re.findall(r"'([^']*)': (\d+)", text)
    kinds = re.search(r"axis_types=\(([^)]*)\)", text)
    types = (
        tuple(AxisType[k.strip()] for k in kinds.group(1).split(",") if k.strip())
        if kinds
        else None
    )
    return AbstractMesh(tuple(int(n) for _, n in pairs), tuple(a for a, _ in pairs), types)


def _read_specs(text: str) -> tuple:
    """A printed tuple of ``P(...)`` as PartitionSpecs."""
    specs, _ = parse_call_args("T" + text)
    return tuple(PartitionSpec(*parse_call_args(str(s))[0]) for s in specs)


shard_map_p.def_impl(_impl)
declare_param(shard_map_p, "in_specs", _read_specs)
declare_param(shard_map_p, "out_specs", _read_specs)
shard_map_p.def_pp_params(_printed, _completed)
shard_map_p.def_partial_eval(_partial_eval)
shard_map_p.def_abstract_eval(_abstract_eval)
shard_map_p.def_lowering(_lowering)
ad.primitive_jvps[shard_map_p] = _jvp
shard_map_p.def_transpose(_transpose)
shard_map_p.def_batching(_batching)


def _dce(used_outputs, eqn):
    """Unused outputs leave the body, and with them the operands only they need."""
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    closed = eqn.params["jaxpr"]
    jaxpr, used_inputs = partial_eval.dce_jaxpr(closed.jaxpr, used_outputs)
    if jaxpr is closed.jaxpr:
        return used_inputs, eqn
    keep = lambda xs, used: tuple(x for x, u in zip(xs, used, strict=True) if u)  # noqa: E731
    params = _bind(
        ClosedJaxpr(jaxpr, closed.consts),
        eqn.params,
        keep(eqn.params["in_specs"], used_inputs),
        keep(eqn.params["out_specs"], used_outputs),
    )
    new_eqn = eqn.replace(
        invars=list(keep(eqn.invars, used_inputs)),
        outvars=list(keep(eqn.outvars, used_outputs)),
        params=params,
    )
    return used_inputs, new_eqn


partial_eval.dce_rules[shard_map_p] = _dce


# ---------------------------------------------------------------- checks


def _fname(fun) -> str:
    return getattr(fun, "__name__", repr(fun))


def _bound_to(fun, args) -> list[str]:
    """For each positional argument, JAX's note on the parameter it binds to (empty
    when the signature is unknown or does not take the arguments)."""
    try:
        signature = inspect.signature(fun)
        signature.bind(*args)
    except (TypeError, ValueError):
        return [""] * len(args)
    kinds = inspect.Parameter
    params = [p for p in signature.parameters.values()
              if p.kind not in (kinds.KEYWORD_ONLY, kinds.VAR_KEYWORD)]  # fmt: skip
    notes = []
    for i in range(len(args)):
        if i >= len(params) or params[i].kind == kinds.VAR_POSITIONAL:
            notes.append(
                f", where args[{i}] is the index {i - len(params) + 1} component of "
                f"{_fname(fun)}'s varargs parameter '{params[-1].name}'"
            )
        else:
            notes.append(f", where args[{i}] is bound to {_fname(fun)}'s parameter "
                         f"'{params[i].name}'")  # fmt: skip
    return notes


def _arg_names(fun, args) -> list[str]:
    """How JAX's messages name each flat argument leaf."""
    names = []
    for i, (a, note) in enumerate(zip(args, _bound_to(fun, args), strict=True)):
        for path, _ in tree_util.tree_flatten_with_path(a)[0]:
            names.append(f"args[{i}]{tree_util.keystr(path)}{note}")
    return names


def _check_specs(specs, what: str, manual) -> None:
    """Every leaf of ``specs`` (the pytree given) a ``PartitionSpec`` naming only
    manual axes, else JAX's error listing each offending leaf by its key path."""
    paths = tree_util.tree_flatten_with_path(specs, is_leaf=_is_spec_leaf)[0]
    wrong = [f"  {what}{tree_util.keystr(k)} is {x} of type {type(x).__name__}, "
             for k, x in paths if not isinstance(x, PartitionSpec)]  # fmt: skip
    if wrong:
        raise TypeError(
            f"shard_map {what} argument must be a pytree of `jax.sharding.PartitionSpec` "
            "instances, but:\n\n" + "\n\n".join(wrong) + "\n\nCheck the "
            f"{what} values passed to shard_map."
        )
    msgs = [f"  {what}{tree_util.keystr(k)} refers to {axis!r}"
            for k, x in paths for entry in x for axis in _axes_of(entry)
            if axis is not PartitionSpec.UNCONSTRAINED and axis not in manual]  # fmt: skip
    if msgs:
        raise ValueError(
            f"shard_map {what} argument must refer to an axis marked as manual "
            f"({frozenset(manual)}), but:\n\n" + "\n\n".join(msgs) + "\n\n"
            f"Check the {what} values passed to shard_map."
        )


def _check_in(fun, mesh, specs, avals, names, spec_keys) -> None:
    for s, a, name in zip(specs, avals, names, strict=True):
        if len(s) > a.ndim:
            raise ValueError(
                f"shard_map applied to the function '{_fname(fun)}' was given an in_specs "
                "entry which is too long to be compatible with the corresponding input "
                f"value from the function:\n\nin_specs is {s} which has length {len(s)}, "
                f"but the passed {name}, has shape {a.str_short()}, which has rank "
                f"{a.ndim} (and {a.ndim} < {len(s)})\n\nEntries in in_specs must be of "
                "length no greater than the number of axes in the corresponding input "
                f"value.\n\nEither revise the spec to be shorter, or modify '{_fname(fun)}' "
                "so that its inputs have sufficient rank."
            )
    bad = []
    for s, a, name, key in zip(specs, avals, names, spec_keys, strict=True):
        display, where, bound = name.partition(", where")
        extra = f", where{bound}," if where else ""
        for d, entry in enumerate(s):
            axes = tuple(x for x in _axes_of(entry) if x is not PartitionSpec.UNCONSTRAINED)
            size = _factor(mesh, axes)
            if not axes or a.shape[d] % size == 0:
                continue
            axis = f"axes {axes}" if len(axes) > 1 else f"axis {axes[0]!r}"
            total = "total " if len(axes) > 1 else ""
            bad.append(
                f"* the passed {display} of shape {a.str_short()}{extra} corresponds to "
                f"in_specs{tree_util.keystr(key)} of value {s}, which maps array axis {d} "
                f"(of size {a.shape[d]}) to mesh {axis} (of {total}size {size}), but {size} "
                f"does not evenly divide {a.shape[d]}"
            )
    if len(bad) == 1:
        bad = [bad[0][2:]]
    if bad:
        raise ValueError(
            f"shard_map applied to the function '{_fname(fun)}' was given argument arrays "
            "with axis sizes that are not evenly divisible by the corresponding mesh axis "
            f"sizes:\n\nThe mesh given has shape {tuple(mesh.axis_sizes)} with "
            f"corresponding axis names {tuple(mesh.axis_names)}.\n\n"
            + "\n\n".join(bad)
            + "\n\nArray arguments' axis sizes must be evenly divisible by the mesh axis or "
            "axes indicated by the corresponding elements of the argument's in_specs entry. "
            "Consider checking that in_specs are correct, and if so consider changing the "
            f"mesh axis sizes or else padding the input and adapting '{_fname(fun)}' "
            "appropriately."
        )


_SCALAR_HINT = (
    "\n\nFor scalar values (rank 0), consider using an out_specs entry of `P()`, where "
    "`P = jax.sharding.PartitionSpec`. In particular, for rank 0 outputs which are not "
    "constant over the mesh, add at least one (singleton) axis to them so that they can "
    "be concatenated using out_specs."
)


def _check_out_rank(fun, specs, avals) -> None:
    for s, a in zip(specs, avals, strict=True):
        if len(s) > a.ndim:
            raise ValueError(
                f"shard_map applied to the function '{_fname(fun)}' was given an out_specs "
                "entry which is too long to be compatible with the corresponding output "
                f"value from the function:\n\nout_specs is {s} which has length {len(s)}, "
                f"but {_fname(fun)}(*args) has shape {a.str_short()}, which has rank "
                f"{a.ndim} (and {a.ndim} < {len(s)})\n\nEntries in out_specs must be of "
                "length no greater than the number of axes in the corresponding output "
                f"value.\n\nEither revise the spec to be shorter, or modify '{_fname(fun)}' "
                "so that its outputs have sufficient rank." + (_SCALAR_HINT if a.ndim == 0 else "")
            )


def _spec_keys(specs, tree_of) -> list:
    """The key path within ``specs`` (a pytree prefix) of each leaf's spec."""
    keys = [_Key(k) for k, _ in tree_util.tree_flatten_with_path(specs, is_leaf=_is_spec_leaf)[0]]
    keyed = tree_util.tree_unflatten(tree_util.tree_structure(specs, is_leaf=_is_spec_leaf), keys)
    return tree_util.broadcast_prefix(keyed, tree_of, is_leaf=lambda x: isinstance(x, _Key))


class _Key:
    def __init__(self, path):
        self.path = path


def _check_replication(fun, mesh, manual, closed, in_specs, out_specs, keys) -> None:
    """Each result the same along the mesh axes its out spec does not name, as its type
    says (the axes it varies over); else JAX's error, one entry per result that may
    differ."""
    out_vary = [getattr(a, "vma", frozenset()) for a in closed.out_avals]
    msgs = []
    for s, vary, key in zip(out_specs, out_vary, keys, strict=True):
        if not [a for a in _unmentioned(mesh, s, manual) if a in vary]:
            continue
        where = f"* out_specs{tree_util.keystr(key.path)} is {s} which implies that the"
        unmentioned = [a for a in mesh.axis_names if a not in _spec_axes(s)]
        if len(unmentioned) > 1:
            need = ",".join(a for a in mesh.axis_names if a in _spec_axes(s))
            got = ",".join(a for a in mesh.axis_names if a in vary)
            diff = ",".join(a for a in unmentioned if a in vary)
            msgs.append(
                f"{where} corresponding output value is only varying across mesh axes "
                f"{{{need}}} and not {{{diff}}}, but it was inferred to be possibly varying "
                f"over {{{got}}}"
            )
        else:
            msgs.append(
                f"{where} corresponding output value is replicated across mesh axis "
                f"'{unmentioned[0]}', but could not infer replication over any axes"
            )
    if not msgs:
        return
    if len(msgs) == 1:
        msgs = [msgs[0][2:]]
    raise ValueError(
        f"shard_map applied to the function '{_fname(fun)}' was given out_specs which "
        "require replication which can't be statically inferred given the mesh:\n\n"
        f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis "
        f"names {tuple(mesh.axis_names)}.\n\n" + "\n\n".join(msgs) + "\n\nCheck if "
        "these output values are meant to be replicated over those mesh axes. If not, "
        "consider revising the corresponding out_specs entries. If so, consider "
        "disabling the check by passing the check_vma=False argument to `jax.shard_map`."
    )


# ---------------------------------------------------------------- the function


def check_context_mesh(mesh) -> None:
    """A mesh given to ``shard_map`` (or ``pmap``'s) must be the context mesh when
    one is in force (``set_mesh``, or the body of another ``shard_map``)."""
    context = get_abstract_mesh()
    if not context.empty and mesh.abstract_mesh != context:
        raise ValueError(
            f"The context mesh {context} should match the mesh passed to shard_map {mesh}"
        )


@contextlib.contextmanager
def body_mesh(mesh: AbstractMesh):
    """The abstract mesh in force while a body is traced (its manual axes ``Manual``)."""
    prev = abstract_mesh.swap_local(mesh)
    try:
        yield
    finally:
        abstract_mesh.set_local(prev)


def _within(m, manual) -> AbstractMesh:
    return m.abstract_mesh.update_axis_types(dict.fromkeys(manual, AxisType.Manual))


def _spec_of(x, mesh) -> PartitionSpec:
    """The spec an argument is laid out by over ``mesh`` (P() when it is not)."""
    if isinstance(x, Tracer):  # a traced value: its type's splits
        typed = getattr(x.aval, "type_sharding", None)
        same = typed is not None and typed.mesh == mesh.abstract_mesh
        sharding = NamedSharding(mesh, typed.spec) if same else None
    else:
        sharding = getattr(x, "sharding", None)
    if isinstance(sharding, NamedSharding) and sharding.mesh == mesh:
        entries = list(sharding.spec)
        while entries and entries[-1] is None:
            entries.pop()
        return PartitionSpec(*entries)
    return PartitionSpec()


def _check_explicit(specs, leaves, mesh, manual) -> None:
    """Over Explicit axes an argument must already be laid out by its spec (a traced
    value: split as its type says)."""
    for s, x in zip(specs, leaves, strict=True):
        held = _spec_of(x, mesh)
        held = PartitionSpec(  # the axes left automatic or explicit are not the spec's
            *[_entry(tuple(n for n in _names(e) if n in manual)) for e in held]
        )
        if tuple(_entries(held, np.ndim(x))) != tuple(_entries(s, np.ndim(x))):
            aval = shaped_abstractify(x)
            have = PartitionSpec(*_entries(held, aval.ndim))
            raise ValueError(
                f"in_specs passed to shard_map: {s} does not match the specs of the input: "
                f"{have} for arg: {aval.str_short()}. `in_specs` is an optional argument so "
                "you can omit specifying it and shard_map will infer the in_specs from the "
                "arguments. If you want to reshard your inputs, you can use `jax.reshard` on "
                "the arguments and then pass those args to shard_map."
            )


def _is_spec_leaf(x) -> bool:
    return x is None or isinstance(x, PartitionSpec)


def _flat_specs(specs, tree_of, what: str) -> list:
    try:
        flat = tree_util.broadcast_prefix(specs, tree_of, is_leaf=_is_spec_leaf)
    except ValueError:
        raise ValueError(
            f"shard_map {what} must be a tree prefix of the corresponding "
            f"{'arguments' if what == 'in_specs' else 'outputs'}, got {specs!r}"
        ) from None
    return [PartitionSpec() if s is None else s for s in flat]


def _trace(f, m, manual, in_tree, avals, flat_in, in_keys, out_specs, check_vma,
           recorded) -> tuple:  # fmt: skip
    """The params of the ``shard_map`` equation of ``f`` on arguments of ``avals`` (its
    mesh param ``recorded``), and its output tree."""
    args = tree_util.tree_unflatten(in_tree, avals)
    _check_in(f, m, flat_in, avals, _arg_names(f, args), in_keys)
    local = [_body_aval(_typed_local(m, manual, s, a), s, manual, check_vma)
             for a, s in zip(avals, flat_in, strict=True)]  # fmt: skip
    set_vma_axis_order(m.axis_names)
    box = {}

    def body(*xs):
        out = f(*tree_util.tree_unflatten(in_tree, list(xs)))
        flat, box["tree"] = tree_util.tree_flatten(out)
        return flat

    with (
        bind_mesh_axes(m.axis_names, m.axis_sizes, manual),
        body_mesh(_within(m, manual)),
        checking_vma(check_vma),
    ):
        closed, _ = trace_to_jaxpr(body, local, f"shard_map({_fname(f)})", what="shard_map")
    out_tree = box["tree"]
    skeleton = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    flat_out = _flat_specs(out_specs, skeleton, "out_specs")
    _check_specs(out_specs, "out_specs", manual)
    _check_out_rank(f, flat_out, closed.out_avals)
    if check_vma:
        keys = _spec_keys(out_specs, skeleton)
        _check_replication(f, m, manual, closed, flat_in, flat_out, keys)
    params = _bind(
        closed,
        {"mesh": recorded, "check_vma": check_vma, "newly_manual_axes": manual},
        tuple(flat_in),
        tuple(flat_out),
    )
    return params, out_tree


def shard_map(
    f: Callable | None = None,
    /,
    *,
    out_specs,
    in_specs=Infer,
    mesh=None,
    axis_names=frozenset(),
    check_vma: bool = True,
):
    """``f`` (written for one device's block of each input) run on every device of
    ``mesh`` (default: the one of ``set_mesh``), inputs split by ``in_specs`` and
    results assembled by ``out_specs`` (pytree prefixes of ``PartitionSpec`` s)."""
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                   axis_names=axis_names, check_vma=check_vma)  # fmt: skip
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, got {f!r}")

    traced: dict[tuple, tuple] = {}  # the body traced per signature, outside transformations

    @functools.wraps(f)
    def mapped(*args):
        m = current_mesh() if mesh is None else mesh
        if mesh is None and m.empty and get_abstract_mesh().manual_axes:
            m = get_abstract_mesh()  # inside another shard_map's body: over its mesh
        if m is None or m.empty:
            raise ValueError(
                "The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter "
                "into a mesh context"
            )
        if mesh is not None:
            check_context_mesh(m)
        if not isinstance(axis_names, (frozenset, set)):
            raise TypeError(
                "`axis_names` argument of shard_map should be of type `frozenset` or "
                f"`set`. Got type: {type(axis_names)}"
            )
        free = frozenset(m.axis_names) - frozenset(m.manual_axes)
        manual = frozenset(axis_names) or free
        if not manual <= free:
            raise ValueError(
                f"jax.shard_map requires axis_names={manual} to be a subset of "
                f"mesh.axis_names={free}"
            )
        leaves, in_tree = tree_util.tree_flatten(args)
        explicit = all(m._name_to_type[a] == AxisType.Explicit for a in manual)
        if in_specs is Infer or in_specs is None:
            if not explicit:
                kinds = ", ".join(str(m._name_to_type[a]) for a in m.axis_names)
                raise TypeError(
                    "shard_map in_specs argument must be a pytree of "
                    "`jax.sharding.PartitionSpec` instances, but it was `None` when "
                    f"axis_names={manual} are of type {kinds}"
                )
            flat_in = [_spec_of(x, m) for x in leaves]
            in_keys = [()] * len(leaves)
        else:
            specs = tuple(in_specs) if isinstance(in_specs, list) else in_specs
            _check_specs(specs, "in_specs", manual)
            flat_in = _flat_specs(specs, args, "in_specs")
            in_keys = [k.path for k in _spec_keys(specs, args)]
            if explicit and manual == frozenset(m.axis_names):  # as JAX: fully manual
                _check_explicit(flat_in, leaves, m, manual)
        avals = [shaped_abstractify(x) for x in leaves]
        key = (in_tree, tuple(avals), m, tuple(flat_in))
        eager = find_current_trace() is eval_trace and not any(
            isinstance(x, Tracer) for x in leaves
        )
        found = traced.get(key) if eager else None
        if found is None:
            # a mesh taken from set_mesh is recorded abstract, as JAX records it
            recorded = m.abstract_mesh if mesh is None and isinstance(m, Mesh) else m
            found = _trace(f, m, manual, in_tree, avals, flat_in, in_keys, out_specs,
                           check_vma, recorded)  # fmt: skip
            if eager:
                traced[key] = found
        params, out_tree = found
        outs = shard_map_p.bind(*leaves, **params)
        return tree_util.tree_unflatten(out_tree, outs)

    return mapped
