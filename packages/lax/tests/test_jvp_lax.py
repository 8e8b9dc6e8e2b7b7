"""JVP rules of the lax primitives: numerical checks (orders 1 and 2), float0 tangents,
symbolic zeros, JAX's tie conventions, and jvp composed with jit."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import enable_x64, jit, jvp, make_jaxpr
from lamina.interpreters.test_util import check_grads
from lamina.ir import dtypes

rng = np.random.default_rng(1)


def f32(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def positive(*shape):
    return f32(*shape, low=0.5, high=2.0)


UNARY = [
    (lax.neg, f32(3, 2)),
    (lax.sin, f32(3, 2)),
    (lax.cos, f32(3, 2)),
    (lax.exp, f32(4)),
    (lax.log, positive(4)),
    (lax.tanh, f32(2, 3)),
    (lax.sqrt, positive(5)),
]

BINARY = [
    (lax.add, f32(3, 2), f32(3, 2)),
    (lax.add, f32(3, 2), f32()),
    (lax.add, f32(1, 2), f32(3, 1)),
    (lax.sub, f32(3, 2), f32(3, 2)),
    (lax.sub, f32(), f32(4)),
    (lax.mul, f32(3, 2), f32(3, 2)),
    (lax.mul, f32(3), f32()),
    (lax.div, f32(3, 2), positive(3, 2)),
    (lax.div, f32(), positive(4)),
    (lax.max, f32(3, 2), f32(3, 2)),
    (lax.min, f32(3, 2), f32(3, 2)),
    (lax.max, f32(3), f32()),
]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("fun,x", UNARY, ids=lambda v: getattr(v, "__name__", ""))
def test_unary(fun, x, order):
    check_grads(fun, (x,), order=order)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("fun,x,y", BINARY, ids=lambda v: getattr(v, "__name__", ""))
def test_binary(fun, x, y, order):
    check_grads(fun, (x, y), order=order)


def test_float64_tight():
    with enable_x64():
        x = np.linspace(0.3, 1.7, 6).reshape(2, 3)
        for fun in (lax.sin, lax.cos, lax.exp, lax.log, lax.tanh, lax.sqrt):
            check_grads(fun, (x,), order=2, atol=1e-6, rtol=1e-6)
        check_grads(
            lambda a, b: lax.div(lax.mul(a, b), lax.add(a, b)),
            (x, x[::-1]),
            order=2,
            atol=1e-6,
            rtol=1e-6,
        )
        check_grads(
            lambda a: lax.dot_general(a, a, (((1,), (1,)), ((), ()))),
            (x,),
            order=2,
            atol=1e-6,
            rtol=1e-6,
        )


@pytest.mark.parametrize("order", [1, 2])
def test_shapes_and_reductions(order):
    x = f32(2, 3)
    check_grads(lambda a: lax.broadcast_in_dim(a, (4, 2, 3), (1, 2)), (x,), order=order, eps=1e-3)
    check_grads(lambda a: lax.reshape(a, (3, 2)), (x,), order=order, eps=1e-3)
    check_grads(lambda a: lax.reshape(a, (6,), (1, 0)), (x,), order=order, eps=1e-3)
    check_grads(lambda a: lax.transpose(a, (1, 0)), (x,), order=order, eps=1e-3)
    check_grads(lambda a: lax.reduce_sum(a, (1,)), (x,), order=order, eps=1e-3)
    check_grads(lambda a: lax.reduce_max(a, (0,)), (x,), order=order, eps=1e-3)
    check_grads(lambda a: lax.reduce_max(a, (0, 1)), (x,), order=order, eps=1e-3)


@pytest.mark.parametrize("order", [1, 2])
def test_dot_general(order):
    a, b = f32(2, 3), f32(3, 4)
    check_grads(lax.dot, (a, b), order=order)
    c, d = f32(5, 2, 3), f32(5, 3, 4)
    check_grads(
        lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))), (c, d), order=order
    )


@pytest.mark.parametrize("order", [1, 2])
def test_select_n_and_convert(order):
    x, y = f32(4), f32(4)
    which = np.array([True, False, True, False])
    check_grads(lambda a, b: lax.select_n(which, a, b), (x, y), order=order)
    check_grads(lambda a, b: lax.select_n(lax.gt(a, b), a, b), (x, y), order=order)
    check_grads(lambda a: lax.convert_element_type(a, np.float32), (x,), order=order)
    # float32 steps rounded before the float64 result: JAX 0.10.2 fails this check at its
    # default step and float64 tolerances too
    with enable_x64():
        to64 = lambda a: lax.convert_element_type(a, np.float64)  # noqa: E731
        check_grads(to64, (x,), order=order, eps=1e-3, atol=1e-3, rtol=1e-3)


def test_max_min_ties_split_evenly():
    # JAX 0.10.2: jvp(lax.max, (2., 2.), (1., 10.)) -> 5.5; reduce_max ties average.
    two, one, ten = np.float32(2), np.float32(1), np.float32(10)
    assert float(jvp(lax.max, (two, two), (one, ten))[1]) == 5.5
    assert float(jvp(lax.min, (two, two), (one, ten))[1]) == 5.5
    x, t = np.array([1.0, 3.0, 3.0], np.float32), np.array([1.0, 2.0, 4.0], np.float32)
    out, tan = jvp(lambda a: lax.reduce_max(a, (0,)), (x,), (t,))
    assert (float(out), float(tan)) == (3.0, 3.0)


def test_comparisons_and_int_conversion_have_float0_tangents():
    x = np.float32(2.0)
    for cmp in (lax.eq, lax.ne, lax.lt, lax.le, lax.gt, lax.ge):
        out, t = jvp(lambda a, cmp=cmp: cmp(a, np.float32(1.0)), (x,), (x,))
        assert np.asarray(t).dtype == dtypes.float0
    out, t = jvp(lambda a: lax.convert_element_type(a, np.int32), (x,), (x,))
    assert int(out) == 2 and np.asarray(t).dtype == dtypes.float0


def test_integer_inputs_float0():
    n = np.int32(3)
    zero0 = np.zeros((), dtypes.float0)
    out, t = jvp(lambda a: lax.mul(a, np.int32(2)), (n,), (zero0,))
    assert int(out) == 6 and np.asarray(t).dtype == dtypes.float0
    out, t = jvp(lambda a: lax.mul(lax.convert_element_type(a, np.float32), 2.0), (n,), (zero0,))
    assert float(out) == 6.0 and float(t) == 0.0 and np.asarray(t).dtype == np.float32
    x = np.float32(1.5)
    out, t = jvp(
        lambda a, k: lax.mul(a, lax.convert_element_type(k, np.float32)),
        (x, n),
        (np.float32(1.0), zero0),
    )
    assert float(t) == 3.0

    def iota(a):
        return lax.mul(a, lax.convert_element_type(lax.iota(np.int32, 3), np.float32))

    np.testing.assert_allclose(jvp(iota, (f32(3),), (np.ones(3, np.float32),))[1], [0, 1, 2])


# JAX 0.10.2, make_jaxpr(lambda a, b: jax.jvp(lambda p, q: jnp.sin(p) * q, (a, b), (a, b)))
JAX_SIN_MUL = """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = sin a
    d:f32[] = cos a
    e:f32[] = mul a d
    f:f32[] = mul c b
    g:f32[] = mul e b
    h:f32[] = mul c b
    i:f32[] = add_any g h
  in (f, i) }"""

# JAX 0.10.2: the closed-over q has a zero tangent, so no tangent work is done for it.
JAX_CLOSED_OVER = """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = sin a
    d:f32[] = cos a
    e:f32[] = mul a d
    f:f32[] = mul c b
    g:f32[] = mul e b
  in (f, g) }"""

JAX_JVP_OF_JIT = """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          e:f32[] = sin a
          f:f32[] = cos a
          g:f32[] = mul b f
          c:f32[] = mul e 2.0:f32[]
          d:f32[] = mul g 2.0:f32[]
        in (c, d) }
    ] a b
  in (c, d) }"""

JAX_INT_INPUT = """\
{ lambda ; a:i32[]. let
    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[] = mul b 2.0:f32[]
  in (c, 0.0:f32[]) }"""

x0, y0 = np.float32(2.0), np.float32(3.0)


def test_jaxpr_matches_jax():
    def fn(a, b):
        return jvp(lambda p, q: lax.sin(p) * q, (a, b), (a, b))

    assert str(make_jaxpr(fn)(x0, y0)) == JAX_SIN_MUL


def test_symbolic_zeros_emit_no_tangent_work():
    def fn(p, q):
        return jvp(lambda u: lax.sin(u) * q, (p,), (p,))

    assert str(make_jaxpr(fn)(x0, y0)) == JAX_CLOSED_OVER
    # An ignored input: its tangent never appears.
    jaxpr = make_jaxpr(lambda a, b, ta, tb: jvp(lambda p, q: lax.sin(p), (a, b), (ta, tb)))
    text = str(jaxpr(x0, y0, x0, y0))
    assert "d" not in text.split("in")[0].split("let")[1].replace("cos", "")  # no use of d
    assert [e.primitive.name for e in jaxpr(x0, y0, x0, y0).jaxpr.eqns] == ["sin", "cos", "mul"]


def test_int_input_jaxpr_matches_jax():
    def fn(a):
        return jvp(
            lambda u: lax.convert_element_type(u, np.float32) * 2,
            (a,),
            (np.zeros((), dtypes.float0),),
        )

    assert str(make_jaxpr(fn)(np.int32(1))) == JAX_INT_INPUT


def test_jvp_of_jit_and_jit_of_jvp():
    def fn(a, t):
        return jvp(jit(lambda u: lax.sin(u) * 2.0), (a,), (t,))

    assert str(make_jaxpr(fn)(x0, y0)) == JAX_JVP_OF_JIT
    out, t = fn(x0, y0)
    np.testing.assert_allclose([out, t], [2 * np.sin(2.0), 3 * 2 * np.cos(2.0)], rtol=1e-6)
    out2, t2 = jit(fn)(x0, y0)
    np.testing.assert_allclose([out2, t2], [out, t], rtol=1e-6)
    # a jit whose input tangent is zero: only primal and nonzero tangents are passed
    g = jit(lambda u, v: lax.mul(lax.sin(u), v))
    out, t = jvp(lambda u: g(u, y0), (x0,), (np.float32(1.0),))
    np.testing.assert_allclose(t, 3 * np.cos(2.0), rtol=1e-6)
    # second order through jit
    d2 = jvp(lambda u: jvp(jit(lax.sin), (u,), (np.float32(1.0),))[1], (x0,), (np.float32(1),))
    np.testing.assert_allclose(d2[1], -np.sin(2.0), rtol=1e-6)


JAX_ZERO_OUTPUT = """\
{ lambda ; a:f32[3]. let
    b:f32[3] = broadcast_in_dim 1.0:f32[]
    c:f32[3] = broadcast_in_dim 0.0:f32[]
  in (a, b, a, c) }"""

JAX_SELECT_ZERO_CASE = """\
{ lambda ; a:f32[3] b:f32[3]. let
    c:bool[3] = gt a 0.0:f32[]
    d:f32[3] = select_n c a b
    e:f32[3] = broadcast_in_dim 0.0:f32[]
    f:f32[3] = select_n c a e
  in (d, f) }"""


def test_zeros_instantiated_only_where_needed():
    ones = np.ones(3, np.float32)

    def fn(a):
        return jvp(lambda u: (u, lax.broadcast_in_dim(1.0, (3,), ())), (a,), (a,))

    assert str(make_jaxpr(fn)(ones)) == JAX_ZERO_OUTPUT
    out = jit(fn)(ones)
    np.testing.assert_array_equal(out[1][1], np.zeros(3))

    def fn(a, b):
        return jvp(lambda u: lax.select_n(lax.gt(u, 0.0), u, b), (a,), (a,))

    assert str(make_jaxpr(fn)(ones, ones)) == JAX_SELECT_ZERO_CASE
