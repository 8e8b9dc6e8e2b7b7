"""Machinery shared by ``custom_jvp`` and ``custom_vjp`` (:mod:`.custom_jvp`,
:mod:`.custom_vjp`): tracing a custom-derivative function into the ``call_jaxpr`` of its
equation, the rules such an equation shares with a call of ``call_jaxpr`` (evaluation,
abstract evaluation, lowering inline, transposition like a ``jit``), running rules
under ``vmap``, and the symbolic zeros user rules see.
"""

from __future__ import annotations

import functools
import inspect

from lamina.interpreters.core.tangents import Zero, instantiate_zeros, tangent_aval
from lamina.interpreters.core.tracing import eval_trace, find_current_trace, shaped_abstractify
from lamina.interpreters.jaxprs.calls import eval_jaxpr
from lamina.interpreters.jaxprs.staging import describe_function, trace_to_jaxpr
from lamina.interpreters.transformations.batching import batch_flat, matchaxis, moveaxis, not_mapped
from lamina.interpreters.transformations.reverse import _jit_transpose
from lamina.ir import ClosedJaxpr, Primitive, dtypes, tree_util

__all__ = [
    "ArgResolver",
    "RuleFromText",
    "SymbolicZero",
    "TracedCall",
    "batch_call_jaxpr",
    "def_call_rules",
    "forward_def_attr",
    "run_batched",
    "zero_from_primal",
]


class SymbolicZero:
    """A zero tangent (or cotangent) given to a rule defined with ``symbolic_zeros=True``:
    the corresponding input is not being differentiated. Only its type is known."""

    def __init__(self, aval):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)

    def __repr__(self):
        return f"SymbolicZero({self.aval.str_short()})"


def zero_from_primal(x, symbolic_zeros: bool = False):
    """A zero tangent for each leaf of ``x``: symbolic zeros, or arrays of zeros."""

    def zero(leaf):
        aval = tangent_aval(shaped_abstractify(leaf))
        return SymbolicZero(aval) if symbolic_zeros else instantiate_zeros(Zero(aval))

    return tree_util.tree_map(zero, x)


def to_rule_zero(t, symbolic: bool):
    """A tangent as a user rule sees it: a SymbolicZero, or zeros made real."""
    if type(t) is not Zero:
        return t
    return SymbolicZero(t.aval) if symbolic else instantiate_zeros(t)


def from_rule_value(t):
    """A tangent a user rule returned, with its symbolic zeros made internal ones."""
    return Zero(t.aval) if type(t) is SymbolicZero else t


def forward_def_attr(self, name: str):
    """``__getattr__`` of the custom-function wrappers: a ``def...`` attribute (a rule
    setter) comes from the wrapped function, so decorators stack (``custom_vjp`` over
    ``custom_vmap``: ``f.def_vmap`` and ``f.defvjp`` both work)."""
    if name.startswith("def"):
        return getattr(self.fun, name)
    raise AttributeError(name)


def function_name(fun) -> str:
    name = getattr(fun, "__name__", None)
    return str(fun) if name is None else name


def nondiff_indices(fun, nondiff_argnums, nondiff_argnames) -> tuple[int, ...]:
    """The sorted positions of the non-differentiable arguments."""
    nums = set(nondiff_argnums)
    if nondiff_argnames:
        names = list(inspect.signature(fun).parameters)
        nums.update(names.index(n) for n in nondiff_argnames)
    return tuple(sorted(nums))


class ArgResolver:
    """Resolves the arguments of a call to positional ones by ``fun``'s signature
    (defaults applied), with JAX's error when that cannot be done. The signature is
    read once; calls that pass every parameter positionally skip the binding."""

    def __init__(self, fun, kind: str):
        self.fun, self.kind = fun, kind
        self._signature = None

    def _read_signature(self):
        if isinstance(self.fun, functools.partial):
            sig = inspect.signature(lambda *args, **kwargs: None)  # opaque, as JAX's
        else:
            sig = inspect.signature(self.fun)
        params = sig.parameters.values()
        plain = all(p.kind in _POSITIONAL and p.default is p.empty for p in params)
        self.arity = len(sig.parameters) if plain else -1
        self._signature = sig

    def __call__(self, args, kwargs):
        if self._signature is None:
            self._read_signature()
        if not kwargs and len(args) == self.arity:
            return args
        try:
            bound = self._signature.bind(*args, **kwargs)
            bound.apply_defaults()
            passed = [k for k in bound.kwargs if k in kwargs]
            if passed:
                raise TypeError(
                    "The following keyword arguments could not be resolved to positions: "
                    + ", ".join(passed)
                )
        except TypeError as e:
            raise TypeError(
                f"The input arguments to the {self.kind}-decorated function "
                f"{function_name(self.fun)} could not be resolved to positional-only "
                f"arguments. Binding failed with the error:\n{e}"
            ) from e
        return bound.args


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def is_eager() -> bool:
    return find_current_trace() is eval_trace


def split_args(args, nondiff: tuple[int, ...]):
    static = [args[i] for i in nondiff]
    dyn = [a for i, a in enumerate(args) if i not in nondiff]
    return static, dyn


def merge_args(nondiff: tuple[int, ...], static, dyn) -> list:
    static_it, dyn_it = iter(static), iter(dyn)
    n = len(static) + len(dyn)
    return [next(static_it) if i in nondiff else next(dyn_it) for i in range(n)]


class TracedCall:
    """A custom-derivative function traced on its dynamic arguments: the flat operands
    (closed-over values first), ``call_jaxpr`` and the trees of inputs and outputs."""

    def __init__(self, fun, nondiff, static, dyn):
        flat, self.in_tree = tree_util.tree_flatten(tuple(dyn))
        in_avals = [shaped_abstractify(x) for x in flat]
        box = {}

        def flat_fun(*xs):
            out = fun(*merge_args(nondiff, static, tree_util.tree_unflatten(self.in_tree, xs)))
            out_flat, box["out_tree"] = tree_util.tree_flatten(out)
            return out_flat

        closed, _ = trace_to_jaxpr(flat_fun, in_avals, describe_function(fun))
        jaxpr = closed.jaxpr
        # Closed-over values become explicit operands, as in JAX: their tangents (or
        # batch axes) are then seen by the primitive's rules.
        self.call_jaxpr = ClosedJaxpr(
            jaxpr.replace(constvars=[], invars=[*jaxpr.constvars, *jaxpr.invars]), []
        )
        self.consts = list(closed.consts)
        self.operands = [*self.consts, *flat]
        self.out_tree = box["out_tree"]
        self.out_avals = list(closed.out_avals)


def type_tree(tree, avals) -> str:
    return str(tree_util.tree_unflatten(tree, [a.str_short() for a in avals])).replace("'", "")


def same_type(a, b) -> bool:
    return tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype


def zero_if_float0(primal, t):
    """Integer outputs have float0 tangents: zeros, kept symbolic inside the trace."""
    zero = zero_of(primal)
    return zero if zero.aval.dtype == dtypes.float0 else t


def zero_of(primal) -> Zero:
    return Zero(tangent_aval(shaped_abstractify(primal)))


def value_aval(x):
    return x.aval if type(x) in (Zero, SymbolicZero) else shaped_abstractify(x)


def _call_jaxpr_impl(*args, call_jaxpr, **_):
    return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


def _call_jaxpr_abstract_eval(*_, call_jaxpr, **__):
    return list(call_jaxpr.out_avals)


def _call_jaxpr_lowering(ctx, *args, call_jaxpr, **_):
    return ctx.call(call_jaxpr, args, inline=True)


def _call_jaxpr_transpose(cts, *args, call_jaxpr, **params):
    """Linear uses (a rule applying a custom function to tangents) transpose the
    function itself, like a ``jit`` of it."""
    name = _rule_names(params)[0]
    return _jit_transpose(cts, *args, jaxpr=call_jaxpr, name=name)


def _rule_names(params) -> tuple[str, ...]:
    rule = params.get("jvp_jaxpr_fun") or params.get("fwd_jaxpr_thunk")
    return rule.primal_name, rule.rule_name


def def_call_rules(primitive: Primitive) -> None:
    """The rules a custom-derivative call shares with a call of its ``call_jaxpr``."""
    primitive.multiple_results = True
    primitive.def_impl(_call_jaxpr_impl)
    primitive.def_abstract_eval(_call_jaxpr_abstract_eval)
    primitive.def_lowering(_call_jaxpr_lowering)
    primitive.def_transpose(_call_jaxpr_transpose)


class RuleFromText:
    """Stands for a custom rule (a Python function) of an equation read from Jaxpr text,
    which names the rule but does not hold it: the equation prints, checks, evaluates and
    batches, but calling the rule (to differentiate it) raises ``TypeError``."""

    def __init__(self, primitive: str, primal_name: str, rule_name: str):
        self.primitive, self.primal_name, self.rule_name = primitive, primal_name, rule_name

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"the {self.primitive} of '{self.primal_name}' was read from Jaxpr text, which "
            f"names its rule '{self.rule_name}' but does not hold it (a Python function): "
            "it can be printed, checked, evaluated and batched, but not differentiated"
        )

    def __eq__(self, other):
        return type(other) is RuleFromText and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        return (self.primitive, self.primal_name, self.rule_name)

    def __repr__(self):
        return f"RuleFromText({self.primitive}, {self.primal_name}, {self.rule_name})"


def unparsable(params, in_avals, out_avals):
    raise ValueError("its rules are Python functions, which Jaxpr text does not hold")


def batch_call_jaxpr(closed: ClosedJaxpr, axis_data, in_dims) -> ClosedJaxpr:
    """``closed`` on inputs batched at ``in_dims`` (0 or not_mapped), every output
    batched at 0."""
    in_avals = [
        a if d is not_mapped else a.update(shape=(axis_data.size, *a.shape))
        for a, d in zip(closed.in_avals, in_dims, strict=True)
    ]

    def batched(*args):
        outs, dims = batch_flat(
            lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), axis_data, args, in_dims
        )
        return [matchaxis(axis_data, d, 0, o) for o, d in zip(outs, dims, strict=True)]

    new_closed, _ = trace_to_jaxpr(batched, in_avals, "batched custom derivative call")
    return new_closed


def run_batched(fun, axis_data, vals, dims):
    """``fun`` (flat in and out, symbolic zeros allowed) run under ``vmap`` on values
    batched at ``dims`` (0 or not_mapped); outputs batched at 0."""
    size = axis_data.size
    ins, in_dims = [], []
    for v, d in zip(vals, dims, strict=True):
        if type(v) is Zero:  # a zero has no batch axis to carry
            aval = v.aval if d is not_mapped else v.aval.update(shape=v.aval.shape[1:])
            ins.append(Zero(aval))
            in_dims.append(not_mapped)
        else:
            ins.append(v)
            in_dims.append(d)
    outs, out_dims = batch_flat(fun, axis_data, ins, in_dims)
    result = []
    for o, d in zip(outs, out_dims, strict=True):
        if type(o) is Zero:
            result.append(Zero(o.aval.update(shape=(size, *o.aval.shape))))
        else:
            result.append(matchaxis(axis_data, d, 0, o))
    return result


def move_to_front(vals, dims):
    """Operands with their batch axes first; ``(vals, dims)`` with dims 0 or not_mapped."""
    moved = [v if d is not_mapped else moveaxis(v, d, 0) for v, d in zip(vals, dims, strict=True)]
    return moved, [not_mapped if d is not_mapped else 0 for d in dims]
