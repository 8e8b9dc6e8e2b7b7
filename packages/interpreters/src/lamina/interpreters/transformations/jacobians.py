"""Dense Jacobians and transposes: ``jacfwd``, ``jacrev`` (``jacobian``), ``hessian``
and ``linear_transpose``.

``jacfwd`` pushes the standard basis of the input space forwards (a JVP under ``vmap``);
``jacrev`` pulls the standard basis of the output space back (the backward pass of one
linearization, under ``vmap``). The Jacobian is a pytree of pytrees: the output's
structure outside, the differentiated arguments' structure inside, and the leaf for
output leaf ``y`` and input leaf ``x`` has shape ``y.shape + x.shape``.

This layer has no reshape or slicing, so a basis is never one flat identity split across
leaves as in JAX. Each leaf has its own basis of shape ``x.shape + x.shape``, mapped by
one ``vmap`` per axis of ``x``: the Jacobian's axes then come out in place, moved by
``vmap``'s ``out_axes`` alone. ``jacfwd`` thus runs the JVP once per input leaf (the
primal work is repeated per leaf; under ``jit`` XLA merges the copies), ``jacrev`` the
backward pass once per output leaf (the primal work runs once).
"""

from __future__ import annotations

import operator

import numpy as np

from lamina.interpreters.core.tangents import Zero, tangent_aval, zeros_like_aval
from lamina.interpreters.core.tracing import find_current_trace, shaped_abstractify
from lamina.interpreters.transformations import ad, reverse
from lamina.interpreters.transformations.batching import vmap
from lamina.interpreters.transformations.partial_eval import partial_eval_flat, with_known_outputs
from lamina.ir import ShapedArray, dtypes, transformation_boundary, tree_util

__all__ = ["hessian", "jacfwd", "jacobian", "jacrev", "linear_transpose"]


# --------------------------------------------------------------------------- helpers


def _ensure_index(argnums):
    """An int, or a tuple of ints (any iterable of them)."""
    try:
        return operator.index(argnums)
    except TypeError:
        return tuple(map(operator.index, argnums))


def _argnums_partial(fun, argnums, args, kwargs):
    """``(f, dyn_args)``: ``f(*dyn_args)`` calls ``fun`` with ``args[argnums]`` replaced."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    n = len(args)
    resolved = []
    for i in nums:
        if not -n <= i < n:
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have value "
                "greater than or equal to -len(args) and less than len(args), but got "
                f"value {i} for len(args) == {n}."
            )
        resolved.append(i % n)

    def f_partial(*dyn_args):
        full = list(args)
        for i, x in zip(resolved, dyn_args, strict=True):
            full[i] = x
        return fun(*full, **kwargs)

    return f_partial, tuple(args[i] for i in resolved)


def _basis(aval: ShapedArray) -> np.ndarray:
    """The standard basis of the space of ``aval`` (a tangent type): an array of shape
    ``aval.shape * 2`` whose entry at index ``i`` is the one-hot array at ``i``."""
    return np.eye(aval.size, dtype=aval.dtype).reshape(aval.shape + aval.shape)


def _map_over_basis(fn, basis, depth: int, out_axis):
    """``fn`` applied to every vector of ``basis`` (its leading ``depth`` axes index the
    vectors), by ``depth`` nested ``vmap``\\ s. ``out_axis(level)`` places the axis the
    ``level``-th innermost ``vmap`` maps in ``fn``'s (list of) outputs."""
    mapped = fn
    for level in range(1, depth + 1):
        mapped = vmap(mapped, in_axes=0, out_axes=out_axis(level))
    return mapped(basis)


def _zeros(shape, dtype):
    """The Jacobian block of an input and output that do not interact."""
    return zeros_like_aval(ShapedArray(shape, dtype))


def _assemble(out_tree, in_tree, blocks):
    """The pytree of pytrees holding ``blocks[j][i]`` (output leaf j, input leaf i)."""
    return tree_util.tree_unflatten(
        out_tree, [tree_util.tree_unflatten(in_tree, row) for row in blocks]
    )


def _example_tree(argnums, dyn_args):
    return tree_util.tree_structure(dyn_args[0] if isinstance(argnums, int) else dyn_args)


# --------------------------------------------------------------------------- dtype checks


def _check_input_dtype_jacfwd(holomorphic: bool, x) -> None:
    dtype = ad._check_jax_type(x).dtype
    if holomorphic:
        if not dtypes.issubdtype(dtype, np.complexfloating):
            raise TypeError(
                "jacfwd with holomorphic=True requires inputs with complex dtype, but got "
                f"{dtype.name}."
            )
    elif not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(
            "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
            f"np.floating), but got {dtype.name}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex inputs or integer inputs, use jax.jvp directly."
        )


def _check_output_dtype_jacfwd(holomorphic: bool, aval) -> None:
    if holomorphic and not dtypes.issubdtype(aval.dtype, np.complexfloating):
        raise TypeError(
            "jacfwd with holomorphic=True requires outputs with complex dtype, but got "
            f"{aval.dtype.name}."
        )


# --------------------------------------------------------------------------- jacfwd


@transformation_boundary
def jacfwd(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Jacobian of ``fun`` by forward mode, a column (input direction) at a time.

    Returns a function taking ``fun``'s arguments and returning the Jacobian of its
    output with respect to ``args[argnums]`` (``(jacobian, aux)`` with ``has_aux``).
    """
    ad._check_callable(fun)
    argnums = _ensure_index(argnums)

    def jacfun(*args, **kwargs):
        f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
        in_flat, in_tree = tree_util.tree_flatten(dyn_args)
        for x in in_flat:
            _check_input_dtype_jacfwd(holomorphic, x)
        t_avals = [tangent_aval(shaped_abstractify(x)) for x in in_flat]
        box = {}

        def flat_fun(*xs):
            trace = find_current_trace()  # the JVP trace: aux loses its tangents
            out = f_partial(*tree_util.tree_unflatten(in_tree, xs))
            if has_aux:
                out, aux = _split_aux(out)
                box["aux"] = ad._strip_tangents(aux, trace)
            flat, box["out_tree"] = tree_util.tree_flatten(out)
            box["out_avals"] = [ad._check_jax_type(y) for y in flat]
            return flat

        def pushforward(i, tangent):
            tangents = [tangent if k == i else Zero(a) for k, a in enumerate(t_avals)]
            _, outs = ad.jvp_flat(flat_fun, in_flat, tangents)
            box["nonzero"] = [type(t) is not Zero for t in outs]
            return [t for t in outs if type(t) is not Zero]

        columns = []  # per input leaf: the blocks of every output leaf
        for i, t_aval in enumerate(t_avals):
            mapped = _map_over_basis(
                lambda t, i=i: pushforward(i, t), _basis(t_aval), t_aval.ndim, operator.neg
            )
            nonzero_it = iter(mapped)
            column = []
            for y_aval, nz in zip(box["out_avals"], box["nonzero"], strict=True):
                y_t = tangent_aval(y_aval)
                column.append(
                    next(nonzero_it) if nz else _zeros(y_t.shape + t_aval.shape, y_t.dtype)
                )
            columns.append(column)
        if not t_avals:  # nothing to differentiate: only the output's structure is needed
            ad.jvp_flat(flat_fun, [], [])
        for y_aval in box["out_avals"]:
            _check_output_dtype_jacfwd(holomorphic, y_aval)
        blocks = [list(row) for row in zip(*columns, strict=True)] or [[] for _ in box["out_avals"]]
        jac = _assemble(box["out_tree"], _example_tree(argnums, dyn_args), blocks)
        return (jac, box["aux"]) if has_aux else jac

    return ad.named_like(jacfun, fun, "Jacobian (forward mode)", argnums)


def _split_aux(out):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(
            "expected function with aux output to return a two-element tuple, but got "
            f"type {type(out)} with value {out!r}"
        )
    return out


# --------------------------------------------------------------------------- jacrev


@transformation_boundary
def jacrev(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
           allow_int: bool = False):  # fmt: skip
    """The Jacobian of ``fun`` by reverse mode, a row (output component) at a time.

    Returns a function taking ``fun``'s arguments and returning the Jacobian of its
    output with respect to ``args[argnums]`` (``(jacobian, aux)`` with ``has_aux``).
    """
    ad._check_callable(fun)
    argnums = _ensure_index(argnums)

    def jacfun(*args, **kwargs):
        f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
        for x in tree_util.tree_leaves(dyn_args):
            reverse._check_input_dtype_revderiv("jacrev", holomorphic, allow_int, x)
        ys, linear, _, box, t_avals, lin_avals = reverse._linearize_tree(
            f_partial, dyn_args, has_aux
        )
        y_avals = [ad._check_jax_type(y) for y in ys]
        for y in ys:
            reverse._check_output_dtype_revderiv("jacrev", holomorphic, y)
        if not ys:  # JAX's basis of the outputs asks their result type; NumPy's error
            raise ValueError("at least one array or dtype is required")
        ct_avals = [tangent_aval(a) for a in y_avals]
        undefined = [reverse.UndefinedPrimal(a) for a in linear.in_avals]
        pattern = {}

        def pullback(j, ct):
            cts = [ct if k == j else Zero(a) for k, a in enumerate(ct_avals)]
            linear_cts = iter(reverse.backward_pass(linear.jaxpr, linear.consts, undefined, cts))
            in_cts = [next(linear_cts) if a is not None else None for a in lin_avals]
            pattern["nonzero"] = [c is not None and type(c) is not Zero for c in in_cts]
            return [c for c, nz in zip(in_cts, pattern["nonzero"], strict=True) if nz]

        blocks = []
        for j, ct_aval in enumerate(ct_avals):
            mapped = _map_over_basis(
                lambda ct, j=j: pullback(j, ct), _basis(ct_aval), ct_aval.ndim, lambda _: 0
            )
            nonzero_it = iter(mapped)
            row = []
            for t_aval, nz in zip(t_avals, pattern["nonzero"], strict=True):
                row.append(
                    next(nonzero_it) if nz else _zeros(ct_aval.shape + t_aval.shape, t_aval.dtype)
                )
            blocks.append(row)
        jac = _assemble(box["out_tree"], _example_tree(argnums, dyn_args), blocks)
        return (jac, box["aux"]) if has_aux else jac

    return ad.named_like(jacfun, fun, "Jacobian (reverse mode)", argnums)


@transformation_boundary
def jacobian(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
             allow_int: bool = False):  # fmt: skip
    """An alias of :func:`jacrev`."""
    return jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic, allow_int=allow_int)


@transformation_boundary
def hessian(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Hessian of ``fun`` as a dense array (or pytree of them): ``jacfwd`` of
    ``jacrev``. For output leaf ``y`` and input leaves ``x1``, ``x2`` the block has shape
    ``y.shape + x1.shape + x2.shape``."""
    return jacfwd(
        jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic),
        argnums,
        has_aux=has_aux,
        holomorphic=holomorphic,
    )


# --------------------------------------------------------------------------- linear_transpose


@transformation_boundary
def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function ``fun``, whose arguments have the shapes and
    dtypes of ``primals`` (arrays, or anything with ``shape`` and ``dtype``).

    Returns a function mapping a cotangent of ``fun``'s output (its structure, shapes
    and dtypes) to a tuple of cotangents of ``primals``. ``fun`` is traced once, now;
    a ``fun`` that is not linear fails when the transpose is applied.
    """
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    primals_flat, in_tree = tree_util.tree_flatten(primals)
    in_avals = [shaped_abstractify(x) for x in primals_flat]
    box = {}

    def flat_fun(*xs):
        out = fun(*tree_util.tree_unflatten(in_tree, xs))
        flat, box["out_tree"] = tree_util.tree_flatten(out)
        return flat

    # As JAX: what does not depend on the inputs is computed now; its values are
    # the transpose's constants.
    known_outs, closed = partial_eval_flat(flat_fun, [], in_avals, "linear_transpose")
    if any(o is not None for o in known_outs):
        closed = with_known_outputs(closed, known_outs)
    out_tree, out_avals = box["out_tree"], list(closed.out_avals)
    in_dtypes = [a.dtype for a in in_avals]
    out_dtypes = [a.dtype for a in out_avals]
    every = in_dtypes + out_dtypes
    if not (
        all(dtypes.issubdtype(d, np.inexact) for d in every)
        or all(dtypes.issubdtype(d, np.integer) for d in every)
    ):
        raise TypeError(
            "linear_transpose only supports [float or complex] -> [float or complex], and "
            f"integer -> integer functions, but got {in_dtypes} -> {out_dtypes}."
        )

    def transposed_fun(consts, out_cotangent):
        cts, ct_tree = tree_util.tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError(
                f"cotangent tree does not match function output, expected {out_tree} but "
                f"got {ct_tree}"
            )
        if not all(_type_matches(a, c) for a, c in zip(out_avals, cts, strict=True)):
            raise TypeError(
                f"cotangent type does not match function output, expected {out_avals} but got {cts}"
            )
        undefined = [reverse.UndefinedPrimal(tangent_aval(a)) for a in in_avals]
        in_cts = reverse.backward_pass(closed.jaxpr, consts, undefined, cts)
        return tree_util.tree_unflatten(in_tree, [ad.instantiate_zeros(c) for c in in_cts])

    # A Partial is a pytree, so the transpose can be passed through jit and friends.
    return tree_util.Partial(transposed_fun, list(closed.consts))


def _type_matches(aval, x) -> bool:
    """Shape and dtype agree (weak types aside), as JAX's ``typecheck`` asks."""
    try:
        got = shaped_abstractify(x)
    except TypeError:
        return False
    return got.shape == aval.shape and got.dtype == aval.dtype
