"""``jax_explicit_x64_dtypes`` with x64 off, for every kind of function taking a
``dtype=``: the dtype each mode gives and JAX's warning and error texts (all recorded
from JAX 0.10.2)."""

import re
import warnings

import numpy as np
import pytest

import lamina.interpreters as jax
import lamina.numpy as jnp
from lamina import lax

# name as JAX's messages give it, the call, the 64-bit dtype asked for
CASES = [
    ("zeros", lambda: jnp.zeros(3, jnp.int64), "int64"),
    ("ones", lambda: jnp.ones(3, jnp.float64), "float64"),
    ("empty", lambda: jnp.empty(3, jnp.float64), "float64"),
    ("full", lambda: jnp.full(3, 2, jnp.int64), "int64"),
    ("array", lambda: jnp.array([1.0, 2.0], dtype=jnp.float64), "float64"),
    ("asarray", lambda: jnp.asarray([1.0, 2.0], dtype=jnp.float64), "float64"),
    ("array", lambda: jnp.array(np.ones(2), dtype=jnp.float64), "float64"),
    ("eye", lambda: jnp.eye(2, dtype=jnp.float64), "float64"),
    ("identity", lambda: jnp.identity(2, dtype=jnp.float64), "float64"),
    ("zeros_like", lambda: jnp.zeros_like(jnp.ones(2), dtype=jnp.float64), "float64"),
    ("ones_like", lambda: jnp.ones_like(jnp.ones(2), dtype=jnp.int64), "int64"),
    ("full_like", lambda: jnp.full_like(jnp.ones(2), 3, dtype=jnp.int64), "int64"),
    ("ones_like", lambda: jnp.empty_like(jnp.ones(2), dtype=jnp.int64), "int64"),  # sic
    ("arange", lambda: jnp.arange(3, dtype=jnp.int64), "int64"),
    ("linspace", lambda: jnp.linspace(0, 1, 3, dtype=jnp.float64), "float64"),
    ("logspace", lambda: jnp.logspace(1, 2, 3, dtype=jnp.float64), "float64"),
    ("astype", lambda: jnp.ones(2).astype(jnp.float64), "float64"),
    ("cumsum", lambda: jnp.cumsum(jnp.ones(2), dtype=jnp.float64), "float64"),
    ("mean", lambda: jnp.mean(jnp.ones(2), dtype=jnp.float64), "float64"),
    ("var", lambda: jnp.var(jnp.ones(2), dtype=jnp.float64), "float64"),
    ("tri", lambda: jnp.tri(2, dtype=jnp.float64), "float64"),
    ("zeros", lambda: jnp.zeros(3, "int64"), "int64"),
    ("zeros", lambda: jnp.zeros(3, jnp.uint64), "uint64"),
    ("zeros", lambda: jnp.zeros(3, jnp.complex128), "complex128"),
    ("asarray", lambda: jnp.float64(1.0), "float64"),
    ("asarray", lambda: jnp.int64(1), "int64"),
    ("ones", lambda: jnp.ones(2, dtype=np.dtype("float64")), "float64"),
    ("full", lambda: lax.full((2,), 1.0, jnp.float64), "float64"),
    (
        "convert_element_type",
        lambda: lax.convert_element_type(jnp.ones(2), jnp.float64),
        "float64",
    ),
    ("broadcasted_iota", lambda: lax.iota(jnp.int64, 3), "int64"),
    (
        "einsum",
        lambda: jnp.einsum("i,i", jnp.ones(2), jnp.ones(2), preferred_element_type=jnp.float64),
        "float64",
    ),
    (
        "matmul",
        lambda: jnp.matmul(jnp.ones(2), jnp.ones(2), preferred_element_type=jnp.float64),
        "float64",
    ),
    ("zeros", lambda: jax.jit(lambda: jnp.zeros(3, jnp.int64))(), "int64"),
]
NARROW = {"int64": "int32", "uint64": "uint32", "float64": "float32", "complex128": "complex64"}


class _mode:
    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        jax.config.update("jax_explicit_x64_dtypes", self.mode)

    def __exit__(self, *exc):
        jax.config.update("jax_explicit_x64_dtypes", "warn")


@pytest.mark.parametrize("name,make,wide", CASES)
def test_allow_gives_the_64_bit_dtype(name, make, wide):
    with _mode("allow"), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert make().dtype == np.dtype(wide)


@pytest.mark.parametrize("name,make,wide", CASES)
def test_warn_truncates_with_jax_text(name, make, wide):
    narrow = NARROW[wide]
    text = (
        f"Explicitly requested dtype {wide} requested in {name} is not available, and will "
        f"be truncated to dtype {narrow}. To enable more dtypes, set the jax_enable_x64 "
        "configuration option or the JAX_ENABLE_X64 shell environment variable. See "
        "https://github.com/jax-ml/jax#current-gotchas for more."
    )
    with pytest.warns(UserWarning, match=re.escape(text)):
        assert make().dtype == np.dtype(narrow)


@pytest.mark.parametrize("name,make,wide", CASES)
def test_error_raises_jax_text(name, make, wide):
    text = (
        f"Explicitly requested dtype {wide} requested in {name} is not available. To enable "
        "more dtypes, set the jax_enable_x64 or allow_explicit_x64_dtypes configuration "
        "options.See https://github.com/jax-ml/jax#current-gotchas for more."
    )
    with _mode("error"), pytest.raises(ValueError, match=re.escape(text)):
        make()


def test_python_types_are_never_explicit():
    with _mode("error"):
        assert jnp.zeros(3, float).dtype == np.float32
        assert jnp.zeros(3, int).dtype == np.int32


def test_allowed_values_and_promotion():
    """Recorded from JAX 0.10.2: host values reach a 64-bit dtype through their 32-bit
    one (NumPy values and jnp.array), Python scalars given to lax/full directly; 64-bit
    arrays keep their dtype in promotion and under jit."""
    with _mode("allow"):
        assert int(jnp.array(2**40, dtype=jnp.int64)) == 0
        np.testing.assert_array_equal(
            jnp.array([0.1, 1e-300], dtype=jnp.float64), [np.float32(0.1), 0.0]
        )
        assert float(jnp.float64(0.1)) == float(np.float32(0.1))
        assert np.asarray(jnp.full(2, 0.1, jnp.float64))[0] == 0.1
        # a Python scalar operand is a weak float32 argument of the jitted operator
        assert float((jnp.full(2, 0.1, jnp.float64) - 0.1)[0]) == 0.1 - float(np.float32(0.1))
        assert np.asarray(jnp.full(2, 2**40, jnp.int64))[0] == 2**40
        assert np.asarray(lax.convert_element_type(2**40, jnp.int64)) == 2**40
        assert lax.convert_element_type(np.array([0.1]), jnp.float64)[0] == np.float32(0.1)
        wide = jnp.zeros(2, jnp.float64)
        for out in (
            wide + 1,
            wide + jnp.ones(2),
            wide + np.ones(2),
            jnp.sum(wide),
            jax.jit(lambda x: x * 2)(wide),
            jnp.mean(jnp.arange(3, dtype=jnp.int64)),
        ):
            assert out.dtype == np.float64 and not out.weak_type
        assert jnp.sin(np.ones(2)).dtype == np.float32
        assert jax.device_put(np.ones(2)).dtype == np.float32
        np.testing.assert_allclose(
            jnp.logspace(1, 2, 3, dtype=jnp.float64), [10.0, 31.622776601683793, 100.0], rtol=1e-15
        )
