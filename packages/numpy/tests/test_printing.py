"""Printing lamina arrays: NumPy's print options (through jnp.printoptions,
set_printoptions and get_printoptions) shape ``repr``/``str`` of arrays exactly as in
JAX 0.10.2 (the expected texts were recorded from JAX); array_repr and array_str are
NumPy's functions, as JAX exports them."""

import numpy as np

import lamina.numpy as jnp

X = jnp.array([1.123456789, 2.0, 3.0])


def test_default_printing():
    assert repr(X) == "Array([1.1234568, 2.       , 3.       ], dtype=float32)"
    assert str(X) == "[1.1234568 2.        3.       ]"
    assert repr(jnp.asarray(1.5)) == "Array(1.5, dtype=float32, weak_type=True)"
    assert repr(jnp.arange(3).astype(jnp.bfloat16)) == "Array([0, 1, 2], dtype=bfloat16)"
    assert repr(jnp.ones((0, 3))) == "Array([], shape=(0, 3), dtype=float32)"
    assert repr(jnp.array([1e-8, 1.0])) == "Array([1.e-08, 1.e+00], dtype=float32)"


def test_printoptions_context_applies_to_arrays_and_is_restored():
    before = jnp.get_printoptions()
    with jnp.printoptions(precision=2):
        assert jnp.get_printoptions()["precision"] == 2
        assert repr(X) == "Array([1.12, 2.  , 3.  ], dtype=float32)"
        assert str(X) == "[1.12 2.   3.  ]"
    assert jnp.get_printoptions() == before
    with jnp.printoptions(threshold=5):
        assert repr(jnp.arange(100)) == "Array([ 0,  1,  2, ..., 97, 98, 99], dtype=int32)"
    with jnp.printoptions(linewidth=30):
        assert repr(jnp.arange(20.0)) == (
            "Array([ 0.,  1.,  2.,  3.,\n        4.,  5.,  6.,  7.,\n        8.,  9., 10., 11.,\n"
            "       12., 13., 14., 15.,\n       16., 17., 18., 19.],      dtype=float32)"
        )
    with jnp.printoptions(suppress=True):
        assert repr(jnp.array([1e-8, 1.0])) == "Array([0.00000001, 1.        ], dtype=float32)"
    with jnp.printoptions(formatter={"float": lambda v: f"<{v:.1f}>"}):
        assert repr(jnp.array([1.25, 2.0])) == "Array([<1.2>, <2.0>], dtype=float32)"


def test_set_printoptions_is_global_until_reset():
    before = jnp.get_printoptions()
    try:
        jnp.set_printoptions(precision=3)
        assert np.get_printoptions()["precision"] == 3
        assert str(X) == "[1.123 2.    3.   ]"
    finally:
        jnp.set_printoptions(**before)
    assert jnp.get_printoptions() == before


def test_array_repr_and_str_are_numpys():
    assert jnp.array_repr is np.array_repr and jnp.array_str is np.array_str
    assert jnp.array_repr(X) == "ArrayImpl([1.12345684, 2.       , 3.       ], dtype=float32)"
    assert jnp.array_repr(X, precision=2) == "ArrayImpl([1.12, 2.  , 3.  ], dtype=float32)"
    assert jnp.array_repr(jnp.arange(3)) == "ArrayImpl([0, 1, 2], dtype=int32)"
    assert jnp.array_str(jnp.arange(3)) == "[0 1 2]"
