"""lax.while_loop and lax.fori_loop: values against Python loops, the printed Jaxpr
against JAX 0.10.2's text, forward-mode derivatives, reverse mode through a static
fori_loop (a scan) and JAX's error for a dynamic one, vmap with batched predicates and
carries against a Python loop, and JAX's carry-type errors."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import grad, jit, jvp, linearize, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads


def doubling(x, limit=10.0):
    return lax.while_loop(lambda c: c < limit, lambda c: c * 2.0, x)


def python_doubling(x, limit=10.0):
    while x < limit:
        x = x * 2.0
    return x


@pytest.mark.parametrize("x", [0.3, 1.0, 12.0])
def test_while_values(x):
    assert float(doubling(x)) == pytest.approx(python_doubling(x))
    assert float(jit(doubling)(x)) == pytest.approx(python_doubling(x))


def test_while_pytree_carry_with_counter():
    def f(x):
        return lax.while_loop(lambda s: s[0] < 5, lambda s: (s[0] + 1, s[1] * x), (0, 1.0))

    n, v = jit(f)(1.5)
    assert int(n) == 5
    assert float(v) == pytest.approx(1.5**5)


def test_while_jaxpr_matches_jax():
    expected = """{ lambda ; a:f32[] b:i32[]. let
    _:i32[] _:i32[] c:f32[] = while[
      body_jaxpr={ lambda ; d:i32[] e:i32[] f:f32[]. let
          g:i32[] = add d 1:i32[]
          h:f32[] = mul f 2.0:f32[]
        in (g, e, h) }
      body_nconsts=0
      cond_jaxpr={ lambda ; i:i32[] j:i32[] k:f32[]. let
          l:bool[] = lt i j
        in (l,) }
      cond_nconsts=0
    ] 0:i32[] b a
  in (c,) }"""
    f = lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0, x)  # noqa: E731
    assert str(make_jaxpr(f)(1.0, 3)) == expected


@pytest.mark.parametrize("n", [0, 1, 4])
def test_fori_loop_values(n):
    body = lambda i, c: c * 1.5 + lax.convert_element_type(i, np.float32)  # noqa: E731
    want = 0.5
    for i in range(n):
        want = want * 1.5 + i
    assert float(lax.fori_loop(0, n, body, 0.5)) == pytest.approx(want)
    assert float(jit(lambda n: lax.fori_loop(0, n, body, 0.5))(n)) == pytest.approx(want)


def test_while_forward_mode():
    # d/dx of x * 2**k, where k is fixed by the primal loop.
    primal, tangent = jvp(doubling, (0.3,), (1.0,))
    assert float(primal) == pytest.approx(python_doubling(0.3))
    assert float(tangent) == pytest.approx(python_doubling(0.3) / 0.3)

    def with_const(x, w):
        return lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * w), (0, x))[1]

    check_grads(with_const, (np.float32(0.7), np.float32(1.3)), 2, modes=("fwd",), rtol=2e-2)


def test_reverse_mode_through_static_fori_loop():
    f = lambda x: lax.fori_loop(0, 3, lambda i, c: lax.sin(c) * x, x)  # noqa: E731
    check_grads(f, (np.float32(0.8),), 1, modes=("fwd", "rev"), rtol=2e-2)
    np.testing.assert_allclose(jit(grad(f))(0.8), grad(f)(0.8), rtol=1e-6)


def test_reverse_mode_through_while_raises_jax_error():
    msg = (
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
        "with dynamic start/stop values. Try using lax.scan, or using fori_loop with "
        "static start/stop."
    )
    with pytest.raises(ValueError, match=msg.replace(".", r"\.")):
        grad(doubling)(0.3)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jit(grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0, x)))(0.1, 3)


def test_vmap_batched_predicate():
    xs = np.array([0.3, 1.0, 12.0, 4.0], np.float32)
    out = np.asarray(vmap(doubling)(xs))
    np.testing.assert_allclose(out, [python_doubling(float(x)) for x in xs], rtol=1e-6)
    limits = np.array([1.0, 100.0, 3.0], np.float32)
    out = np.asarray(vmap(lambda lim: doubling(1.5, lim))(limits))
    np.testing.assert_allclose(out, [python_doubling(1.5, float(x)) for x in limits])


def test_vmap_batched_carry_unbatched_predicate():
    def f(v):
        return lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 2.0 + 1.0), (0, v))

    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    n, out = vmap(f, in_axes=1)(v)
    np.testing.assert_array_equal(np.asarray(n), [3, 3, 3])  # out_axes=0 broadcasts
    want = v.T
    for _ in range(3):
        want = want * 2 + 1
    np.testing.assert_allclose(np.asarray(out), want)


def test_while_errors():
    with pytest.raises(TypeError, match=r"cond_fun must return a boolean scalar, but got output "
                       r"type\(s\) \[ShapedArray\(float32\[\], weak_type=True\)\]"):  # fmt: skip
        lax.while_loop(lambda c: c, lambda c: c, 1.0)
    with pytest.raises(TypeError, match=r"while_loop body function carry input and carry output "
                       "must have equal types"):  # fmt: skip
        lax.while_loop(lambda c: c < 1, lambda c: lax.convert_element_type(c, np.int32), 1.0)
    with pytest.raises(TypeError, match=r"The input carry component loop_carry\[1\] is a"):
        lax.fori_loop(0, 3, lambda i, c: (c, c), 1.0)


def test_linearize_splits_known_carries_from_the_staged_loop():

    def f(x, w):
        return lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * 2.0, c[1] * w), (x, w))[1]

    # 0.3 doubles 6 times before reaching 10, so f = w**7 there.
    y, f_lin = linearize(f, 0.3, 1.5)
    assert float(y) == pytest.approx(1.5**7)
    assert float(f_lin(1.0, 0.0)) == 0.0
    assert float(f_lin(0.0, 1.0)) == pytest.approx(7 * 1.5**6, rel=1e-5)
