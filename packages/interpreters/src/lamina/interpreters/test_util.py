"""Numerical checks of derivatives: ``check_jvp`` compares JVPs against central
differences ``(f(x + eps t) - f(x - eps t)) / 2eps``, ``check_vjp`` VJPs against JVPs,
and ``check_grads`` both, to any order.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters.transformations.ad import jvp
from lamina.interpreters.transformations.reverse import vjp
from lamina.ir import dtypes, tree_util

__all__ = [
    "check_grads",
    "check_jvp",
    "check_vjp",
    "numerical_jvp",
    "recorded_parameters",
    "signature_parameters",
]

_DEFAULT_TOL = {
    np.dtype(np.float16): 1e-1,
    np.dtype(dtypes.bfloat16): 1e-1,
    np.dtype(np.float32): 1e-2,
    np.dtype(np.float64): 1e-5,
}
_DEFAULT_EPS = {
    np.dtype(np.float16): 1e-1,
    np.dtype(dtypes.bfloat16): 1e-1,
    np.dtype(np.float32): 1e-3,
    np.dtype(np.float64): 1e-5,
}


def _dtype_of(x):
    return np.dtype(getattr(x, "dtype", None) or np.asarray(x).dtype)


def _is_inexact(x) -> bool:
    return dtypes.issubdtype(_dtype_of(x), np.inexact)


def _wide(x) -> np.ndarray:
    """``x`` in double precision, complex kept complex."""
    x = np.asarray(x)
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def _perturb_leaf(x, t, scale):
    if not _is_inexact(x):
        return x
    return (_wide(x) + scale * _wide(t)).astype(_dtype_of(x))


def _perturb(x, t, scale):
    """``x + scale * t`` for an argument that may be a pytree of arrays."""
    return tree_util.tree_map(lambda a, b: _perturb_leaf(a, b, scale), x, t)


def numerical_jvp(f, primals, tangents, eps: float):
    """Central differences of ``f`` (flat arrays in, a pytree out) along ``tangents``."""
    plus = f(*[_perturb(x, t, eps) for x, t in zip(primals, tangents, strict=True)])
    minus = f(*[_perturb(x, t, -eps) for x, t in zip(primals, tangents, strict=True)])
    return tree_util.tree_map(
        lambda a, b: (_wide(a) - _wide(b)) / (2 * eps),
        plus,
        minus,
    )


def _random_tangent(x, rng):
    """A random tangent of the argument ``x``, which may be a pytree of arrays."""
    return tree_util.tree_map(lambda leaf: _random_leaf_tangent(leaf, rng), x)


def _random_leaf_tangent(x, rng):
    if not _is_inexact(x):
        return np.zeros(np.shape(x), dtypes.float0)
    shape, dtype = np.shape(x), _dtype_of(x)
    if dtypes.issubdtype(dtype, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _check_close(what, got, want, atol, rtol):
    got_leaves = tree_util.tree_leaves(got)
    want_leaves = tree_util.tree_leaves(want)
    if len(got_leaves) != len(want_leaves):
        raise AssertionError(f"{what}: {len(got_leaves)} outputs, expected {len(want_leaves)}")
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g = np.asarray(g)
        if g.dtype == dtypes.float0:
            continue
        np.testing.assert_allclose(
            _wide(g), _wide(w), atol=atol, rtol=rtol,
            err_msg=what,
        )  # fmt: skip


def _tolerance(args, given, table):
    if given is not None:
        return given
    inexact = [_dtype_of(x) for x in tree_util.tree_leaves(args) if _is_inexact(x)]
    return max((table.get(d, 1e-2) for d in inexact), default=table[np.dtype(np.float32)])


def check_jvp(f, args, atol=None, rtol=None, eps=None, rng=None):
    """Checks ``jvp(f)`` at ``args`` (a sequence of arrays) along a random tangent
    against central differences; raises ``AssertionError`` if they differ."""
    rng = rng or np.random.default_rng(0)
    args = list(args)
    eps = _tolerance(args, eps, _DEFAULT_EPS)
    atol = _tolerance(args, atol, _DEFAULT_TOL)
    rtol = _tolerance(args, rtol, _DEFAULT_TOL)
    tangents = [_random_tangent(x, rng) for x in args]
    out, out_t = jvp(f, tuple(args), tuple(tangents))
    want = numerical_jvp(f, args, tangents, eps)
    _check_close("JVP against numerical differences", out_t, want, atol, rtol)
    out_again = f(*args)
    _check_close("primal output of jvp against f", out, out_again, atol, rtol)


def check_vjp(f, args, atol=None, rtol=None, eps=None, rng=None):
    """Checks ``vjp(f)`` at ``args`` against central differences: for random ``t`` and
    ``ct``, ``<J^T ct, t>`` must equal ``<ct, J t>`` with ``J t`` computed numerically (so
    functions whose forward mode is refused, like ``custom_vjp`` ones, are checked too)."""
    rng = rng or np.random.default_rng(0)
    args = list(args)
    eps = _tolerance(args, eps, _DEFAULT_EPS)
    atol = _tolerance(args, atol, _DEFAULT_TOL)
    rtol = _tolerance(args, rtol, _DEFAULT_TOL)
    tangents = [_random_tangent(x, rng) for x in args]
    out, vjp_fun = vjp(f, *args)
    _check_close("primal output of vjp against f", out, f(*args), atol, rtol)
    out_t = numerical_jvp(f, args, tangents, eps)
    cts = tree_util.tree_map(lambda o: _random_tangent(o, rng), out)
    # JAX's convention for complex values: the VJP of the conjugated cotangent,
    # conjugated back, pairs with tangents under Re <x, y> = Re(sum(conj(x) * y)).
    conj = lambda tree: tree_util.tree_map(  # noqa: E731
        lambda v: v if np.asarray(v).dtype == dtypes.float0 else np.conj(np.asarray(v)), tree
    )
    in_cts = conj(vjp_fun(conj(cts)))

    def inner(xs, ys):
        total = 0.0
        for x, y in zip(tree_util.tree_leaves(xs), tree_util.tree_leaves(ys), strict=True):
            x, y = np.asarray(x), np.asarray(y)
            if x.dtype == dtypes.float0 or y.dtype == dtypes.float0:
                continue
            total += float(np.real(np.vdot(_wide(x).ravel(), _wide(y).ravel())))
        return total

    got, want = inner(in_cts, tangents), inner(cts, out_t)
    message = "VJP against numerical differences (<J^T ct, t> vs <ct, J t>)"
    np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, err_msg=message)


def check_grads(f, args, order: int, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Checks derivatives of ``f`` at ``args`` up to ``order`` (JAX's signature): in
    forward mode (``"fwd"``) JVPs against numerical differences, in reverse mode
    (``"rev"``) VJPs against numerical differences; higher orders differentiate those again."""
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    rng = np.random.default_rng(0)

    def check(fun, order):
        if "fwd" in modes:
            check_jvp(fun, args, atol=atol, rtol=rtol, eps=eps, rng=rng)
        if "rev" in modes:
            check_vjp(fun, args, atol=atol, rtol=rtol, eps=eps, rng=rng)
        if order > 1:
            if "fwd" in modes:
                tangents = [_random_tangent(x, rng) for x in args]

                def fun_jvp(*primals):
                    return jvp(fun, primals, tuple(tangents))[1]

                check(fun_jvp, order - 1)
            if "rev" in modes:
                cts = tree_util.tree_map(lambda o: _random_tangent(o, rng), fun(*args))

                def fun_vjp(*primals):
                    return vjp(fun, *primals)[1](cts)

                check(fun_vjp, order - 1)

    check(f, order)


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    return [*parts, current.strip()] if current.strip() else parts


def recorded_parameters(signature_text: str) -> list[tuple[str, str | None]]:
    """``(name, default text or None)`` of each parameter of a signature as
    ``str(inspect.signature(f))`` prints it (the API surfaces recorded from JAX), with
    ``*``/``**`` prefixes and a bare ``*`` kept, positional-only markers dropped."""
    inside = signature_text.split(" -> ")[0].strip()[1:-1]
    out = []
    for part in _split_top_level(inside):
        if part == "/":
            continue
        head, _, default = part.partition(" = ") if " = " in part else part.partition("=")
        out.append((head.split(":")[0].strip(), default.strip() or None))
    return out


def signature_parameters(fun) -> list[tuple[str, object]]:
    """``(name, default)`` of each parameter of ``fun`` (``inspect.Parameter.empty``
    where it has none), in the order and form ``recorded_parameters`` gives (a bare
    ``*`` before the first keyword-only one)."""
    import inspect

    out, star_seen = [], False
    for p in inspect.signature(fun).parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star_seen:
            out.append(("*", inspect.Parameter.empty))
        star_seen = star_seen or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        out.append((prefix + p.name, p.default))
    return out
