"""lamina.custom_batching: custom_vmap and sequential_vmap, against JAX 0.10.2's
recorded values, Jaxprs and errors, and against loops over the batch."""

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina.custom_batching import custom_vmap, sequential_vmap

XS = np.array([0.0, 1.0, 2.0], np.float32)
YS = np.array([1.0, 2.0, 3.0], np.float32)


def _make_f(calls=None):
    """sin(x) * y, whose batching rule computes cos(xs) * ys instead (so the rule shows)."""

    @custom_vmap
    def f(x, y):
        return jnp.sin(x) * y

    @f.def_vmap
    def f_rule(axis_size, in_batched, xs, ys):
        if calls is not None:
            calls.append((axis_size, in_batched))
        return jnp.cos(xs) * ys, True

    return f


def test_the_names_are_jaxs():
    assert sorted(jax.custom_batching.__all__) == ["custom_vmap", "sequential_vmap"]


def test_unbatched_calls_run_the_function():
    f = _make_f()
    np.testing.assert_allclose(f(0.5, 2.0), np.sin(0.5) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(f)(0.5, 2.0), np.sin(0.5) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(f(x=0.5, y=2.0), np.sin(0.5) * 2.0, rtol=1e-6)


def test_vmap_runs_the_rule():
    calls = []
    f = _make_f(calls)
    np.testing.assert_allclose(jax.vmap(f)(XS, YS), np.cos(XS) * YS, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(f, in_axes=(0, None))(XS, 2.0), np.cos(XS) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.vmap(f))(XS, YS), np.cos(XS) * YS, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.jit(f))(XS, YS), np.cos(XS) * YS, rtol=1e-6)
    # in_batched is a list, one entry per argument (recorded from JAX 0.10.2).
    assert calls[:2] == [(3, [True, True]), (3, [True, False])]
    assert all(type(b) is list for _, b in calls)


def test_nested_vmap_runs_the_rule_once_for_the_inner_axis():
    calls = []
    f = _make_f(calls)
    out = jax.vmap(jax.vmap(f))(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    np.testing.assert_allclose(out, np.full((2, 3), np.cos(1.0)), rtol=1e-6)
    assert calls == [(3, [True, True])]  # recorded from JAX 0.10.2


def test_batch_axes_are_moved_to_the_front_for_the_rule():
    shapes = []

    @custom_vmap
    def p(x):
        return x * 2

    @p.def_vmap
    def p_rule(n, b, x):
        shapes.append(x.shape)
        return x * 3, True

    out = jax.vmap(p, in_axes=1, out_axes=1)(jnp.ones((2, 3)))
    np.testing.assert_array_equal(out, np.full((2, 3), 3.0))
    assert shapes == [(3, 2)]


def test_pytrees_and_closed_over_values():
    c = jnp.arange(3.0)

    @custom_vmap
    def f(x, y):
        return {"a": x * c, "b": y}

    @f.def_vmap
    def rule(n, b, x, y):
        return {"a": x[:, None] * c + 100, "b": y}, {"a": b[0], "b": b[1]}

    out = jax.vmap(f, in_axes=(0, None))(jnp.ones(2), 2.0)
    np.testing.assert_array_equal(out["a"], [[100.0, 101.0, 102.0]] * 2)
    np.testing.assert_array_equal(out["b"], [2.0, 2.0])

    @custom_vmap
    def g(d):
        return d["x"] + d["y"]

    @g.def_vmap
    def g_rule(n, b, d):
        assert b == [{"x": True, "y": False}]  # as JAX 0.10.2 passes it
        return d["x"] - d["y"], True

    out = jax.vmap(g, in_axes=({"x": 0, "y": None},))({"x": jnp.ones(2), "y": 3.0})
    np.testing.assert_array_equal(out, [-2.0, -2.0])


def test_unbatched_outputs_are_broadcast_by_vmap():
    @custom_vmap
    def k(x):
        return x.sum()

    @k.def_vmap
    def k_rule(n, b, x):
        return x.sum(), False

    np.testing.assert_array_equal(jax.vmap(k)(jnp.ones((3, 2))), [6.0, 6.0, 6.0])


def test_jvp_and_vmap_of_jvp_use_the_rule():
    f = _make_f()
    primal, tangent = jax.jvp(f, (0.5, 2.0), (1.0, 0.0))
    np.testing.assert_allclose([primal, tangent], [np.sin(0.5) * 2, np.cos(0.5) * 2], rtol=1e-6)
    # Values recorded from JAX 0.10.2: the tangent of the rule's output, -sin(x) * y.
    want = ([1.0, 0.5403023, -0.41614684], [0.0, -0.84147096, -0.9092974])
    for out in (
        jax.vmap(lambda x, y: jax.jvp(f, (x, y), (jnp.ones_like(x), jnp.zeros_like(y))))(
            XS, np.ones(3, np.float32)
        ),
        jax.jvp(
            jax.vmap(f),
            (XS, np.ones(3, np.float32)),
            (np.ones(3, np.float32), np.zeros(3, np.float32)),
        ),
    ):
        np.testing.assert_allclose(out[0], want[0], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(out[1], want[1], rtol=1e-6, atol=1e-7)
    out = jax.jvp(jax.vmap(f), (XS, YS), (YS, XS))  # recorded from JAX 0.10.2
    np.testing.assert_allclose(out[0], [1.0, 1.0806046, -1.2484405], rtol=1e-6)
    np.testing.assert_allclose(out[1], [0.0, -2.8255816, -9.01597], rtol=1e-6)


def test_integer_arguments():
    @custom_vmap
    def g(x, n):
        return x * n

    @g.def_vmap
    def g_rule(size, batched, x, n):
        return x * n + 1, True

    np.testing.assert_array_equal(jax.vmap(g)(XS, jnp.arange(3)), [1.0, 2.0, 5.0])
    primal, tangent = jax.jvp(lambda x: g(x, 3), (2.0,), (1.0,))
    assert (float(primal), float(tangent)) == (6.0, 3.0)


def test_reverse_mode_is_refused_as_in_jax():
    f = _make_f()
    message = "Linearization failed to produce known values for all output primals"
    with pytest.raises(ValueError, match=message):
        jax.grad(f)(0.5, 2.0)
    with pytest.raises(ValueError, match=message):
        jax.vmap(jax.grad(f))(XS, YS)


def test_custom_vjp_around_custom_vmap():
    @jax.custom_vjp
    @custom_vmap
    def q(x, y):
        return jnp.sin(x) * y

    @q.def_vmap
    def q_rule(n, b, xs, ys):
        return jnp.cos(xs) * ys, True

    def q_fwd(x, y):
        return q(x, y), (jnp.cos(x), jnp.sin(x), y)

    def q_bwd(res, g):
        cos_x, sin_x, y = res
        return (cos_x * g * y, sin_x * g)

    q.defvjp(q_fwd, q_bwd)
    np.testing.assert_array_equal(jax.vmap(q)(jnp.zeros(3), jnp.ones(3)), [1.0, 1.0, 1.0])
    assert float(jax.grad(q)(0.0, 1.0)) == 1.0
    np.testing.assert_array_equal(jax.vmap(jax.grad(q))(jnp.zeros(3), jnp.ones(3)), [1.0] * 3)


# Recorded from JAX 0.10.2.
_JAXPR = """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = custom_vmap_call[
      call={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = sin d
          g:f32[] = mul f e
        in (g,) }
      in_tree=PyTreeDef(([], (*, *)))
      out_tree=PyTreeDef(*)
      rule=<function _make_f.<locals>.f_rule at 0xXXXXXXXXXXXX>
    ] a b
  in (c,) }"""
_JVP_JAXPR = """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] d:f32[] = custom_vmap_call[
      call={ lambda ; e:f32[] f:f32[] g:f32[] h:f32[]. let
          i:f32[] = sin e
          j:f32[] = cos e
          k:f32[] = mul g j
          l:f32[] = mul i f
          m:f32[] = mul k f
          n:f32[] = mul i h
          o:f32[] = add_any m n
        in (l, o) }
      in_tree=PyTreeDef((([], (*, *)), ([], (*, *))))
      out_tree=PyTreeDef((*, *))
      rule=<function custom_vmap_jvp.<locals>.jvp_of_rule_rule at 0xXXXXXXXXXXXX>
    ] a b 1.0:f32[] 0.0:f32[]
  in (c, d) }"""
_VMAP_JAXPR = "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = cos a; d:f32[3] = mul c b in (d,) }"
_SEQUENTIAL_JAXPR = """\
{ lambda ; a:f32[3,2,2] b:f32[2,2]. let
    c:f32[3,2,2] = scan[
      jaxpr={ lambda ; d:f32[2,2] e:f32[2,2]. let
          f:f32[2,2] = custom_vmap_call[
            call={ lambda ; g:f32[2,2] h:f32[2,2]. let
                i:f32[2,2] = dot_general[
                  dimension_numbers=(([1], [0]), ([], []))
                  preferred_element_type=float32
                ] g h
              in (i,) }
            in_tree=PyTreeDef(([], (*, *)))
            out_tree=PyTreeDef(*)
            rule=<function sequential_vmap.<locals>.rule at 0xXXXXXXXXXXXX>
          ] e d
        in (f,) }
      length=3
      num_carry=0
      num_consts=1
      reverse=False
      unroll=1
    ] b a
  in (c,) }"""


def test_jaxprs_are_jaxs():
    f = _make_f()
    x, y = np.float32(0.5), np.float32(2.0)
    assert str(jax.make_jaxpr(f)(x, y)) == _JAXPR
    assert str(jax.make_jaxpr(lambda x, y: jax.jvp(f, (x, y), (1.0, 0.0)))(x, y)) == _JVP_JAXPR
    assert str(jax.make_jaxpr(jax.vmap(f))(XS, YS)) == _VMAP_JAXPR

    @sequential_vmap
    def s(x, y):
        return x @ y

    jaxpr = jax.make_jaxpr(jax.vmap(s, in_axes=(0, None)))(jnp.ones((3, 2, 2)), jnp.eye(2))
    assert str(jaxpr) == _SEQUENTIAL_JAXPR


def test_sequential_vmap_loops_over_the_batch():
    seen = []

    @sequential_vmap
    def s(x, y):
        seen.append(np.shape(x))
        return x + y, x * y

    a, b = jax.vmap(s, in_axes=(0, None))(jnp.arange(3.0), 2.0)
    np.testing.assert_array_equal(a, [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(b, [0.0, 2.0, 4.0])
    assert () in seen  # the function saw single elements
    mats = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    out = jax.jit(jax.vmap(sequential_vmap(lambda m: jnp.linalg.inv(m) @ m)))(mats + np.eye(2))
    np.testing.assert_allclose(out, np.broadcast_to(np.eye(2), (3, 2, 2)), atol=1e-5)
    # Its JVP under vmap (recorded from JAX 0.10.2).
    primals, tangents = jax.jvp(jax.vmap(s), (XS, np.ones(3, np.float32)), (np.ones(3), np.ones(3)))
    np.testing.assert_array_equal(primals[0], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(primals[1], [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(tangents[0], [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(tangents[1], [1.0, 2.0, 3.0])


def test_decorators_stack_through_def_attributes():
    @jax.custom_jvp
    @custom_vmap
    def h(x):
        return x

    assert h.def_vmap is not None and callable(h.defjvp)
    with pytest.raises(AttributeError):
        h.not_a_rule_setter  # noqa: B018


# Messages recorded from JAX 0.10.2.
def test_errors():
    @custom_vmap
    def g(x):
        return x

    with pytest.raises(AttributeError) as info:
        g(1.0)
    assert str(info.value) == "No batching rule defined for custom_vmap function g using def_vmap."

    @custom_vmap
    def h(x):
        return x, x

    @h.def_vmap
    def hr(n, b, x):
        return (x, x), True

    with pytest.raises(ValueError) as info:
        jax.vmap(h)(jnp.ones(3))
    assert str(info.value) == (
        "structure of output value and output batching specification returned by custom "
        "vmap rule (hr) do not match.\nOutput values: PyTreeDef((*, *))\n"
        "Batching spec: PyTreeDef(*)"
    )

    @h.def_vmap
    def hr(n, b, x):  # noqa: F811
        return [x, x], [True, True]

    with pytest.raises(ValueError) as info:
        jax.vmap(h)(jnp.ones(3))
    assert str(info.value) == (
        "structure of output returned by custom vmap rule (hr) does not match that of "
        "original custom-vmapped function.\nOriginal output: PyTreeDef((*, *))\n"
        "Rule output: PyTreeDef([*, *])"
    )
    with pytest.raises(TypeError, match="could not be resolved to positional-only arguments"):
        h(1.0, z=2.0)


def test_a_batched_closed_over_value_is_refused():
    def outer(x, c):
        @custom_vmap
        def k(y):
            return y * c

        @k.def_vmap
        def k_rule(n, b, y):
            return y * c, b[0]

        return k(x)

    with pytest.raises(AssertionError):  # as JAX 0.10.2
        jax.vmap(outer)(jnp.ones(2), jnp.arange(2.0))
