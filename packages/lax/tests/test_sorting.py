"""sort, sort_key_val, top_k and approx_max_k/approx_min_k against NumPy, JAX's order
for NaNs and signed zeros, printed Jaxprs, gradients and vmap."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(5)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.float16])
@pytest.mark.parametrize("dimension", [0, 1, -1])
def test_sort_against_numpy(dtype, dimension):
    x = (rng.standard_normal((4, 5)) * 10).astype(dtype)
    np.testing.assert_array_equal(np.asarray(lax.sort(x, dimension)), np.sort(x, axis=dimension))


def test_sort_orders_nans_last_and_zeros_stably_as_jax():
    x = np.array([0.0, -0.0, np.nan, 1.0, -np.inf, -np.nan], np.float32)
    got = np.asarray(lax.sort(x))
    np.testing.assert_array_equal(got, [-np.inf, 0.0, -0.0, 1.0, np.nan, np.nan])
    assert not np.signbit(got[1]) and np.signbit(got[2])
    z = np.array([1 + 2j, 1 - 1j, -1 + 0j, 1 - 2j], np.complex64)
    np.testing.assert_array_equal(np.asarray(lax.sort(z)), np.sort(z))


def test_several_operands_and_keys():
    a = np.array([3, 1, 2, 1, 3], np.int32)
    b = np.array([True, False, True, True, False])
    keys, flags = lax.sort((a, b), num_keys=2)
    np.testing.assert_array_equal(np.asarray(keys), [1, 1, 2, 3, 3])
    np.testing.assert_array_equal(np.asarray(flags), [False, True, True, False, True])
    keys, values = lax.sort_key_val(a, np.arange(5.0, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(values), [1.0, 3.0, 2.0, 0.0, 4.0])
    text = str(make_jaxpr(lambda x, y: lax.sort((x, y), num_keys=1))(a, b))
    assert "sort[dimension=0 is_stable=True num_keys=1] a b" in text
    with pytest.raises(ValueError, match="num_keys=2 must equal 1 for a single operand"):
        lax.sort(a, num_keys=2)


def test_top_k_and_approx_k():
    x = np.array([1.0, 3.0, 3.0, 2.0], np.float32)
    values, indices = lax.top_k(x, 3)
    np.testing.assert_array_equal(np.asarray(values), [3.0, 3.0, 2.0])
    np.testing.assert_array_equal(np.asarray(indices), [1, 2, 3])
    m = rng.standard_normal((3, 6)).astype(np.float32)
    values, indices = lax.approx_max_k(m, 2)
    np.testing.assert_array_equal(np.asarray(values), -np.sort(-m, axis=1)[:, :2])
    np.testing.assert_array_equal(np.asarray(indices), np.argsort(-m, axis=1, kind="stable")[:, :2])
    values, _ = lax.approx_min_k(m, 3, reduction_dimension=0)
    np.testing.assert_array_equal(np.asarray(values), np.sort(m, axis=0)[:3])
    assert str(make_jaxpr(lambda v: lax.top_k(v, 2))(x)) == (
        "{ lambda ; a:f32[4]. let b:f32[2] c:i32[2] = top_k[axis=0 k=2] a in (b, c) }"
    )
    with pytest.raises(ValueError, match="no larger than size along axis; got k=5"):
        lax.top_k(x, 5)


@pytest.mark.parametrize("in_axis", [0, 1])
def test_vmap_against_a_loop(in_axis):
    m = rng.standard_normal((3, 4)).astype(np.float32)
    want = np.stack([np.sort(np.take(m, i, in_axis)) for i in range(m.shape[in_axis])])
    np.testing.assert_array_equal(np.asarray(vmap(lax.sort, in_axes=in_axis)(m)), want)
    top = vmap(lambda v: lax.top_k(v, 2)[0], in_axes=in_axis)(m)
    np.testing.assert_array_equal(np.asarray(top), -np.sort(-want, axis=1)[:, :2])


def test_gradients_follow_the_permutation():
    x = rng.permutation(8).astype(np.float32).reshape(2, 4)
    check_grads(lambda v: lax.sort(v, 1), (x,), order=2, modes=("fwd", "rev"), eps=1e-3)
    check_grads(lambda v: lax.top_k(v, 2)[0], (x,), order=2, modes=("fwd", "rev"), eps=1e-3)
    check_grads(
        lambda v: lax.sort_key_val(v, v * v)[1], (x,), order=1, modes=("fwd", "rev"), eps=1e-3
    )


def test_top_k_orders_floats_totally_and_keeps_weak_types():
    x = np.array([1.0, -np.nan, np.nan, 3.0, -np.inf], np.float32)
    values, indices = lax.top_k(x, 5)
    np.testing.assert_array_equal(np.asarray(indices), [2, 3, 0, 4, 1])  # -NaN is smallest
    values = np.asarray(values)
    assert np.isnan(values[0]) and np.isnan(values[4]) and values[3] == -np.inf
    weak = lax.broadcast(2.0, (3,))
    assert lax.sort(weak).weak_type and lax.top_k(weak, 1)[0].weak_type
    assert lax.sort((weak, weak), num_keys=1)[1].weak_type
