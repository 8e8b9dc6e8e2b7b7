"""Staging Python functions out to Jaxprs: ``DynamicJaxprTrace`` and ``trace_to_jaxpr``.

Each tracer of a :class:`DynamicJaxprTrace` stands for an atom of the Jaxpr being
built: a ``Var`` (an input, a constant or an equation's output) or a ``Literal``.
Binding a primitive appends one equation whose output types come from the primitive's
abstract evaluation rule. A rule returns the output aval (a list of them for
``multiple_results`` primitives); a primitive with ``effectful = True`` returns
``(out, effects)`` instead, and the effects go on the equation and the Jaxpr.

Values that are not this trace's tracers become constants when first used:
scalars (Python numbers, NumPy scalars, 0-d arrays) are written inline as Literals —
a Python number keeps its Python value and a weak type, so ``x * 2.0`` prints
``mul a 2.0:f32[]`` — and anything else (arrays, tracers of enclosing traces) becomes
a constvar whose value goes in the ``ClosedJaxpr``'s consts. Constants that are never
used never appear.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters.core.config import config
from lamina.interpreters.core.errors import user_frame
from lamina.interpreters.core.leak_check import check_for_leaks
from lamina.interpreters.core.tracing import (
    Trace,
    Tracer,
    leaked_tracer_error,
    set_current_trace,
    shaped_abstractify,
)
from lamina.ir import (
    ClosedJaxpr,
    Jaxpr,
    Literal,
    SourceInfo,
    Var,
    abstract_eval_rules,
    check_jaxpr,
    dtypes,
    new_jaxpr_eqn,
    no_effects,
)

__all__ = [
    "DynamicJaxprTrace",
    "DynamicJaxprTracer",
    "trace_to_jaxpr",
]


class DynamicJaxprTracer(Tracer):
    __slots__ = ("_atom", "_aval")

    def __init__(self, trace, aval, atom, line: str | None = None):
        self._trace = trace
        self._aval = aval
        self._atom = atom  # a Var or a Literal of the Jaxpr being built
        self._line = line or user_frame(2)  # where the user made it, for leak errors

    aval = property(lambda self: self._aval)

    def __repr__(self):
        return f"JitTracer({self._aval})"


class DynamicJaxprTrace(Trace):
    """Builds a Jaxpr from the primitives bound while it is current."""

    def __init__(self, debug_info: str | None = None):
        super().__init__()
        self.debug_info = debug_info  # "f at file.py:3", for error messages
        self.invars: list[Var] = []
        self.eqns: list = []
        self.effects: set = set()
        self.constvars: list[Var] = []
        self.consts: list = []
        self._const_tracers: dict[int, DynamicJaxprTracer] = {}
        self._keep_alive: list = []  # constants stay alive so their ids stay unique

    def new_arg(self, aval) -> DynamicJaxprTracer:
        var = Var(aval)
        self.invars.append(var)
        return DynamicJaxprTracer(self, aval, var)

    def to_jaxpr_tracer(self, x) -> DynamicJaxprTracer:
        if isinstance(x, DynamicJaxprTracer) and x._trace is self:
            return x
        tracer = self._const_tracers.get(id(x))
        if tracer is not None:
            return tracer
        if isinstance(x, Tracer) and not x._trace.is_valid():
            raise leaked_tracer_error(x)
        aval = shaped_abstractify(x)
        if not aval.shape and not isinstance(x, Tracer) and isinstance(aval.dtype, np.dtype):
            atom = Literal(_literal_value(x, aval), aval)
        else:
            atom = Var(aval)
            self.constvars.append(atom)
            self.consts.append(x)
        tracer = DynamicJaxprTracer(self, aval, atom)
        self._const_tracers[id(x)] = tracer
        self._keep_alive.append(x)
        return tracer

    def process_primitive(self, primitive, args, params):
        tracers = [self.to_jaxpr_tracer(x) for x in args]
        avals = [t._aval for t in tracers]
        out = abstract_eval_rules[primitive](*avals, **params)
        effects = no_effects
        if getattr(primitive, "effectful", False):
            out, effects = out
            self.effects.update(effects)
        out_avals = out if primitive.multiple_results else [out]
        outvars = [Var(aval) for aval in out_avals]
        line = user_frame(2)
        source = SourceInfo(traceback=(line,) if line else ())
        eqn = new_jaxpr_eqn([t._atom for t in tracers], outvars, primitive, params, effects, source)
        self.eqns.append(eqn)
        out_tracers = [DynamicJaxprTracer(self, v.aval, v, line) for v in outvars]
        return out_tracers if primitive.multiple_results else out_tracers[0]

    def to_jaxpr(self, outs) -> ClosedJaxpr:
        """The Jaxpr with outputs ``outs`` (tracers of this trace or constants)."""
        out_atoms = [self.to_jaxpr_tracer(x)._atom for x in outs]
        jaxpr = Jaxpr(self.constvars, self.invars, out_atoms, self.eqns, frozenset(self.effects))
        return ClosedJaxpr(jaxpr, self.consts)

    def __repr__(self):
        return f"DynamicJaxprTrace({self.debug_info or ''})"


def _literal_value(x, aval):
    if dtypes.is_python_scalar(x):
        return x
    return np.asarray(x, dtype=aval.dtype)[()]


def describe_function(fun) -> str:
    """``name at file:line``, as error messages name a traced function."""
    name = getattr(fun, "__name__", type(fun).__name__)
    code = getattr(fun, "__code__", None)
    if code is None:
        return name
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def trace_to_jaxpr(fun, in_avals, debug_info: str | None = None):
    """Traces ``fun(*tracers)`` (flat in, flat out: a sequence of values) for inputs of
    types ``in_avals``; returns the ``ClosedJaxpr`` and ``fun``'s flat outputs as given.
    The trace ends (its tracers become leaked) when this returns. With
    ``jax_enable_checks`` the Jaxpr is type-checked; with ``jax_check_tracer_leaks``,
    tracers kept beyond the trace are reported."""
    trace = DynamicJaxprTrace(debug_info)
    try:
        closed, outs = _stage(trace, fun, in_avals, debug_info)
    finally:
        trace.invalidate()
    if config.jax_check_tracer_leaks:
        check_for_leaks(trace, [*outs, *trace._const_tracers.values()], f"{debug_info} for jit")
    if config.jax_enable_checks:
        check_jaxpr(closed)
    return closed, outs


def _stage(trace, fun, in_avals, debug_info):
    in_tracers = [trace.new_arg(aval) for aval in in_avals]
    with set_current_trace(trace):
        outs = list(fun(*in_tracers))
    for x in outs:
        try:
            shaped_abstractify(x)
        except TypeError:
            raise TypeError(
                f"function {debug_info or 'being traced'} returned a value of type "
                f"{type(x)}, which is not a valid JAX type"
            ) from None
    return trace.to_jaxpr(outs), outs
