"""``check_grads`` and its central differences give JAX 0.10.2's numbers bit for bit
(chex's ``assert_numerical_grads`` relies on them), and fail where JAX's fail, with the
same report. Inputs and outputs recorded from JAX 0.10.2 as float32 bytes."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina import test_util
from lamina.interpreters import test_util as internals


def _f32(hex_bytes: str, shape=None):
    x = np.frombuffer(bytes.fromhex(hex_bytes), np.float32)
    return x.reshape(shape) if shape else x


X = _f32(
    "e883d53e3067383f83dcef3856cb9a3e2d47163e041cbd3dffba3e3e56edb03e1b25cb3ee5ef093f"
    "aaa0d63e8c6a2f3fee5b513e4ecc603ff25be03c",
    (3, 5),
)
X2, Y = _f32("1edb4a3e99fd4c3ffedf773f2279a03e"), _f32("c2a32b3ffaa8d53e4c060f3f98c10f3e")


def test_central_differences_are_jax_bit_for_bit():
    tangent = internals._rand_like(np.random.RandomState(0), X)
    out = internals.numerical_jvp(lambda x: jnp.sum(x**2 - 2 * x + 10), (X,), (tangent,))
    assert np.asarray(out).tobytes().hex() == "801058c1"
    tangents = tuple(internals._rand_like(np.random.RandomState(0), v) for v in (X2, Y))
    outs = internals.numerical_jvp(lambda x, y: (jnp.sin(x) * y, jnp.cos(y)), (X2, Y), tangents)
    assert [np.asarray(o).tobytes().hex() for o in outs] == [
        "00dfc03fa09ace3e26e18e3f237a7d3f",
        "f84d8cbf000426bee8d304bfc085a0be",
    ]


def test_check_grads_passes_and_fails_as_jax():
    f = lambda x: jnp.sum(x**2 - 2 * x + 10)  # noqa: E731
    # float32 central differences miss by 0.063 here: JAX fails at its default tolerance
    # and passes with chex's (0.01 times the input's size)
    with pytest.raises(AssertionError, match="JVP tangent") as info:
        test_util.check_grads(f, (X,), order=2)
    assert "ACTUAL: array(-13.566744, dtype=float32)" in str(info.value)
    assert "DESIRED: array(-13.504028, dtype=float32)" in str(info.value)
    test_util.check_grads(f, (X,), order=2, atol=0.01 * X.size)
    with pytest.raises(AssertionError) as info:
        test_util.check_grads(
            lambda x: jnp.sum(jnp.floor(x * 1000) / 1000 * x), (X,), order=1, modes=["rev"]
        )
    report = str(info.value)
    assert "Not equal to tolerance rtol=0.002, atol=0.002" in report
    assert "VJP cotangent projection" in report
    assert "ACTUAL: array(1.173983, dtype=float32)" in report
    assert "DESIRED: array(1.869125, dtype=float32)" in report
