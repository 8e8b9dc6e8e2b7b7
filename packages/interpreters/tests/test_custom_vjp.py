"""custom_vjp, custom_gradient and closure_convert on test-local primitives: the custom
VJP is used under reverse mode, jit, vmap and nested differentiation (its derivative
differs from the true one on purpose); forward mode is JAX's error; printed forms and
JAX's errors."""

import functools
from re import escape

import numpy as np
import pytest
from custom_prims import ONE, XS, X, add, close, cos, mul, sin

from lamina.interpreters import jit, make_jaxpr
from lamina.interpreters.core.errors import UnexpectedTracerError
from lamina.interpreters.transformations.ad import jvp
from lamina.interpreters.transformations.batching import vmap
from lamina.interpreters.transformations.custom_derivatives import (
    CustomVJPException,
    CustomVJPPrimal,
    closure_convert,
    custom_gradient,
    custom_vjp,
)
from lamina.interpreters.transformations.reverse import grad, vjp
from lamina.ir.dtypes import float0 as F0


def make_sin_with_wrong_vjp():
    """sin whose VJP is 3 cos(x) ct."""

    @custom_vjp
    def f(x):
        return sin(x)

    def f_fwd(x):
        return f(x), cos(x)

    def f_bwd(cos_x, g):
        return (mul(mul(3.0, cos_x), g),)

    f.defvjp(f_fwd, f_bwd)
    return f


def test_custom_vjp_rule_used_by_reverse_mode():
    f = make_sin_with_wrong_vjp()
    want = 3 * np.cos(X)
    close(f(X), np.sin(X))
    close(grad(f)(X), want)
    close(vjp(f, X)[1](np.float32(2.0))[0], 2 * want)
    close(jit(grad(f))(X), want)
    close(grad(jit(f))(X), want)
    close(jit(f)(X), np.sin(X))


def test_custom_vjp_nested_differentiation_differentiates_bwd():
    f = make_sin_with_wrong_vjp()
    close(grad(grad(f))(X), -3 * np.sin(X))
    close(grad(jit(grad(f)))(X), -3 * np.sin(X))
    # Forward over reverse works where fwd does not call f itself; where it does, the
    # outer jvp reaches f, which (as in JAX) is an error.
    with pytest.raises(TypeError, match="forward-mode autodiff"):
        jvp(grad(f), (X,), (ONE,))

    @custom_vjp
    def g(x):
        return sin(x)

    g.defvjp(lambda x: (sin(x), cos(x)), lambda cos_x, ct: (mul(mul(3.0, cos_x), ct),))
    close(jvp(grad(g), (X,), (ONE,))[1], -3 * np.sin(X))


def test_custom_vjp_under_vmap():
    f = make_sin_with_wrong_vjp()
    close(vmap(f)(XS), np.sin(XS))
    close(vmap(grad(f))(XS), 3 * np.cos(XS))
    # grad of a vmapped function (all arguments batched here; lax tests cover in_axes=None)
    close(vjp(vmap(f), XS)[1](np.ones_like(XS))[0], 3 * np.cos(XS))


def test_custom_vjp_under_vmap_with_an_unbatched_float0_operand():
    # As JAX 0.10.2 (values recorded from it): a float0 operand has no data to put on a
    # device when vmap broadcasts it to the batch.
    @custom_vjp
    def f(x, z):
        return mul(x, 2.0)

    f.defvjp(lambda x, z: (mul(x, 2.0), None), lambda r, ct: (mul(ct, 2.0), np.zeros((), F0)))
    z = np.zeros((), F0)
    close(vmap(lambda x: f(x, z))(XS), 2 * XS)
    close(jit(vmap(lambda x: f(x, z)))(XS), 2 * XS)


def test_forward_mode_of_custom_vjp_is_an_error():
    f = make_sin_with_wrong_vjp()
    message = "can't apply forward-mode autodiff \\(jvp\\) to a custom_vjp function."
    with pytest.raises(TypeError, match=message):
        jvp(f, (X,), (ONE,))
    with pytest.raises(TypeError, match=message):
        jit(lambda x: jvp(f, (x,), (ONE,)))(X)


def test_custom_vjp_pytrees_none_cotangents_and_residuals():
    @custom_vjp
    def f(a, b):
        return {"out": mul(a["x"], b)}

    def f_fwd(a, b):
        return f(a, b), {"keep": (a["x"], b)}

    def f_bwd(res, g):
        x, _ = res["keep"]
        return {"x": mul(mul(g["out"], 7.0), x)}, None  # b gets a zero cotangent

    f.defvjp(f_fwd, f_bwd)
    ga, gb = grad(lambda a, b: f(a, b)["out"], argnums=(0, 1))(
        {"x": np.float32(2.0)}, np.float32(3.0)
    )
    close(ga["x"], 14.0)
    close(gb, 0.0)


def test_custom_vjp_nondiff_argnums():
    @functools.partial(custom_vjp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x)

    apply.defvjp(lambda fn, x: (apply(fn, x), x), lambda fn, x, g: (mul(fn(x), g),))
    close(grad(lambda x: apply(sin, x))(X), np.sin(X))
    with pytest.raises(UnexpectedTracerError, match="in a position indicated by nondiff_argnums"):
        grad(lambda x: apply(x, x))(X)


def test_custom_vjp_symbolic_zeros():
    seen = []

    @custom_vjp
    def f(x, y):
        return mul(x, y)

    def f_fwd(x, y):
        seen.append((type(x) is CustomVJPPrimal, x.perturbed, y.perturbed))
        return f(x.value, y.value), y.value

    f.defvjp(f_fwd, lambda y, g: (mul(g, y), None), symbolic_zeros=True)
    close(grad(f)(np.float32(2.0), np.float32(3.0)), 3.0)
    assert seen == [(True, True, False)]


def test_custom_vjp_errors():
    @custom_vjp
    def f(x, y):
        return mul(x, y)

    with pytest.raises(AttributeError, match=escape("No VJP defined for custom_vjp function f")):
        f(X, X)
    two = (np.float32(1.0), np.float32(2.0))
    f.defvjp(lambda x, y: f(x, y), lambda r, g: (g, g))
    with pytest.raises(TypeError, match=escape("instead of a pair the fwd rule <lambda> produced")):
        grad(f)(*two)
    f.defvjp(lambda x, y: (f(x, y), None), lambda r, g: (g,))
    message = (
        "Custom VJP bwd rule must produce an output with the same container (pytree) "
        "structure as the args tuple of the primal function, and in particular must "
        "produce a tuple of length equal to the number of arguments to the primal "
        "function, but got bwd output structure PyTreeDef((*,)) for primal input "
        "structure PyTreeDef((*, *))."
    )
    with pytest.raises(TypeError, match=escape(message)):
        grad(f)(*two)
    f.defvjp(lambda x, y: (f(x, y), None), lambda r, g: (g, np.zeros(3, np.float32)))
    message = (  # recorded from JAX 0.10.2
        "Custom VJP bwd rule must produce an output with the same type as the args tuple of "
        "the primal function, but at output[1] the bwd rule produced an output of type "
        "float32[3] corresponding to an input of type float32[], so the shapes do not match"
    )
    with pytest.raises(ValueError, match=escape(message)):
        grad(f)(*two)
    f.defvjp(lambda x, y: ((f(x, y),), None), lambda r, g: (g, g))
    # As in JAX, fwd is checked against the primal function once the call is staged.
    with pytest.raises(TypeError, match="the fwd rule output's first element had container/pytree"):
        grad(jit(f))(*two)


def test_custom_vjp_closed_over_differentiated_value_is_an_error():
    def outer(w, x):
        @custom_vjp
        def f(x):
            return mul(w, x)

        f.defvjp(lambda x: (f(x), None), lambda r, g: (mul(w, g),))
        return f(x)

    close(grad(outer, argnums=1)(np.float32(2.0), X), 2.0)
    with pytest.raises(CustomVJPException, match="closed-over value into the custom_vjp"):
        grad(outer)(np.float32(2.0), X)


def test_custom_vjp_printed_forms():
    @custom_vjp
    def f(x):
        return add(x, 1.0)

    def f_fwd(x):
        return f(x), ()

    def f_bwd(_, g):
        return (g,)

    f.defvjp(f_fwd, f_bwd)
    x = np.array([4.2], np.float32)
    assert str(make_jaxpr(f)(x)) == (
        "{ lambda ; a:f32[1]. let\n"
        "    b:f32[1] = custom_vjp_call[\n"
        "      name=f\n"
        "      bwd=f_bwd\n"
        "      call_jaxpr={ lambda ; c:f32[1]. let d:f32[1] = add c 1.0:f32[] in (d,) }\n"
        "      fwd=f_fwd\n"
        "      symbolic_zeros=False\n"
        "    ] a\n"
        "  in (b,) }"
    )
    text = str(make_jaxpr(lambda x: jvp(f, (x,), (x,))[1])(x))
    assert (
        "custom_lin[\n      bwd=f_bwd\n      in_zeros=[False]\n      num_res=0\n"
        "      symbolic_zeros=False\n    ] a"
    ) in text, text


# ---------------------------------------------------------------- custom_gradient, closure_convert


def test_custom_gradient():
    @custom_gradient
    def f(x, y):
        s = sin(x)
        return mul(s, y), lambda g: (mul(g, mul(4.0, s)), mul(g, 5.0))

    x, y = np.float32(0.4), np.float32(2.0)
    close(f(x, y), np.sin(x) * y)
    gx, gy = grad(f, argnums=(0, 1))(x, y)
    close(gx, 4 * np.sin(x))
    close(gy, 5.0)
    close(jit(grad(f))(x, y), 4 * np.sin(x))
    close(vmap(grad(f))(XS, XS), 4 * np.sin(XS))
    close(grad(grad(f))(x, y), 4 * np.cos(x))  # the closed-over sin(x) is differentiated

    @custom_gradient
    def single(x):
        return sin(x), lambda g: mul(g, 9.0)  # one argument: a bare cotangent is fine

    close(grad(single)(x), 9.0)


def test_closure_convert_hoists_traced_constants():
    def outer(w, x):
        converted, consts = closure_convert(lambda x: mul(w, sin(x)), x)
        return converted(x, *consts), len(consts)

    # Concrete closed-over values stay inside; differentiated ones are hoisted.
    y, n_hoisted = outer(np.float32(2.0), X)
    close(y, 2 * np.sin(X))
    assert n_hoisted == 0
    hoisted = []

    def loss(w):
        y, n_hoisted = outer(w, X)
        hoisted.append(n_hoisted)
        return y

    close(grad(loss)(np.float32(2.0)), np.sin(X))
    assert hoisted == [1]
    converted, _ = closure_convert(lambda x: mul(2.0, x), X)
    with pytest.raises(TypeError, match="must have the same Pytree structure"):
        converted((X, X))


def test_closure_convert_gives_custom_vjp_the_cotangents_of_closed_over_values():
    @functools.partial(custom_vjp, nondiff_argnums=(0,))
    def apply(fn, x, *consts):
        return fn(x, *consts)

    def apply_fwd(fn, x, *consts):
        return apply(fn, x, *consts), (x, consts)

    def apply_bwd(fn, res, g):
        x, consts = res
        _, fn_vjp = vjp(fn, x, *consts)  # ordinary reverse mode of the converted function
        return tuple(mul(3.0, c) for c in fn_vjp(g))  # scaled, to show bwd was used

    apply.defvjp(apply_fwd, apply_bwd)

    def loss(w, x):
        converted, consts = closure_convert(lambda x: mul(w, sin(x)), x)
        return apply(converted, x, *consts)

    close(loss(np.float32(2.0), X), 2 * np.sin(X))
    gw, gx = grad(loss, argnums=(0, 1))(np.float32(2.0), X)
    close(gw, 3 * np.sin(X))  # the hoisted w received its cotangent from bwd
    close(gx, 3 * 2 * np.cos(X))
    gw = jit(grad(loss))(np.float32(2.0), X)
    close(gw, 3 * np.sin(X))
