"""custom_jvp, custom_vjp, custom_gradient and closure_convert over the lax primitives:
a numerically stable log1pexp, gradient clipping, a kinked function whose derivative
is chosen at the kink, a linear layer with pytree parameters and residuals, under jit,
vmap (batched and unbatched arguments) and nested differentiation, against NumPy,
hand derivations and numerical differences."""

import functools

import numpy as np

import lamina.lax as lax
from lamina.interpreters import (
    closure_convert,
    custom_gradient,
    custom_jvp,
    custom_vjp,
    grad,
    jit,
    jvp,
    make_jaxpr,
    value_and_grad,
    vjp,
    vmap,
)
from lamina.interpreters.test_util import check_grads, check_vjp

rng = np.random.default_rng(5)
XS = np.array([-3.0, -0.5, 0.0, 0.7, 1.2, 2.0], np.float32)


def close(got, want, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


def total(x):
    return lax.reduce_sum(x, tuple(range(np.ndim(x) if not hasattr(x, "aval") else x.ndim)))


def check_vjp_numerically(f, args):
    """<J^T ct, t> against <ct, J t> with J t from central differences (so a custom_vjp
    function, which refuses forward mode, is checked too)."""
    check_vjp(f, functools.partial(vjp, f), args)


# ---------------------------------------------------------------- log1pexp


@custom_jvp
def log1pexp(x):
    return lax.log(lax.add(1.0, lax.exp(x)))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # 1 - 1/(1 + e^x) is the logistic function without exp(x)/exp(x) overflowing.
    return log1pexp(x), lax.mul(t, lax.sub(1.0, lax.div(1.0, lax.add(1.0, lax.exp(x)))))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, np.float64)))


def test_log1pexp_stable_gradient_where_autodiff_gives_nan():
    naive = lambda x: lax.log(lax.add(1.0, lax.exp(x)))  # noqa: E731
    big = np.float32(100.0)
    assert np.isnan(np.asarray(grad(naive)(big)))
    close(grad(log1pexp)(big), 1.0)
    close(jit(grad(log1pexp))(big), 1.0)
    close(grad(jit(log1pexp))(big), 1.0)
    close(jvp(log1pexp, (big,), (np.float32(2.0),))[1], 2.0)
    close(vmap(grad(log1pexp))(np.array([100.0, 0.0, -5.0], np.float32)), [1.0, 0.5, sigmoid(-5)])


def test_log1pexp_derivatives_match_numerical_differences():
    x = XS[1:4]
    check_grads(log1pexp, (x,), order=2, modes=("fwd", "rev"))
    close(vmap(grad(grad(log1pexp)))(XS), sigmoid(XS) * (1 - sigmoid(XS)), rtol=1e-4)
    close(grad(lambda x: total(vmap(log1pexp)(x)))(XS), sigmoid(XS), rtol=1e-5)
    close(jit(vmap(grad(log1pexp)))(XS), sigmoid(XS), rtol=1e-5)


# ---------------------------------------------------------------- gradient clipping


@functools.partial(custom_vjp, nondiff_argnums=(0, 1))
def clip_gradient(lo, hi, x):
    return x


def clip_gradient_fwd(lo, hi, x):
    return x, None


def clip_gradient_bwd(lo, hi, _, g):
    return (lax.min(lax.max(g, lo), hi),)


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


def test_clip_gradient():
    def loss(x):
        return lax.mul(clip_gradient(-0.5, 0.5, lax.mul(x, 3.0)), 4.0)

    x = np.float32(1.2)
    close(loss(x), 14.4)
    close(grad(loss)(x), 0.5 * 3.0)  # cotangent 4 clipped to 0.5, then times 3
    close(jit(grad(loss))(x), 1.5)
    close(grad(jit(loss))(x), 1.5)
    close(vmap(grad(loss))(XS), np.full(XS.shape, 1.5))
    g = grad(lambda x: total(lax.mul(clip_gradient(-0.5, 0.5, x), XS)))(XS)
    close(g, np.clip(XS, -0.5, 0.5))
    g = grad(lambda x: total(vmap(lambda x, w: lax.mul(clip_gradient(-0.5, 0.5, x), w))(x, XS)))
    close(g(XS), np.clip(XS, -0.5, 0.5))


def test_custom_vjp_unbatched_argument_gets_summed_cotangent():
    @custom_vjp
    def scale(w, x):
        return lax.mul(w, x)

    def scale_fwd(w, x):
        return scale(w, x), (w, x)

    def scale_bwd(res, g):
        w, x = res
        return lax.mul(lax.mul(g, x), 2.0), lax.mul(g, w)  # w's cotangent doubled

    scale.defvjp(scale_fwd, scale_bwd)
    w = np.float32(1.5)
    batched = vmap(scale, in_axes=(None, 0))
    close(batched(w, XS), w * XS)
    gw, gx = grad(lambda w, x: total(batched(w, x)), argnums=(0, 1))(w, XS)
    close(gw, 2 * XS.sum(), rtol=1e-5)
    close(gx, np.full(XS.shape, w))
    gw = jit(grad(lambda w, x: total(batched(w, x))))(w, XS)
    close(gw, 2 * XS.sum(), rtol=1e-5)
    per_example = vmap(grad(scale), in_axes=(None, 0))(w, XS)
    close(per_example, 2 * XS)


# ---------------------------------------------------------------- a kink


@custom_jvp
def relu(x):
    return lax.max(x, 0.0)


@relu.defjvp
def relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # Derivative 1 at x == 0 (autodiff of max splits it as 0.5).
    positive = lax.ge(x, 0.0)
    return relu(x), lax.select_n(positive, lax.mul(t, 0.0), t)


def test_kink_derivative_chosen_by_the_rule():
    xs = np.array([-1.0, 0.0, 2.0], np.float32)
    close(vmap(grad(relu))(xs), [0.0, 1.0, 1.0])
    close(grad(lambda x: total(relu(x)))(xs), [0.0, 1.0, 1.0])
    close(jvp(relu, (xs,), (np.ones_like(xs),))[1], [0.0, 1.0, 1.0])
    close(jit(vmap(grad(relu)))(xs), [0.0, 1.0, 1.0])
    close(relu(xs), [0.0, 0.0, 2.0])
    close(grad(grad(relu))(np.float32(2.0)), 0.0)


# ---------------------------------------------------------------- pytrees, dot


@custom_vjp
def dense(params, x):
    xw = lax.dot(x, params["w"])
    return {"y": lax.add(xw, lax.broadcast_in_dim(params["b"], xw.shape, (1,)))}


def dense_fwd(params, x):
    return dense(params, x), {"x": x, "w": params["w"]}


def dense_bwd(res, ct):
    g = ct["y"]
    dw = lax.dot_general(res["x"], g, (((0,), (0,)), ((), ())))
    db = lax.reduce_sum(g, (0,))
    dx = lax.dot_general(g, res["w"], (((1,), (1,)), ((), ())))
    return {"w": dw, "b": db}, dx


dense.defvjp(dense_fwd, dense_bwd)


def dense_params():
    return {"w": rng.standard_normal((3, 2)).astype(np.float32), "b": np.float32([0.1, -0.2])}


def test_pytree_custom_vjp_matches_numerical_differences():
    params, x = dense_params(), rng.standard_normal((4, 3)).astype(np.float32)
    out = dense(params, x)["y"]
    close(out, x @ params["w"] + params["b"], rtol=1e-5)
    check_vjp_numerically(lambda w, b, x: dense({"w": w, "b": b}, x)["y"], (*params.values(), x))
    loss = lambda p, x: total(lax.tanh(dense(p, x)["y"]))  # noqa: E731
    (v, (gp, gx)) = value_and_grad(loss, argnums=(0, 1))(params, x)
    h = np.tanh(x @ params["w"] + params["b"])
    close(v, h.sum(), rtol=1e-5)
    d = 1 - h**2
    close(gp["w"], x.T @ d, rtol=1e-4, atol=1e-5)
    close(gp["b"], d.sum(0), rtol=1e-4, atol=1e-5)
    close(gx, d @ params["w"].T, rtol=1e-4, atol=1e-5)
    gp_jit = jit(grad(loss))(params, x)
    close(gp_jit["w"], gp["w"], rtol=1e-5)
    # Per-example gradients: vmap of grad over the rows of x.
    row_loss = lambda p, r: loss(p, lax.reshape(r, (1, 3)))  # noqa: E731
    per_row = vmap(grad(row_loss), in_axes=(None, 0))(params, x)
    close(np.asarray(per_row["w"]).sum(0), gp["w"], rtol=1e-4, atol=1e-5)


def test_correct_rules_pass_numerical_checks_to_second_order():
    @custom_jvp
    def sin(x):
        return lax.sin(x)

    sin.defjvps(lambda t, ans, x: lax.mul(t, lax.cos(x)))

    @custom_vjp
    def cos(x):
        return lax.cos(x)

    cos.defvjp(lambda x: (cos(x), x), lambda x, g: (lax.mul(g, lax.neg(lax.sin(x))),))
    x = XS[1:4]
    check_grads(sin, (x,), order=2)
    check_vjp_numerically(lambda x: lax.mul(sin(x), cos(x)), (x,))
    ct = rng.standard_normal(x.shape).astype(np.float32)
    # Second order: the VJP (its bwd differentiated in turn) against differences.
    check_vjp_numerically(lambda x: vjp(lambda x: lax.mul(sin(x), cos(x)), x)[1](ct)[0], (x,))


# ---------------------------------------------------------------- custom_gradient, closures


def test_custom_gradient_with_lax():
    @custom_gradient
    def safe_sqrt(x):
        y = lax.sqrt(x)
        return y, lambda g: (lax.div(g, lax.max(lax.mul(2.0, y), 1e-3)),)

    xs = np.array([0.0, 0.25, 4.0], np.float32)
    close(vmap(grad(safe_sqrt))(xs), [1000.0, 1.0, 0.25], rtol=1e-4)
    close(grad(lambda x: total(safe_sqrt(x)))(xs), [1000.0, 1.0, 0.25], rtol=1e-4)


def test_closure_convert_then_custom_vjp_under_vmap():
    @functools.partial(custom_vjp, nondiff_argnums=(0,))
    def apply(fn, x, *consts):
        return fn(x, *consts)

    def apply_fwd(fn, x, *consts):
        return apply(fn, x, *consts), (x, consts)

    def apply_bwd(fn, res, g):
        x, consts = res
        return vjp(fn, x, *consts)[1](g)

    apply.defvjp(apply_fwd, apply_bwd)

    def loss(w, x):
        converted, consts = closure_convert(lambda x: lax.mul(w, lax.sin(x)), x)
        return total(apply(converted, x, *consts))

    w = np.float32(1.7)
    gw, gx = grad(loss, argnums=(0, 1))(w, XS)
    close(gw, np.sin(XS).sum(), rtol=1e-5)
    close(gx, w * np.cos(XS), rtol=1e-5)
    per_w = vmap(grad(loss), in_axes=(0, None))(np.array([1.0, 2.0], np.float32), XS)
    close(per_w, np.full(2, np.sin(XS).sum()), rtol=1e-5)


def test_printed_form_with_closed_over_array():
    c = np.arange(3, dtype=np.float32)

    @custom_jvp
    def f(x):
        return lax.mul(x, c)

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(*primals), lax.mul(tangents[0], c)

    text = str(make_jaxpr(f)(np.ones(3, np.float32)))
    assert text == (
        "{ lambda a:f32[3]; b:f32[3]. let\n"
        "    c:f32[3] = custom_jvp_call[\n"
        "      name=f\n"
        "      call_jaxpr={ lambda ; d:f32[3] e:f32[3]. let f:f32[3] = mul e d in (f,) }\n"
        "      jvp=f_jvp\n"
        "      num_consts=1\n"
        "      symbolic_zeros=False\n"
        "    ] a b\n"
        "  in (c,) }"
    ), text
    close(jit(grad(lambda x: total(f(x))))(np.ones(3, np.float32)), c)
