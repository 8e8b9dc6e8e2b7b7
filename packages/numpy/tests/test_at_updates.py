"""``x.at[idx]``: every update method against NumPy's unbuffered ``ufunc.at``
references, with repeated and out-of-bounds indices in every mode; reads with
``mode="fill"``; dtypes and weak types of results; jit, vmap and gradients."""

import numpy as np
import pytest

import lamina.numpy  # noqa: F401  (installs x[idx], x.at and the methods on arrays)
from lamina import lax
from lamina.interpreters import device_put, grad, jit, vmap
from lamina.interpreters.test_util import check_grads

A = np.arange(1.0, 13.0, dtype=np.float32).reshape(3, 4)

# Each reference applies the update the way NumPy's unbuffered ufunc.at does: repeated
# indices combine, rather than the last one winning.
REFERENCES = {
    "add": np.add.at,
    "subtract": np.subtract.at,
    "multiply": np.multiply.at,
    "min": np.minimum.at,
    "max": np.maximum.at,
}

INDICES = [
    (np.array([0, 2, 0]),),
    (1, np.array([3, 3, 0, -1])),
    (slice(None), np.array([[1], [1]])),
    (slice(None, None, -2), 1),
    (np.array([True, False, True]),),
    (Ellipsis, np.array([0, 0])),
    (None, 2, slice(1, 3)),
]


def _values(a, idx):
    shape = a[idx].shape
    return (np.arange(np.prod(shape, dtype=int)).reshape(shape) % 5 - 2).astype(a.dtype)


@pytest.mark.parametrize("method", sorted(REFERENCES))
@pytest.mark.parametrize("idx", INDICES, ids=str)
def test_update_with_repeated_indices_matches_numpy_ufunc_at(method, idx):
    values = _values(A, idx)
    want = A.copy()
    REFERENCES[method](want, idx, values)
    got = getattr(device_put(A).at[idx], method)(values)
    assert got.dtype == A.dtype and got.shape == A.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


@pytest.mark.parametrize("idx", INDICES, ids=str)
def test_set_and_get_match_numpy(idx):
    values = _values(A, idx)
    want = A.copy()
    # with repeated indices XLA picks one of the updates: give them equal values
    values = np.broadcast_to(values, A[idx].shape).copy()
    if isinstance(idx[0], np.ndarray) and idx[0].dtype != bool:
        values[...] = 7
    want[idx] = values
    np.testing.assert_array_equal(np.asarray(device_put(A).at[idx].set(values)), want)
    np.testing.assert_array_equal(np.asarray(device_put(A).at[idx].get()), A[idx])


def test_apply_divide_power():
    x = device_put(A)
    idx = np.array([1, 1, 2])
    want = A.copy()
    np.multiply.at(want, idx, np.float32(3))  # apply runs once per time it is addressed
    np.testing.assert_allclose(np.asarray(x.at[idx].apply(lambda v: v * 3)), want)
    want = A.copy()
    want[1] /= 4.0
    want[2] /= 2.0
    np.testing.assert_allclose(np.asarray(x.at[idx].divide(2.0)), want, rtol=1e-6)
    want = A.copy()
    want[1] **= 4
    want[2] **= 2
    np.testing.assert_allclose(np.asarray(x.at[idx].power(2.0)), want, rtol=1e-6)
    ints = device_put(np.arange(6, dtype=np.int32).reshape(2, 3))
    halved = ints.at[0].divide(2)  # integer arrays divide to floats, as JAX
    assert halved.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(halved), [[0, 0.5, 1], [3, 4, 5]])
    squared = ints.at[0].power(2)
    assert squared.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(squared), [[0, 1, 4], [3, 4, 5]])
    assert ints.at[1].mul(2).tolist() == [[0, 1, 2], [6, 8, 10]]


# Recorded from JAX 0.10.2 with x = jnp.arange(3.): x.at[jnp.array([0, 5, -1])].add(1.)
OUT_OF_BOUNDS_ADD = {
    None: [1.0, 1.0, 3.0],  # dropped
    "drop": [1.0, 1.0, 3.0],
    "clip": [1.0, 1.0, 4.0],
}


@pytest.mark.parametrize("mode", sorted(OUT_OF_BOUNDS_ADD, key=str))
def test_out_of_bounds_updates_follow_mode(mode):
    x = device_put(np.arange(3.0, dtype=np.float32))
    got = x.at[np.array([0, 5, -1])].add(1.0, mode=mode)
    np.testing.assert_array_equal(np.asarray(got), OUT_OF_BOUNDS_ADD[mode])
    traced = jit(lambda x, i: x.at[i].add(1.0, mode=mode))(x, np.array([0, 5, -1]))
    np.testing.assert_array_equal(np.asarray(traced), OUT_OF_BOUNDS_ADD[mode])


@pytest.mark.parametrize("mode", ["drop", "clip"])
@pytest.mark.parametrize("method", sorted(REFERENCES))
def test_every_update_with_out_of_bounds_indices(method, mode):
    idx = np.array([2, 7, -1, -9, 2, 0])
    values = np.array([1.5, -2.0, 3.0, 4.0, -0.5, 2.0], np.float32)
    wrapped = np.where(idx < 0, idx + 3, idx)
    want = A.copy()
    if mode == "clip":
        REFERENCES[method](want, np.clip(wrapped, 0, 2), values[:, None])
    else:
        keep = (wrapped >= 0) & (wrapped < 3)
        REFERENCES[method](want, wrapped[keep], values[keep, None])
    got = getattr(device_put(A).at[idx], method)(values[:, None], mode=mode)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_out_of_bounds_and_negative_indices():
    x = device_put(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(x.at[5].set(2.0)), np.ones((2, 3)))
    np.testing.assert_array_equal(np.asarray(x.at[-1].set(2.0)), [[1, 1, 1], [2, 2, 2]])
    unwrapped = x.at[-1].set(2.0, wrap_negative_indices=False)  # -1 is out of bounds
    np.testing.assert_array_equal(np.asarray(unwrapped), np.ones((2, 3)))
    y = device_put(np.arange(4, dtype=np.int32))
    p = y.at[np.array([1, 2])].add(10, mode="promise_in_bounds", unique_indices=True)
    np.testing.assert_array_equal(np.asarray(p), [0, 11, 12, 3])
    s = y.at[np.array([0, 1])].set(np.array([5, 6]), indices_are_sorted=True)
    np.testing.assert_array_equal(np.asarray(s), [5, 6, 2, 3])


def test_get_modes_and_fill_values():
    # Recorded from JAX 0.10.2.
    f = device_put(np.arange(3.0, dtype=np.float32))
    i = device_put(np.arange(3, dtype=np.int32))
    assert np.isnan(float(f.at[5].get(mode="fill")))
    assert np.isnan(float(f.at[-5].get(mode="fill")))
    assert int(i.at[5].get(mode="fill")) == -2147483648
    assert int(device_put(np.arange(3, dtype=np.uint8)).at[5].get(mode="fill")) == 255
    assert bool(device_put(np.array([False])).at[5].get(mode="fill"))
    got = i.at[np.array([5, 1, -1])].get(mode="fill", fill_value=-1)
    np.testing.assert_array_equal(np.asarray(got), [-1, 1, 2])
    assert float(f.at[5].get(mode="clip")) == 2.0
    assert float(f.at[-1].get(wrap_negative_indices=False)) == 0.0  # clamped
    got = jit(lambda x, j: x.at[j].get(mode="fill", fill_value=9.0))(f, 4)
    assert float(got) == 9.0


def test_result_dtypes_and_weak_types():
    weak = lax.full((3,), 1.0)
    assert weak.weak_type
    for out in (weak.at[0].set(2.0), weak.at[0].add(2), weak.at[1].get()):
        assert out.dtype == np.float32 and out.weak_type
    half = device_put(np.ones(3, np.float16))
    out = half.at[0].add(2.0)
    assert out.dtype == np.float16 and not out.weak_type
    assert device_put(np.zeros(3, np.complex64)).at[1].set(1j).tolist() == [0, 1j, 0]


def test_updates_with_empty_index_leave_the_array():
    x = device_put(A)
    np.testing.assert_array_equal(np.asarray(x.at[np.array([], np.int32)].add(1.0)), A)
    np.testing.assert_array_equal(np.asarray(x.at[2:1].set(0.0)), A)
    np.testing.assert_array_equal(np.asarray(x.at[np.zeros(3, bool)].set(0.0)), A)


def test_jit_matches_eager_with_traced_indices():
    x = device_put(A)

    def update(x, i, j, v):
        return x.at[i, 1:].add(v).at[j, ::-1].multiply(2.0).at[:, j].min(0.5)

    args = (np.array([0, 2, 0]), 1, np.float32(3))
    np.testing.assert_array_equal(np.asarray(jit(update)(x, *args)), np.asarray(update(x, *args)))


def test_vmap_of_updates_matches_loop():
    xs = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    idx = np.array([[0, 0], [2, 1]])
    vals = np.array([10.0, -1.0], np.float32)
    got = vmap(lambda x, i, v: x.at[i, 1].add(v))(xs, idx, vals)
    want = xs.copy()
    for b in range(2):
        np.add.at(want[b], (idx[b], 1), vals[b])
    np.testing.assert_array_equal(np.asarray(got), want)
    got = vmap(lambda x: x.at[np.array([1, 2])].set(0.0))(xs)
    want = xs.copy()
    want[:, [1, 2]] = 0
    np.testing.assert_array_equal(np.asarray(got), want)


def _arrays(f):
    """``f`` taking NumPy arrays too (check_grads evaluates on them)."""
    return lambda *args: f(*(a if hasattr(a, "at") else device_put(a) for a in args))


def test_gradients_through_updates():
    x = np.linspace(0.5, 2.0, 6, dtype=np.float32)
    v = np.array([0.3, -0.7], np.float32)  # no ties with x[i]: min and max are smooth
    i = np.array([1, 4])

    def updates(x, v):
        return (
            x.at[i].set(v * x[0])
            + x.at[np.array([1, 1])].add(v)
            + x.at[i].multiply(v, unique_indices=True)
            + x.at[1:3].multiply(v)  # static indices are unique
            + x.at[i].max(v)
            + x.at[i].min(v)
            + x.at[i].get().sum() * x.at[::2].get().sum()
        )

    check_grads(_arrays(updates), (x, v), order=1)
    check_grads(_arrays(lambda x, v: x.at[np.array([1, 1])].add(v * x[2])), (x, v), order=2)
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
        grad(lambda v: device_put(x).at[i].multiply(v).sum())(v)  # as in JAX
    g = grad(lambda x: x.at[np.array([0, 0, 2])].get().sum())(x)
    np.testing.assert_array_equal(np.asarray(g), [2, 0, 1, 0, 0, 0])
    g = grad(lambda v: device_put(x).at[np.array([1, 1, 3])].add(v).sum())(np.float32(1.0))
    assert float(g) == 3.0
