"""``jnp.ufunc`` objects (ufunc_objects.py): the built-in ufuncs (add, multiply,
maximum, logical_and, logaddexp, ...) and ``frompyfunc`` ufuncs, their attributes,
``reduce``/``accumulate``/``outer``/``at``/``reduceat`` against NumPy's ufunc methods,
under ``jit``, ``vmap`` and ``grad``, and their errors."""

import inspect

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina import interpreters as api

X = np.arange(1, 13, dtype=np.float32).reshape(3, 4) / 4
I8 = np.arange(-3, 9, dtype=np.int8).reshape(3, 4)
BUILTIN = ["add", "subtract", "multiply", "maximum", "minimum", "negative", "bitwise_and",
           "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor",
           "logaddexp", "logaddexp2"]  # fmt: skip


def test_builtin_ufunc_attributes_match_jax():
    # identity, nin and nout as JAX 0.10.2 gives them.
    identities = {"add": 0, "subtract": None, "multiply": 1, "maximum": None, "minimum": None,
                  "negative": None, "bitwise_and": -1, "bitwise_or": 0, "bitwise_xor": 0,
                  "logical_and": True, "logical_or": False, "logical_xor": False,
                  "logaddexp": -np.inf, "logaddexp2": -np.inf}  # fmt: skip
    for name in BUILTIN:
        ufunc = getattr(jnp, name)
        assert isinstance(ufunc, jnp.ufunc)
        assert repr(ufunc) == f"<jnp.ufunc '{name}'>"
        assert ufunc.__name__ == name
        assert ufunc.identity == identities[name]
        assert (ufunc.nin, ufunc.nout, ufunc.nargs) == (
            (1, 1, 1) if name == "negative" else (2, 1, 2)
        )
    assert jnp.add == jnp.add and jnp.add != jnp.multiply
    assert hash(jnp.add) == hash(jnp.add)
    assert list(inspect.signature(jnp.add.at).parameters) == ["a", "indices", "b", "inplace"]


def test_call_promotes_like_the_functions():
    assert jnp.add(1, 2).dtype == np.int32 and jnp.add(1, 2).weak_type
    np.testing.assert_array_equal(jnp.add(np.array([True, False]), True), [True, True])
    np.testing.assert_array_equal(jnp.multiply(I8, 2), I8 * 2)
    np.testing.assert_allclose(jnp.logaddexp2(X, 1.0), np.logaddexp2(X, 1.0), rtol=1e-6)
    np.testing.assert_array_equal(jnp.negative(np.uint8(3)), np.uint8(253))
    with pytest.raises(NotImplementedError, match="where argument"):
        jnp.add(1, 2, where=True)
    with pytest.raises(NotImplementedError, match="out argument"):
        jnp.add(1, 2, out=np.zeros(()))
    with pytest.raises(TypeError, match="add requires ndarray or scalar arguments"):
        jnp.add([1], 2)


REDUCE_CASES = [
    ("add", X, {}), ("add", I8, {"axis": 1}), ("add", X, {"axis": None, "keepdims": True}),
    ("multiply", X, {"axis": (0, 1)}), ("multiply", I8, {"axis": 0, "dtype": np.float32}),
    ("maximum", X, {"axis": 1}), ("minimum", I8, {"axis": (1, 0)}),
    ("add", X, {"axis": 1, "initial": 10.0}),
    ("add", X, {"axis": 0, "where": np.array([True, False, True, True])}),
    ("maximum", X, {"axis": 0, "where": np.array([True, False, True, True]), "initial": -5.0}),
    ("bitwise_and", I8, {"axis": 0}), ("bitwise_or", I8, {"axis": 1}),
    ("bitwise_xor", I8, {"axis": None}), ("logical_and", I8, {"axis": 1}),
    ("logical_or", X - 1, {"axis": 0}), ("logical_xor", I8, {"axis": 1}),
    ("logaddexp", X, {"axis": 1}), ("logaddexp2", X, {"axis": 0, "keepdims": True}),
    ("subtract", X, {"axis": 1}), ("subtract", I8, {"axis": 0, "initial": 3}),
    ("add", np.zeros((0, 3), np.float32), {}),
]  # fmt: skip


def test_reduce_matches_numpy():
    results = [getattr(jnp, n).reduce(a, **kw) for n, a, kw in REDUCE_CASES]
    for (name, a, kwargs), out in zip(REDUCE_CASES, results, strict=True):
        expected = getattr(np, name).reduce(a, **kwargs)
        if name in ("add", "multiply") and "dtype" not in kwargs and a.dtype.kind == "i":
            expected = expected.astype(np.int32)  # JAX widens small integers, as jnp.sum
        np.testing.assert_allclose(out, expected, rtol=1e-6, err_msg=f"{name} {kwargs}")
        assert out.dtype == expected.dtype, (name, kwargs, out.dtype)
    # Complex numbers order by real part, then imaginary part (values from JAX 0.10.2).
    c = np.array([1 + 2j, 1 + 3j, 0.5 + 9j, 1 - 1j], np.complex64)
    assert jnp.maximum.reduce(c) == 1 + 3j and jnp.minimum.reduce(c) == 0.5 + 9j
    np.testing.assert_array_equal(jnp.maximum.accumulate(c), [1 + 2j, 1 + 3j, 1 + 3j, 1 + 3j])
    assert jnp.add.reduce(np.ones(3, np.uint8)).dtype == np.uint32
    assert jnp.add.reduce(np.ones(3, bool)).dtype == np.int32


def test_reduce_errors():
    with pytest.raises(ValueError, match="zero-size array to reduction operation min"):
        jnp.minimum.reduce(np.zeros((0, 3), np.float32))
    with pytest.raises(ValueError, match="zero-size array to reduction operation subtract"):
        jnp.subtract.reduce(np.zeros((0, 3), np.float32))
    with pytest.raises(ValueError, match="does not have an identity"):
        jnp.maximum.reduce(X, where=np.ones(4, bool))
    with pytest.raises(ValueError, match="where argument must have dtype=bool"):
        jnp.add.reduce(X, where=np.ones(4, np.int32))
    with pytest.raises(ValueError, match="reduce only supported for binary ufuncs"):
        jnp.negative.reduce(X)
    with pytest.raises(ValueError, match="axis 0 is out of bounds for array of dimension 0"):
        jnp.add.reduce(2.0)
    with pytest.raises(ValueError, match=r"integer argument required"):
        jnp.bitwise_or.reduce(X)
    with pytest.raises(TypeError, match=r"add\.reduce requires ndarray or scalar arguments"):
        jnp.add.reduce([1, 2])


def test_accumulate_matches_numpy():
    cases = [("add", I8, 1), ("add", X, 0), ("multiply", X, 1), ("subtract", X, 1),
             ("maximum", X[::-1], 0), ("minimum", I8, 1), ("logaddexp", X, 1),
             ("logical_xor", I8, 0), ("bitwise_or", I8, 1)]  # fmt: skip
    for name, a, axis in cases:
        out = getattr(jnp, name).accumulate(a, axis=axis)
        expected = getattr(np, name).accumulate(a, axis=axis)
        np.testing.assert_allclose(out, expected, rtol=1e-6, err_msg=name)
        # NumPy widens integer sums; JAX keeps int8.
        assert out.dtype == (a.dtype if name == "add" else expected.dtype), name
    # As jnp.cumsum: bools count as int32, axis=None flattens.
    np.testing.assert_array_equal(jnp.add.accumulate(np.array([True, True])), [1, 2])
    np.testing.assert_array_equal(jnp.add.accumulate(X, axis=None), np.cumsum(X))
    with pytest.raises(ValueError, match="accumulate does not allow multiple axes"):
        jnp.subtract.accumulate(X, axis=None)
    assert jnp.subtract.accumulate(np.zeros((0, 2), np.float32)).shape == (0, 2)


def test_outer_matches_numpy():
    for name in ("add", "multiply", "maximum", "logaddexp", "bitwise_xor"):
        a = I8[0] if name == "bitwise_xor" else X[0]
        b = I8[1:] if name == "bitwise_xor" else X[1:]
        out = getattr(jnp, name).outer(a, b)
        np.testing.assert_allclose(out, getattr(np, name).outer(a, b), rtol=1e-6, err_msg=name)
        assert out.shape == (4, 2, 4)
    with pytest.raises(ValueError, match="outer only supported for binary ufuncs"):
        jnp.negative.outer(X, X)


def test_at_matches_numpy():
    idx = np.array([0, 1, 1, -1, 3])
    for name in ("add", "subtract", "multiply", "maximum", "minimum", "logaddexp"):
        a = np.linspace(-1.0, 2.0, 6).astype(np.float32)
        out = getattr(jnp, name).at(a, idx, np.float32(1.5), inplace=False)
        expected = a.copy()
        getattr(np, name).at(expected, idx, np.float32(1.5))
        np.testing.assert_allclose(out, expected, rtol=1e-6, err_msg=name)
    # Several index arrays, array updates, repeated indices accumulate.
    a = np.ones((3, 2), np.float32)
    rows, cols = np.array([0, 0, 2]), np.array([1, 1, 0])
    values = np.array([2.0, 3.0, 4.0], np.float32)
    expected = a.copy()
    np.multiply.at(expected, (rows, cols), values)
    np.testing.assert_array_equal(jnp.multiply.at(a, (rows, cols), values, inplace=False), expected)
    expected = np.ones((3, 2), np.float32)
    np.add.at(expected, np.array([2, 0, 2]), np.float32(1))
    np.testing.assert_array_equal(jnp.add.at(a, np.array([2, 0, 2]), 1.0, inplace=False), expected)
    # Out-of-bounds updates are dropped (x.at[...] semantics).
    np.testing.assert_array_equal(jnp.add.at(np.zeros(3), np.array([5]), 1.0, inplace=False), 0)
    np.testing.assert_array_equal(jnp.add.at(np.zeros(3, bool), np.array([0, 0]), True,
                                             inplace=False), [True, False, False])  # fmt: skip
    np.testing.assert_array_equal(jnp.negative.at(np.arange(5), np.array([0, 4, 1, 1]),
                                                  inplace=False), [0, 1, 2, 3, -4])  # fmt: skip
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.add.at(np.zeros(3), np.array([0]), 1.0)


def test_reduceat_matches_numpy():
    a = np.arange(8)
    indices = np.array([0, 4, 1, 5])
    np.testing.assert_array_equal(jnp.add.reduceat(a, indices), np.add.reduceat(a, indices))
    for name in ("maximum", "multiply", "logaddexp"):
        out = getattr(jnp, name).reduceat(X, np.array([0, 2, 3]), axis=1)
        np.testing.assert_allclose(out, getattr(np, name).reduceat(X, [0, 2, 3], axis=1),
                                   rtol=1e-6, err_msg=name)  # fmt: skip
    with pytest.raises(ValueError, match=r"single integer axis"):
        jnp.add.reduceat(a, indices, axis=None)
    with pytest.raises(TypeError, match=r"add\.reduceat requires ndarray or scalar arguments"):
        jnp.add.reduceat(a, [0, 4])


def test_frompyfunc():
    fma = jnp.frompyfunc(lambda a, b: a * b + 1, nin=2, nout=1, identity=1)
    assert (
        isinstance(fma, jnp.ufunc) and fma.identity == 1 and repr(fma) == "<jnp.ufunc '<lambda>'>"
    )
    np.testing.assert_array_equal(fma(np.arange(3), np.ones((2, 1), np.int32)), [[1, 2, 3]] * 2)
    np.testing.assert_array_equal(fma.reduce(np.arange(1, 5)), 65)  # from the identity, in order
    np.testing.assert_array_equal(fma.accumulate(np.arange(1, 5)), [1, 3, 10, 41])
    np.testing.assert_array_equal(fma.outer(np.arange(2), np.arange(3)), [[1, 1, 1], [1, 2, 3]])
    np.testing.assert_array_equal(fma.reduce(np.arange(1, 7).reshape(2, 3), axis=(0, 1)),
                                  fma.reduce(np.arange(1, 7)))  # fmt: skip
    hypot = jnp.frompyfunc(lambda a, b: jnp.sqrt(a * a + b * b), 2, 1)
    np.testing.assert_allclose(hypot.reduce(np.array([3.0, 4.0, 12.0])), 13.0)
    with pytest.raises(ValueError, match="which has no identity"):
        hypot.reduce(np.zeros((0,)))
    divmod_ufunc = jnp.frompyfunc(jnp.divmod, 2, 2)
    q, r = divmod_ufunc(np.array([7, -7]), 2)
    np.testing.assert_array_equal(q, [3, -4])
    np.testing.assert_array_equal(r, [1, 1])
    with pytest.raises(ValueError, match="reduce only supported for functions returning a single"):
        divmod_ufunc.reduce(np.arange(3))


def test_transformations():
    np.testing.assert_allclose(api.jit(lambda a: jnp.add.reduce(a, axis=1))(X), X.sum(1))
    batched = api.vmap(lambda a: jnp.subtract.reduce(a))(X)
    np.testing.assert_allclose(batched, [np.subtract.reduce(row) for row in X], rtol=1e-6)
    grad = api.grad(lambda a: jnp.logaddexp.reduce(a))(X[0])
    softmax = np.exp(X[0] - np.logaddexp.reduce(X[0]))
    np.testing.assert_allclose(grad, softmax, rtol=1e-5)
    # Repeated indices: the value is added twice at index 1.
    at_grad = api.grad(lambda v: jnp.add.at(X[0], np.array([1, 1]), v, inplace=False)[1])
    np.testing.assert_allclose(at_grad(np.float32(2.0)), 2.0)
