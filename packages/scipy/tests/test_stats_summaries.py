"""lamina.scipy.stats's rankdata, mode and sem against scipy.stats, with JAX 0.10.2's
dtypes, nan handling and errors (recorded from JAX 0.10.2 where SciPy has no say)."""

import numpy as np
import pytest
import scipy.stats as osp_stats

from lamina import numpy as jnp
from lamina.interpreters import jit, vmap
from lamina.scipy import stats

METHODS = ("average", "min", "max", "dense", "ordinal")
TIES = np.array(
    [[3.0, 1.0, 2.0, 3.0, 1.0], [1.0, 1.0, 5.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 0.5]], np.float32
)


def test_rankdata_matches_scipy():
    nan_row = TIES.copy()
    nan_row[1, 2] = np.nan

    def ranks(a, b):
        out = {}
        for method in METHODS:
            for axis in (None, 0, 1, -1):
                out[f"{method} {axis}"] = stats.rankdata(a, method, axis=axis)
            out[f"{method} nan"] = stats.rankdata(b, method, axis=1)
        return out

    got = jit(ranks)(TIES, nan_row)
    for key, value in got.items():
        method, axis = key.split()
        assert value.dtype == np.float32
        if axis == "nan":
            want = osp_stats.rankdata(nan_row, method, axis=1)
        else:
            want = osp_stats.rankdata(TIES, method, axis=None if axis == "None" else int(axis))
        np.testing.assert_array_equal(value, want, err_msg=key)
    # Recorded from JAX 0.10.2: a scalar ranks as a 1-vector; integers rank in float.
    np.testing.assert_array_equal(stats.rankdata(3.0), [1.0])
    np.testing.assert_array_equal(stats.rankdata(np.array([3, 1, 2])), [3.0, 1.0, 2.0])
    # A nan anywhere makes every rank nan.
    assert np.isnan(stats.rankdata(np.array([1.0, np.nan, 2.0]))).all()
    batched = vmap(lambda row: stats.rankdata(row, "min"))(nan_row)
    np.testing.assert_array_equal(batched, osp_stats.rankdata(nan_row, "min", axis=1))


def test_mode_matches_scipy():
    data = np.array([[3, 1, 2, 3], [1, 1, 5, 2], [2, 2, 2, 2], [3, 1, 5, 2]], np.int32)

    def modes(a):
        return [stats.mode(a, axis=axis, keepdims=keepdims) for axis, keepdims in CASES]

    CASES = [(axis, keepdims) for axis in (0, 1, -1, None) for keepdims in (False, True)]
    for (axis, keepdims), result in zip(CASES, jit(modes)(data), strict=True):
        want = osp_stats.mode(data, axis=axis, keepdims=keepdims)
        assert result.mode.dtype == np.int32 and result.count.dtype == np.int32
        np.testing.assert_array_equal(result.mode, want.mode, err_msg=f"{axis} {keepdims}")
        np.testing.assert_array_equal(result.count, want.count, err_msg=f"{axis} {keepdims}")
    result = stats.mode(data.astype(np.float32), axis=1)
    assert type(result).__name__ == "ModeResult" and result.mode.dtype == np.float32
    np.testing.assert_array_equal(result.mode, [3.0, 1.0, 2.0, 1.0])
    # Recorded from JAX 0.10.2: nans count together; an empty slice gives (nan, 0.0).
    mode, count = stats.mode(np.array([1.0, np.nan, np.nan, 2.0], np.float32))
    assert np.isnan(mode) and count == 2 and count.dtype == np.int32
    mode, count = stats.mode(np.zeros((2, 0), np.float32), axis=1)
    assert np.isnan(mode).all() and count.dtype == np.float32 and (count == 0).all()
    mode, count = stats.mode(2.0)
    assert mode == 2.0 and count == 1
    mode, count = vmap(stats.mode)(data)
    want = osp_stats.mode(data, axis=1)
    np.testing.assert_array_equal(mode, want.mode)
    np.testing.assert_array_equal(count, want.count)


def test_sem_matches_scipy():
    with_nan = TIES.copy()
    with_nan[0, 1] = np.nan

    @jit
    def sems(a, b, ddof):
        return {
            "axis0": stats.sem(a),
            "axis1": stats.sem(a, axis=1, ddof=0, keepdims=True),
            "axis-1": stats.sem(a, axis=-1),
            "all": stats.sem(a, axis=None),
            "traced_ddof": stats.sem(a, axis=1, ddof=ddof),
            "omit": stats.sem(b, axis=1, nan_policy="omit"),
            "propagate": stats.sem(b, axis=1),
        }

    got = sems(TIES, with_nan, 2)
    want = {
        "axis0": osp_stats.sem(TIES),
        "axis1": osp_stats.sem(TIES, axis=1, ddof=0, keepdims=True),
        "axis-1": osp_stats.sem(TIES, axis=-1),
        "all": osp_stats.sem(TIES, axis=None),
        "traced_ddof": osp_stats.sem(TIES, axis=1, ddof=2),
        "omit": osp_stats.sem(with_nan, axis=1, nan_policy="omit"),
        "propagate": osp_stats.sem(with_nan, axis=1),
    }
    for key, value in want.items():
        assert got[key].dtype == np.float32
        np.testing.assert_allclose(got[key], value, rtol=1e-6, err_msg=key)
    assert stats.sem(np.array([1, 2, 4])).dtype == np.float32
    batched = vmap(stats.sem)(TIES)
    np.testing.assert_allclose(batched, osp_stats.sem(TIES, axis=1), rtol=1e-6)


def test_bad_arguments_raise_jax_errors():
    # Messages recorded from JAX 0.10.2.
    with pytest.raises(ValueError, match="unknown method 'foo'"):
        stats.rankdata(jnp.ones(3), "foo")
    with pytest.raises(
        NotImplementedError, match="Logic for `nan_policy` of omit is not implemented"
    ):
        stats.rankdata(jnp.ones(3), nan_policy="omit")
    with pytest.raises(NotImplementedError, match="In order to best JIT compile `rankdata`"):
        stats.rankdata(jnp.ones(3), nan_policy="raise")
    with pytest.raises(ValueError, match=r"Illegal nan_policy value 'x'; expected one of"):
        stats.rankdata(jnp.ones(3), nan_policy="x")
    with pytest.raises(TypeError, match="rankdata requires ndarray or scalar arguments"):
        stats.rankdata([1, 2])
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 1"):
        stats.mode(jnp.ones(3), axis=2)
    with pytest.raises(NotImplementedError, match="In order to best JIT compile `mode`"):
        stats.mode(jnp.ones(3), nan_policy="raise")
    with pytest.raises(ValueError, match="raise is not supported"):
        stats.sem(jnp.ones(3), nan_policy="raise")
