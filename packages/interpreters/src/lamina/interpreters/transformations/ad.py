"""Forward-mode automatic differentiation: ``jvp`` and JVP rules.

A :class:`JVPTrace` carries each value as a pair (primal, tangent) in a
:class:`JVPTracer`. The trace keeps the trace that was current when it was made (its
*parent*) and binds every primal and tangent computation there, so a JVP nests inside
``jit``, ``vmap`` or another JVP, and they inside it, in any order.

Tangents may be *symbolic zeros*: :class:`Zero` holds only the tangent's type. A value
that is not this trace's tracer (a constant, an array closed over) has a zero tangent;
a primitive whose tangents are all zero just runs on the primals, and JVP rules skip the
terms of zero tangents, so no work is emitted for them. :func:`instantiate_zeros` makes
a real array of zeros where one must exist (an output of ``jvp``, say).

Integer and boolean values have tangents of dtype ``float0`` (a type with one value,
zero): they are always symbolic zeros inside the trace and ``float0`` arrays outside.

A JVP rule is ``rule(primals, tangents, **params) -> (primal_out, tangent_out)`` (lists
for ``multiple_results`` primitives), registered with ``Primitive.def_jvp``; it runs
with the parent trace current. :func:`defjvp`, :func:`defjvp2`, :func:`deflinear`,
:func:`deflinear2` build the usual kinds of rule (as JAX's of
the same names do). Tangents are summed with :data:`add_any_p` (JAX's ``add_any``).
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters.core.naming import transform_name_stack
from lamina.interpreters.core.tangents import (
    Zero,
    instantiate_zeros,
    is_zero,
    register_zeros_maker,
    tangent_aval,
    tangent_dtype,
    zeros_like_aval,
)
from lamina.interpreters.core.tracing import (
    Trace,
    Tracer,
    find_current_trace,
    set_current_trace,
    shaped_abstractify,
)
from lamina.interpreters.jaxprs import mlir_builders as mb
from lamina.interpreters.jaxprs.calls import call_jaxpr, eval_jaxpr, jit_p
from lamina.interpreters.jaxprs.jaxpr_cache import cache_on_jaxpr
from lamina.interpreters.jaxprs.staging import trace_to_jaxpr
from lamina.interpreters.runtime.dispatch import def_standard_impl
from lamina.interpreters.transformations import batching
from lamina.ir import (
    MissingRuleError,
    Primitive,
    dtypes,
    jvp_rules,
    transformation_boundary,
    tree_util,
)

__all__ = [
    "JVPTrace",
    "JVPTracer",
    "Zero",
    "add_any_p",
    "add_tangents",
    "defjvp",
    "defjvp2",
    "deflinear",
    "deflinear2",
    "instantiate_zeros",
    "is_zero",
    "jvp",
    "jvp_flat",
    "jvp_jaxpr",
    "on_tangent_side",
    "register_zeros_maker",
    "split_jvp_outputs",
    "tangent_aval",
    "tangent_dtype",
    "zeros_like_aval",
]


# --------------------------------------------------------------------------- add_any

add_any_p = Primitive("add_any")


def _add_any_abstract_eval(x, y):
    if x.shape != y.shape or x.dtype != y.dtype:
        raise TypeError(
            f"add_any adds tangents of one type, got {x.str_short()} and {y.str_short()}"
        )
    return x


add_any_p.def_abstract_eval(_add_any_abstract_eval)
add_any_p.def_lowering(lambda ctx, x, y: [mb.elementwise("stablehlo.add", x, y)])
def_standard_impl(add_any_p)


def _add_any_batching(axis_data, vals, dims):
    # Both tangents have one type, so an unbatched one (even a scalar) is broadcast.
    dim = next(d for d in dims if d is not batching.not_mapped)
    x, y = (batching.matchaxis(axis_data, d, dim, v) for v, d in zip(vals, dims, strict=True))
    return add_any_p.bind(x, y), dim


batching.batching_rules[add_any_p] = _add_any_batching


def add_tangents(x, y):
    """The sum of two tangents of one type; symbolic zeros add no work."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_any_p.bind(x, y)


# --------------------------------------------------------------------------- the trace


class JVPTracer(Tracer):
    """A value being differentiated: its ``primal`` and its ``tangent`` (maybe Zero)."""

    __slots__ = ("primal", "tangent")

    def __init__(self, trace: JVPTrace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return shaped_abstractify(self.primal)

    def to_concrete_value(self):
        primal = self.primal
        if isinstance(primal, Tracer):
            return primal.to_concrete_value()
        return primal

    def __repr__(self):
        return f"JVPTracer(primal={self.primal!r}, tangent={self.tangent!r})"


class JVPTrace(Trace):
    """Forward-mode differentiation. Work is bound in ``parent``, the trace that was
    current when this one was made."""

    def __init__(self, parent: Trace):
        super().__init__()
        self.parent = parent

    def to_primal_tangent(self, x):
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.from_primal_value(x)

    def new_tracer(self, primal, tangent):
        """A tracer of ``(primal, tangent)``, or the primal alone when the tangent is zero."""
        if type(tangent) is Zero:
            return primal
        return JVPTracer(self, primal, tangent)

    def process_primitive(self, primitive, args, params):
        primals, tangents = [], []
        for x in args:
            p, t = self.to_primal_tangent(x)
            primals.append(p)
            tangents.append(t)
        with set_current_trace(self.parent):
            if all(type(t) is Zero for t in tangents) and not primitive.ref_allocating:
                return primitive.bind(*primals, **params)
            rule = jvp_rules.get(primitive)
            if rule is None:
                raise MissingRuleError(
                    f"Differentiation rule for '{primitive.name}' not implemented"
                )
            primal_out, tangent_out = rule(primals, tangents, **params)
        if primitive.multiple_results:
            return [self.new_tracer(p, t) for p, t in zip(primal_out, tangent_out, strict=True)]
        return self.new_tracer(primal_out, tangent_out)

    def __repr__(self):
        return f"JVPTrace(parent={self.parent!r})"


def on_tangent_side(fn, *args):
    """``fn(*args)`` run by a JVP rule as tangent work that must stay with the tangents
    even when its inputs are known: under ``linearize`` it goes into the linear Jaxpr.
    JVP rules making tangent references use it."""
    return find_current_trace().process_tangent_side(fn, args)


def jvp_flat(fun, primals, tangents):
    """Runs ``fun(*tracers)`` (flat values in, a flat sequence out) under a new JVP
    trace whose parent is the current trace. ``tangents`` may hold :class:`Zero`;
    returns ``(primals_out, tangents_out)``, zero tangents left symbolic."""
    trace = JVPTrace(find_current_trace())
    try:
        tracers = [trace.new_tracer(p, t) for p, t in zip(primals, tangents, strict=True)]
        with set_current_trace(trace), transform_name_stack("jvp"):
            outs = list(fun(*tracers))
        pairs = [trace.to_primal_tangent(x) for x in outs]
    finally:
        trace.invalidate()
    return [p for p, _ in pairs], [t for _, t in pairs]


# --------------------------------------------------------------------------- jvp


def _check_jax_type(x):
    try:
        return shaped_abstractify(x)
    except TypeError:
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type") from None


def _tangent_value_dtype(t):
    dtype = getattr(t, "dtype", None)
    if dtype is not None and np.dtype(dtype) == dtypes.float0:
        return dtypes.float0
    return _check_jax_type(t).dtype


def _check_callable(fun):
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")


def named_like(transformed, fun, what: str, argnums):
    """``transformed`` (the function ``grad``, ``jacfwd``, ... return) takes ``fun``'s
    name, qualified name and module, with ``fun`` as ``__wrapped__``, as JAX's do: so
    ``jit(grad(loss))`` is ``jit(loss)`` in Jaxprs, locations and profiles."""
    name = getattr(fun, "__name__", repr(fun))
    for attribute in ("__module__", "__name__", "__qualname__"):
        if hasattr(fun, attribute):
            setattr(transformed, attribute, getattr(fun, attribute))
    transformed.__wrapped__ = fun
    transformed.__doc__ = f"The {what} of {name} with respect to its arguments {argnums}."
    return transformed


@transformation_boundary
def jvp(fun, primals, tangents, has_aux: bool = False):
    """``(fun(*primals), the derivative of fun at primals applied to tangents)``.

    ``primals`` and ``tangents`` are tuples or lists of pytrees of one structure; each
    tangent has its primal's shape and tangent dtype (``float0`` for integer and
    boolean primals). With ``has_aux``, ``fun`` returns ``(output, aux)`` and ``jvp``
    returns ``(primal_out, tangent_out, aux)``.
    """
    _check_callable(fun)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "primal and tangent arguments to jax.jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    primals_flat, tree = tree_util.tree_flatten(primals)
    tangents_flat, tangent_tree = tree_util.tree_flatten(tangents)
    if tree != tangent_tree:
        raise TypeError(
            "primal and tangent arguments to jax.jvp must have the same tree structure; "
            f"primals have tree structure {tree} whereas tangents have tree structure "
            f"{tangent_tree}."
        )
    in_tangents = []
    for p, t in zip(primals_flat, tangents_flat, strict=True):
        p_aval = _check_jax_type(p)
        expected = tangent_dtype(p_aval.dtype)
        got = _tangent_value_dtype(t)
        if expected != got:
            raise TypeError(
                "primal and tangent arguments to jax.jvp do not match; dtypes must be "
                "equal, or in case of int/bool primal dtype the tangent dtype must be "
                f"float0.Got primal dtype {p_aval.dtype} and so expected tangent dtype "
                f"{expected}, but got tangent dtype {got} instead."
            )
        t_shape = np.shape(t) if got == dtypes.float0 else _check_jax_type(t).shape
        if tuple(p_aval.shape) != tuple(t_shape):
            raise ValueError(
                "jvp called with different primal and tangent shapes;Got primal shape "
                f"{p_aval.shape} and tangent shape as {tuple(t_shape)}"
            )
        in_tangents.append(Zero(tangent_aval(p_aval)) if got == dtypes.float0 else t)

    out_tree = None
    aux = None

    def flat_fun(*args):
        nonlocal out_tree, aux
        out = fun(*tree_util.tree_unflatten(tree, args))
        if has_aux:
            out, aux = out
        flat, out_tree = tree_util.tree_flatten(out)
        for x in flat:
            _check_jax_type(x)
        return flat

    trace_box = []

    def flat_fun_keeping_trace(*args):
        trace_box.append(find_current_trace())
        outs = flat_fun(*args)
        if has_aux:
            nonlocal aux
            aux = _strip_tangents(aux, trace_box[0])
        return outs

    primals_out, tangents_out = jvp_flat(flat_fun_keeping_trace, primals_flat, in_tangents)
    tangents_out = [instantiate_zeros(t) for t in tangents_out]
    out_primals = tree_util.tree_unflatten(out_tree, primals_out)
    out_tangents = tree_util.tree_unflatten(out_tree, tangents_out)
    if has_aux:
        return out_primals, out_tangents, aux
    return out_primals, out_tangents


def _strip_tangents(tree, trace):
    """Auxiliary outputs are not differentiated: their JVP tracers become primals."""

    def strip(x):
        if isinstance(x, JVPTracer) and x._trace is trace:
            return x.primal
        return x

    return tree_util.tree_map(strip, tree)


# --------------------------------------------------------------------------- rule helpers


def defjvp(primitive: Primitive, *tangent_fns):
    """Defines the JVP of ``primitive`` from one function per operand:
    ``tangent_fn(t, *primals, **params)`` is the output tangent due to that operand's
    tangent ``t``; ``None`` marks an operand that is not differentiated. The terms of
    zero tangents are skipped."""
    return _def_sum_of_terms(primitive, tangent_fns, with_ans=False)


def defjvp2(primitive: Primitive, *tangent_fns):
    """As :func:`defjvp`, with the primal output given too:
    ``tangent_fn(t, ans, *primals, **params)``."""
    return _def_sum_of_terms(primitive, tangent_fns, with_ans=True)


def _def_sum_of_terms(primitive: Primitive, tangent_fns, with_ans: bool):
    def rule(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        terms = [
            fn(t, ans, *primals, **params) if with_ans else fn(t, *primals, **params)
            for fn, t in zip(tangent_fns, tangents, strict=True)
            if fn is not None and type(t) is not Zero
        ]  # all terms first, then their sum, as JAX orders them
        out = Zero(tangent_aval(shaped_abstractify(ans)))
        for term in terms:
            out = add_tangents(out, term)
        return ans, out

    primitive.def_jvp(rule)
    return rule


def deflinear(primitive: Primitive, transpose_rule=None):
    """Defines the JVP of a primitive linear in all its operands: the tangent is the
    primitive applied to the tangents (zeros instantiated where some are nonzero).
    With ``transpose_rule(ct, **params) -> cotangents``, defines its transpose too."""

    def rule(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return ans, _zeros_of(ans, primitive)
        out = primitive.bind(*map(instantiate_zeros, tangents), **params)
        return ans, out

    primitive.def_jvp(rule)
    if transpose_rule is not None:
        primitive.def_transpose(_linear_transpose(transpose_rule, with_operands=False))
    return rule


def deflinear2(primitive: Primitive, transpose_rule):
    """As :func:`deflinear`, with the operands given to the transpose too:
    ``transpose_rule(ct, *operands, **params)``."""
    rule = deflinear(primitive)
    primitive.def_transpose(_linear_transpose(transpose_rule, with_operands=True))
    return rule


def _linear_transpose(transpose_rule, with_operands: bool):
    def transpose(ct, *operands, **params):
        if type(ct) is Zero:
            return [None] * len(operands)
        if with_operands:
            return transpose_rule(ct, *operands, **params)
        return transpose_rule(ct, **params)

    return transpose


def _zeros_of(ans, primitive):
    if primitive.multiple_results:
        return [Zero(tangent_aval(shaped_abstractify(a))) for a in ans]
    return Zero(tangent_aval(shaped_abstractify(ans)))


def zero_jvp(primitive: Primitive):
    """Defines the JVP of a primitive whose outputs have zero tangents (comparisons,
    integer outputs): the primal result with symbolic zero tangents."""

    def rule(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        return ans, _zeros_of(ans, primitive)

    primitive.def_jvp(rule)
    return rule


deflinear(add_any_p)


# --------------------------------------------------------------------------- jit


@cache_on_jaxpr
def jvp_jaxpr(closed_jaxpr, nonzero, debug_info: str | None = None):
    """The JVP of ``closed_jaxpr`` as a new ClosedJaxpr from the primals and the
    tangents marked ``nonzero`` to the primal outputs and the nonzero output tangents.
    Returns it with one bool per output: whether its tangent is nonzero."""
    in_avals = list(closed_jaxpr.in_avals)
    t_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzero, strict=True) if nz]
    n = len(in_avals)
    out_nonzero: list[bool] = []

    def jvp_of_jaxpr(*args):
        ps, ts = args[:n], iter(args[n:])
        tans = [
            next(ts) if nz else Zero(tangent_aval(a))
            for nz, a in zip(nonzero, in_avals, strict=True)
        ]
        outs_p, outs_t = jvp_flat(_jaxpr_as_fun(closed_jaxpr), ps, tans)
        out_nonzero[:] = [type(t) is not Zero for t in outs_t]
        return [*outs_p, *[t for t in outs_t if type(t) is not Zero]]

    closed, _ = trace_to_jaxpr(jvp_of_jaxpr, in_avals + t_avals, debug_info)
    return closed, out_nonzero


def _jaxpr_as_fun(closed_jaxpr):
    def run(*args):
        return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)

    return run


def split_jvp_outputs(outs, out_avals, out_nonzero):
    """The outputs of a call of a :func:`jvp_jaxpr` Jaxpr as ``(primals, tangents)``,
    symbolic zeros put back where tangents are zero."""
    n_out = len(out_avals)
    primals_out, it = list(outs[:n_out]), iter(outs[n_out:])
    tangents_out = [
        next(it) if nz else Zero(tangent_aval(a))
        for nz, a in zip(out_nonzero, out_avals, strict=True)
    ]
    return primals_out, tangents_out


def _jit_jvp(primals, tangents, *, jaxpr, name, donated_invars, keep_unused, inline,
             compiler_options_kvs=(), ctx_mesh=None, in_shardings=None, out_shardings=None,
             **_):  # fmt: skip
    """The JVP of a ``jit`` equation is one ``jit`` equation computing primal and
    (nonzero) tangent outputs from the primals and the nonzero tangents."""
    nonzero = [type(t) is not Zero for t in tangents]
    closed, out_nonzero = jvp_jaxpr(jaxpr, nonzero, name)
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    shardings = {}
    if in_shardings is not None:  # tangents are laid out as their primals
        ins = tuple(in_shardings)
        outs_ = tuple(out_shardings)
        shardings["in_shardings"] = ins + tuple(s for s, nz in zip(ins, nonzero, strict=True) if nz)
        shardings["out_shardings"] = outs_ + tuple(
            s for s, nz in zip(outs_, out_nonzero, strict=True) if nz
        )
    outs = call_jaxpr(
        closed,
        *primals,
        *nz_tangents,
        name=name,
        donated_invars=tuple(donated_invars) + (False,) * len(nz_tangents),
        keep_unused=keep_unused,
        inline=inline,
        compiler_options_kvs=compiler_options_kvs,
        ctx_mesh=ctx_mesh,
        **shardings,
    )
    return split_jvp_outputs(outs, jaxpr.out_avals, out_nonzero)


jit_p.def_jvp(_jit_jvp)
