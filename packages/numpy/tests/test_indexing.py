"""``x[idx]`` against NumPy on many index forms over arrays of rank 0 to 4; under jit
with traced integer indices, under vmap and grad; the primitives emitted (``slice`` /
``dynamic_slice`` for integers and slices, ``gather`` for arrays); JAX's clamping of
out-of-bounds reads."""

import numpy as np
import pytest

import lamina.numpy  # noqa: F401  (installs x[idx], x.at and the methods on arrays)
from lamina import lax
from lamina.interpreters import device_put, grad, jit, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads


class _Index:
    def __getitem__(self, idx):
        return idx


I = _Index()  # I[1, ::2] is the index tuple (1, slice(None, None, 2))

SHAPES = {0: (), 1: (5,), 2: (3, 4), 3: (2, 3, 4), 4: (2, 3, 4, 5)}

CASES = [
    (0, I[()]), (0, I[...]), (0, I[None]), (0, I[..., None]), (0, I[True]), (0, I[False]),
    (0, I[np.array(True)]), (0, I[None, True]),
    (1, I[0]), (1, I[-1]), (1, I[4]), (1, I[1:3]), (1, I[::-1]), (1, I[::2]), (1, I[-2:]),
    (1, I[10:]), (1, I[:-10]), (1, I[3:1]), (1, I[3:1:-1]), (1, I[::-3]), (1, I[None]),
    (1, I[None, :, None]), (1, I[..., 2]), (1, I[np.array([0, 4, -1])]),
    (1, I[np.array([[0, 1], [2, 3]])]), (1, I[np.array([], np.int32)]),
    (1, I[np.array([True, False, True, False, True])]), (1, I[np.zeros(5, bool)]),
    (1, I[True]), (1, I[False]), (1, I[(np.array([1, 2]),)]), (1, I[np.int32(2)]),
    (1, I[np.array(3)]), (1, I[np.uint8(1)]), (1, I[np.array([3, 1], np.uint8)]),
    (1, I[np.array([1, -2], np.int8)]), (1, I[(1, 3),]), (1, I[[0, 2],]),
    (2, I[1]), (2, I[-1, -1]), (2, I[:, 1]), (2, I[1:, ::-2]), (2, I[..., -1]),
    (2, I[None, 1, None]), (2, I[np.array([0, 2])]), (2, I[:, np.array([3, 0, 3])]),
    (2, I[np.array([0, 2]), np.array([1, 3])]), (2, I[np.array([[0], [2]]), np.array([1, 3])]),
    (2, I[np.array([0, 2]), 1:3]), (2, I[1:, np.array([[0, 1]])]), (2, I[np.array([2, 0]), ::-1]),
    (2, I[np.ones((3, 4), bool)]), (2, I[np.array([True, False, True])]),
    (2, I[:, np.array([True, False, True, False])]), (2, I[1, np.array([0, 3])]),
    (2, I[np.array([-1]), -1]), (2, I[::2, None, np.array([1])]), (2, I[True, 1]),
    (2, I[..., None]), (2, I[np.array([], np.int32), :]), (2, I[:0]), (2, I[:, :0]),
    (2, I[np.array([1, 0]), None, np.array([0, 1])]),
    (2, I[np.array([[True] * 4, [False] * 4, [True, False] * 2])]),
    (3, I[0, :, np.array([0, 1])]), (3, I[np.array([1, 0]), :, np.array([0, 1])]),
    (3, I[:, np.array([1]), ..., np.array([0])]), (3, I[..., np.array([0, 1]), :]),
    (3, I[np.array([0, 1]), ..., 1]), (3, I[1, ..., np.array([0, 1])]),
    (3, I[:, 1, None, np.array([0, 1])]), (3, I[0, :, True]), (3, I[True, 0]), (3, I[:, True]),
    (3, I[np.ones((2, 3), bool)]), (3, I[np.array([[0, 1]]), None, 1:]), (3, I[1, 1:3, ::-1]),
    (3, I[..., ::-1, 1]), (3, I[None, ..., None]),
    (3, I[np.array([1]), np.array([[2], [0]]), np.array([3, 0])]),
    (3, I[:, ::2, np.array([3, 1])]),
    (3, I[np.array([1, 0])[:, None, None], np.array([0, 1, 2])[None, :, None],
          np.array([3, 0])[None, None, :]]),
    (3, I[np.array([[True, False, True], [False, False, True]]), 1:]),
    (4, I[1, ..., 2]), (4, I[:, np.array([0, 2]), :, np.array([4, 1])]),
    (4, I[:, np.array([0, 2]), np.array([1, 3]), :]), (4, I[..., np.array([[0, 4]]), None]),
    (4, I[1, ::2, 1:3, ::-2]), (4, I[np.array([0, 1]), 1, :, np.array([3, 2])]),
    (4, I[None, 0, None, ..., 1, None]), (4, I[-1, -2, -3, -4]), (4, I[:, :, :, ::-1]),
]  # fmt: skip

DTYPES = [np.float32, np.int32, np.bool_, np.complex64, np.uint8, np.float16]


def _operand(ndim, k):
    """A deterministic array of rank ``ndim`` with the ``k``-th dtype of DTYPES."""
    dtype = DTYPES[k % len(DTYPES)]
    values = np.arange(int(np.prod(SHAPES[ndim], dtype=int))).reshape(SHAPES[ndim])
    if dtype == np.bool_:
        return (values % 3 == 0).astype(dtype)
    if dtype == np.complex64:
        return (values + 1j * (values % 5)).astype(dtype)
    return values.astype(dtype)


@pytest.mark.parametrize("k, case", list(enumerate(CASES)), ids=lambda v: str(v)[:60])
def test_getitem_matches_numpy(k, case):
    ndim, idx = case
    a = _operand(ndim, k)
    got = device_put(a)[idx]
    want = a[idx]
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    assert not got.weak_type
    np.testing.assert_array_equal(np.asarray(got), want)


def _integer_arrays(idx):
    items = idx if isinstance(idx, tuple) else (idx,)
    return [
        i
        for i in items
        if isinstance(i, np.ndarray) and i.ndim and np.issubdtype(i.dtype, np.integer)
    ]


TRACEABLE = [c for c in CASES if _integer_arrays(c[1])]


@pytest.mark.parametrize("case", TRACEABLE, ids=lambda v: str(v)[:60])
def test_getitem_with_traced_index_arrays_matches_numpy(case):
    ndim, idx = case
    a = _operand(ndim, 0)
    items = idx if isinstance(idx, tuple) else (idx,)
    traced_positions = [p for p, i in enumerate(items) if any(i is j for j in _integer_arrays(idx))]

    def index(x, *arrays):
        rebuilt = list(items)
        for p, arr in zip(traced_positions, arrays, strict=True):
            rebuilt[p] = arr
        return x[tuple(rebuilt)]

    got = jit(index)(a, *(items[p] for p in traced_positions))
    np.testing.assert_array_equal(np.asarray(got), a[idx])


def test_traced_scalar_indices_use_dynamic_slice():
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    f = jit(lambda x, i, j: x[i, 1:, j])
    for i, j in [(0, 0), (1, -1), (-2, 1), (1, -3)]:
        np.testing.assert_array_equal(np.asarray(f(a, i, j)), a[i, 1:, j])
    jaxpr = str(make_jaxpr(lambda x, i: x[i, 1:])(a, 1))
    assert "dynamic_slice" in jaxpr and "gather" not in jaxpr


def test_static_indices_emit_slices_not_gathers():
    a = np.zeros((3, 4), np.float32)
    jaxpr = str(make_jaxpr(lambda x: x[1, ::-1, None])(a))
    assert "slice" in jaxpr and "rev" in jaxpr and "gather" not in jaxpr
    assert "gather" in str(make_jaxpr(lambda x: x[np.array([0, 2])])(a))


def test_out_of_bounds_reads_clamp_like_jax():
    # Recorded from JAX 0.10.2: jnp.arange(3)[jnp.array([5])] == [2], [-5] -> [0];
    # jnp.arange(12.).reshape(3, 4)[5] is the last row.
    x = device_put(np.arange(3, dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(x[np.array([5, -5, 1])]), [2, 0, 1])
    np.testing.assert_array_equal(np.asarray(x[device_put(np.array([5, -5]))]), [2, 0])
    m = device_put(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    np.testing.assert_array_equal(np.asarray(m[5]), [8, 9, 10, 11])
    np.testing.assert_array_equal(np.asarray(m[-5, 7]), 3.0)
    f = jit(lambda x, i: x[i])
    assert int(f(x, 7)) == 2 and int(f(x, -7)) == 0


def test_indexing_keeps_weak_type():
    weak = lax.full((3,), 2.0)  # a Python scalar fill is weakly typed
    assert weak.weak_type
    assert weak[1].weak_type and weak[None, ::2].weak_type
    assert weak[np.array([0, 0])].weak_type


def test_vmap_of_indexing_matches_loop():
    a = np.arange(60.0, dtype=np.float32).reshape(3, 4, 5)
    idx = np.array([[0, 3], [1, 1], [4, 0]], np.int32)
    got = vmap(lambda x, i: x[1:, i])(a, idx)
    want = np.stack([a[b][1:, idx[b]] for b in range(3)])
    np.testing.assert_array_equal(np.asarray(got), want)
    f = vmap(lambda x, i: x[i, ::-1], in_axes=(None, 0))
    got = f(device_put(a), np.array([2, 0, -1]))
    np.testing.assert_array_equal(np.asarray(got), np.stack([a[i, ::-1] for i in (2, 0, -1)]))


def test_grad_of_indexing():
    a = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)

    def reads(x):
        return x[1, ::-2] * x[np.array([0, 0, 2]), 1:3].sum() + x[None, -1, np.array([3, 0])]

    check_grads(reads, (a,), order=1)
    g = grad(lambda x: x[np.array([0, 0, 2]), 1].sum())(a)
    want = np.zeros_like(a)
    want[0, 1], want[2, 1] = 2, 1
    np.testing.assert_array_equal(np.asarray(g), want)


def test_iterating_a_traced_array_unstacks_it():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    rows = jit(lambda x: [r * 2 for r in x])(a)
    np.testing.assert_array_equal(np.asarray(rows[1]), a[1] * 2)
    assert len(rows) == 2
