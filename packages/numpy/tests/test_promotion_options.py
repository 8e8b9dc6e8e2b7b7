"""The promotion options in lamina.numpy: jax_numpy_dtype_promotion='strict' and
jax_numpy_rank_promotion ('allow', 'warn', 'raise'); behaviour and messages recorded
from JAX 0.10.2."""

import warnings

import numpy as np
import pytest

import lamina.interpreters as jax
import lamina.numpy as jnp
from lamina.ir.dtypes import TypePromotionError

A = jnp.ones((2, 3))
B = jnp.ones(3)
LINK = "https://docs.jax.dev/en/latest/rank_promotion_warning.html."


def _raise_message(name, shapes):
    return (
        f"Operands could not be broadcast together for {name} on shapes {shapes} and with "
        f"the config option jax_numpy_rank_promotion='raise'. For more information, see {LINK}"
    )


@pytest.mark.parametrize(
    ("fun", "name", "shapes"),
    [
        (lambda a, b: a + b, "add", "(2, 3) (3,)"),
        (jnp.add, "add", "(2, 3) (3,)"),
        (jnp.arctan2, "arctan2", "(2, 3) (3,)"),
        (lambda a, b: jnp.maximum(b, a), "maximum", "(3,) (2, 3)"),
        (lambda a, b: a == b, "equal", "(2, 3) (3,)"),
        (lambda a, b: jnp.ones((2, 1, 3)) * jnp.ones((4, 3)), "multiply", "(2, 1, 3) (4, 3)"),
        (jax.jit(lambda a, b: a - b), "subtract", "(2, 3) (3,)"),
    ],
)
def test_rank_promotion_raise(fun, name, shapes):
    with jax.numpy_rank_promotion("raise"), pytest.raises(ValueError) as info:
        fun(A, B)
    assert str(info.value) == _raise_message(name, shapes)


def test_rank_promotion_raise_allows_scalars_and_equal_ranks():
    with jax.numpy_rank_promotion("raise"):
        assert (A + 1.0).shape == (2, 3)
        assert (A + jnp.ones(())).shape == (2, 3)
        assert (A + jnp.ones((1, 3))).shape == (2, 3)
        assert jnp.matmul(jnp.ones((2, 3, 4)), jnp.ones((4, 5))).shape == (2, 3, 5)


def test_rank_promotion_warn():
    with jax.numpy_rank_promotion("warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = A + B
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), 2.0))
    assert [(w.category, str(w.message)) for w in caught] == [
        (
            UserWarning,
            "Following NumPy automatic rank promotion for add on shapes (2, 3) (3,). Set the "
            "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for "
            f"more information, see {LINK}",
        )
    ]


def test_rank_promotion_set_globally_keys_jit():
    f = jax.jit(lambda a, b: a + b)
    assert f(A, B).shape == (2, 3)
    try:
        jax.config.update("jax_numpy_rank_promotion", "raise")
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            f(A, B)  # the option is part of the jit cache key: traced again
    finally:
        jax.config.update("jax_numpy_rank_promotion", "allow")
    assert f(A, B).shape == (2, 3)


STRICT = "no implicit type promotion path"


@pytest.mark.parametrize(
    "fun",
    [
        lambda: jnp.ones(2, "float32") + jnp.ones(2, "int32"),
        lambda: jnp.ones(2, "float32") + jnp.ones(2, "float16"),
        lambda: jnp.ones(2, "int32") + 1.0,
        lambda: jnp.add(np.ones(2, "float32"), np.ones(2, "int32")),
        lambda: jnp.promote_types("float32", "int32"),
        lambda: jnp.result_type("float32", "int32"),
        lambda: jnp.ones(2, "float32") * jnp.ones(2, "bfloat16"),
        lambda: jnp.where(True, jnp.ones(2, "float32"), jnp.ones(2, "int32")),
        lambda: jnp.concatenate([jnp.ones(2, "float32"), jnp.ones(2, "int32")]),
    ],
)
def test_strict_dtype_promotion_raises(fun):
    fun()  # standard promotion
    with jax.numpy_dtype_promotion("strict"), pytest.raises(TypePromotionError, match=STRICT):
        fun()


def test_strict_dtype_promotion_keeps_weak_scalars_and_keys_jit():
    f = jax.jit(lambda a, b: a + b)
    with jax.numpy_dtype_promotion("strict"):
        assert (jnp.ones(2, "float32") + 1).dtype == jnp.float32  # recorded: allowed
        assert (jnp.ones(2, "int32") + 1).dtype == jnp.int32
    assert f(jnp.ones(2), jnp.ones(2, "int32")).dtype == jnp.float32
    try:
        jax.config.update("jax_numpy_dtype_promotion", "strict")
        with pytest.raises(TypePromotionError, match=STRICT):
            f(jnp.ones(2), jnp.ones(2, "int32"))
    finally:
        jax.config.update("jax_numpy_dtype_promotion", "standard")


def test_explicit_x64_dtypes_error_and_allow():
    error = pytest.raises(
        ValueError, match="Explicitly requested dtype float64 requested in astype is not available"
    )
    with _mode("error"), error:
        jnp.ones(2).astype("float64")
    with _mode("allow"):  # recorded from JAX 0.10.2: real 64-bit arrays with x64 off
        assert jnp.ones(2).astype("float64").dtype == np.float64
        assert jnp.arange(3, dtype="int64").dtype == np.int64
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
        assert jnp.ones(2).astype("float64").dtype == np.float32


class _mode:
    """jax_explicit_x64_dtypes set for the block (JAX has no context manager for it at the
    top level)."""

    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        jax.config.update("jax_explicit_x64_dtypes", self.mode)

    def __exit__(self, *exc):
        jax.config.update("jax_explicit_x64_dtypes", "warn")
