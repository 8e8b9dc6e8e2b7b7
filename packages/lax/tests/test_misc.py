"""optimization_barrier, rng_uniform and rng_bit_generator: values recorded from JAX
0.10.2 (XLA's generators give the same bits for the same key), printed Jaxprs, rules."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import grad, jit, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

KEY = np.array([1, 2, 3, 4], np.uint32)


def test_rng_bit_generator_matches_jax():
    new_key, bits = lax.rng_bit_generator(KEY, (2, 3))
    np.testing.assert_array_equal(np.asarray(new_key), [1, 2, 5, 4])
    np.testing.assert_array_equal(
        np.asarray(bits),
        [[512747620, 1298009047, 1267190206], [761827841, 1383286907, 1639995030]],
    )
    new_key, bits = lax.rng_bit_generator(
        KEY, (5,), dtype=np.uint8, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY
    )
    np.testing.assert_array_equal(np.asarray(new_key), [1, 2, 6, 4])
    np.testing.assert_array_equal(np.asarray(bits), [236, 142, 168, 94, 67])
    assert np.asarray(bits).dtype == np.uint8
    jitted = jit(lambda k: lax.rng_bit_generator(k, (2, 3)))(KEY)
    np.testing.assert_array_equal(
        np.asarray(jitted[1]), np.asarray(lax.rng_bit_generator(KEY, (2, 3))[1])
    )


def test_rng_bit_generator_under_vmap_uses_the_first_key_as_jax_does():
    keys = np.stack([KEY, KEY + 1])
    bits = vmap(lambda k: lax.rng_bit_generator(k, (2,))[1])(keys)
    np.testing.assert_array_equal(
        np.asarray(bits), [[512747620, 1298009047], [1267190206, 761827841]]
    )
    new_keys = vmap(lambda k: lax.rng_bit_generator(k, (2,))[0])(keys)
    np.testing.assert_array_equal(np.asarray(new_keys), [[1, 2, 4, 4], [2, 3, 4, 5]])


def test_rng_bit_generator_jaxpr_and_errors():
    text = str(make_jaxpr(lambda k: lax.rng_bit_generator(k, (5,), dtype=np.uint8))(KEY))
    assert text == (
        "{ lambda ; a:u32[4]. let\n"
        "    b:u32[4] c:u8[5] = rng_bit_generator[\n"
        "      algorithm=RNG_DEFAULT\n"
        "      dtype=uint8\n"
        "      out_sharding=None\n"
        "      shape=(5,)\n"
        "    ] a\n"
        "  in (b, c) }"
    )
    with pytest.raises(TypeError, match="uint32 and shape"):
        lax.rng_bit_generator(np.array([1, 2, 3], np.uint32), (2,))
    with pytest.raises(TypeError, match="unsigned integer"):
        lax.rng_bit_generator(KEY, (2,), dtype=np.float32)


def test_rng_uniform_range_and_jaxpr():
    values = np.asarray(
        jit(lambda a, b: lax.rng_uniform(a, b, (2000,)))(np.float32(2), np.float32(3))
    )
    assert values.shape == (2000,) and values.min() >= 2 and values.max() < 3
    assert abs(values.mean() - 2.5) < 0.05
    text = str(make_jaxpr(lambda a, b: lax.rng_uniform(a, b, (3,)))(0.0, 1.0))
    assert (
        text == "{ lambda ; a:f32[] b:f32[]. let c:f32[3] = rng_uniform[shape=(3,)] a b in (c,) }"
    )


def test_optimization_barrier_is_the_identity_under_every_transformation():
    x = np.float32(0.7)
    pair = lax.optimization_barrier((x, np.float32(2)))
    assert float(pair[0]) == x and float(pair[1]) == 2
    np.testing.assert_allclose(
        grad(lambda v: lax.optimization_barrier(lax.sin(v)))(x), np.cos(x), rtol=1e-6
    )
    check_grads(lambda v: lax.optimization_barrier((lax.sin(v), v * v))[0], (x,), order=2)
    xs = np.arange(4.0, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(vmap(lax.optimization_barrier)(xs)), xs)
    text = str(make_jaxpr(lambda v: lax.optimization_barrier((v, v + 1)))(1.0))
    assert "c:f32[] d:f32[] = optimization_barrier a b" in text
    lowered = jit(grad(lambda v: lax.optimization_barrier(lax.sin(v)))).lower(x).as_text()
    assert "stablehlo.optimization_barrier" in lowered


def test_composite_lowers_to_stablehlo_composite_as_jax_does():
    double = lax.composite(lambda v: v * 2, "my.double")
    assert float(double(3.0)) == 6.0 and float(jit(double)(3.0)) == 6.0
    text = str(make_jaxpr(double)(1.0))
    assert "composite[\n      attributes=()\n" in text and "name=my.double" in text
    lowered = jit(double).lower(1.0).as_text()
    assert 'stablehlo.composite "my.double" %arg0 {decomposition = @my.double}' in lowered
    scale = lax.composite(lambda v, *, k: v * k, "my.scale")
    assert float(jit(lambda v: scale(v, k=2.0))(3.0)) == 6.0
    assert (
        "composite_attributes = {k = 2.000000e+00 : f32}"
        in jit(lambda v: scale(v, k=2.0)).lower(1.0).as_text()
    )


def test_small_helpers():
    np.testing.assert_array_equal(np.asarray(lax.empty((2, 3), np.float32)), np.zeros((2, 3)))
    assert str(make_jaxpr(lambda: lax.empty((2,), np.float32))()) == (
        "{ lambda ; . let\n"
        "    a:f32[2] = empty[dtype=float32 out_sharding=None shape=(2,)] \n"
        "  in (a,) }"
    )
    assert float(lax.platform_dependent(1.0, cpu=lambda v: v + 1, default=lambda v: v)) == 2.0
    assert float(lax.platform_dependent(1.0, tpu=lambda v: v + 1, default=lambda v: v)) == 1.0
    text = str(make_jaxpr(lambda v: lax.dce_sink(v))(1.0))
    assert text == "{ lambda ; a:f32[]. let dce_sink[prevent_mlir_dce=False] a in () }"
    pred = np.array([True, False])
    np.testing.assert_array_equal(np.asarray(lax.select(pred, np.ones(2), np.zeros(2))), [1, 0])
    assert lax.dtype(1.0) == np.float32 and lax.dtype(np.int8(1)) == np.int8
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    with pytest.raises(ValueError, match="Incompatible shapes"):
        lax.broadcast_shapes((2,), (3,))
    like = lax.broadcast_like(np.arange(3.0, dtype=np.float32), np.ones((2, 3)))
    np.testing.assert_array_equal(np.asarray(like), np.broadcast_to(np.arange(3.0), (2, 3)))
    np.testing.assert_allclose(np.asarray(lax.reciprocal(np.float32(4))), 0.25)
    taken = lax.index_take(
        np.arange(12.0, dtype=np.float32).reshape(3, 4),
        (np.array([0, 2]), np.array([1, -1])),
        (0, 1),
    )
    np.testing.assert_array_equal(np.asarray(taken), [1.0, 11.0])  # recorded from JAX


def test_shape_as_value_and_stage():
    np.testing.assert_array_equal(np.asarray(lax.shape_as_value((2, 3))), [2, 3])
    assert str(make_jaxpr(lambda: lax.shape_as_value((2, 3)))()) == (
        "{ lambda a:i32[2]; . let  in (a,) }"
    )
    assert float(lax.stage(1.5)) == 1.5
    assert str(make_jaxpr(lambda v: lax.stage(v))(1.0)) == "{ lambda ; a:f32[]. let  in (a,) }"
