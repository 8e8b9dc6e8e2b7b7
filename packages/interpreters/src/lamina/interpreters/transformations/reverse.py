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

import numpy as np

from lamina.interpreters.core.tangents import Zero, instantiate_zeros, tangent_aval
from lamina.interpreters.core.tracing import find_current_trace
from lamina.interpreters.jaxprs.calls import call_jaxpr, jit_p
from lamina.interpreters.jaxprs.jaxpr_cache import cache_on_jaxpr
from lamina.interpreters.jaxprs.staging import trace_to_jaxpr
from lamina.interpreters.transformations import ad
from lamina.interpreters.transformations.ad import add_any_p, add_tangents
from lamina.interpreters.transformations.partial_eval import linearize_flat
from lamina.ir import (
    Literal,
    MissingRuleError,
    dtypes,
    transformation_boundary,
    transpose_rules,
    tree_util,
)

__all__ = [
    "UndefinedPrimal",
    "backward_pass",
    "grad",
    "is_undefined_primal",
    "linearize",
    "merge_transposed_outputs",
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


def backward_pass(jaxpr, consts, primals_in, cotangents_out):
    """Transposes the linear ``jaxpr``: ``primals_in`` holds a value for each non-linear
    input and an :class:`UndefinedPrimal` for each linear one; returns the cotangents
    of the inputs (``Zero`` where none flowed, ``None`` for non-linear inputs)."""
    primal_env = {}
    for v, c in zip(jaxpr.constvars, consts, strict=True):
        primal_env[v] = c
    for v, p in zip(jaxpr.invars, primals_in, strict=True):
        if not is_undefined_primal(p):
            primal_env[v] = p
    ct_env = {}

    def read_primal(atom):
        if isinstance(atom, Literal):
            return atom.val
        if atom in primal_env:
            return primal_env[atom]
        return UndefinedPrimal(atom.aval)

    def write_ct(atom, ct):
        if isinstance(atom, Literal) or atom in primal_env or ct is None or type(ct) is Zero:
            return
        ct_env[atom] = add_tangents(ct_env[atom], ct) if atom in ct_env else ct

    # Equations that read no linear input (recomputation inside a checkpoint, say) run
    # forwards first; only the rest are transposed.
    linear_eqns = []
    for eqn in jaxpr.eqns:
        invals = [read_primal(a) for a in eqn.invars]
        if any(is_undefined_primal(x) for x in invals):
            linear_eqns.append(eqn)
            continue
        outs = eqn.primitive.bind(*invals, **eqn.params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        primal_env.update(zip(eqn.outvars, outs, strict=True))
    for v, ct in zip(jaxpr.outvars, cotangents_out, strict=True):
        write_ct(v, ct)
    for eqn in reversed(linear_eqns):
        cts = [ct_env.pop(v, None) for v in eqn.outvars]
        if all(c is None for c in cts):
            continue  # zero cotangents: no work
        cts = [
            Zero(tangent_aval(v.aval)) if c is None else c
            for v, c in zip(eqn.outvars, cts, strict=True)
        ]
        rule = transpose_rules.get(eqn.primitive)
        if rule is None:
            raise MissingRuleError(
                f"Transpose rule (for reverse-mode differentiation) for "
                f"'{eqn.primitive.name}' not implemented"
            )
        invals = [read_primal(a) for a in eqn.invars]
        ct_arg = cts if eqn.primitive.multiple_results else cts[0]
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
def transpose_jaxpr(closed_jaxpr, undefined, ct_nonzero, debug_info: str | None = None):
    """The transpose of ``closed_jaxpr`` (linear in the inputs marked ``undefined``)
    as a new ClosedJaxpr from its other inputs and the nonzero output cotangents
    (``ct_nonzero``) to the nonzero cotangents of the linear inputs. Returns it with
    one bool per linear input: whether its cotangent is nonzero."""
    in_avals, out_avals = list(closed_jaxpr.in_avals), list(closed_jaxpr.out_avals)
    res_avals = [a for a, u in zip(in_avals, undefined, strict=True) if not u]
    ct_avals = [tangent_aval(a) for a, nz in zip(out_avals, ct_nonzero, strict=True) if nz]
    out_nonzero: list[bool] = []
    n = len(res_avals)

    def transposed(*xs):
        res_it, ct_it = iter(xs[:n]), iter(xs[n:])
        primals = [
            UndefinedPrimal(a) if u else next(res_it)
            for a, u in zip(in_avals, undefined, strict=True)
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


def _jit_transpose(cts, *args, jaxpr, name, **_):
    """The transpose of a ``jit`` equation is one ``jit`` equation running the inner
    Jaxpr's backward pass, from its non-linear inputs and nonzero cotangents."""
    undef = [is_undefined_primal(a) for a in args]
    ct_nonzero = [type(c) is not Zero for c in cts]
    closed, out_nonzero = transpose_jaxpr(jaxpr, undef, ct_nonzero, name)
    res = [a for a, u in zip(args, undef, strict=True) if not u]
    nz_cts = [c for c in cts if type(c) is not Zero]
    outs = call_jaxpr(closed, *res, *nz_cts, name=name)
    return merge_transposed_outputs(outs, args, out_nonzero)


jit_p.def_transpose(_jit_transpose)


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
            box["aux"] = ad._strip_tangents(box["aux"], trace)
            return out

        flat_used = flat_aux
    else:
        flat_used = flat
    primals_out, linear = linearize_flat(flat_used, primals_flat, lin_avals)
    return primals_out, linear, in_tree, box, t_avals, lin_avals


@transformation_boundary
def linearize(fun, *primals):
    """``(fun(*primals), f_jvp)``: ``f_jvp(*tangents)`` applies the linear map staged by
    partial evaluation of the JVP (the primal computation runs once, now)."""
    ad._check_callable(fun)
    primals_out, linear, in_tree, box, t_avals, lin_avals = _linearize_tree(fun, primals)
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
        outs = call_jaxpr(linear, *args, name="linearized")
        return tree_util.tree_unflatten(out_tree, outs)

    return tree_util.tree_unflatten(out_tree, primals_out), f_jvp


@transformation_boundary
def vjp(fun, *primals, has_aux: bool = False):
    """``(fun(*primals), vjp_fun)`` (and ``aux`` with ``has_aux``): ``vjp_fun(ct)`` maps
    a cotangent of the output to a tuple of cotangents of ``primals``."""
    ad._check_callable(fun)
    primals_out, linear, in_tree, box, t_avals, lin_avals = _linearize_tree(fun, primals, has_aux)
    out_tree = box["out_tree"]
    out_avals = [ad._check_jax_type(p) for p in primals_out]

    def vjp_fun(ct):
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
        n_lin = sum(a is not None for a in lin_avals)
        undefined = [UndefinedPrimal(a) for a in linear.in_avals]
        assert len(undefined) == n_lin
        outs = iter(backward_pass(linear.jaxpr, linear.consts, undefined, cts))
        result = []
        for a, la in zip(t_avals, lin_avals, strict=True):
            result.append(instantiate_zeros(next(outs) if la is not None else Zero(a)))
        return tree_util.tree_unflatten(in_tree, result)

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
        one = np.ones((), ad._check_jax_type(ans).dtype)  # 1+0j for holomorphic outputs
        g = vjp_fun(one)
        g = g[0] if int_argnums else tuple(g)
        if has_aux:
            return (ans, aux), g
        return ans, g

    return value_and_grad_f


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

    return grad_f
