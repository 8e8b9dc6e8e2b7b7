"""`lamina.typing`: JAX's ArrayLike and DTypeLike, describing lamina's types."""

import typing

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp


def test_names_as_jax_typing():
    assert sorted(jax.typing.__all__) == ["ArrayLike", "DTypeLike"]


def test_array_like_members():
    # JAX 0.10.2: Union[jax.Array, np.ndarray, np.bool, np.number, bool, int, float, complex]
    assert typing.get_args(jax.typing.ArrayLike) == (
        jax.Array,
        np.ndarray,
        np.bool_,
        np.number,
        bool,
        int,
        float,
        complex,
    )


@pytest.mark.parametrize(
    "value, expected",
    [
        (np.arange(3), True),
        (np.float32(1.5), True),
        (np.bool_(True), True),
        (3, True),
        (2.5, True),
        (1j, True),
        (True, True),
        ([1, 2], False),
        ((1,), False),
        ("3", False),
        (None, False),
    ],
)
def test_array_like_isinstance(value, expected):
    assert isinstance(value, jax.typing.ArrayLike) is expected


def test_lamina_arrays_are_array_like():
    assert isinstance(jnp.arange(3), jax.typing.ArrayLike)
    seen = []

    @jax.jit
    def f(x):
        seen.append((isinstance(x, jax.Array), isinstance(x, jax.typing.ArrayLike)))
        return x

    f(np.ones(2))
    # As in JAX 0.10.2 (recorded): a tracer is a jax.Array, but isinstance against the
    # Union does not see the virtual subclass and says False.
    assert seen == [(True, False)]


def test_dtype_like_members():
    # JAX 0.10.2: Union[str, type[Any], np.dtype, SupportsDType]
    members = typing.get_args(jax.typing.DTypeLike)
    assert members[:3] == (str, type[typing.Any], np.dtype)
    supports_dtype = members[3]
    assert supports_dtype.__name__ == "SupportsDType"
    # isinstance against DTypeLike itself works only for str, as in JAX (type[Any] is a
    # parameterized generic); the protocol member is runtime-checkable.
    assert isinstance("float32", jax.typing.DTypeLike)
    for value in (np.zeros(2), jnp.zeros(2, jnp.bfloat16), jax.ShapeDtypeStruct((2,), np.int32)):
        assert isinstance(value, supports_dtype)
    for value in (3, None, "int8"):
        assert not isinstance(value, supports_dtype)
    for value in (np.float32, float, jnp.bfloat16):
        assert isinstance(value, type)


def test_dtype_like_values_are_accepted_as_dtypes():
    for dtype in ("float32", np.float32, np.dtype("float32"), jnp.zeros(1, np.float32)):
        assert jnp.zeros(2, jnp.result_type(dtype)).dtype == np.float32
