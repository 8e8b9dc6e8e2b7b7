"""Vectorization: ``vmap``, ``BatchTrace`` and the helpers batching rules share.

A :class:`BatchTracer` holds a value with one extra axis, the batch axis, at position
``batch_dim`` (or no batch axis: ``batch_dim`` is :data:`not_mapped`). Binding a
primitive on batch tracers looks up the primitive's batching rule in
``lamina.ir.batching_rules`` and runs it in the *parent* trace (the trace
that was current when the ``BatchTrace`` was made), on the tracers' values:

    rule(axis_data, vals, dims, **params) -> (out, out_dim)   # or lists of them

``vals`` are the values with their batch axes, ``dims`` their batch dims (ints or
:data:`not_mapped`). Rules move a batch axis only when they must: an elementwise
primitive whose batched operands share the batch dim binds once, as it is.

The interpreters layer defines no array operations of its own, so moving and
broadcasting axes go through :data:`shape_ops`, which ``lamina.lax`` fills with its
``transpose`` and ``broadcast_in_dim``.

``axis_name`` frames are pushed on an axis environment (:func:`axis_frame`,
:func:`axis_env`) for collectives to read.

Types registered with :func:`register_vmappable` are mapped by their own handlers:
``vmap`` treats their values as leaves, gives each input to its ``to_elt`` handler
(with the axis spec from ``in_axes``, which may be an instance of the type's spec type)
and each output to its ``from_elt`` handler (with the spec from ``out_axes``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import operator
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from lamina.interpreters.core.leak_check import check_for_leaks
from lamina.interpreters.core.naming import transform_name_stack
from lamina.interpreters.core.tracing import (
    Trace,
    Tracer,
    find_current_trace,
    leaked_tracer_error,
    set_current_trace,
    shaped_abstractify,
)
from lamina.interpreters.jaxprs.calls import call_jaxpr, eval_jaxpr, jit_p
from lamina.interpreters.jaxprs.jaxpr_cache import cache_on_jaxpr
from lamina.interpreters.jaxprs.staging import trace_to_jaxpr
from lamina.ir import (
    AbstractRef,
    MissingRuleError,
    batching_rules,
    collective_rules,
    dtypes,
    prefix_errors,
    spec_of,
    transformation_boundary,
    tree_util,
)

__all__ = [
    "AxisData",
    "BatchTrace",
    "BatchTracer",
    "axis_env",
    "axis_frame",
    "batch_jaxpr",
    "bdim_at_front",
    "broadcast",
    "broadcast_batched",
    "defbroadcasting",
    "defreducer",
    "defvectorized",
    "elementwise_rule",
    "is_vmappable",
    "make_iota",
    "matchaxis",
    "moveaxis",
    "not_mapped",
    "register_vmappable",
    "shape_of",
    "shape_ops",
    "vectorized_rule",
    "vmap",
]

not_mapped = None  # the batch dim of a value with no batch axis

# "transpose": (x, permutation) -> x; "broadcast_in_dim": (x, shape, dims) -> x;
# "iota": (dtype, size) -> x.
shape_ops: dict[str, Callable[..., Any]] = {}


def _shape_op(name: str):
    op = shape_ops.get(name)
    if op is None:
        raise RuntimeError(
            f"vmap needs the array operation '{name}', which lamina.lax provides; "
            "import lamina.lax (or lamina) first"
        )
    return op


class AxisData(NamedTuple):
    """The axis being mapped: its name (or None), size and ``spmd_axis_name``."""

    name: Any
    size: int
    spmd_name: Any = None


# ---------------------------------------------------------------- axis environment

_axis_env: contextvars.ContextVar[tuple[AxisData, ...]] = contextvars.ContextVar(
    "lamina_axis_env", default=()
)


def axis_env() -> tuple[AxisData, ...]:
    """The named axes in scope, outermost first."""
    return _axis_env.get()


def axis_frame(name) -> AxisData:
    """The innermost axis named ``name``; ``NameError`` if none is in scope."""
    for frame in reversed(_axis_env.get()):
        if frame.name == name:
            return frame
    raise NameError(
        f"Found an unbound axis name: {name}. To fix this, please call the collective "
        "under a `vmap` with that `axis_name` (or under `jax.shard_map`)."
    )


@contextlib.contextmanager
def _extend_axis_env(axis_data: AxisData):
    if axis_data.name is None:
        yield
        return
    token = _axis_env.set((*_axis_env.get(), axis_data))
    try:
        yield
    finally:
        _axis_env.reset(token)


# ---------------------------------------------------------------- trace and tracer


def _aval_of(x):
    return shaped_abstractify(x)


def with_shape(aval, shape):
    """``aval`` with ``shape`` (a reference's type: that of the array it refers to)."""
    if type(aval) is AbstractRef:
        return aval.update(inner_aval=aval.inner_aval.update(shape=shape))
    return aval.update(shape=shape)


class BatchTracer(Tracer):
    """A value of a :class:`BatchTrace`: ``val`` with its batch axis at ``batch_dim``."""

    __slots__ = ("batch_dim", "val")

    def __init__(self, trace: BatchTrace, val, batch_dim):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim

    @property
    def aval(self):
        aval = _aval_of(self.val)
        if self.batch_dim is not_mapped:
            return aval
        d = self.batch_dim
        out = with_shape(aval, aval.shape[:d] + aval.shape[d + 1 :])
        s = getattr(aval, "type_sharding", None)
        if s is None:
            return out
        spec = spec_of(aval)  # over explicit mesh axes the other dimensions keep their splits
        return out.update(sharding=s.update(spec=type(s.spec)(*spec[:d], *spec[d + 1 :])))

    def __repr__(self):
        return f"BatchTracer({self.aval}, batch_dim={self.batch_dim})"


class BatchTrace(Trace):
    """Runs primitives on batched values: each through its batching rule, bound in
    ``parent`` (the trace current when this one was made)."""

    def __init__(self, parent: Trace, axis_data: AxisData):
        super().__init__()
        self.parent = parent
        self.axis_data = axis_data

    def to_batch_info(self, x):
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        if isinstance(x, Tracer) and not x._trace.is_valid():
            raise leaked_tracer_error(x)
        return x, not_mapped

    def process_primitive(self, primitive, args, params):
        vals, dims = zip(*map(self.to_batch_info, args), strict=True) if args else ((), ())
        collective = collective_rules.get(primitive)
        if collective is not None and self.axis_data.name in collective[0](params):
            with set_current_trace(self.parent):
                out, out_dim = collective[1](self.axis_data, list(vals), list(dims), **params)
            if primitive.multiple_results:
                return [self._wrap(v, d) for v, d in zip(out, out_dim, strict=True)]
            return self._wrap(out, out_dim)
        with set_current_trace(self.parent):
            if all(d is not_mapped for d in dims) and not primitive.ref_allocating:
                return primitive.bind(*vals, **params)
            rule = batching_rules.get(primitive)
            if rule is None:
                raise MissingRuleError(
                    f"Batching rule for '{primitive.name}' not implemented: "
                    f"primitive '{primitive.name}' cannot be used under vmap"
                )
            out, out_dim = rule(self.axis_data, list(vals), list(dims), **params)
        if primitive.multiple_results:
            return [self._wrap(v, d) for v, d in zip(out, out_dim, strict=True)]
        return self._wrap(out, out_dim)

    def _wrap(self, val, dim):
        return val if dim is not_mapped else BatchTracer(self, val, dim)

    def __repr__(self):
        return f"BatchTrace(axis_name={self.axis_data.name}, size={self.axis_data.size})"


def batch_flat(fun, axis_data: AxisData, vals, dims):
    """Runs ``fun`` (flat values in, a sequence out) on ``vals`` batched at ``dims``, in
    a new :class:`BatchTrace` over the current trace. Returns ``(outs, out_dims)``."""
    parent = find_current_trace()
    trace = BatchTrace(parent, axis_data)
    try:
        result = _batch_in(trace, fun, axis_data, vals, dims)
    finally:
        trace.invalidate()
    check_for_leaks(trace)
    return result


def _batch_in(trace, fun, axis_data, vals, dims):
    args = [trace._wrap(v, d) for v, d in zip(vals, dims, strict=True)]
    with set_current_trace(trace), _extend_axis_env(axis_data), transform_name_stack("vmap"):
        outs = list(fun(*args))
    pairs = [trace.to_batch_info(x) for x in outs]
    return [v for v, _ in pairs], [d for _, d in pairs]


# ---------------------------------------------------------------- helpers for rules


def shape_of(x) -> tuple[int, ...]:
    """The shape of an operand: an array, a tracer, or a Python or NumPy value."""
    return tuple(_aval_of(x).shape)


def _ndim(x) -> int:
    return len(_aval_of(x).shape)


def _canonical_axis(axis, ndim) -> int:
    axis = operator.index(axis)
    return axis + ndim if axis < 0 else axis


def moveaxis(x, src: int, dst: int):
    """``x`` with axis ``src`` moved to position ``dst`` (negative counts from the
    end); no operation when they agree."""
    ndim = _ndim(x)
    src, dst = _canonical_axis(src, ndim), _canonical_axis(dst, ndim)
    if src == dst:
        return x
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    return _shape_op("transpose")(x, tuple(perm))


def broadcast(x, size: int, axis: int, mesh_axis=None):
    """``x`` with a new axis of ``size`` inserted at position ``axis`` (``mesh_axis`` is
    JAX's, for sharded batching; lamina has no meshes yet)."""
    del mesh_axis
    aval = _aval_of(x)
    shape = list(aval.shape)
    dims = tuple(i if i < axis else i + 1 for i in range(len(shape)))
    shape.insert(axis, size)
    if aval.dtype == dtypes.float0:  # its one value, which no device holds
        return np.zeros(shape, dtypes.float0)
    return _shape_op("broadcast_in_dim")(x, tuple(shape), dims)


def bdim_at_front(x, bdim, size: int, mesh_axis=None):
    """``x`` with its batch axis first; an unbatched ``x`` is broadcast to ``size``."""
    del mesh_axis
    if bdim is not_mapped:
        return broadcast(x, size, 0)
    return moveaxis(x, bdim, 0)


def matchaxis(axis_data: AxisData, src, dst, x):
    """``x`` batched at ``src`` moved to ``dst`` (broadcast if ``src`` is not_mapped;
    an error if ``dst`` is not_mapped and ``src`` is not)."""
    if src == dst:
        return x
    if src is not_mapped:
        return broadcast(x, axis_data.size, dst)
    if dst is not_mapped:
        raise ValueError(f"cannot unbatch a value batched on axis {src}")
    return moveaxis(x, src, dst)


def broadcast_batched(axis_data: AxisData, vals, dims, *, unmapped_size: int | None = None):
    """Operands of an elementwise primitive made compatible: returns
    ``(vals, out_dim)``. When every batched operand has the same batch dim and rank and
    the others are scalars, nothing moves. Otherwise batch axes go to the front,
    unbatched non-scalars get a leading axis of ``unmapped_size`` (1 by default, for
    primitives that stretch size-1 axes) and batched operands of lower rank get
    trailing axes of size 1."""
    batched = [(v, d) for v, d in zip(vals, dims, strict=True) if d is not not_mapped]
    first_dim, first_ndim = batched[0][1], _ndim(batched[0][0])
    if all(
        (d == first_dim and _ndim(v) == first_ndim) if d is not not_mapped else _ndim(v) == 0
        for v, d in zip(vals, dims, strict=True)
    ):
        return list(vals), first_dim
    size = 1 if unmapped_size is None else unmapped_size
    moved = [
        v if (d is not_mapped and _ndim(v) == 0) else bdim_at_front(v, d, size)
        for v, d in zip(vals, dims, strict=True)
    ]
    rank = max(_ndim(v) for v in moved)
    out = []
    for v, d in zip(moved, dims, strict=True):
        n = _ndim(v)
        if d is not not_mapped and n < rank:
            shape = tuple(_aval_of(v).shape) + (1,) * (rank - n)
            v = _shape_op("broadcast_in_dim")(v, shape, tuple(range(n)))
        out.append(v)
    return out, 0


def elementwise_rule(primitive, *, unmapped_size: bool = False):
    """The batching rule of an n-ary elementwise primitive with lax's broadcasting
    (equal ranks or scalars; size-1 axes stretch). With ``unmapped_size``, unbatched
    operands are broadcast to the full batch size (for primitives that do not stretch)."""

    def rule(axis_data, vals, dims, **params):
        size = axis_data.size if unmapped_size else None
        vals, out_dim = broadcast_batched(axis_data, vals, dims, unmapped_size=size)
        out = primitive.bind(*vals, **params)
        if primitive.multiple_results:
            return out, [out_dim] * len(out)
        return out, out_dim

    return rule


def vectorized_rule(primitive):
    """The batching rule of a unary primitive that acts on each element alone."""

    def rule(axis_data, vals, dims, **params):
        return primitive.bind(*vals, **params), dims[0]

    return rule


def defvectorized(primitive):
    batching_rules[primitive] = vectorized_rule(primitive)


def defbroadcasting(primitive):
    batching_rules[primitive] = elementwise_rule(primitive)


def defreducer(primitive, axes_param: str = "axes"):
    """The rule of a reduction over the axes in param ``axes_param``: the axes shift
    past the batch dim, which stays where it is."""

    def rule(axis_data, vals, dims, **params):
        (x,), (d,) = vals, dims
        axes = tuple(a + (a >= d) for a in params[axes_param])
        out_dim = d - sum(a < d for a in axes)
        return primitive.bind(x, **{**params, axes_param: axes}), out_dim

    batching_rules[primitive] = rule
    return rule


# ---------------------------------------------------------------- custom vmappable types

# By type: to_elt(cont, get_idx, x, spec) -> element seen by the mapped function, with
# cont(value, spec) mapping a part of x; from_elt(cont, axis_size, elt, spec) -> value,
# with cont(axis_size, part, spec); make_iota(axis_size) -> the element indices.
vmappables: dict[type, tuple[type, type]] = {}
spec_types: set[type] = set()
to_elt_handlers: dict[type, Callable] = {}
from_elt_handlers: dict[type, Callable] = {}
make_iota_handlers: dict[type, Callable] = {}


def register_vmappable(data_type, spec_type, axis_size_type, to_elt, from_elt, make_iota):
    """Makes ``vmap`` map values of ``data_type`` with the handlers ``to_elt`` and
    ``from_elt``; instances of ``spec_type`` become valid ``in_axes`` / ``out_axes``
    leaves, and ``make_iota`` (if given) numbers the elements of an axis whose size is
    of ``axis_size_type``."""
    vmappables[data_type] = (spec_type, axis_size_type)
    spec_types.add(spec_type)
    to_elt_handlers[data_type] = to_elt
    from_elt_handlers[data_type] = from_elt
    if make_iota is not None:
        make_iota_handlers[axis_size_type] = make_iota


def is_vmappable(x) -> bool:
    return type(x) in vmappables


def _vmappable_leaves():
    """``is_leaf`` for flattening vmap's arguments and results (None, the fast path,
    while no type is registered)."""
    return is_vmappable if vmappables else None


def make_iota(axis_size):
    """The indices ``0 .. axis_size - 1`` of the mapped axis (int32)."""
    handler = make_iota_handlers.get(type(axis_size))
    if handler is not None:
        return handler(axis_size)
    return _shape_op("iota")("int32", int(axis_size))


def to_elt(trace: BatchTrace, get_idx, x, spec):
    """``x`` as the mapped function sees it: a registered type through its handler,
    else an array batched at ``spec`` (None: not mapped)."""
    handler = to_elt_handlers.get(type(x))
    if handler is not None:
        return handler(functools.partial(to_elt, trace, get_idx), get_idx, x, spec)
    if spec is None:
        return x
    if isinstance(spec, bool) or not isinstance(spec, int):
        raise TypeError(
            f"vmap got the axis spec {spec!r} for a value of type {type(x).__name__}, "
            "which is not a registered vmappable type"
        )
    return BatchTracer(trace, x, _canonical_axis(spec, _ndim(x)))


def from_elt(trace: BatchTrace, axis_size, index: int, x, spec):
    """The mapped function's output ``x`` (the ``index``-th) with its batch axis at
    ``spec``: a registered type through its handler, else an array moved there."""
    handler = from_elt_handlers.get(type(x))
    if handler is not None:

        def cont(size, elt, axis):
            return from_elt(trace, size, index, elt, axis)

        return handler(cont, axis_size, x, spec)
    val, src = trace.to_batch_info(x)
    _check_output(val)
    if spec is None:
        if src is not not_mapped:
            raise ValueError(
                f"at vmap out_axes[{index}], got axis spec None but output was batched "
                f"on axis {src}"
            )
        return val
    if isinstance(spec, bool) or not isinstance(spec, int):
        raise TypeError(
            f"vmap got the out_axes spec {spec!r} for an output of type "
            f"{type(val).__name__}, which is not a registered vmappable type"
        )
    ndim = _ndim(val) + (src is not_mapped)
    if not -ndim <= spec < ndim:
        raise ValueError(f"axis {spec} is out of bounds for array of dimension {ndim}")
    return matchaxis(trace.axis_data, src, _canonical_axis(spec, ndim), val)


def _check_output(val) -> None:
    try:
        _aval_of(val)
    except TypeError:
        raise TypeError(
            f"Output from batched function {val!r} with type {type(val)} is not a valid JAX type"
        ) from None


def _batch_vmappable(fun, axis_data: AxisData, vals, specs, out_specs):
    """Runs ``fun`` (flat in, flat out) on ``vals`` mapped by ``specs`` (each through
    :func:`to_elt`) in a new :class:`BatchTrace`; returns its outputs placed by
    ``out_specs()`` (called once ``fun`` has run) through :func:`from_elt`."""
    trace = BatchTrace(find_current_trace(), axis_data)
    try:
        results = _run_mapped(trace, fun, axis_data, vals, specs, out_specs)
    finally:
        trace.invalidate()
    check_for_leaks(trace)
    return results


def _run_mapped(trace, fun, axis_data, vals, specs, out_specs):
    """The body of :func:`_batch_vmappable`, in its own frame so that none of its
    tracers outlives it (the leak check runs after it returns)."""
    iota = []

    def get_idx():
        if not iota:
            iota.append(BatchTracer(trace, make_iota(axis_data.size), 0))
        return iota[0]

    args = [to_elt(trace, get_idx, v, d) for v, d in zip(vals, specs, strict=True)]
    with set_current_trace(trace), _extend_axis_env(axis_data), transform_name_stack("vmap"):
        outs = list(fun(*args))
        for out in outs:
            if not is_vmappable(out):
                _check_output(trace.to_batch_info(out)[0])
        return [
            from_elt(trace, axis_data.size, i, x, spec)
            for i, (x, spec) in enumerate(zip(outs, out_specs(), strict=True))
        ]


# ---------------------------------------------------------------- jit


@cache_on_jaxpr(context=axis_env)  # outer named axes: their sizes may be read
def batch_jaxpr(closed_jaxpr, axis_data: AxisData, in_dims, typed_avals=None):
    """``closed_jaxpr`` batched: a new ClosedJaxpr taking inputs batched at ``in_dims``
    (their avals grow a batch axis); returns it with the outputs' batch dims.
    ``typed_avals``: the batched inputs' own types, where they carry shardings."""
    in_avals = []
    for i, (aval, d) in enumerate(zip(closed_jaxpr.in_avals, in_dims, strict=True)):
        if typed_avals is not None and d is not not_mapped:
            aval = typed_avals[i]
        elif d is not not_mapped:
            shape = list(aval.shape)
            shape.insert(d, axis_data.size)
            aval = with_shape(aval, tuple(shape))
        in_avals.append(aval)
    out_dims: list = []

    def batched(*args):
        outs, dims = batch_flat(
            lambda *xs: eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *xs),
            axis_data,
            args,
            in_dims,
        )
        out_dims[:] = dims
        return outs

    new_jaxpr, _ = trace_to_jaxpr(batched, in_avals, "batched jaxpr")
    return new_jaxpr, out_dims


def _jit_batching_rule(axis_data, vals, dims, *, jaxpr, name, **params):
    avals = [shaped_abstractify(v) for v in vals]
    if any(getattr(a, "type_sharding", None) is not None for a in avals):
        new_jaxpr, out_dims = batch_jaxpr(jaxpr, axis_data, dims, typed_avals=tuple(avals))
    else:
        new_jaxpr, out_dims = batch_jaxpr(jaxpr, axis_data, dims)
    keep = {k: params[k] for k in ("keep_unused", "inline", "compiler_options_kvs", "ctx_mesh")}
    keep["donated_invars"] = tuple(params["donated_invars"])
    outs = call_jaxpr(new_jaxpr, *vals, name=name, **keep)
    return outs, out_dims


batching_rules[jit_p] = _jit_batching_rule


# ---------------------------------------------------------------- vmap


class _Leaf:
    """Stands for an argument leaf in prefix errors."""


def _in_axes_error(in_axes, detail):
    return (
        "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
        f"positional arguments passed to the function, but got {detail}"
    )


def _flat_axes(axes, tree, name: str) -> list:
    """The axis spec of each leaf of ``tree``, from the prefix tree ``axes``."""
    is_leaf = lambda x: x is None or _is_spec(x)  # noqa: E731
    try:
        return tree_util.broadcast_prefix(axes, tree, is_leaf=is_leaf)
    except ValueError:
        leafy = tree_util.tree_map(lambda _: _Leaf(), tree)
        makers = prefix_errors(axes, leafy, is_leaf=is_leaf)
        details = "\n".join(f"  {m(name)}" for m in makers)
        raise ValueError(
            f"{name} specification must be a tree prefix of the corresponding value; \n"
            f"  Mismatch details ({len(makers)} found):\n{details}"
        ) from None


def _arg_names(fun, args) -> list[str]:
    import inspect

    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(len(args)):
        p = params[i] if i < len(params) else None
        if p is None or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            names.append(f"args[{i}]")
        else:
            names.append(p.name)
    return names


def _size_error(fun, args, kwargs, axes_flat, leaves, axis_size):
    names = _arg_names(fun, args)
    paths = [
        names[path[0].idx] + tree_util.keystr(path[1:])
        for path, _ in tree_util.tree_flatten_with_path(tuple(args), is_leaf=is_vmappable)[0]
    ]
    paths += [
        f"{path[0].key}" + tree_util.keystr(path[1:])
        for path, _ in tree_util.tree_flatten_with_path(kwargs, is_leaf=is_vmappable)[0]
    ]
    entries = []
    for path, x, ax in zip(paths, leaves, axes_flat, strict=True):
        if ax is None or is_vmappable(x):
            continue
        aval = _aval_of(x)
        entries.append((aval.shape[ax], f"axis {ax} of argument {path} of type {aval.str_short()}"))
    lines = []
    if axis_size is not None:
        lines.append(f"the `axis_size` argument was {axis_size}")
    counts = Counter(size for size, _ in entries)
    seen = set()
    for size, where in entries:
        if size in seen:
            continue
        seen.add(size)
        if counts[size] == 1:
            lines.append(f"one axis had size {size}: {where}")
        else:
            most = counts[size] == max(counts.values())
            lines.append(
                f"{'most' if most else 'some'} axes ({counts[size]} of them) had size "
                f"{size}, e.g. {where}"
            )
    return ValueError(
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        + ";\n".join(f"  * {line}" for line in lines)
    )


def _is_spec(x) -> bool:
    return type(x) in spec_types


def _check_axis_spec(axes, what: str):
    for leaf in tree_util.tree_leaves(axes, is_leaf=lambda x: x is None or _is_spec(x)):
        if leaf is None or _is_spec(leaf):
            continue
        if isinstance(leaf, bool) or not isinstance(leaf, int):
            raise TypeError(
                f"vmap {what} must be an int, None, or (nested) container with those "
                f"types as leaves, but got {axes}."
            )


@transformation_boundary
def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """``fun`` mapped over an axis of its arguments, as one vectorized computation.

    ``in_axes`` (an int, None, or a tuple with an entry per positional argument, each
    a pytree prefix of the argument) says which axis of each argument is mapped (None:
    not mapped); keyword arguments are mapped over axis 0. ``out_axes`` places the
    mapped axis in the outputs. ``axis_name`` names the axis for collectives;
    ``axis_size`` is needed when no argument is mapped.
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (
        in_axes is None or isinstance(in_axes, (int, tuple)) or _is_spec(in_axes)
    ) or isinstance(in_axes, bool):
        raise TypeError(_in_axes_error(in_axes, f"{in_axes}."))
    _check_axis_spec(in_axes, "in_axes")
    _check_axis_spec(out_axes, "out_axes")
    if axis_size is not None:
        axis_size = operator.index(axis_size)

    def vmap_f(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                _in_axes_error(in_axes, f"len(in_axes)={len(in_axes)}, len(args)={len(args)}")
            )
        leaves, in_tree = tree_util.tree_flatten((args, kwargs), is_leaf=_vmappable_leaves())
        if not leaves and axis_size is None:
            raise ValueError(
                "vmap wrapped function must be passed at least one argument containing an "
                f"array or axis_size must be specified, got empty *args={args} and "
                f"**kwargs={kwargs}"
            )
        skeleton = tree_util.tree_unflatten(in_tree, [_Leaf() for _ in leaves])
        axes_flat = _flat_axes((in_axes, 0), skeleton, "vmap in_axes")
        dims, sizes = [], set()
        for x, ax in zip(leaves, axes_flat, strict=True):
            if is_vmappable(x):  # its handler reads the spec; sized by the others
                dims.append(ax)
                continue
            if ax is None:
                dims.append(not_mapped)
                continue
            if _is_spec(ax):
                raise TypeError(
                    f"vmap got the in_axes spec {ax!r} for an argument of type "
                    f"{type(x).__name__}, which is not a registered vmappable type"
                )
            shape = _aval_of(x).shape
            if not -len(shape) <= ax < len(shape):
                raise ValueError(
                    f"vmap was requested to map its argument along axis {ax}, which implies "
                    f"that its rank should be at least {abs(ax) + (ax >= 0)}, but is only "
                    f"{len(shape)} (its shape is {tuple(shape)})"
                )
            dims.append(_canonical_axis(ax, len(shape)))
            sizes.add(shape[dims[-1]])
        if axis_size is not None:
            sizes.add(axis_size)
        if not sizes:
            raise ValueError(
                "vmap must have at least one non-None value in in_axes or axis_size must "
                "be specified"
            )
        if len(sizes) > 1:
            raise _size_error(fun, args, kwargs, dims, leaves, axis_size)
        axis_data = AxisData(axis_name, sizes.pop(), spmd_axis_name)
        out_tree_box = []

        def flat_fun(*flat):
            a, kw = tree_util.tree_unflatten(in_tree, flat)
            out = fun(*a, **kw)
            out_leaves, out_tree = tree_util.tree_flatten(out, is_leaf=_vmappable_leaves())
            # The structure only: holding the tracers would keep them past the trace.
            skeleton = tree_util.tree_unflatten(out_tree, [_Leaf() for _ in out_leaves])
            out_tree_box.append((skeleton, out_tree))
            return out_leaves

        def out_specs():
            return _flat_axes(out_axes, out_tree_box[0][0], "vmap out_axes")

        results = _batch_vmappable(flat_fun, axis_data, leaves, dims, out_specs)
        return tree_util.tree_unflatten(out_tree_box[0][1], results)

    # A callable object may hold anything under those names (an equinox Module does).
    with contextlib.suppress(AttributeError, TypeError):
        functools.update_wrapper(vmap_f, fun)
    return vmap_f
