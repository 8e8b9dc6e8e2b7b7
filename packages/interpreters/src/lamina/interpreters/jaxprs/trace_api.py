"""The user-facing tracing API: ``make_jaxpr``, ``eval_shape`` and ``ShapeDtypeStruct``."""

from __future__ import annotations

import functools
import operator

from jaxlib import _jax

from lamina.interpreters.core.monitoring import JAXPR_TRACE_EVENT, compile_step
from lamina.interpreters.core.tracing import shaped_abstractify
from lamina.interpreters.jaxprs.staging import describe_function, trace_to_jaxpr
from lamina.ir import ShapedArray, dtypes, transformation_boundary, tree_util

__all__ = ["ShapeDtypeStruct", "eval_shape", "make_jaxpr"]


class ShapeDtypeStruct:
    """The shape, dtype (and sharding, weak type) of an array, with no data."""

    __slots__ = ("dtype", "shape", "sharding", "weak_type")

    def __init__(self, shape, dtype, sharding=None, weak_type: bool = False):
        self.shape = tuple(shape)
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        self.dtype = dtypes.dtype(dtype)
        self.sharding = sharding
        self.weak_type = bool(weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: functools.reduce(operator.mul, self.shape, 1))

    def update(self, **changes) -> ShapeDtypeStruct:
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return ShapeDtypeStruct(**fields)

    def __repr__(self):
        sharding = f", sharding={self.sharding}" if self.sharding is not None else ""
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sharding}{weak})"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and (
            self.shape,
            self.dtype,
            self.sharding,
            self.weak_type,
        ) == (other.shape, other.dtype, other.sharding, other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.sharding, self.weak_type))


def _shape_dtype_struct(aval: ShapedArray) -> ShapeDtypeStruct:
    return ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type)


def _abstractify_arg(x, path) -> ShapedArray:
    try:
        return shaped_abstractify(x)
    except TypeError:
        raise TypeError(
            f"Argument{' ' + tree_util.keystr(path) if path else ''} of type {type(x)} "
            "is not a valid array: pass arrays, scalars or ShapeDtypeStructs, or mark "
            "the argument static (static_argnums)."
        ) from None


def _fun_name(fun) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def _trace_flat(fun, debug_info, args, kwargs, name):
    """Traces ``fun(*args, **kwargs)`` with every array leaf abstract (a trace event
    named ``name`` goes to the monitoring listeners)."""
    leaves_with_paths, in_tree = tree_util.tree_flatten_with_path((args, kwargs))
    in_avals = [_abstractify_arg(x, path) for path, x in leaves_with_paths]
    out_tree = None

    def flat_fun(*flat_args):
        nonlocal out_tree
        args_, kwargs_ = tree_util.tree_unflatten(in_tree, flat_args)
        out = fun(*args_, **kwargs_)
        flat_out, out_tree = tree_util.tree_flatten(out)
        return flat_out

    with compile_step(JAXPR_TRACE_EVENT, name):
        closed_jaxpr, _ = trace_to_jaxpr(flat_fun, in_avals, debug_info)
    return closed_jaxpr, out_tree


def _split_static(args, static_argnums):
    static = {operator.index(i) % len(args) if len(args) else i for i in static_argnums}
    for i in static:
        if not 0 <= i < len(args):
            raise ValueError(
                f"static_argnums {tuple(static_argnums)} out of range for {len(args)} "
                "positional arguments"
            )
    dynamic = [a for i, a in enumerate(args) if i not in static]

    def merge(dynamic_args):
        it = iter(dynamic_args)
        return [args[i] if i in static else next(it) for i in range(len(args))]

    return dynamic, merge


@transformation_boundary
def make_jaxpr(
    fun,
    static_argnums=(),
    axis_env=None,
    return_shape: bool = False,
    abstracted_axes=None,
):
    """A function that traces ``fun`` on the given arguments' shapes and dtypes and
    returns the ``ClosedJaxpr`` (and, with ``return_shape``, the output
    ``ShapeDtypeStruct`` tree). Arguments at ``static_argnums`` are passed as is."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if axis_env:
        raise NotImplementedError("make_jaxpr: axis_env is not supported yet")
    if abstracted_axes is not None:
        raise NotImplementedError("make_jaxpr: abstracted_axes is not supported yet")
    debug_info = describe_function(fun)

    @functools.wraps(fun)
    def make_jaxpr_f(*args, **kwargs):
        dynamic, merge = _split_static(args, static_argnums)
        closed_jaxpr, out_tree = _trace_flat(
            lambda *dyn, **kw: fun(*merge(dyn), **kw),
            debug_info,
            tuple(dynamic),
            kwargs,
            _fun_name(fun),
        )
        if not return_shape:
            return closed_jaxpr
        shapes = [_shape_dtype_struct(a) for a in closed_jaxpr.out_avals]
        return closed_jaxpr, tree_util.tree_unflatten(out_tree, shapes)

    make_jaxpr_f.__name__ = f"make_jaxpr({getattr(fun, '__name__', 'fun')})"
    return make_jaxpr_f


@transformation_boundary
def eval_shape(fun, *args, **kwargs):
    """The ``ShapeDtypeStruct`` tree ``fun(*args, **kwargs)`` would return, computed by
    tracing alone (nothing runs). A jitted ``fun`` is traced as its own call (so its
    ``compiler_options`` are no error), as JAX does."""
    if type(fun) is _jax.PjitFunction:
        return fun.trace(*args, **kwargs).out_info
    closed_jaxpr, out_tree = _trace_flat(fun, describe_function(fun), args, kwargs, _fun_name(fun))
    shapes = [_shape_dtype_struct(a) for a in closed_jaxpr.out_avals]
    return tree_util.tree_unflatten(out_tree, shapes)
