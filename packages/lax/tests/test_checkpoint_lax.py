"""checkpoint / remat over the lax primitives: gradients of checkpointed networks
against the plain ones and numerical differences, under jit, vmap and second order;
what each policy saves, read from the Jaxpr of the backward pass (dots, tanh, named
values, batch dimensions); the optimization barrier in the lowered program."""

import functools

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import (
    checkpoint,
    checkpoint_name,
    checkpoint_p,
    checkpoint_policies,
    grad,
    jit,
    jvp,
    make_jaxpr,
    remat,
    value_and_grad,
    vjp,
    vmap,
)
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(7)
W1 = (rng.standard_normal((4, 3)) / 2).astype(np.float32)
W2 = (rng.standard_normal((2, 4)) / 2).astype(np.float32)
X = rng.standard_normal(3).astype(np.float32)
XS = rng.standard_normal((5, 3)).astype(np.float32)


def mlp(params, x):
    h = lax.tanh(lax.dot(params["w1"], x))
    return lax.reduce_sum(lax.tanh(lax.dot(params["w2"], h)), (0,))


PARAMS = {"w1": W1, "w2": W2}


def mlp_grad_by_hand(params, x):
    w1, w2 = params["w1"], params["w2"]
    h = np.tanh(w1 @ x)
    y = np.tanh(w2 @ h)
    dz2 = 1 - y**2
    dh = w2.T @ dz2
    dz1 = dh * (1 - h**2)
    return {"w1": np.outer(dz1, x), "w2": np.outer(dz2, h)}


def assert_tree_close(got, want, rtol=1e-5, atol=1e-6):
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=rtol, atol=atol, err_msg=key)


def backward_jaxpr(fun, *args):
    """The Jaxpr inside the one differentiated ``checkpoint`` equation of ``fun``."""
    found = [
        e
        for e in make_jaxpr(fun)(*args).jaxpr.eqns
        if e.primitive is checkpoint_p and e.params["differentiated"]
    ]
    assert len(found) == 1, found
    return found[0].params["jaxpr"]


def count(jaxpr, name):
    return [e.primitive.name for e in jaxpr.eqns].count(name)


# ----------------------------------------------------------------- values


@pytest.mark.parametrize(
    "policy",
    [
        None,
        checkpoint_policies.dots_saveable,
        checkpoint_policies.dots_with_no_batch_dims_saveable,
        checkpoint_policies.everything_saveable,
    ],
)
def test_mlp_gradients_match_the_plain_function(policy):
    f = checkpoint(mlp, policy=policy)
    want = mlp_grad_by_hand(PARAMS, X)
    np.testing.assert_allclose(f(PARAMS, X), mlp(PARAMS, X), rtol=1e-6)
    assert_tree_close(grad(f)(PARAMS, X), want)
    assert_tree_close(jit(grad(f))(PARAMS, X), want)
    value, g = value_and_grad(f)(PARAMS, X)
    np.testing.assert_allclose(value, mlp(PARAMS, X), rtol=1e-6)
    assert_tree_close(g, want)


def test_check_grads_second_order():
    def f(x, y):
        return lax.mul(lax.sin(lax.mul(x, y)), lax.cos(lax.tanh(x)))

    args = (XS[0], XS[1])
    check_grads(checkpoint(f), args, order=2)
    check_grads(checkpoint(f, policy=checkpoint_policies.everything_saveable), args, order=2)
    check_grads(jit(checkpoint(f)), args, order=1, modes="rev")


def test_second_derivative_by_hand():
    f = checkpoint(lambda x: lax.sin(lax.sin(x)))
    x = np.float32(0.4)
    want = -np.sin(np.sin(x)) * np.cos(x) ** 2 - np.cos(np.sin(x)) * np.sin(x)
    np.testing.assert_allclose(grad(grad(f))(x), want, rtol=1e-5)
    np.testing.assert_allclose(jit(grad(grad(f)))(x), want, rtol=1e-5)
    _, t = jvp(grad(f), (x,), (np.float32(2.0),))
    np.testing.assert_allclose(t, 2 * want, rtol=1e-5)


def test_vmap_of_grad_against_a_loop():
    f = checkpoint(mlp)
    got = vmap(grad(f), in_axes=(None, 0))(PARAMS, XS)
    for i, x in enumerate(XS):
        want = mlp_grad_by_hand(PARAMS, x)
        assert_tree_close({k: np.asarray(v)[i] for k, v in got.items()}, want)


def test_vmap_in_and_out_axes():
    f = checkpoint(lambda w, x: lax.tanh(lax.dot(w, x)))
    got = vmap(f, in_axes=(None, 1), out_axes=1)(W1, XS.T.copy())
    np.testing.assert_allclose(got, np.tanh(W1 @ XS.T), rtol=1e-5, atol=1e-6)
    ws = np.stack([W1, W1 * 2])
    got = vmap(f, in_axes=(0, None))(ws, X)
    np.testing.assert_allclose(got, np.tanh(np.einsum("bij,j->bi", ws, X)), rtol=1e-5)


def test_vjp_of_vector_output():
    f = checkpoint(lambda w, x: lax.tanh(lax.dot(w, x)))
    out, f_vjp = vjp(f, W1, X)
    ct = np.arange(4, dtype=np.float32)
    g_w, g_x = f_vjp(ct)
    dz = ct * (1 - np.tanh(W1 @ X) ** 2)
    np.testing.assert_allclose(out, np.tanh(W1 @ X), rtol=1e-5)
    np.testing.assert_allclose(g_w, np.outer(dz, X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_x, W1.T @ dz, rtol=1e-5, atol=1e-6)


def test_stacked_checkpointed_layers():
    @remat
    def layer(w, x):
        return lax.tanh(lax.dot(w, x))

    ws = [(rng.standard_normal((3, 3)) / 2).astype(np.float32) for _ in range(3)]

    def net(ws, x, layer):
        for w in ws:
            x = layer(w, x)
        return lax.reduce_sum(x, (0,))

    plain = grad(functools.partial(net, layer=layer.__wrapped__))(ws, X)
    got = grad(functools.partial(net, layer=layer))(ws, X)
    for g, want in zip(got, plain, strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)
    eqns = make_jaxpr(grad(functools.partial(net, layer=layer)))(ws, X).jaxpr.eqns
    backward = [e for e in eqns if e.primitive is checkpoint_p]
    assert len(backward) == 3 and all(e.params["differentiated"] for e in backward)


# ----------------------------------------------------------------- policies


def test_policies_choose_what_the_backward_pass_recomputes():
    def backward(policy):
        return backward_jaxpr(grad(checkpoint(mlp, policy=policy)), PARAMS, X)

    saved_all = backward(checkpoint_policies.everything_saveable)
    dots = backward(checkpoint_policies.dots_saveable)
    nothing = backward(None)
    transposes = count(saved_all, "dot_general")  # the backward pass's own dots
    assert count(saved_all, "tanh") == 0
    # dots_saveable saves the two forward dots and recomputes the tanh.
    assert count(dots, "dot_general") == transposes and count(dots, "tanh") == 2
    # nothing_saveable recomputes the forward dots too.
    assert count(nothing, "dot_general") == transposes + 2 and count(nothing, "tanh") == 2
    assert str(backward(checkpoint_policies.checkpoint_dots)) == str(dots)


def test_dots_with_no_batch_dims_policy_skips_batched_dots():
    ws = rng.standard_normal((2, 3, 3)).astype(np.float32)
    xs = rng.standard_normal((2, 3)).astype(np.float32)

    def f(ws, xs):
        # A dot with a batch dimension (over the leading axis) and one without.
        batched = lax.dot_general(ws, xs, (((2,), (1,)), ((0,), (0,))))
        plain = lax.dot_general(lax.tanh(batched), W1, (((1,), (1,)), ((), ())))
        return lax.reduce_sum(lax.tanh(plain), (0, 1))

    def recomputed_dots(policy):
        inner = backward_jaxpr(grad(checkpoint(f, policy=policy)), ws, xs)
        everything = backward_jaxpr(
            grad(checkpoint(f, policy=checkpoint_policies.everything_saveable)), ws, xs
        )
        return count(inner, "dot_general") - count(everything, "dot_general")

    assert recomputed_dots(checkpoint_policies.nothing_saveable) == 2
    assert recomputed_dots(checkpoint_policies.dots_saveable) == 0
    assert recomputed_dots(checkpoint_policies.dots_with_no_batch_dims_saveable) == 1
    g = grad(checkpoint(f, policy=checkpoint_policies.dots_with_no_batch_dims_saveable))(ws, xs)
    np.testing.assert_allclose(g, grad(f)(ws, xs), rtol=1e-5, atol=1e-6)


def test_save_only_these_names():
    def f(params, x):
        z = checkpoint_name(lax.dot(params["w1"], x), "z1")
        return lax.reduce_sum(lax.tanh(lax.dot(params["w2"], lax.tanh(z))), (0,))

    def extra_dots(names):
        policy = checkpoint_policies.save_only_these_names(*names)
        inner = backward_jaxpr(grad(checkpoint(f, policy=policy)), PARAMS, X)
        assert count(inner, "tanh") == 2
        return count(inner, "dot_general") - count(everything, "dot_general")

    everything = backward_jaxpr(
        grad(checkpoint(f, policy=checkpoint_policies.everything_saveable)), PARAMS, X
    )
    # Saving the named first-layer dot leaves only the second layer's to recompute.
    assert extra_dots(["z1"]) == 1
    assert extra_dots(["other"]) == 2
    policy = checkpoint_policies.save_only_these_names("z1")
    assert_tree_close(grad(checkpoint(f, policy=policy))(PARAMS, X), mlp_grad_by_hand(PARAMS, X))


# ----------------------------------------------------------------- lowering


def test_optimization_barrier_only_when_differentiated_and_prevent_cse():
    x = np.float32(0.3)
    f = lambda x: lax.sin(lax.cos(x))  # noqa: E731
    assert "stablehlo.optimization_barrier" in jit(grad(checkpoint(f))).lower(x).as_text()
    assert "optimization_barrier" not in jit(grad(remat(f, prevent_cse=False))).lower(x).as_text()
    assert "optimization_barrier" not in jit(checkpoint(f)).lower(x).as_text()
    want = -np.cos(np.cos(x)) * np.sin(x)
    np.testing.assert_allclose(jit(grad(checkpoint(f)))(x), want, rtol=1e-6)
    np.testing.assert_allclose(jit(grad(remat(f, prevent_cse=False)))(x), want, rtol=1e-6)
