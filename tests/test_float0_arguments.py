"""float0 values (tangents and cotangents of integers) as arguments and results of
``jit`` and ``device_put``: they stay NumPy float0 arrays on the host, as in JAX."""

import numpy as np

import lamina as jax
import lamina.numpy as jnp

FLOAT0 = jax.dtypes.float0


def _int_cotangent():
    _, vjp = jax.vjp(lambda x: x * 2, np.int32(3))
    (ct,) = vjp(np.int32(1))
    return ct


def test_vjp_cotangent_of_an_integer_through_jit():
    ct = _int_cotangent()
    assert ct.dtype == FLOAT0 and ct.shape == ()
    out_ct, out = jax.jit(lambda a, b: (a, b * 2.0))(ct, 1.0)
    # recorded from JAX 0.10.2: a host float0 array and f32 2.0
    assert isinstance(out_ct, np.ndarray) and out_ct.dtype == FLOAT0 and out_ct.shape == ()
    assert out.dtype == np.float32 and float(out) == 2.0


def test_float0_argument_used_in_the_computation():
    ct = np.zeros((2,), FLOAT0)
    f = jax.jit(lambda a, b: a.astype(jnp.float32) + b)
    for _ in range(3):  # the cached executable too
        # recorded from JAX 0.10.2: [1. 1.] (float0 arguments are boolean zeros on the device)
        np.testing.assert_array_equal(f(ct, 1.0), np.ones(2, np.float32))
    out = jax.jit(lambda a: a.astype(jnp.int32))(ct)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [0, 0])


def test_float0_results_of_jit():
    ct = np.zeros((2,), FLOAT0)
    a, b = jax.jit(lambda a, b: (a, b))(ct, np.zeros((), FLOAT0))
    # recorded from JAX 0.10.2: both host float0 arrays, shapes (2,) and ()
    assert type(a) is not jax.Array and a.dtype == FLOAT0 and a.shape == (2,)
    assert type(b) is not jax.Array and b.dtype == FLOAT0 and b.shape == ()
    dx, di = jax.jit(jax.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True))(1.0, 3)
    assert float(dx) == 3.0
    assert isinstance(di, np.ndarray) and di.dtype == FLOAT0 and di.shape == ()


def test_device_put_keeps_float0_on_the_host():
    out = jax.device_put(np.zeros((2, 3), FLOAT0))
    # recorded from JAX 0.10.2: a host float0 array of the same shape
    assert isinstance(out, np.ndarray) and out.dtype == FLOAT0 and out.shape == (2, 3)
