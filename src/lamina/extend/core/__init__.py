"""`lamina.extend.core`: the Jaxpr IR and tracing machinery for libraries built on lamina
(`jax.extend.core`).

The classes are lamina's own (``Primitive``, ``Jaxpr``, ``Var``, ... from
``lamina.ir``; ``Token`` from the runtime), so a primitive defined here with
``def_impl`` / ``def_abstract_eval`` (and a lowering rule) works under ``jit``,
``make_jaxpr`` and the other transformations. The functions that ask about the current
trace (:func:`get_opaque_trace_state`, the ``unsafe_*_DO_NOT_USE`` queries) read
lamina's current-trace context.
"""

from __future__ import annotations

import collections.abc
import contextlib
import weakref
from collections.abc import Iterator

import numpy as np

from lamina.extend.core import primitives
from lamina.extend.core.primitives import CallPrimitive
from lamina.extend.core.primitives import UserPrimitive as Primitive
from lamina.extend.linear_util import DebugInfo
from lamina.interpreters import (
    BatchTrace,
    ConcretizationTypeError,
    DynamicJaxprTrace,
    InconclusiveDimensionOperation,
    Token,
    Tracer,
    axis_env,
    eval_jaxpr,
    find_current_trace,
    typeof,
)
from lamina.interpreters import ad as _ad
from lamina.interpreters import set_current_trace as _set_current_trace
from lamina.interpreters import take_current_trace as _take_current_trace
from lamina.ir import (
    AbstractToken,
    ClosedJaxpr,
    DropVar,
    Effect,
    Jaxpr,
    JaxprEqn,
    JaxprTypeError,
    Literal,
    ShapedArray,
    Var,
    check_jaxpr,
    dtypes,
    new_jaxpr_eqn,
    no_effects,
)

__all__ = [
    "AbstractToken",
    "CallPrimitive",
    "ClosedJaxpr",
    "DebugInfo",
    "DropVar",
    "Effect",
    "Effects",
    "InconclusiveDimensionOperation",
    "Jaxpr",
    "JaxprEqn",
    "JaxprTypeError",
    "Literal",
    "Primitive",
    "Token",
    "TraceTag",
    "Var",
    "array_types",
    "call_impl",
    "check_jaxpr",
    "concrete_or_error",
    "find_top_trace",
    "gensym",
    "get_opaque_trace_state",
    "jaxpr_as_fun",
    "jaxprs_in_params",
    "mapped_aval",
    "new_jaxpr_eqn",
    "no_effects",
    "nonempty_axis_env_DO_NOT_USE",
    "primal_dtype_to_tangent_dtype",
    "primitives",
    "set_current_trace",
    "subjaxprs",
    "take_current_trace",
    "unmapped_aval",
    "unsafe_am_i_under_a_jit_DO_NOT_USE",
    "unsafe_am_i_under_a_vmap_DO_NOT_USE",
    "unsafe_get_axis_names_DO_NOT_USE",
    "valid_jaxtype",
]

Effects = collections.abc.Set[Effect]

# The types of values that are arrays as they are: NumPy arrays and the scalar type of
# every dtype lamina supports.
array_types: set[type] = {
    np.ndarray,
    np.longlong,
    *(d.type for d in dtypes.ALL_DTYPES),
}


class TraceTag:
    """Marks the tracers of one transformation. As in JAX, tags all compare equal (a
    function's cached trace never depends on which tag it saw)."""

    def __hash__(self):
        return hash(TraceTag)

    def __eq__(self, other):
        return isinstance(other, TraceTag)


# ---------------------------------------------------------------- Jaxprs


def gensym(suffix: str = ""):
    """A function making fresh variables: ``gensym()(aval)`` is a new ``Var``."""
    return lambda aval: Var(aval, suffix)


def jaxprs_in_params(params) -> Iterator[Jaxpr]:
    """The Jaxprs among an equation's params (also inside tuples of params)."""
    for value in params.values():
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, Jaxpr):
                yield v
            elif isinstance(v, ClosedJaxpr):
                yield v.jaxpr


def subjaxprs(jaxpr: Jaxpr) -> Iterator[Jaxpr]:
    """The Jaxprs in the params of ``jaxpr``'s equations (not searched recursively)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr, *args):
    """Evaluate ``closed_jaxpr`` on ``args`` (a list of outputs); with no ``args``, the
    function doing so."""
    if not args:
        return lambda *args: eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)
    return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)


def call_impl(f, *args, **params):
    """Evaluation of a call primitive: ``f`` (a ``WrappedFun``) called on ``args``."""
    del params
    return f.call_wrapped(*args)


# ---------------------------------------------------------------- abstract values


def mapped_aval(size: int, axis: int | None, aval):
    """The type of one slice of ``aval`` along ``axis`` (of length ``size``)."""
    if isinstance(aval, AbstractToken):
        return aval
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"no mapping handler for {aval} of type {type(aval)}")
    if axis is None:
        return aval
    assert aval.shape[axis] == size, (aval, axis, size)
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1 :])


def unmapped_aval(size: int, axis: int | None, aval, explicit_mesh_axis=None):
    """The type of ``size`` values of type ``aval`` stacked along ``axis``."""
    del explicit_mesh_axis
    if isinstance(aval, AbstractToken):
        return aval
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"no unmapping handler for {aval} of type {type(aval)}")
    if axis is None:
        return aval
    return aval.update(shape=(*aval.shape[:axis], size, *aval.shape[axis:]))


def primal_dtype_to_tangent_dtype(primal_dtype):
    """The dtype of tangents of ``primal_dtype``: itself if inexact, else float0."""
    return _ad.tangent_dtype(primal_dtype)


def valid_jaxtype(x) -> bool:
    """Whether ``x`` can be a value of a lamina computation (an array or scalar)."""
    try:
        aval = typeof(x)
    except TypeError:
        return False
    return getattr(aval, "dtype", None) is not None or isinstance(aval, AbstractToken)


def concrete_or_error(force, val, context: str = ""):
    """``force(val)`` on the concrete value of ``val``; a
    ``ConcretizationTypeError`` mentioning ``context`` if ``val`` is traced and has
    none. ``force=None`` returns the value itself."""
    if force is None:
        force = lambda x: x  # noqa: E731
    if isinstance(val, Tracer):
        concrete = val.to_concrete_value()
        if concrete is None:
            raise ConcretizationTypeError(val, context)
        return force(concrete)
    return force(val)


# ---------------------------------------------------------------- the current trace


@contextlib.contextmanager
def set_current_trace(trace, check_leaks: bool = False):
    """Within the block, primitives bind to ``trace``."""
    del check_leaks
    with _set_current_trace(trace):
        yield trace


def take_current_trace():
    """A context manager yielding the current trace, with none current inside."""
    return _take_current_trace()


def find_top_trace(_):
    """The trace that primitives bind to now."""
    return find_current_trace()


class OpaqueTraceState:
    """An opaque handle on the current trace: equal to another handle exactly when
    both were taken under the same trace."""

    __slots__ = ("_trace_ref",)

    def __init__(self, trace_ref):
        self._trace_ref = trace_ref

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._trace_ref == other._trace_ref

    __hash__ = None  # as JAX's: compared, never hashed


def get_opaque_trace_state(convention=None) -> OpaqueTraceState:
    """A handle on the current trace (see :class:`OpaqueTraceState`): libraries use it
    to tell whether they are still inside the transformation they started in."""
    del convention
    return OpaqueTraceState(weakref.ref(find_current_trace()))


def _trace_stack():
    """The current trace and the traces it hands work to (``parent``), innermost first."""
    trace = find_current_trace()
    while trace is not None:
        yield trace
        trace = getattr(trace, "parent", None)


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:
    """Whether a Jaxpr is being built (under ``jit``, ``make_jaxpr``, ...) now."""
    return any(isinstance(t, DynamicJaxprTrace) for t in _trace_stack())


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:
    """Whether values are being batched by ``vmap`` now."""
    return any(isinstance(t, BatchTrace) for t in _trace_stack())


def unsafe_get_axis_names_DO_NOT_USE() -> list:
    """The names of the named axes in scope (``vmap(..., axis_name=...)``)."""
    return [frame.name for frame in axis_env()]


def nonempty_axis_env_DO_NOT_USE() -> bool:
    """Whether any named axis is in scope."""
    return bool(axis_env())
