"""lamina.numpy index tricks: meshgrid, mgrid, ogrid, r_ and c_ (with NumPy's string
directives), s_ and index_exp, against NumPy and results recorded from JAX 0.10.2
(data/creation_jax_values.json): values, dtypes, weak types and error types."""

import json
import pathlib
import types

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import jit, vmap
from lamina.interpreters.test_util import check_grads

RECORDED = json.loads((pathlib.Path(__file__).parent / "data/creation_jax_values.json").read_text())


def _compare(result, expected, where):
    if "seq" in expected:
        assert type(result).__name__ == expected["kind"], where
        assert len(result) == len(expected["seq"]), where
        for item, want in zip(result, expected["seq"], strict=True):
            _compare(item, want, where)
        return
    assert (str(result.dtype), result.weak_type) == (expected["dtype"], expected["weak_type"]), (
        where
    )
    assert list(result.shape) == expected["shape"], where
    want = np.asarray(expected["value"]).reshape(result.shape)
    np.testing.assert_allclose(np.asarray(result), want, rtol=1e-6, err_msg=where)


@pytest.mark.parametrize("expression", sorted(RECORDED["index_tricks"]))
def test_matches_recorded_jax(expression):
    expected = RECORDED["index_tricks"][expression]
    scope = {"jnp": jnp, "np": np, "jax": types.SimpleNamespace(jit=jit)}
    if "error" in expected:
        with pytest.raises(Exception) as info:
            eval(expression, scope)
        assert expected["error"] in {c.__name__ for c in type(info.value).__mro__}, info.value
        assert str(info.value).splitlines()[0][:200] == expected["message"]
        return
    _compare(eval(expression, scope), expected, expression)


def test_meshgrid_against_numpy():
    x, y, z = np.arange(3.0), np.arange(4, dtype=np.int8), np.linspace(0, 1, 2)
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            got = jnp.meshgrid(x, y, z, indexing=indexing, sparse=sparse)
            want = np.meshgrid(x, y, z, indexing=indexing, sparse=sparse)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(g, w)
    assert [g.dtype for g in jnp.meshgrid(x, y)] == [np.float32, np.int8]


def test_meshgrid_jit_vmap_and_grad():
    xs, ys = np.arange(6.0, dtype=np.float32).reshape(2, 3), np.ones((2, 2), np.float32)
    batched = vmap(lambda a, b: jnp.meshgrid(a, b)[0] * jnp.meshgrid(a, b)[1])(xs, ys)
    looped = [np.prod(np.meshgrid(a, b), axis=0) for a, b in zip(xs, ys, strict=True)]
    np.testing.assert_array_equal(batched, looped)
    traced = jit(lambda a, b: jnp.meshgrid(a, b, indexing="ij"))(xs[0], ys[0])
    np.testing.assert_array_equal(traced[1], np.meshgrid(xs[0], ys[0], indexing="ij")[1])
    check_grads(lambda a, b: jnp.meshgrid(a, b)[0] * jnp.meshgrid(a, b)[1], (xs[0], ys[0]), 1)


def test_grids_against_numpy():
    for key in (np.s_[0:3, 1:5:2], np.s_[0:1:4j, -2:2], np.s_[2:-2:-1], np.s_[0:1:0.25, 0:2]):
        np.testing.assert_allclose(jnp.mgrid[key], np.mgrid[key], rtol=1e-6)
        for got, want in zip(jnp.ogrid[key], np.ogrid[key], strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_concatenators_against_numpy():
    a, b = np.arange(4).reshape(2, 2), np.array([[7, 8]])
    cases = [
        (np.s_[a, b], "r_"),
        (np.s_["1", a, a], "r_"),
        (np.s_["0,2,0", [1, 2], [3]], "r_"),
        (np.s_["-1,3,1", [1, 2], [3, 4]], "r_"),
        (np.s_["r", 0:3, 7], "r_"),
        (np.s_["c", [1, 2], [3]], "r_"),
        (np.s_[[1, 2], [3, 4]], "c_"),
        (np.s_[a, [[5], [6]]], "c_"),
        (np.s_["0", [1, 2], [3, 4]], "c_"),
        (np.s_[-1:1:5j, 2], "r_"),
    ]
    for key, name in cases:
        got, want = getattr(jnp, name)[key], np.asarray(getattr(np, name)[key])
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"{name}[{key}]")


def test_concatenators_trace_and_differentiate():
    f = jit(lambda x: jnp.c_[x, 2 * x])
    np.testing.assert_array_equal(f(np.arange(3.0)), np.c_[np.arange(3.0), 2 * np.arange(3.0)])
    check_grads(lambda x: jnp.r_["0,2", x, x * x], (np.arange(3.0, dtype=np.float32),), 2)


def test_index_expressions_are_numpys():
    assert jnp.s_ is np.s_ and jnp.index_exp is np.index_exp
    assert jnp.s_[1:2, ...] == (slice(1, 2), Ellipsis) and jnp.index_exp[3] == (3,)
    x = jnp.arange(10)
    np.testing.assert_array_equal(x[jnp.s_[2:8:3]], [2, 5])
