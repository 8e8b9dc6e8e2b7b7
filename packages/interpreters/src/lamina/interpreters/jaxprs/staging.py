"""Staging Python functions out to Jaxprs: ``DynamicJaxprTrace`` and ``trace_to_jaxpr``.

Each tracer of a :class:`DynamicJaxprTrace` stands for an atom of the Jaxpr being
built: a ``Var`` (an input, a constant or an equation's output) or a ``Literal``.
Binding a primitive appends one equation whose output types come from the primitive's
abstract evaluation rule. A rule returns the output aval (a list of them for
``multiple_results`` primitives); a primitive with ``effectful = True`` returns
``(out, effects)`` instead, and the effects go on the equation and the Jaxpr. An
equation also has the effects of the Jaxprs among its params (``params_effects``).

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
from lamina.interpreters.core.gc_pause import gc_paused
from lamina.interpreters.core.leak_check import check_for_leaks
from lamina.interpreters.core.naming import current_name_stack, reset_name_stack
from lamina.interpreters.core.tracing import (
    Trace,
    Tracer,
    leaked_tracer_error,
    set_current_trace,
    shaped_abstractify,
)
from lamina.interpreters.jaxprs.dim_as_value import dim_as_value_p
from lamina.ir import (
    AbstractRef,
    ClosedJaxpr,
    Jaxpr,
    Literal,
    RefEffect,
    SourceInfo,
    Var,
    check_jaxpr,
    dtypes,
    is_symbolic_dim,
    new_jaxpr_eqn,
    no_effects,
)

__all__ = [
    "DynamicJaxprTrace",
    "DynamicJaxprTracer",
    "params_effects",
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


def params_effects(params: dict) -> frozenset:
    """The effects of the Jaxprs among ``params`` (alone or in tuples): a primitive
    running a Jaxpr (a call, a loop, a branch) has that Jaxpr's effects, except those on
    references, which name the inner Jaxpr's variables."""
    found = set()
    for value in params.values():
        for v in value if type(value) in (tuple, list) else (value,):
            if isinstance(v, _JAXPRS):
                found.update(e for e in v.effects if not isinstance(e, RefEffect))
    return frozenset(found)


_JAXPRS = (Jaxpr, ClosedJaxpr)


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

    def to_jaxpr_tracer(self, x, line=None) -> DynamicJaxprTracer:
        """``x`` as a tracer of this trace (a constant or literal when it is a value);
        ``line``: the user's frame that uses it, when the caller knows it."""
        if isinstance(x, DynamicJaxprTracer) and x._trace is self:
            return x
        tracer = self._const_tracers.get(id(x))
        if tracer is not None:
            return tracer
        if isinstance(x, Tracer) and not x._trace.is_valid():
            raise leaked_tracer_error(x)
        if is_symbolic_dim(x):  # a dimension size as an operand: computed in the program
            return self.process_primitive(dim_as_value_p, [], {"dim": x})
        aval = shaped_abstractify(x)
        if not aval.shape and _is_literal_value(x) and isinstance(aval.dtype, np.dtype):
            atom = Literal(_literal_value(x, aval), aval)
        else:
            atom = Var(aval)
            self.constvars.append(atom)
            self.consts.append(x)
        tracer = DynamicJaxprTracer(self, aval, atom, line)
        self._const_tracers[id(x)] = tracer
        self._keep_alive.append(x)
        return tracer

    def process_primitive(self, primitive, args, params):
        line = user_frame(2)  # the equation's, and its new constants'
        tracers = [self.to_jaxpr_tracer(x, line) for x in args]
        avals = [t._aval for t in tracers]
        out = primitive.abstract_eval(*avals, **params)
        effects = no_effects
        if getattr(primitive, "effectful", False):
            out, effects = out
            effects = _name_refs(effects, tracers)
        out_avals = out if primitive.multiple_results else [out]
        out_tracers = self.stage_equation(primitive, tracers, out_avals, params, effects, line)
        return out_tracers if primitive.multiple_results else out_tracers[0]

    def stage_equation(
        self, primitive, tracers, out_avals, params, effects=no_effects, line=False
    ) -> list[DynamicJaxprTracer]:
        """Appends the equation ``primitive`` of ``tracers`` (this trace's) with results
        of types ``out_avals``; returns its result tracers. The effects of Jaxprs among
        ``params`` are added to ``effects``. ``line``: the user's frame, when the caller
        found it already."""
        inner = params_effects(params)
        if inner:
            effects = frozenset(effects) | inner
        self.effects.update(effects)
        outvars = [Var(aval) for aval in out_avals]
        if line is False:
            line = user_frame(3)
        source = SourceInfo((line,) if line else (), current_name_stack())
        eqn = new_jaxpr_eqn([t._atom for t in tracers], outvars, primitive, params, effects, source)
        self.eqns.append(eqn)
        return [DynamicJaxprTracer(self, v.aval, v, line) for v in outvars]

    def to_jaxpr(self, outs) -> ClosedJaxpr:
        """The Jaxpr with outputs ``outs`` (tracers of this trace or constants)."""
        out_atoms = [self.to_jaxpr_tracer(x)._atom for x in outs]
        # Accesses to references the program allocates itself are not its effects.
        inputs = {id(v) for v in (*self.constvars, *self.invars)}
        effects = frozenset(
            e for e in self.effects if not isinstance(e, RefEffect) or id(e.input) in inputs
        )
        jaxpr = Jaxpr(self.constvars, self.invars, out_atoms, self.eqns, effects)
        return ClosedJaxpr(jaxpr, self.consts)

    def __repr__(self):
        return f"DynamicJaxprTrace({self.debug_info or ''})"


def _name_refs(effects, tracers):
    """Effects on references given by operand position, given by the operand's Var."""
    return frozenset(
        e.with_input(tracers[e.input]._atom)
        if isinstance(e, RefEffect) and isinstance(e.input, int)
        else e
        for e in effects
    )


def returned_ref_error(fun_name: str | None, x, what: str, arg_name: str | None):
    """JAX's error for a traced function that returns a mutable array reference."""
    if arg_name == "an input":
        origin = "was passed in as an argument"
    elif arg_name is not None:
        origin = f"was passed in as the argument {arg_name}"
    else:
        line = getattr(x, "_line", None)
        origin = f"was created on line {line}" if line else "was created inside it"
    return ValueError(
        f"function {fun_name or 'being traced'} traced for {what} returned a mutable array "
        f"reference of type {x.aval.str_short()}, but mutable array references cannot be "
        f"returned.\n\nThe returned mutable array {origin}."
    )


def _is_literal_value(x) -> bool:
    """A value a scalar literal can hold: not a tracer, nor an object that only has a
    shape and a dtype (a ``ShapeDtypeStruct``, which becomes a constant as in JAX)."""
    if isinstance(x, Tracer):
        return False
    return (
        dtypes.is_python_scalar(x) or isinstance(x, np.ndarray | np.generic) or hasattr(x, "aval")
    )


def _literal_value(x, aval):
    if dtypes.is_python_scalar(x):
        return x
    if dtypes.canonicalize_dtype(aval.dtype) != aval.dtype and hasattr(x, "aval"):
        return x  # an allowed explicit 64-bit array: a NumPy scalar would lose its dtype
    return np.asarray(x, dtype=aval.dtype)[()]


def describe_function(fun) -> str:
    """``name at file:line``, as error messages name a traced function."""
    name = getattr(fun, "__name__", type(fun).__name__)
    code = getattr(fun, "__code__", None)
    if code is None:
        return name
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def trace_to_jaxpr(
    fun, in_avals, debug_info: str | None = None, *, what: str = "jit", arg_names=None
):
    """Traces ``fun(*tracers)`` (flat in, flat out: a sequence of values) for inputs of
    types ``in_avals``; returns the ``ClosedJaxpr`` and ``fun``'s flat outputs as given.
    The trace ends (its tracers become leaked) when this returns. Returning a mutable
    array reference is an error (naming ``what`` traced, and ``arg_names`` of inputs).
    With ``jax_enable_checks`` the Jaxpr is type-checked; with
    ``jax_check_tracer_leaks``, tracers kept beyond the trace are reported."""
    trace = DynamicJaxprTrace(debug_info)
    try:
        with gc_paused():
            closed, outs = _stage(trace, fun, in_avals, debug_info, what, arg_names)
    finally:
        trace.invalidate()
    if config.jax_check_tracer_leaks:
        check_for_leaks(trace, [*outs, *trace._const_tracers.values()], f"{debug_info} for jit")
    if config.jax_enable_checks:
        check_jaxpr(closed)
    return closed, outs


def _stage(trace, fun, in_avals, debug_info, what, arg_names):
    in_tracers = [trace.new_arg(aval) for aval in in_avals]
    # The equations' name stacks start here: lowering puts the caller's in front.
    with set_current_trace(trace), reset_name_stack():
        outs = list(fun(*in_tracers))
    for x in outs:
        if isinstance(getattr(x, "aval", None), AbstractRef):
            position = next((i for i, t in enumerate(in_tracers) if t is x), None)
            arg_name = None
            if position is not None:
                names = arg_names or ()
                arg_name = names[position] if position < len(names) else "an input"
            raise returned_ref_error(debug_info, x, what, arg_name)
        try:
            shaped_abstractify(x)
        except TypeError:
            raise TypeError(
                f"function {debug_info or 'being traced'} returned a value of type "
                f"{type(x)}, which is not a valid JAX type"
            ) from None
    return trace.to_jaxpr(outs), outs
