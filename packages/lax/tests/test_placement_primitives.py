"""device_put inside traced code (the device_put primitive, printed and differentiated
as in JAX 0.10.2), with_sharding_constraint on one device, stage_p, the total-order
comparisons eq_to/le_to/lt_to, and the geqrf kernel behind numpy's qr(mode='raw')."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import (
    device_put,
    devices,
    grad,
    jit,
    make_jaxpr,
    sharding_for_device,
    vmap,
)
from lamina.lax.linalg.qr import geqrf

DEVICE_PUT_GRAD_JAXPR = """{ lambda ; a:f32[]. let
    b:f32[] = device_put[
      copy_semantics=(ArrayCopySemantics.REUSE_INPUT,)
      devices=(None,)
      srcs=(None,)
    ] a
    _:f32[] = mul b a
    c:f32[] = mul b 1.0:f32[]
    d:f32[] = mul 1.0:f32[] a
    e:f32[] = device_put[
      copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,)
      devices=(None,)
      srcs=(None,)
    ] d
    f:f32[] = add_any c e
  in (f,) }"""


def test_device_put_under_transformations():
    def f(y):
        return device_put(y) * y

    assert str(make_jaxpr(grad(f))(1.0)) == DEVICE_PUT_GRAD_JAXPR
    assert float(grad(f)(3.0)) == 6.0
    device = devices()[0]
    assert float(jit(lambda x: device_put(x, device) + 1)(1.0)) == 2.0
    out = vmap(lambda x: device_put({"a": x})["a"] * 2)(np.arange(3.0))
    np.testing.assert_array_equal(np.asarray(out), [0, 2, 4])
    assert lax.device_put_p.multiple_results


def test_with_sharding_constraint_on_one_device():
    sharding = sharding_for_device(devices()[0])
    jaxpr = make_jaxpr(lambda x: lax.with_sharding_constraint(x, sharding))(1.0)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["sharding_constraint"]
    out = jit(lambda x: lax.with_sharding_constraint({"a": x * 2}, sharding))(1.0)
    assert float(out["a"]) == 2.0
    assert float(grad(lambda x: lax.with_sharding_constraint(x, sharding) * x)(3.0)) == 6.0
    eager = lax.with_sharding_constraint(np.float32(2), sharding)
    assert eager.sharding == sharding
    batched = vmap(lambda x: lax.with_sharding_constraint(x, sharding))(np.ones(2))
    np.testing.assert_array_equal(np.asarray(batched), [1, 1])
    with pytest.raises(TypeError, match="requires a Sharding"):
        lax.with_sharding_constraint(1.0, "not a sharding")


def test_stage_primitive_is_the_linear_identity():
    assert float(lax.stage_p.bind(2.0)) == 2.0
    assert float(grad(lambda x: lax.stage_p.bind(x) * x)(2.0)) == 4.0
    np.testing.assert_array_equal(
        np.asarray(vmap(lambda x: lax.stage_p.bind(x) * 2)(np.ones(2))), [2, 2]
    )
    assert "stage" in str(make_jaxpr(lambda x: lax.stage_p.bind(x))(1.0))


def test_total_order_comparisons():
    x = np.array([np.nan, -np.nan, -0.0, 0.0, 1.0, -np.inf], np.float32)
    zero = np.zeros(6, np.float32)
    np.testing.assert_array_equal(lax.lt_to_p.bind(x, zero), [0, 1, 1, 0, 0, 1])
    np.testing.assert_array_equal(lax.eq_to_p.bind(x, zero), [0, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(lax.le_to_p.bind(x, zero), [0, 1, 1, 1, 0, 1])
    np.testing.assert_array_equal(lax.eq_to_p.bind(x, x), [1, 1, 1, 1, 1, 1])  # NaN == NaN
    ints = np.array([-2, 0, 3], np.int32)
    np.testing.assert_array_equal(lax.lt_to_p.bind(ints, np.int32(0)), [1, 0, 0])
    batched = vmap(lambda a: lax.lt_to_p.bind(a, np.float32(0)))(x)
    np.testing.assert_array_equal(batched, [0, 1, 1, 0, 0, 1])
    assert "lt_to" in str(make_jaxpr(lambda a: lax.lt_to_p.bind(a, a))(x))


def test_geqrf_matches_lapack_raw_qr():
    a = np.array([[2.0, 1], [1, 3], [1, 1]], np.float32)
    h, tau = geqrf(a)
    want_h, want_tau = np.linalg.qr(a.astype(np.float64), mode="raw")
    np.testing.assert_allclose(np.asarray(h), want_h.T, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(tau), want_tau, rtol=1e-5)
    batched_tau = vmap(geqrf)(np.stack([a, 2 * a]))[1]
    np.testing.assert_allclose(np.asarray(batched_tau), np.stack([want_tau, want_tau]), rtol=1e-5)
