"""``custom_linear_solve`` and ``custom_root``: solvers whose derivatives come from the
linear algebra of the problem rather than from differentiating the solver's
iterations.

``custom_linear_solve`` binds the ``custom_linear_solve`` primitive
(:mod:`.linear_solve`), which has JVP, transpose and batching rules of its
own. ``custom_root`` is built on ``custom_jvp``: the solve runs as written, and its tangent
comes from ``tangent_solve`` with the Jacobian of ``f`` at the root (the implicit
function theorem); reverse mode transposes that tangent.
Values ``matvec`` or ``f`` close over get their derivatives through the linear problem.
"""

from __future__ import annotations

from lamina.interpreters import (
    ad,
    closure_convert,
    custom_jvp,
    jvp,
    linear_transpose,
    linearize,
    stop_gradient,
)
from lamina.ir import tree_util
from lamina.lax.base.primitives import neg
from lamina.lax.control_flow import bodies
from lamina.lax.control_flow.bodies import abstractify
from lamina.lax.control_flow.linear_solve import (
    _LinearSolveTuple,
    bind_linear_solve,
)

__all__ = ["custom_linear_solve", "custom_root"]


def _neg(tree):
    return tree_util.tree_map(neg, tree)


def _zeros_like(tree):
    def zeros(x):
        aval = getattr(x, "aval", None)
        if aval is None:
            aval = abstractify(x)
        return ad.zeros_like_aval(aval)

    return tree_util.tree_map(zeros, tree)


def _split_aux(out, has_aux):
    if not has_aux:
        return out, None
    sol, aux = out
    return sol, aux


def _shapes(avals) -> list:
    return [tuple(a.shape) for a in avals]


def _check_matches_b(name: str, out_tree, out_avals, b_tree, b_avals):
    if out_tree != b_tree or _shapes(out_avals) != _shapes(b_avals):
        raise ValueError(
            f"{name}() output shapes must match b, got {_shapes(out_avals)} and {_shapes(b_avals)}"
        )


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """``x`` with ``matvec(x) == b``, computed by ``solve(matvec, b)``; differentiated
    through the linear problem (``transpose_solve(vecmat, ct)`` for reverse mode, or
    ``solve`` itself when ``symmetric``), never through ``solve``'s own operations."""
    b_flat, b_tree = tree_util.tree_flatten(b)
    b_avals = [bodies.abstractify(x) for x in b_flat]
    n_b = len(b_flat)
    leaves_tree = tree_util.tree_flatten(tuple(b_flat))[1]

    def traced(fun, name, with_aux):
        box = {}

        def flat_fun(*vector):
            out = fun(tree_util.tree_unflatten(b_tree, vector))
            aux_flat = []
            if with_aux:
                out, aux = out
                aux_flat, box["aux_tree"] = tree_util.tree_flatten(aux)
            out_flat, out_tree = tree_util.tree_flatten(out)
            out_avals = [bodies.abstractify(x) for x in out_flat]
            _check_matches_b(name, out_tree, out_avals, b_tree, b_avals)
            return [*out_flat, *aux_flat]

        jaxpr, consts, _ = bodies.trace_function(flat_fun, leaves_tree, b_avals, name)
        return jaxpr, consts, box.get("aux_tree")

    matvec_jaxpr, matvec_consts, _ = traced(matvec, "matvec", False)
    solve_jaxpr, solve_consts, aux_tree = traced(lambda v: solve(matvec, v), "solve", has_aux)
    if symmetric:
        vecmat_jaxpr, vecmat_consts = matvec_jaxpr, matvec_consts
        tsolve_jaxpr, tsolve_consts = solve_jaxpr, solve_consts
    elif transpose_solve is not None:

        def vecmat(ct):
            return linear_transpose(matvec, b)(ct)[0]

        vecmat_jaxpr, vecmat_consts, _ = traced(vecmat, "vecmat", False)
        tsolve_jaxpr, tsolve_consts, _ = traced(
            lambda v: transpose_solve(vecmat, v), "transpose_solve", has_aux
        )
    else:
        vecmat_jaxpr = tsolve_jaxpr = None
        vecmat_consts = tsolve_consts = []
    jaxprs = _LinearSolveTuple(matvec_jaxpr, vecmat_jaxpr, solve_jaxpr, tsolve_jaxpr)
    consts = _LinearSolveTuple(matvec_consts, vecmat_consts, solve_consts, tsolve_consts)
    outs = bind_linear_solve(consts, b_flat, jaxprs)
    x = tree_util.tree_unflatten(b_tree, outs[:n_b])
    if has_aux:
        aux = tree_util.tree_unflatten(aux_tree, [stop_gradient(a) for a in outs[n_b:]])
        return x, aux
    return x


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """A root of ``f`` found by ``solve(f, initial_guess)``, differentiated by the
    implicit function theorem: f(x(c), c) = 0 gives ẋ = −J_x⁻¹·J_c·ċ, with J_x⁻¹
    applied by ``tangent_solve(g, y)`` (``g``: ``f`` linearized at the root). Reverse
    mode transposes that tangent, so ``tangent_solve`` must be linear in ``y``."""
    f_conv, consts = closure_convert(f, initial_guess)
    n = len(consts)
    box = {}
    solve_conv, solve_consts = closure_convert(
        lambda g, *c: solve(lambda x: f_conv(x, *c), g), initial_guess, *consts
    )

    def linearize_and_solve(x, b, *c):
        return tangent_solve(linearize(lambda y: f_conv(y, *c), x)[1], b)

    # Traced now, while the values tangent_solve closes over are alive: the rule below
    # runs later, inside other transformations.
    tangent_conv, tangent_consts = closure_convert(
        linearize_and_solve, initial_guess, initial_guess, *consts
    )
    n_solve = len(solve_consts)

    def find_root(guess, *args):
        out = solve_conv(guess, *args[: n + n_solve])
        sol, box["aux"] = _split_aux(out, has_aux)
        return tree_util.tree_map(stop_gradient, sol)

    def root_jvp(primals, tangents):
        guess, *args = primals
        x = run(guess, *args)  # itself differentiable: higher derivatives apply this rule again
        consts, consts_dot = tuple(args[:n]), tuple(tangents[1 : 1 + n])
        if not consts:
            return x, _zeros_like(x)
        _, rhs = jvp(lambda *c: f_conv(x, *c), consts, consts_dot)
        x_dot = tangent_conv(x, rhs, *consts, *args[n + n_solve :])
        return x, _neg(x_dot)

    run = custom_jvp(find_root)
    run.defjvp(root_jvp)
    sol = run(initial_guess, *consts, *solve_consts, *tangent_consts)
    if has_aux:
        return sol, tree_util.tree_map(stop_gradient, box["aux"])
    return sol
