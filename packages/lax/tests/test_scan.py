"""lax.scan and lax.map: values against Python loops (forward, reversed, pytrees,
``xs=None``), printed Jaxprs against JAX 0.10.2's text, derivatives against numerical
differences, vmap with the batch axis at each position, nestings (grad of scan of cond,
vmap of grad of scan), and JAX's carry-type errors."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import grad, jit, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(7)


def f32(*shape):
    return rng.uniform(-1.0, 1.0, shape).astype(np.float32)


def step(c, x):
    return lax.sin(c) * x + c, c * x


def python_scan(f, c, xs, reverse=False):
    ys = []
    order = range(len(xs))[::-1] if reverse else range(len(xs))
    for i in order:
        c, y = f(c, xs[i])
        ys.append(y)
    if reverse:
        ys.reverse()
    return c, np.stack(ys)


def np_step(c, x):
    return np.sin(c) * x + c, c * x


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape", [(), (2,)])
def test_scan_values(reverse, shape):
    c0, xs = f32(*shape), f32(4, *shape)
    want_c, want_ys = python_scan(np_step, c0, xs, reverse)
    for fn in (lax.scan, jit(lax.scan, static_argnums=(0, 3, 4))):
        c, ys = fn(step, c0, xs, None, reverse)
        np.testing.assert_allclose(c, want_c, rtol=1e-5)
        np.testing.assert_allclose(ys, want_ys, rtol=1e-5)


def test_scan_pytrees_xs_none_and_unroll():
    xs = {"a": f32(3, 2), "b": f32(3)}

    def body(carry, x):
        s, n = carry
        return (s + x["a"] * x["b"], n + 1), {"sq": x["b"] * x["b"]}

    (s, n), ys = lax.scan(body, (np.zeros(2, np.float32), np.int32(0)), xs, unroll=2)
    np.testing.assert_allclose(s, (xs["a"] * xs["b"][:, None]).sum(0), rtol=1e-6)
    assert int(n) == 3
    np.testing.assert_allclose(ys["sq"], xs["b"] ** 2, rtol=1e-6)
    c, ys = lax.scan(lambda c, _: (c * 2.0, c), 1.0, None, length=4)
    assert float(c) == 16.0
    np.testing.assert_allclose(ys, [1, 2, 4, 8])


def test_scan_jaxpr_matches_jax():
    expected = """{ lambda ; a:f32[] b:f32[3]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[] e:f32[3] = scan[
      jaxpr={ lambda ; f:f32[] g:f32[]. let
          h:f32[] = add f g
          i:f32[] = mul f g
        in (h, i) }
      length=3
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] c b
  in (d, e) }"""
    g = lambda c, xs: lax.scan(lambda c, x: (c + x, c * x), c, xs)  # noqa: E731
    assert str(make_jaxpr(g)(1.0, np.ones(3, np.float32))) == expected


def test_fori_loop_static_is_a_scan_as_in_jax():
    expected = """{ lambda ; a:f32[]. let
    _:i32[] b:f32[] = scan[
      jaxpr={ lambda ; c:i32[] d:f32[]. let
          e:i32[] = add c 1:i32[]
          f:f32[] = mul d 2.0:f32[]
        in (e, f) }
      length=3
      num_carry=2
      num_consts=0
      reverse=False
      unroll=1
    ] 0:i32[] a
  in (b,) }"""
    f = lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0, x)  # noqa: E731
    assert str(make_jaxpr(f)(1.0)) == expected


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_gradients(reverse):
    w = f32(2)

    def f(c, xs):
        def body(c, x):
            return lax.sin(c) * x + c * w, lax.cos(c) * x

        return lax.scan(body, c, xs, reverse=reverse)

    check_grads(f, (f32(2), f32(3, 2)), 1, modes=("fwd", "rev"))
    if not reverse:
        check_grads(jit(f), (f32(2), f32(3, 2)), 2, modes=("rev",))


def test_grad_wrt_closed_over_constant_and_xs():
    xs = f32(5)

    def loss(w, xs):
        c, ys = lax.scan(lambda c, x: (c * w + x, c * x), 0.5, xs)
        return c + lax.reduce_sum(ys, (0,))

    check_grads(loss, (np.float32(0.8), xs), 1, modes=("fwd", "rev"))


def test_grad_of_scan_of_cond():
    def loss(c, xs):
        body = lambda c, x: (lax.cond(x > 0, lax.sin, lambda c: c * x, c), c)  # noqa: E731
        c, ys = lax.scan(body, c, xs)
        return c + lax.reduce_sum(ys, (0,))

    xs = np.array([0.5, -0.3, 0.2, -0.9], np.float32)
    check_grads(loss, (np.float32(0.7), xs), 1, modes=("fwd", "rev"))
    np.testing.assert_allclose(jit(grad(loss))(0.7, xs), grad(loss)(0.7, xs), rtol=1e-6)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap_scan_batched_xs_at_each_position(axis):
    xs = f32(3, 4, 2)  # batch of 3 at `axis`, after moving
    xs = np.moveaxis(xs, 0, axis)
    c0 = f32(2)

    def f(xs):
        return lax.scan(step, c0, xs)

    cs, ys = map(np.asarray, vmap(f, in_axes=axis)(xs))
    for b in range(3):
        want_c, want_ys = python_scan(np_step, c0, np.take(xs, b, axis))
        np.testing.assert_allclose(cs[b], want_c, rtol=1e-5)
        np.testing.assert_allclose(ys[b], want_ys, rtol=1e-5)


def test_vmap_batched_carry_only():
    c0, xs = f32(3), f32(4)
    cs, ys = map(np.asarray, vmap(lambda c: lax.scan(step, c, xs))(c0))
    for b in range(3):
        want_c, want_ys = python_scan(np_step, c0[b], xs)
        np.testing.assert_allclose(cs[b], want_c, rtol=1e-5)
        np.testing.assert_allclose(ys[b], want_ys, rtol=1e-5)


def test_vmap_of_grad_of_scan():
    xs = f32(4)
    loss = lambda c: lax.scan(step, c, xs)[0]  # noqa: E731
    c = f32(3)
    g = np.asarray(vmap(grad(loss))(c))
    for b in range(3):
        np.testing.assert_allclose(g[b], grad(loss)(c[b]), rtol=1e-5)
    eps = 1e-3
    num = (np.array(loss(np.float32(c[0] + eps))) - np.array(loss(np.float32(c[0] - eps)))) / (
        2 * eps
    )
    np.testing.assert_allclose(g[0], num, rtol=2e-2)


def test_map():
    xs = f32(6, 2)
    np.testing.assert_allclose(lax.map(lambda x: lax.sin(x) * 2.0, xs), np.sin(xs) * 2, rtol=1e-6)
    for batch_size in (3, 4, 8):
        np.testing.assert_allclose(lax.map(lax.cos, xs, batch_size=batch_size), np.cos(xs),
                                   rtol=1e-6)  # fmt: skip


def test_scan_errors():
    ones = np.ones(3, np.float32)
    msg = r"The input carry c has type float32\[\] but the corresponding output carry component"
    with pytest.raises(TypeError, match=msg + r" has type int32\[\], so the dtypes"):
        lax.scan(lambda c, x: (lax.convert_element_type(c, np.int32), x), 1.0, ones)
    with pytest.raises(TypeError, match=r"The input carry c is a <class 'jax._src.core"):
        lax.scan(lambda c, x: ((c, c), x), 1.0, ones)
    with pytest.raises(TypeError, match="so the shapes do not match"):
        lax.scan(lambda c, x: (np.ones(2, np.float32), x), 1.0, ones)
    with pytest.raises(ValueError, match="different leading axis sizes: 3, 4"):
        lax.scan(lambda c, x: (c, x), 1.0, [ones, np.ones(4)])
    with pytest.raises(ValueError, match="no values to scan over and `length` not provided"):
        lax.scan(lambda c, x: (c, x), 1.0, None)


@pytest.mark.parametrize("unroll", [2, 3, 10, 11, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_unrolled_scan_runs_several_steps_per_trip(unroll, reverse):
    def step(c, x):
        return c * 0.9 + x, c + x

    xs = np.arange(10, dtype=np.float32)
    got = jit(lambda xs: lax.scan(step, np.float32(1), xs, unroll=unroll, reverse=reverse))(xs)
    want = jit(lambda xs: lax.scan(step, np.float32(1), xs, reverse=reverse))(xs)
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want[1]), rtol=1e-6)
    text = jit(lambda xs: lax.scan(step, np.float32(1), xs, unroll=unroll)).lower(xs).as_text()
    per_trip = 10 if unroll is True else min(unroll, 10)
    loops = 1 if 10 // per_trip else 0
    assert text.count("stablehlo.while") == loops
    # each step writes its ys through a call, as JAX's scan does
    assert text.count("call @dynamic_update_index_in_dim") == per_trip * loops + 10 % per_trip


def test_loop_invariant_equations_are_emitted_once_before_the_loop():
    def rnn(w, b, xs):
        def step(h, x):
            bias = lax.broadcast_in_dim(b, h.shape, (1,))  # depends on constants only
            h = lax.tanh(lax.dot(h, w) + x + bias)
            return h, h

        return lax.scan(step, np.zeros((4, 8), np.float32), xs)[1]

    w, b = np.eye(8, dtype=np.float32) * 0.5, np.arange(8, dtype=np.float32)
    xs = np.ones((5, 4, 8), np.float32)
    text = jit(rnn).lower(w, b, xs).as_text()
    loop = text[text.index("stablehlo.while") :]
    assert "broadcast_in_dim" in text[: text.index("stablehlo.while")]
    assert "broadcast_in_dim" not in loop[: loop.index("stablehlo.return", loop.index(" do "))]
    h, want = np.zeros((4, 8), np.float32), []
    for x in xs:
        h = np.tanh(h @ w + x + b)
        want.append(h)
    np.testing.assert_allclose(np.asarray(jit(rnn)(w, b, xs)), np.stack(want), rtol=1e-5)
