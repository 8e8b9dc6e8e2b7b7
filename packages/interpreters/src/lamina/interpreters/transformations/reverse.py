"""Reverse-mode differentiation: transposition of linear Jaxprs, ``vjp`` and ``grad``.

``linearize`` (partial evaluation of a JVP, :mod:`.partial_eval`) gives a linear Jaxpr
from input tangents to output tangents; :func:`backward_pass` runs it backwards,
mapping output cotangents to input cotangents with each primitive's transpose rule.

A transpose rule is ``rule(ct, *operands, **params) -> cotangents`` (one per operand,
``None`` or :class:`~.ad.Zero` for operands that get none): ``ct`` is the output's
cotangent (a list for ``multiple_results`` primitives, entries maybe ``Zero``), and
each operand is either a value (a non-linear operand, a constant of the linear map) or
an :class:`UndefinedPrimal` holding the type of a linear operand. Registered with
``Primitive.def_transpose``. Cotangents may be symbolic zeros; equations whose output
cotangents are all zero are skipped, and cotangents are summed with ``add_any``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from lamina.interpreters.core.naming import NameStack, current_name_stack, set_name_stack
from lamina.interpreters.core.tangents import Zero, instantiate_zeros, tangent_aval, zeros_like_aval
from lamina.interpreters.core.tracing import Tracer, find_current_trace
from lamina.interpreters.jaxprs.calls import call_jaxpr, eval_jaxpr, jit_p
from lamina.interpreters.jaxprs.jaxpr_cache import cache_on_jaxpr
from lamina.interpreters.jaxprs.staging import trace_to_jaxpr
from lamina.interpreters.runtime.dispatch import scalar_array
from lamina.interpreters.runtime.transfer import put_on_device
from lamina.interpreters.transformations import ad
from lamina.interpreters.transformations.ad import add_any_p, add_tangents
from lamina.interpreters.transformations.partial_eval import linearize_flat
from lamina.ir import (
    AbstractRef,
    Literal,
    MissingRuleError,
    Primitive,
    dtypes,
    reshard_to,
    transformation_boundary,
    transpose_rules,
    tree_util,
    typed_value_aval,
    vary_over,
)

__all__ = [
    "RefCotangent",
    "UndefinedPrimal",
    "accept_ref_cotangents",
    "backward_pass",
    "defbilinear",
    "grad",
    "is_undefined_primal",
    "linearize",
    "merge_transposed_outputs",
    "register_ref_cotangent_ops",
    "transpose_jaxpr",
    "value_and_grad",
    "vjp",
]


class UndefinedPrimal:
    """A linear operand in a transpose rule: only its type is known."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x) -> bool:
    return type(x) is UndefinedPrimal


class RefCotangent:
    """The cotangent of a tangent reference (one made by the linear map): a reference
    (``ref``) made on first use, into which the transposes of the reads add cotangents.
    It stands for the reference in transpose rules and is the "output cotangent" of the
    equation that made it."""

    __slots__ = ("aval", "ref")

    def __init__(self, aval, ref=None):
        self.aval = aval  # the AbstractRef of the tangent reference
        self.ref = ref

    def instantiate(self):
        """The cotangent reference, made (holding zeros) if nothing was added yet."""
        if self.ref is None:
            self.ref = _ref_ops["new_ref"](zeros_like_aval(tangent_aval(self.aval.inner_aval)))
        return self.ref

    def accum(self, ct) -> None:
        """Adds the cotangent ``ct`` of the whole reference's value."""
        if ct is None or type(ct) is Zero:
            return
        if self.ref is None:
            self.ref = _ref_ops["new_ref"](ct)
        else:
            _ref_ops["addupdate"](self.ref, ct)

    def freeze(self):
        """The total cotangent of the value the reference started with."""
        if self.ref is None:
            return Zero(tangent_aval(self.aval.inner_aval))
        return _ref_ops["freeze"](self.ref)

    def __repr__(self):
        return f"RefCotangent({self.aval.str_short()})"


_ref_ops: dict = {}


def register_ref_cotangent_ops(*, new_ref, addupdate, freeze) -> None:
    """Tells :class:`RefCotangent` how to make a reference from an array, add an array
    into a whole reference, and read a reference's final value (lax's primitives)."""
    _ref_ops.update(new_ref=new_ref, addupdate=addupdate, freeze=freeze)


_ref_transposers: set = set()


def accept_ref_cotangents(*primitives) -> None:
    """Marks ``primitives`` as having transpose rules that take a :class:`RefCotangent`
    for a tangent reference operand; transposing any other primitive with one fails."""
    _ref_transposers.update(primitives)


def _is_ref(atom) -> bool:
    return type(atom.aval) is AbstractRef


def defbilinear(primitive: Primitive, lhs_rule, rhs_rule):
    """Defines the JVP and transpose of a primitive ``f(x, y)`` linear in each operand:
    ``lhs_rule(ct, x, y, **params)`` is the cotangent of ``x`` (given as an
    ``UndefinedPrimal``), ``rhs_rule`` that of ``y``."""

    def jvp_lhs(t, x, y, **params):
        return primitive.bind(t, y, **params)

    def jvp_rhs(t, x, y, **params):
        return primitive.bind(x, t, **params)

    ad.defjvp(primitive, jvp_lhs, jvp_rhs)

    def transpose(ct, x, y, **params):
        if type(ct) is Zero:
            return [None, None]
        if is_undefined_primal(x):
            return [lhs_rule(ct, x, y, **params), None]
        return [None, rhs_rule(ct, x, y, **params)]

    primitive.def_transpose(transpose)


def backward_pass(jaxpr, consts, primals_in, cotangents_out, cotangents_in=None):
    """Transposes the linear ``jaxpr``: ``primals_in`` holds a value for each non-linear
    input and an :class:`UndefinedPrimal` for each linear one; returns the cotangents
    of the inputs (``Zero`` where none flowed, ``None`` for non-linear inputs).
    ``cotangents_in`` (None for an input without one) are accumulators that the
    cotangents of those inputs are added into as they are produced (a loop's).

    References the linear map makes (tangent references) are linear: their equations
    are transposed, with a :class:`RefCotangent` standing for each reference. A tangent
    reference input (of a loop body, say) is given as the :class:`RefCotangent` of the
    reference outside; its cotangent is that reference's, so it gets ``None``."""
    primal_env = {}
    for v, c in zip(jaxpr.constvars, consts, strict=True):
        primal_env[v] = c
    ct_env = {}
    ref_cts = {}  # Var of a tangent reference -> its RefCotangent
    for v, p in zip(jaxpr.invars, primals_in, strict=True):
        if type(p) is RefCotangent:
            ref_cts[v] = p
        elif not is_undefined_primal(p):
            primal_env[v] = p
    for v, ct in zip(jaxpr.invars, cotangents_in or (), strict=False):
        if ct is not None:
            ct_env[v] = ct

    def ref_ct(atom):
        if atom not in ref_cts:
            ref_cts[atom] = RefCotangent(atom.aval)
        return ref_cts[atom]

    def read_primal(atom):
        if isinstance(atom, Literal):
            return _literal_operand(atom)
        if atom in primal_env:
            return primal_env[atom]
        return UndefinedPrimal(atom.aval)

    def write_ct(atom, ct):
        if isinstance(atom, Literal) or atom in primal_env or ct is None or type(ct) is Zero:
            return
        if _is_ref(atom):
            return  # reference cotangents live in ref_cts
        ct_env[atom] = add_tangents(ct_env[atom], ct) if atom in ct_env else ct

    # Equations that read no linear input (recomputation inside a checkpoint, say) run
    # forwards first; only the rest are transposed.
    linear_eqns = []
    for eqn in jaxpr.eqns:
        invals = [read_primal(a) for a in eqn.invars]
        if eqn.primitive.ref_allocating or any(is_undefined_primal(x) for x in invals):
            linear_eqns.append(eqn)
            continue
        outs = eqn.primitive.bind(*invals, **eqn.params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        primal_env.update(zip(eqn.outvars, outs, strict=True))
    for v, ct in zip(jaxpr.outvars, cotangents_out, strict=True):
        write_ct(v, ct)
    transposing = current_name_stack().transform("transpose")
    transposed_scopes: dict[int, tuple] = {}  # id of a scope -> (it, transposing + it)
    for eqn in reversed(linear_eqns):
        invals = [read_primal(a) for a in eqn.invars]
        # Equations making or using tangent references always run: a write's value
        # gets its cotangent from the reference's, whatever flows into the outputs.
        touches_refs = eqn.primitive.ref_allocating or any(
            is_undefined_primal(x) and _is_ref(a) for a, x in zip(eqn.invars, invals, strict=True)
        )
        cts = [ref_cts.pop(v, None) if _is_ref(v) else ct_env.pop(v, None) for v in eqn.outvars]
        if all(c is None for c in cts) and not touches_refs:
            continue  # zero cotangents: no work
        cts = [
            (RefCotangent(v.aval) if _is_ref(v) else Zero(tangent_aval(v.aval))) if c is None else c
            for v, c in zip(eqn.outvars, cts, strict=True)
        ]
        rule = transpose_rules.get(eqn.primitive)
        if rule is None:
            raise MissingRuleError(
                f"Transpose rule (for reverse-mode differentiation) for "
                f"'{eqn.primitive.name}' not implemented"
            )
        if touches_refs:
            if eqn.primitive not in _ref_transposers:
                raise NotImplementedError(
                    f"Reverse-mode differentiation of '{eqn.primitive.name}' with a "
                    "reference made by the differentiated function as an operand is not "
                    "supported"
                )
            invals = [
                ref_ct(a) if is_undefined_primal(x) and _is_ref(a) else x
                for a, x in zip(eqn.invars, invals, strict=True)
            ]
        ct_arg = cts if eqn.primitive.multiple_results else cts[0]
        # The transposed operations are named for the equation: transpose(jvp(scope)).
        scopes = getattr(eqn.source_info, "name_stack", None)
        if isinstance(scopes, NameStack):  # one stack per distinct scope: equations share it
            known = transposed_scopes.get(id(scopes))
            if known is None or known[0] is not scopes:
                known = transposed_scopes[id(scopes)] = (scopes, transposing + scopes)
            scopes = known[1]
        else:
            scopes = transposing
        with set_name_stack(scopes):
            cts_in = rule(ct_arg, *invals, **eqn.params)
            for a, x, ct in zip(eqn.invars, invals, cts_in, strict=True):
                if is_undefined_primal(x):
                    write_ct(a, ct)

    out = []
    for v, p in zip(jaxpr.invars, primals_in, strict=True):
        if not is_undefined_primal(p):
            out.append(None)
        else:
            out.append(ct_env.get(v, Zero(tangent_aval(v.aval))))
    return out


# --------------------------------------------------------------------------- rules


def _add_any_transpose(ct, x, y):
    return [ct if is_undefined_primal(x) else None, ct if is_undefined_primal(y) else None]


add_any_p.def_transpose(_add_any_transpose)


@cache_on_jaxpr
def transpose_jaxpr(
    closed_jaxpr, undefined, ct_nonzero, debug_info: str | None = None, ref_cts=None
):
    """The transpose of ``closed_jaxpr`` (linear in the inputs marked ``undefined``)
    as a new ClosedJaxpr from its other inputs and the nonzero output cotangents
    (``ct_nonzero``) to the nonzero cotangents of the linear inputs. Returns it with
    one bool per linear input: whether its cotangent is nonzero. Inputs marked in
    ``ref_cts`` are tangent references: the transpose takes their cotangent references
    in their place (and adds into them)."""
    in_avals, out_avals = list(closed_jaxpr.in_avals), list(closed_jaxpr.out_avals)
    ref_cts = ref_cts or [False] * len(in_avals)
    res_avals = [
        _ref_ct_aval(a) if r else a
        for a, u, r in zip(in_avals, undefined, ref_cts, strict=True)
        if not u
    ]
    ct_avals = [tangent_aval(a) for a, nz in zip(out_avals, ct_nonzero, strict=True) if nz]
    out_nonzero: list[bool] = []
    n = len(res_avals)

    def transposed(*xs):
        res_it, ct_it = iter(xs[:n]), iter(xs[n:])
        primals = [
            UndefinedPrimal(a) if u else RefCotangent(a, next(res_it)) if r else next(res_it)
            for a, u, r in zip(in_avals, undefined, ref_cts, strict=True)
        ]
        cts_full = [
            next(ct_it) if nz else Zero(tangent_aval(a))
            for nz, a in zip(ct_nonzero, out_avals, strict=True)
        ]
        outs = backward_pass(closed_jaxpr.jaxpr, closed_jaxpr.consts, primals, cts_full)
        outs = [c for c, u in zip(outs, undefined, strict=True) if u]
        out_nonzero[:] = [type(c) is not Zero for c in outs]
        return [c for c in outs if type(c) is not Zero]

    closed, _ = trace_to_jaxpr(transposed, res_avals + ct_avals, debug_info)
    return closed, out_nonzero


def _ref_ct_aval(aval):
    return aval.update(inner_aval=tangent_aval(aval.inner_aval))


def merge_transposed_outputs(outs, args, out_nonzero):
    """The cotangent of each operand of a transposed call: ``None`` for the non-linear
    ones, the call's outputs for the linear ones, symbolic zeros where none flowed."""
    outs, nz_it = iter(outs), iter(out_nonzero)
    result = []
    for a in args:
        if not is_undefined_primal(a):
            result.append(None)
        else:
            result.append(next(outs) if next(nz_it) else Zero(tangent_aval(a.aval)))
    return result


def _jit_transpose(cts, *args, jaxpr, name, in_shardings=None, out_shardings=None, **_):
    """The transpose of a ``jit`` equation is one ``jit`` equation running the inner
    Jaxpr's backward pass, from its non-linear inputs and nonzero cotangents."""
    undef = [is_undefined_primal(a) for a in args]
    ref_cts = [type(a) is RefCotangent for a in args]
    ct_nonzero = [type(c) is not Zero for c in cts]
    closed, out_nonzero = transpose_jaxpr(
        jaxpr, undef, ct_nonzero, name, ref_cts=ref_cts if any(ref_cts) else None
    )
    res = [
        a.instantiate() if r else a for a, u, r in zip(args, undef, ref_cts, strict=True) if not u
    ]
    nz_cts = [c for c in cts if type(c) is not Zero]
    shardings = {}
    if in_shardings is not None:  # cotangents are laid out as their primals
        ins = list(zip(in_shardings, undef, strict=True))
        shardings["in_shardings"] = (
            *[sh for sh, u in ins if not u],
            *[sh for sh, nz in zip(out_shardings, ct_nonzero, strict=True) if nz],
        )
        undef_shardings = [sh for sh, u in ins if u]
        shardings["out_shardings"] = tuple(
            sh for sh, nz in zip(undef_shardings, out_nonzero, strict=True) if nz
        )
    outs = call_jaxpr(closed, *res, *nz_cts, name=name, **shardings)
    return merge_transposed_outputs(outs, args, out_nonzero)


jit_p.def_transpose(_jit_transpose)
_ref_transposers.add(jit_p)


# --------------------------------------------------------------------------- the API


def _flat_fun(fun, in_tree, box, has_aux=False):
    def flat(*args):
        out = fun(*tree_util.tree_unflatten(in_tree, args))
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(
                    "expected function with aux output to return a two-element tuple, but "
                    f"got type {type(out)} with value {out!r}"
                )
            out, box["aux"] = out
        flat_out, box["out_tree"] = tree_util.tree_flatten(out)
        for x in flat_out:
            ad._check_jax_type(x)
        return flat_out

    return flat


def _linearize_tree(fun, primals, has_aux=False):
    primals_flat, in_tree = tree_util.tree_flatten(primals)
    avals = [ad._check_jax_type(p) for p in primals_flat]
    t_avals = [tangent_aval(a) for a in avals]
    lin_avals = [None if a.dtype == dtypes.float0 else a for a in t_avals]
    box = {}
    flat = _flat_fun(fun, in_tree, box, has_aux)
    if has_aux:

        def flat_aux(*args):
            trace = find_current_trace()
            out = flat(*args)
            leaves, box["aux_tree"] = tree_util.tree_flatten(box["aux"])
            box["aux"] = ad._strip_tangents(leaves, trace)
            return out

        flat_used = flat_aux
    else:
        flat_used = flat
    primals_out, linear = linearize_flat(flat_used, primals_flat, lin_avals)
    if has_aux:
        # Rebuilt once the trace is over, as in JAX: a pytree node made again (a flax
        # Variable, say) then belongs to the caller's trace.
        box["aux"] = tree_util.tree_unflatten(box["aux_tree"], box["aux"])
    return primals_out, linear, in_tree, box, t_avals, lin_avals


@transformation_boundary
def linearize(fun, *primals, has_aux: bool = False):
    """``(fun(*primals), f_jvp)`` (and ``aux`` with ``has_aux``): ``f_jvp(*tangents)``
    applies the linear map staged by partial evaluation of the JVP (the primal
    computation runs once, now)."""
    ad._check_callable(fun)
    linearized = _linearize_tree(fun, primals, has_aux)
    primals_out, linear, in_tree, box, t_avals, lin_avals = linearized
    out_tree = box["out_tree"]

    def f_jvp(*tangents):
        t_flat, t_tree = tree_util.tree_flatten(tangents)
        if t_tree != in_tree:
            raise TypeError(
                "linearized function called on tangent values inconsistent with the "
                f"original primal values: expected tree structure {in_tree}, got {t_tree}"
            )
        for t, a in zip(t_flat, t_avals, strict=True):
            got = ad._tangent_value_dtype(t)
            if got != a.dtype or tuple(np.shape(t)) != tuple(a.shape):
                raise ValueError(
                    "linearized function called on tangent values inconsistent with the "
                    f"original primal values: got tangent {got}{list(np.shape(t))} for "
                    f"primal {a.str_short()}"
                )
        args = [t for t, a in zip(t_flat, lin_avals, strict=True) if a is not None]
        outs = eval_jaxpr(linear.jaxpr, linear.consts, *args)  # inline, as in JAX
        return tree_util.tree_unflatten(out_tree, outs)

    out = tree_util.tree_unflatten(out_tree, primals_out)
    return (out, f_jvp, box["aux"]) if has_aux else (out, f_jvp)


@dataclasses.dataclass(frozen=True, slots=True)
class GradValue:
    """Asks :meth:`VJP.with_refs` for an argument's cotangent as a value."""


@dataclasses.dataclass(frozen=True, slots=True)
class DontWant:
    """Tells :meth:`VJP.with_refs` that an argument's cotangent is not wanted."""


@dataclasses.dataclass(frozen=True, slots=True)
class DidntWant:
    """What :meth:`VJP.with_refs` gives for an argument whose cotangent was not wanted."""


@dataclasses.dataclass(frozen=True, slots=True)
class GradRef:
    """What :meth:`VJP.with_refs` gives for an argument whose cotangent was added into a
    ``Ref``."""


for _marker in (DidntWant, GradRef):
    tree_util.register_pytree_node(_marker, lambda m: ((), None), lambda _, __, m=_marker: m())


_TOO_MANY_ARGS = """
The function returned by `jax.vjp` applied to {name} was called with {n} arguments,
but functions returned by `jax.vjp` must be called with a single argument
corresponding to the single value returned by the function being differentiated
(even if that returned value is a tuple or other container).

For example, if we have:

  def f(x):
    return (x, x)
  _, f_vjp = jax.vjp(f, 1.0)

the function `f` returns a single tuple as output, and so we call `f_vjp` with a
single tuple as its argument:

  x_bar, = f_vjp((2.0, 2.0))

If we instead call `f_vjp(2.0, 2.0)`, with the values 'splatted out' as
arguments rather than in a tuple, this error can arise.
"""


class VJP:
    """The backward function of :func:`vjp`: ``vjp_fun(ct)`` maps a cotangent of the
    output to a tuple of cotangents of the primals. It is a pytree whose leaves are the
    residuals of the forward pass, so it can be returned from and passed into ``jit``
    (what :func:`fwd_and_bwd` relies on)."""

    __slots__ = ("_fixed", "residuals")

    def __init__(self, fixed: tuple, residuals):
        # fixed: (linear Jaxpr, in_tree, out_tree, out_avals, t_avals, lin_avals, name)
        self._fixed = fixed
        self.residuals = list(residuals)

    def __call__(self, ct, *extra_args):
        if extra_args:
            raise TypeError(_TOO_MANY_ARGS.format(name=self._fixed[-1], n=len(extra_args) + 1))
        return self._cotangents(ct)

    def with_refs(self, *wanted):
        """A function of the output cotangent, like this one, told per argument leaf
        what to do with its cotangent: ``GradValue()`` returns it, ``DontWant()``
        skips it (``DidntWant()`` in its place), and a ``Ref`` has it added in
        (``GradRef()`` in its place)."""
        in_tree = self._fixed[1]
        flat = tree_util.tree_leaves(wanted or (GradValue(),) * in_tree.num_leaves)
        if len(flat) != in_tree.num_leaves:
            raise ValueError(
                f"with_refs takes one entry per argument leaf ({in_tree.num_leaves}), "
                f"got {len(flat)}"
            )

        def apply(ct):
            results = tree_util.tree_leaves(self._cotangents(ct))
            out = []
            for want, value in zip(flat, results, strict=True):
                if isinstance(want, GradValue):
                    out.append(value)
                elif isinstance(want, DontWant):
                    out.append(DidntWant())
                else:
                    want[...] = want[...] + value
                    out.append(GradRef())
            return tree_util.tree_unflatten(in_tree, out)

        return apply

    def _cotangents(self, ct):
        jaxpr, in_tree, out_tree, out_avals, t_avals, lin_avals, _ = self._fixed
        ct_flat, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(
                "Tree structure of cotangent input "
                f"{ct_tree}, does not match structure of primal output {out_tree}."
            )
        cts = []
        for c, a in zip(ct_flat, out_avals, strict=True):
            want = tangent_aval(a)
            if want.dtype == dtypes.float0:
                cts.append(Zero(want))
                continue
            if tuple(np.shape(c)) != tuple(a.shape):
                raise ValueError(
                    "Shape of cotangent input to vjp pullback function "
                    f"{tuple(np.shape(c))} must be the same as the shape of corresponding "
                    f"primal input {tuple(a.shape)}."
                )
            cts.append(c)
        undefined = [UndefinedPrimal(v.aval) for v in jaxpr.invars]
        outs = iter(backward_pass(jaxpr, self.residuals, undefined, cts))
        result = []
        for a, la in zip(t_avals, lin_avals, strict=True):
            if type(a) is AbstractRef:  # a reference argument: its cotangent is an array
                raise ValueError(
                    f"Expected cotangent type {a} but got {tangent_aval(a.inner_aval)}"
                )
            result.append(instantiate_zeros(next(outs) if la is not None else Zero(a)))
        return tree_util.tree_unflatten(in_tree, result)


tree_util.register_pytree_node(
    VJP, lambda f: (f.residuals, f._fixed), lambda fixed, res: VJP(fixed, res)
)


@transformation_boundary
def vjp(fun, *primals, has_aux: bool = False):
    """``(fun(*primals), vjp_fun)`` (and ``aux`` with ``has_aux``): ``vjp_fun(ct)`` maps
    a cotangent of the output to a tuple of cotangents of ``primals``."""
    ad._check_callable(fun)
    primals_out, linear, in_tree, box, t_avals, lin_avals = _linearize_tree(fun, primals, has_aux)
    out_tree = box["out_tree"]
    out_avals = tuple(ad._check_jax_type(p) for p in primals_out)
    name = getattr(fun, "__name__", type(fun).__name__)
    fixed = (linear.jaxpr, in_tree, out_tree, out_avals, tuple(t_avals), tuple(lin_avals), name)
    vjp_fun = VJP(fixed, linear.consts)
    out = tree_util.tree_unflatten(out_tree, primals_out)
    if has_aux:
        return out, vjp_fun, box["aux"]
    return out, vjp_fun


def _check_input_dtype_revderiv(name, holomorphic, allow_int, x):
    """JAX's checks of the inputs of reverse-mode ``name`` (``grad``, ``jacrev``)."""
    dtype = ad._check_jax_type(x).dtype
    if holomorphic and not dtypes.issubdtype(dtype, np.complexfloating):
        raise TypeError(
            f"{name} with holomorphic=True requires inputs with complex dtype, but got "
            f"{dtype.name}."
        )
    discrete = dtypes.issubdtype(dtype, np.integer) or dtype == np.bool_
    if discrete or dtypes.issubdtype(dtype, dtypes.extended):  # PRNG keys too
        if not allow_int:
            raise TypeError(
                f"{name} requires real- or complex-valued inputs (input dtype that is a "
                f"sub-dtype of np.inexact), but got {dtype.name}. If you want to use "
                "Boolean- or integer-valued inputs, use vjp or set allow_int to True."
            )
    elif not dtypes.issubdtype(dtype, np.inexact):
        raise TypeError(
            f"{name} requires numerical-valued inputs (input dtype that is a sub-dtype of "
            f"np.bool_ or np.number), but got {dtype.name}."
        )


def _check_output_dtype_revderiv(name, holomorphic, x):
    """JAX's checks of the outputs of reverse-mode ``name``: complex outputs only with
    ``holomorphic`` (and then only they), never integer ones."""
    dtype = ad._check_jax_type(x).dtype
    if holomorphic:
        if not dtypes.issubdtype(dtype, np.complexfloating):
            raise TypeError(
                f"{name} with holomorphic=True requires outputs with complex dtype, but got "
                f"{dtype.name}."
            )
    elif dtypes.issubdtype(dtype, np.complexfloating):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dtype.name}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex outputs, use jax.vjp directly."
        )
    elif not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dtype.name}. For differentiation of functions with "
            "integer outputs, use jax.vjp directly."
        )


def _check_scalar(x):
    aval = ad._check_jax_type(x)
    if aval.shape != ():
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}."
        )


@transformation_boundary
def value_and_grad(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False, reduce_axes=()):  # fmt: skip
    """A function returning ``(fun(*args), gradient of fun w.r.t. args[argnums])``
    (``((value, aux), grad)`` with ``has_aux``)."""
    ad._check_callable(fun)
    int_argnums = isinstance(argnums, int)
    nums = (argnums,) if int_argnums else tuple(argnums)

    def value_and_grad_f(*args, **kwargs):
        if max(nums, default=-1) >= len(args):
            raise TypeError(
                f"differentiating with respect to argnums={argnums} requires at least "
                f"{max(nums) + 1} positional arguments to be passed by the caller, but got "
                f"only {len(args)} positional arguments."
            )
        dyn = tuple(args[i] for i in nums)
        for x in tree_util.tree_leaves(dyn):
            _check_input_dtype_revderiv("grad", holomorphic, allow_int, x)

        def f_dyn(*dyn_args):
            full = list(args)
            for i, a in zip(nums, dyn_args, strict=True):
                full[i] = a
            return fun(*full, **kwargs)

        if has_aux:
            ans, vjp_fun, aux = vjp(f_dyn, *dyn, has_aux=True)
        else:
            ans, vjp_fun = vjp(f_dyn, *dyn)
        if not has_aux and not _is_leaf_array(ans):
            raise TypeError(f"Gradient only defined for scalar-output functions. Output was {ans}.")
        _check_scalar(ans)
        _check_output_dtype_revderiv("grad", holomorphic, ans)
        aval = ad._check_jax_type(ans)
        one = _seed(aval if isinstance(ans, Tracer) else typed_value_aval(ans, aval))
        g = tree_util.tree_map(_on_device, vjp_fun(one), dyn)
        g = g[0] if int_argnums else tuple(g)
        if has_aux:
            return (ans, aux), g
        return ans, g

    return ad.named_like(value_and_grad_f, fun, "value and gradient", argnums)


def _literal_operand(literal):
    """A Literal's value as an operand: a Python scalar where the literal is weakly typed
    in its kind's default dtype, so that results stay weakly typed as JAX's do."""
    val = literal.val
    if literal.aval.weak_type and isinstance(val, np.generic):
        scalar = val.item()
        if dtypes.canonicalize_dtype(dtypes.dtype(scalar)) == literal.aval.dtype:
            return scalar
    return val


def _seed(aval):
    """The output cotangent grad starts from: one, weakly typed where the output is (a
    Python scalar), 1+0j for holomorphic outputs."""
    one = np.ones((), aval.dtype)
    if getattr(aval, "vma", None):  # in a shard_map body: varying as the output is
        return vary_over(one, aval.vma)
    if getattr(aval, "type_sharding", None) is not None:  # over explicit mesh axes
        return reshard_to(one, aval.type_sharding)
    return one.item() if aval.weak_type else one


def _on_device(g, primal):
    """A gradient that backward_pass left a host value (the seed cotangent itself, for an
    output that is an input) as an array, weakly typed where the input was."""
    if dtypes.is_python_scalar(g):  # the weakly typed seed itself
        return scalar_array(g)
    if not isinstance(g, np.ndarray | np.generic) or g.dtype == dtypes.float0:
        return g  # float0 gradients (of integer inputs) stay NumPy arrays, as in JAX
    if ad._check_jax_type(primal).weak_type and g.shape == ():
        weak = scalar_array(g.item())
        if weak.dtype == g.dtype:
            return weak
    return put_on_device(g)


def _is_leaf_array(x) -> bool:
    return tree_util.tree_structure(x) == tree_util.tree_structure(0)


@transformation_boundary
def grad(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False, reduce_axes=()):  # fmt: skip
    """The gradient of scalar-valued ``fun`` with respect to ``args[argnums]``."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes)

    def grad_f(*args, **kwargs):
        (_, aux), g = vg(*args, **kwargs) if has_aux else ((None, None), vg(*args, **kwargs)[1])
        return (g, aux) if has_aux else g

    return ad.named_like(grad_f, fun, "gradient", argnums)
