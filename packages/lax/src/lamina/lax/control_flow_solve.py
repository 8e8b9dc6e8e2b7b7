"""``custom_linear_solve`` and ``custom_root``: solvers whose derivatives come from the
linear algebra of the problem rather than from differentiating the solver's
iterations.

Both are built on ``custom_vjp``: the solve runs as written in the forward pass, and
the backward pass solves the transposed problem (``transpose_solve`` with the
transpose of ``matvec``; for roots, ``tangent_solve`` with the transposed Jacobian of
``f`` at the root, by the implicit function theorem). Values ``matvec`` or ``f`` close
over get their cotangents through the same linear solve.
"""

from __future__ import annotations

from lamina.interpreters import closure_convert, custom_vjp, linear_transpose, vjp
from lamina.interpreters.stop_gradient import stop_gradient
from lamina.ir import tree_util

__all__ = ["custom_linear_solve", "custom_root"]


def _neg(tree):
    from lamina.lax.elementwise import neg

    return tree_util.tree_map(neg, tree)


def _zeros_like(tree):
    from lamina.interpreters import ad

    def zeros(x):
        aval = getattr(x, "aval", None)
        if aval is None:
            from lamina.lax.control_flow_common import abstractify

            aval = abstractify(x)
        return ad.zeros_like_aval(aval)

    return tree_util.tree_map(zeros, tree)


def _split_aux(out, has_aux):
    if not has_aux:
        return out, None
    sol, aux = out
    return sol, aux


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """``x`` with ``matvec(x) == b``, computed by ``solve(matvec, b)``; differentiated
    through ``transpose_solve(vecmat, ct)`` (``solve`` itself when ``symmetric``)."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    matvec_conv, consts = closure_convert(matvec, b)
    n = len(consts)
    box = {}
    # Values `solve` closes over are passed in too; like JAX, they get no cotangent.
    solve_conv, solve_consts = closure_convert(
        lambda b, *c: solve(lambda x: matvec_conv(x, *c), b), b, *consts
    )

    n_solve = len(solve_consts)
    tsolve_consts = []
    if transpose_solve is not None:

        def transposed(ct, *c):
            vecmat = linear_transpose(lambda v: matvec_conv(v, *c), b)
            return transpose_solve(lambda y: vecmat(y)[0], ct)

        tsolve_conv, tsolve_consts = closure_convert(transposed, b, *consts)

    @custom_vjp
    def run(b, *args):
        out = solve_conv(b, *args[: n + n_solve])
        sol, box["aux"] = _split_aux(out, has_aux)
        return sol

    def fwd(b, *args):
        x = run(b, *args)
        return x, (x, args)

    def bwd(res, ct_x):
        x, args = res
        consts, extra = args[:n], args[n:]
        if transpose_solve is None:
            raise TypeError("transpose_solve required for backpropagation")

        out = tsolve_conv(ct_x, *consts, *extra[n_solve:])
        ct_b, _ = _split_aux(out, has_aux)
        ct_extra = tuple(_zeros_like(e) for e in extra)
        if not consts:
            return (ct_b, *ct_extra)
        _, pull = vjp(lambda *c: matvec_conv(x, *c), *consts)
        return (ct_b, *_neg(pull(ct_b)), *ct_extra)

    run.defvjp(fwd, bwd)
    sol = run(b, *consts, *solve_consts, *tsolve_consts)
    if has_aux:
        return sol, tree_util.tree_map(stop_gradient, box["aux"])
    return sol


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """A root of ``f`` found by ``solve(f, initial_guess)``, differentiated by the
    implicit function theorem with ``tangent_solve(g, y)`` solving the linear
    ``g(x) == y``."""
    f_conv, consts = closure_convert(f, initial_guess)
    n = len(consts)
    box = {}
    solve_conv, solve_consts = closure_convert(
        lambda g, *c: solve(lambda x: f_conv(x, *c), g), initial_guess, *consts
    )

    @custom_vjp
    def run(guess, *args):
        out = solve_conv(guess, *args)
        sol, box["aux"] = _split_aux(out, has_aux)
        return tree_util.tree_map(stop_gradient, sol)

    def fwd(guess, *args):
        x = run(guess, *args)
        return x, (x, guess, args)

    def bwd(res, ct_x):
        x, guess, args = res
        consts, extra = args[:n], args[n:]
        ct_extra = tuple(_zeros_like(e) for e in extra)

        def fx(v):
            return f_conv(v, *consts)

        # ct_consts = -J_c^T J_x^{-T} ct_x, with w = J_x^{-T} ct_x from tangent_solve.
        _, pull_x = vjp(fx, x)
        w = tangent_solve(lambda y: pull_x(y)[0], ct_x)
        ct_guess = _zeros_like(guess)
        if not consts:
            return (ct_guess, *ct_extra)
        _, pull = vjp(lambda *c: f_conv(x, *c), *consts)
        return (ct_guess, *_neg(pull(w)), *ct_extra)

    run.defvjp(fwd, bwd)
    sol = run(initial_guess, *consts, *solve_consts)
    if has_aux:
        return sol, tree_util.tree_map(stop_gradient, box["aux"])
    return sol
