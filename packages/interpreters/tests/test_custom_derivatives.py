"""custom_jvp on test-local primitives (lax is a higher layer): the custom rule is used
under every transformation (its derivative differs from the true one on purpose),
nondiff_argnums, defjvps, symbolic zeros, pytrees, printed form, and JAX's errors.
custom_vjp, custom_gradient and closure_convert: test_custom_vjp.py."""

import functools
from re import escape

import numpy as np
import pytest
from custom_prims import ONE, XS, X, add, close, cos, mul, sin

from lamina.interpreters import jit, make_jaxpr
from lamina.interpreters.transformations.ad import jvp
from lamina.interpreters.transformations.batching import vmap
from lamina.interpreters.transformations.custom_derivatives import (
    CustomJVPException,
    SymbolicZero,
    custom_jvp,
)
from lamina.interpreters.transformations.reverse import grad, value_and_grad, vjp
from lamina.ir import dtypes


def make_sin_with_wrong_jvp():
    """sin whose JVP is 2 cos(x) t: twice the true one, so its use is visible."""

    @custom_jvp
    def f(x):
        return sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), mul(mul(2.0, cos(x)), t)

    return f


def test_eager_call_runs_the_function_and_not_the_rule():
    calls = []

    @custom_jvp
    def f(x):
        return sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        calls.append(1)
        return f(primals[0]), tangents[0]

    close(f(X), np.sin(X))
    close(jit(f)(X), np.sin(X))
    assert not calls
    jvp(f, (X,), (ONE,))
    assert calls


def test_custom_jvp_rule_used_by_forward_and_reverse_mode():
    f = make_sin_with_wrong_jvp()
    want = 2 * np.cos(X)
    y, t = jvp(f, (X,), (np.float32(0.5),))
    close(y, np.sin(X))
    close(t, 0.5 * want)
    close(grad(f)(X), want)
    v, g = value_and_grad(f)(X)
    close(v, np.sin(X))
    close(g, want)
    y, f_vjp = vjp(f, X)
    close(f_vjp(np.float32(2.0))[0], 2 * want)


def test_custom_jvp_composes_with_jit():
    f = make_sin_with_wrong_jvp()
    want = 2 * np.cos(X)
    close(jit(grad(f))(X), want)
    close(grad(jit(f))(X), want)
    close(jvp(jit(f), (X,), (ONE,))[1], want)
    close(jit(lambda x: jvp(f, (x,), (ONE,))[1])(X), want)


def test_custom_jvp_nested_differentiation_differentiates_the_rule():
    f = make_sin_with_wrong_jvp()
    close(grad(grad(f))(X), -2 * np.sin(X))
    close(jvp(grad(f), (X,), (ONE,))[1], -2 * np.sin(X))
    close(grad(jit(grad(f)))(X), -2 * np.sin(X))


def test_custom_jvp_under_vmap():
    f = make_sin_with_wrong_jvp()
    close(vmap(f)(XS), np.sin(XS))
    close(vmap(grad(f))(XS), 2 * np.cos(XS))
    close(jvp(vmap(f), (XS,), (np.ones_like(XS),))[1], 2 * np.cos(XS))
    close(vmap(lambda x: jvp(f, (x,), (ONE,))[1])(XS), 2 * np.cos(XS))
    close(jit(vmap(grad(f)))(XS), 2 * np.cos(XS))


def test_custom_jvp_pytrees_in_and_out():
    @custom_jvp
    def f(params, x):
        return {"y": mul(params["w"], sin(x)), "z": (x,)}

    @f.defjvp
    def f_jvp(primals, tangents):
        (params, x), (dparams, dx) = primals, tangents
        out = f(params, x)
        # A deliberately wrong coefficient on dx (3 instead of w cos x).
        dy = add(mul(dparams["w"], sin(x)), mul(3.0, dx))
        return out, {"y": dy, "z": (dx,)}

    params = {"w": np.float32(2.0)}
    out, tangent = jvp(f, (params, X), ({"w": ONE}, ONE))
    close(out["y"], 2 * np.sin(X))
    close(tangent["y"], np.sin(X) + 3)
    close(tangent["z"][0], 1.0)
    g = grad(lambda p, x: f(p, x)["y"], argnums=(0, 1))(params, X)
    close(g[0]["w"], np.sin(X))
    close(g[1], 3.0)


def test_nondiff_argnums_are_passed_first_and_not_differentiated():
    @functools.partial(custom_jvp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x)

    @apply.defjvp
    def apply_jvp(fn, primals, tangents):
        return apply(fn, primals[0]), mul(5.0, tangents[0])

    close(apply(sin, X), np.sin(X))
    close(grad(lambda x: apply(sin, x))(X), 5.0)
    close(jit(grad(lambda x: apply(sin, x)))(X), 5.0)

    @functools.partial(custom_jvp, nondiff_argnames=("scale",))
    def scaled(scale, x):
        return mul(scale, x)

    scaled.defjvp(lambda scale, p, t: (scaled(scale, *p), mul(scale, t[0])))
    # A traced non-differentiable argument has its gradient stopped, as in JAX.
    close(grad(lambda s: scaled(s, np.float32(3.0)))(np.float32(2.0)), 0.0)
    close(grad(lambda x: scaled(x, x))(np.float32(2.0)), 2.0)


def test_defjvps_one_rule_per_argument():
    @custom_jvp
    def f(x, y):
        return mul(sin(x), y)

    f.defjvps(lambda t, ans, x, y: mul(mul(cos(x), t), y), None)
    x, y = np.float32(0.3), np.float32(2.0)
    close(jvp(f, (x, y), (ONE, ONE))[1], np.cos(x) * y)  # y's tangent dropped
    gx, gy = grad(f, argnums=(0, 1))(x, y)
    close(gx, np.cos(x) * y)
    close(gy, 0.0)


def test_symbolic_zeros_reach_the_rule():
    seen = []

    @custom_jvp
    def f(x, y):
        return mul(x, y)

    @functools.partial(f.defjvp, symbolic_zeros=True)
    def f_jvp(primals, tangents):
        seen.append(tuple(type(t) is SymbolicZero for t in tangents))
        (x, y), (dx, dy) = primals, tangents
        out = mul(x, y) if type(dy) is SymbolicZero else add(mul(x, y), mul(0.0, dy))
        return out, mul(dx, y)

    close(grad(f)(np.float32(2.0), np.float32(3.0)), 3.0)
    assert seen[-1] == (False, True)


def test_integer_inputs_get_float0_cotangents():
    @custom_jvp
    def f(x, n):
        return mul(x, n)

    f.defjvp(lambda p, t: (f(*p), mul(t[0], 4.0)))
    _, f_vjp = vjp(f, np.float32(1.5), np.float32(2.0))
    close(f_vjp(ONE)[0], 4.0)
    (gx, gn) = vjp(lambda x, n: f(x, np.float32(2.0)), np.float32(1.5), np.int32(2))[1](ONE)
    close(gx, 4.0)
    assert np.asarray(gn).dtype == dtypes.float0


def test_keyword_arguments_resolved_by_signature():
    @custom_jvp
    def f(x, y=2.0):
        return mul(x, y)

    f.defjvp(lambda p, t: (f(*p), mul(t[0], 10.0)))
    close(f(X, y=np.float32(3.0)), 3 * X)
    close(grad(lambda x: f(x=x))(X), 10.0)

    @custom_jvp
    def g(x, *, z=None):
        return x

    g.defjvp(lambda p, t: (p, t))
    with pytest.raises(TypeError, match=r"custom_jvp-decorated function g could not be resolved"):
        g(X, z=1.0)
    with pytest.raises(TypeError, match="could not be resolved to positions: z"):
        g(X, z=1.0)
    with pytest.raises(TypeError, match="missing a required argument: 'x'"):
        g()


def test_linear_use_of_a_custom_jvp_function_is_transposed():
    @custom_jvp
    def double(x):
        return mul(2.0, x)

    @double.defjvp
    def double_jvp(primals, tangents):
        return double(primals[0]), double(tangents[0])  # applied to the tangent

    close(grad(lambda x: double(sin(x)))(X), 2 * np.cos(X))
    close(jit(grad(lambda x: double(sin(x))))(X), 2 * np.cos(X))


def test_closed_over_values():
    def outer(w, x):
        @custom_jvp
        def f(x):
            return mul(w, sin(x))

        f.defjvp(lambda p, t: (f(*p), mul(w, t[0])))
        return f(x)

    # A closed-over value that is not differentiated is a constant of the rule.
    close(grad(outer, argnums=1)(np.float32(2.0), X), 2.0)
    close(jit(grad(outer, argnums=1))(np.float32(2.0), X), 2.0)
    close(make_jaxpr(outer)(np.float32(2.0), X).jaxpr.eqns[0].params["num_consts"], 1)
    with pytest.raises(CustomJVPException, match="closed-over value"):
        grad(outer)(np.float32(2.0), X)


def test_custom_jvp_errors():
    @custom_jvp
    def f(x):
        return sin(x)

    with pytest.raises(AttributeError, match=escape("No JVP defined for custom_jvp function f")):
        f(X)
    cases = [
        (
            lambda p, t: (f(*p), (t[0], t[0])),
            "must produce primal and tangent outputs with equal container (pytree) "
            "structures, but got PyTreeDef(*) and PyTreeDef((*, *)) respectively.",
        ),
        (
            lambda p, t: (f(*p), np.zeros(3, np.float32)),
            "Custom JVP rule must produce primal and tangent outputs with corresponding "
            "shapes and dtypes. Expected float32[] (tangent type of float32[]) but got "
            "float32[3].",
        ),
        (
            lambda p, t: (f(*p), np.int32(1)),
            "Expected float32[] (tangent type of float32[]) but got int32[].",
        ),
        (
            lambda p, t: f(*p),
            "Custom JVP rule <lambda> for function f must produce a pair (list or tuple of "
            "length two) representing primal and tangent outputs, but got",
        ),
        (
            lambda p, t: ((f(*p),), (t[0],)),
            "the JVP rule output's first element had container/pytree structure:\n"
            "    (float32[],)\nwhile the custom_jvp-decorated function f had output "
            "container/pytree structure:\n    float32[].",
        ),
        (
            lambda p, t: (np.zeros(2, np.float32), np.zeros(2, np.float32)),
            "and in particular with leaves of the same shape/dtype), but instead the JVP "
            "rule output's first element had shapes/dtypes of:\n    float32[2]\n",
        ),
    ]
    for rule, message in cases:
        f.defjvp(rule)
        with pytest.raises(TypeError, match=escape(message)):
            jvp(f, (X,), (ONE,))
    with pytest.raises(TypeError, match=escape("Can't use ``defjvps`` with ``nondiff_argnums``.")):
        custom_jvp(lambda f, x: x, nondiff_argnums=(0,)).defjvps(None)


def test_custom_jvp_printed_form():
    @custom_jvp
    def f(x):
        return add(x, 1.0)

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(*primals), tangents[0]

    text = str(make_jaxpr(f)(np.array([4.2], np.float32)))
    assert text == (
        "{ lambda ; a:f32[1]. let\n"
        "    b:f32[1] = custom_jvp_call[\n"
        "      name=f\n"
        "      call_jaxpr={ lambda ; c:f32[1]. let d:f32[1] = add c 1.0:f32[] in (d,) }\n"
        "      jvp=f_jvp\n"
        "      symbolic_zeros=False\n"
        "    ] a\n"
        "  in (b,) }"
    ), text
