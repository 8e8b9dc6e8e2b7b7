"""lax.cond and lax.switch: values against Python, the printed Jaxpr against JAX 0.10.2's
text, forward and reverse derivatives against numerical differences, vmap with batched
and unbatched predicates against a Python loop, nestings, and JAX's errors."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import grad, jit, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(5)


def f32(*shape):
    return rng.uniform(-1.5, 1.5, shape).astype(np.float32)


def two_way(p, x, y):
    return lax.cond(p, lambda x, y: lax.sin(x) * y, lambda x, y: x * x + y, x, y)


def reference(p, x, y):
    return np.sin(x) * y if p else x * x + y


@pytest.mark.parametrize("pred", [True, False, 1, 0, np.int32(3)])
def test_cond_values_eager_and_jit(pred):
    x, y = f32(3), f32(3)
    np.testing.assert_allclose(two_way(pred, x, y), reference(bool(pred), x, y), rtol=1e-6)
    np.testing.assert_allclose(jit(two_way)(pred, x, y), reference(bool(pred), x, y), rtol=1e-6)


def test_cond_pytrees_and_closures():
    w = f32(2)

    def f(p, tree):
        return lax.cond(
            p,
            lambda t: {"a": t[0] * w, "b": (t[1],)},
            lambda t: {"a": t[0] + w, "b": (-t[1],)},
            tree,
        )

    a, b = f32(2), np.float32(2.0)
    out = jit(f)(False, (a, b))
    np.testing.assert_allclose(out["a"], a + w)
    np.testing.assert_allclose(out["b"][0], -b)
    out = f(True, (a, b))
    np.testing.assert_allclose(out["a"], a * w)


def test_cond_jaxpr_matches_jax():
    f = lambda p, x: lax.cond(p, lambda x: lax.sin(x), lambda x: x * 2.0, x)  # noqa: E731
    expected = """{ lambda ; a:bool[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = mul e 2.0:f32[] in (f,) }
        { lambda ; g:f32[]. let h:f32[] = sin g in (h,) }
      )
    ] c b
  in (d,) }"""
    assert str(make_jaxpr(f)(True, 1.0)) == expected


def test_branches_closing_over_one_value_share_the_constant():
    def f(x, y):
        return lax.cond(x > 0, lambda: y * 2.0, lambda: y + x)

    # Recorded from JAX 0.10.2 (y is one constant of both branches).
    expected = """{ lambda ; a:f32[] b:f32[]. let
    c:bool[] = gt a 0.0:f32[]
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[] g:f32[]. let h:f32[] = add f g in (h,) }
        { lambda ; i:f32[] j:f32[]. let k:f32[] = mul i 2.0:f32[] in (k,) }
      )
    ] d b a
  in (e,) }"""
    assert str(make_jaxpr(f)(np.float32(1.0), np.float32(2.0))) == expected


def test_switch_jaxpr_matches_jax():
    expected = """{ lambda ; a:i32[]. let
    b:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:i32[] = clamp 0:i32[] b 1:i32[]
    d:f32[] = cond[
      branches=(
        { lambda ; . let  in (1.0:f32[],) }
        { lambda ; . let  in (2.0:f32[],) }
      )
    ] c
  in (d,) }"""
    f = lambda i: lax.switch(i, [lambda: 1.0, lambda: 2.0])  # noqa: E731
    assert str(make_jaxpr(f)(3)) == expected


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 7])
def test_switch_clamps_index(index):
    branches = [lax.sin, lax.cos, lambda x: x * 3.0]
    refs = [np.sin, np.cos, lambda x: x * 3.0]
    x = f32(4)
    want = refs[min(max(index, 0), 2)](x)
    np.testing.assert_allclose(lax.switch(index, branches, x), want, rtol=1e-6)
    np.testing.assert_allclose(jit(lax.switch, static_argnums=1)(index, tuple(branches), x), want,
                               rtol=1e-6)  # fmt: skip


@pytest.mark.parametrize("pred", [True, False])
def test_cond_gradients(pred):
    x, y = f32(3), f32(3)
    check_grads(lambda x, y: two_way(pred, x, y), (x, y), 1, modes=("fwd", "rev"))
    check_grads(jit(lambda x: two_way(pred, x, y)), (x,), 2, modes=("rev",))


def test_switch_gradient_against_hand_derivative():
    f = lambda i, x: lax.switch(i, [lax.sin, lax.cos, lambda x: x * x], x)  # noqa: E731
    x = np.float32(0.7)
    derivs = [np.cos(x), -np.sin(x), 2 * x]
    for i in range(3):
        np.testing.assert_allclose(grad(f, 1)(i, x), derivs[i], rtol=1e-6)
        np.testing.assert_allclose(jit(grad(f, 1))(i, x), derivs[i], rtol=1e-6)


def test_grad_through_closed_over_value():
    def f(x, y):
        return lax.cond(x > 0, lambda: lax.sin(y) * x, lambda: y * 2.0)

    np.testing.assert_allclose(grad(f, (0, 1))(0.5, 0.3), (np.sin(0.3), 0.5 * np.cos(0.3)),
                               rtol=1e-6)  # fmt: skip
    np.testing.assert_allclose(grad(f, (0, 1))(-0.5, 0.3), (0.0, 2.0), rtol=1e-6)


@pytest.mark.parametrize("axis", [0, 1])
def test_vmap_batched_predicate(axis):
    p = np.array([True, False, True])
    x = f32(3, 2) if axis == 0 else f32(2, 3)
    y = f32(2)
    out = vmap(lambda p, x: two_way(p, x, y), in_axes=(0, axis))(p, x)
    xs = np.moveaxis(x, axis, 0)
    want = np.stack([reference(pi, xi, y) for pi, xi in zip(p, xs, strict=True)])
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_vmap_unbatched_predicate_and_switch():
    x = f32(4, 3)
    out = vmap(lambda x: two_way(True, x, x))(x)
    np.testing.assert_allclose(out, np.sin(x) * x, rtol=1e-6)
    idx = np.array([0, 2, 1, 5], np.int32)
    out = vmap(lambda i, x: lax.switch(i, [lax.sin, lax.cos, lax.neg], x))(idx, x)
    refs = [np.sin, np.cos, np.negative]
    want = np.stack([refs[min(i, 2)](xi) for i, xi in zip(idx, x, strict=True)])
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_vmap_of_grad_and_grad_of_vmap():
    p = np.array([True, False])
    x = f32(2)
    g = vmap(grad(lambda p, x: two_way(p, x, 2.0), 1))(p, x)
    np.testing.assert_allclose(g, [2 * np.cos(x[0]), 2 * x[1]], rtol=1e-6)
    loss = lambda x: lax.reduce_sum(vmap(lambda p, x: two_way(p, x, 2.0))(p, x), (0,))  # noqa: E731
    np.testing.assert_allclose(grad(loss)(x), [2 * np.cos(x[0]), 2 * x[1]], rtol=1e-6)


def test_nested_cond():
    def f(a, b, x):
        return lax.cond(a, lambda x: lax.cond(b, lax.sin, lax.cos, x), lambda x: x * 3.0, x)

    x = np.float32(0.4)
    for a in (True, False):
        for b in (True, False):
            want = (np.sin(x) if b else np.cos(x)) if a else 3 * x
            np.testing.assert_allclose(jit(f)(a, b, x), want, rtol=1e-6)
            check_grads(lambda x, a=a, b=b: f(a, b, x), (x,), 1, modes=("rev",))


def test_cond_errors():
    with pytest.raises(TypeError, match=r"so the dtypes do not match"):
        lax.cond(True, lambda x: x, lambda x: lax.convert_element_type(x, np.int32), 1.0)
    with pytest.raises(TypeError, match=r"cond branch outputs must have the same pytree"):
        lax.cond(True, lambda x: x, lambda x: (x, x), 1.0)
    with pytest.raises(TypeError, match=r"so the shapes do not match"):
        lax.cond(True, lambda x: x, lambda x: np.ones(2, np.float32), 1.0)
    with pytest.raises(TypeError, match=r"Pred must be a scalar, got \[ True  True\] of shape"):
        lax.cond(np.ones(2) > 0, lambda x: x, lambda x: x, 1.0)
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(1, [], 1.0)


def test_operand_keyword():
    assert float(lax.cond(True, lambda x: x + 1.0, lambda x: x - 1.0, operand=1.0)) == 2.0
    assert float(lax.switch(1, [lambda x: x, lambda x: -x], operand=3.0)) == -3.0
    with pytest.raises(TypeError, match="if `operand` is passed, positional `operands`"):
        lax.cond(True, lambda x: x, lambda x: x, 1.0, operand=1.0)
