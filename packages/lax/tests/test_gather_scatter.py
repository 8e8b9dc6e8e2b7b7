"""gather and the scatter family against NumPy loops, for many dimension-number forms
and every out-of-bounds mode; derivatives (check_grads, forward and reverse), vmap
against Python loops, JAX 0.10.2's printed Jaxprs and error messages."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from gather_scatter_reference import (
    FORMS,
    G,
    np_gather,
    np_scatter,
    random_indices,
    to_scatter,
    unique_indices,
)

from lamina import lax
from lamina.interpreters import jit

rng = np.random.default_rng(0)
f32 = np.float32
Mode = lax.GatherScatterMode
SCATTERS = {
    "add": lax.scatter_add,
    "sub": lax.scatter_sub,
    "mul": lax.scatter_mul,
    "min": lax.scatter_min,
    "max": lax.scatter_max,
}
IDS = [f[0] for f in FORMS]


def _updates_shape(form, indices_shape):
    _, _, _, dn, sizes = form
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window = [s for d, s in enumerate(sizes) if d not in dropped]
    rank = len(indices_shape) - 1 + len(window)
    w, b = iter(window), iter(indices_shape[:-1])
    return tuple(next(w) if i in dn.offset_dims else next(b) for i in range(rank))


# ------------------------------------------------------------------ values


def test_mode_from_any():
    assert Mode.from_any(None) is Mode.FILL_OR_DROP
    assert Mode.from_any("clip") is Mode.CLIP
    assert Mode.from_any("fill") is Mode.FILL_OR_DROP
    assert Mode.from_any("drop") is Mode.FILL_OR_DROP
    assert Mode.from_any("promise_in_bounds") is Mode.PROMISE_IN_BOUNDS
    assert Mode.from_any("one_hot") is Mode.ONE_HOT
    assert Mode.from_any(Mode.CLIP) is Mode.CLIP
    assert [m.value for m in Mode] == [1, 2, 3, 4]
    with pytest.raises(ValueError, match='Unknown gather mode "foo"'):
        Mode.from_any("foo")


def test_dimension_numbers_defaults_and_repr():
    dn = lax.GatherDimensionNumbers((1,), (0,), (0,))
    assert dn.operand_batching_dims == () and dn.start_indices_batching_dims == ()
    assert repr(dn) == (
        "GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), "
        "start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())"
    )
    sdn = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    assert sdn.scatter_indices_batching_dims == ()


@pytest.mark.parametrize("form", FORMS, ids=IDS)
def test_gather_in_bounds(form):
    _, shape, idx_shape, dn, sizes = form
    x = rng.standard_normal(shape).astype(f32)
    idx = random_indices(rng, shape, idx_shape, dn, sizes)
    np.testing.assert_array_equal(lax.gather(x, idx, dn, sizes), np_gather(x, idx, dn, sizes))


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds", None])
@pytest.mark.parametrize("form", FORMS[:3] + FORMS[4:5] + FORMS[6:7], ids=lambda f: f[0])
def test_gather_out_of_bounds(form, mode):
    _, shape, idx_shape, dn, sizes = form
    x = rng.standard_normal(shape).astype(f32)
    idx = random_indices(rng, shape, idx_shape, dn, sizes, spread=3)
    ref_mode = "fill" if mode == "fill" else "clip"  # XLA clamps when in bounds is promised
    got = lax.gather(x, idx, dn, sizes, mode=mode)
    np.testing.assert_array_equal(got, np_gather(x, idx, dn, sizes, ref_mode))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_, np.float16])
def test_gather_default_fill_values(dtype):
    dn, sizes = G((1,), (0,), (0,)), (1, 2)
    x = np.ones((3, 2), dtype)
    idx = np.array([[-1], [1], [2], [7]], np.int32)
    got = np.asarray(lax.gather(x, idx, dn, sizes, mode="fill"))
    np.testing.assert_array_equal(got, np_gather(x, idx, dn, sizes, "fill"))
    assert got.dtype == dtype


def test_gather_explicit_fill_value_and_index_dtypes():
    dn, sizes = G((1,), (0,), (0,)), (1, 3)
    x = np.arange(12.0, dtype=f32).reshape(4, 3)
    for idx_dtype in (np.int8, np.uint32, np.int64):
        idx = np.array([[3], [4], [0]], idx_dtype)
        got = lax.gather(x, idx, dn, sizes, mode="fill", fill_value=-1.5)
        np.testing.assert_array_equal(got, [[9, 10, 11], [-1.5] * 3, [0, 1, 2]])


@pytest.mark.parametrize("kind", list(SCATTERS))
@pytest.mark.parametrize("form", FORMS, ids=IDS)
def test_combining_scatters(form, kind):
    _, shape, idx_shape, dn, sizes = form
    sdn = to_scatter(dn)
    x = rng.standard_normal(shape).astype(f32)
    idx = random_indices(rng, shape, idx_shape, dn, sizes)  # repeats included
    upd = rng.standard_normal(_updates_shape(form, idx_shape)).astype(f32)
    got = SCATTERS[kind](x, idx, upd, sdn)
    np.testing.assert_allclose(got, np_scatter(kind, x, idx, upd, sdn), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "form", [f for f in FORMS if unique_indices(*f[1:]) is not None], ids=lambda f: f[0]
)
def test_overwriting_scatter(form):
    _, shape, idx_shape, dn, sizes = form
    sdn = to_scatter(dn)
    x = rng.standard_normal(shape).astype(f32)
    idx = unique_indices(shape, idx_shape, dn, sizes)
    upd = rng.standard_normal(_updates_shape(form, idx_shape)).astype(f32)
    got = lax.scatter(x, idx, upd, sdn, unique_indices=True)
    np.testing.assert_array_equal(got, np_scatter("scatter", x, idx, upd, sdn))


@pytest.mark.parametrize("mode", ["clip", "fill", None])
@pytest.mark.parametrize("kind", ["add", "max"])
def test_scatter_out_of_bounds(kind, mode):
    form = FORMS[4]  # windows: partially out-of-bounds windows are dropped whole
    _, shape, _, dn, _ = form
    sdn = to_scatter(dn)
    x = rng.standard_normal(shape).astype(f32)
    idx = np.array([[-1, 0], [5, 2], [2, 5], [9, -4], [1, 1]], np.int32)
    upd = rng.standard_normal(_updates_shape(form, idx.shape)).astype(f32)
    got = SCATTERS[kind](x, idx, upd, sdn, mode=mode)
    ref = np_scatter(kind, x, idx, upd, sdn, "clip" if mode == "clip" else "fill")
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_scatter_integer_and_duplicate_indices():
    sdn = lax.ScatterDimensionNumbers((), (0,), (0,))
    x = np.zeros(4, np.int32)
    idx = np.array([[1], [1], [3], [1]], np.int32)
    upd = np.array([5, 7, 2, 1], np.int32)
    np.testing.assert_array_equal(lax.scatter_add(x, idx, upd, sdn), [0, 13, 0, 2])
    np.testing.assert_array_equal(lax.scatter_mul(x + 2, idx, upd, sdn), [2, 70, 2, 4])
    np.testing.assert_array_equal(lax.scatter_max(x, idx, upd, sdn), [0, 7, 0, 2])
    np.testing.assert_array_equal(lax.scatter_min(x, idx, upd, sdn), [0, 0, 0, 0])
    np.testing.assert_array_equal(lax.scatter_sub(x, idx, upd, sdn), [0, -13, 0, -2])


def test_scatter_apply():
    sdn = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    x = np.arange(12.0, dtype=f32).reshape(3, 4)
    idx = np.array([[0], [2], [0]], np.int32)
    got = lax.scatter_apply(x, idx, lax.sin, sdn, update_shape=(3, 4))
    want = x.copy()
    want[0] = np.sin(np.sin(want[0]))  # applied once per update that reaches it
    want[2] = np.sin(want[2])
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_under_jit():
    dn, sizes = G((1,), (0,), (0,)), (1, 3)
    x = rng.standard_normal((5, 3)).astype(f32)
    idx = np.array([[4], [0], [2]], np.int32)
    got = jit(lambda x, i: lax.scatter_add(x, i, lax.gather(x, i, dn, sizes), to_scatter(dn)))(
        x, idx
    )
    want = x.copy()
    want[[4, 0, 2]] *= 2
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_index_take():
    x = np.arange(24.0, dtype=f32).reshape(2, 3, 4)
    rows, cols = np.array([1, 0, -1], np.int32), np.array([2, 3, -4], np.int32)
    got = lax.index_take(x, (rows, cols), (0, 2))
    np.testing.assert_array_equal(got, x[rows, :, cols])
    np.testing.assert_array_equal(
        np.asarray(got)[:2], [[14, 18, 22], [3, 7, 11]]
    )  # from JAX 0.10.2
    with pytest.raises(
        TypeError, match=r"collapsed_slice_dims in gather op must be sorted; got \(2, 1\)"
    ):
        lax.index_take(x, (cols, rows), (2, 1))  # as in JAX 0.10.2


def test_low_precision_floats_and_empty_shapes():

    dn, sdn, sizes = G((1,), (0,), (0,)), lax.ScatterDimensionNumbers((1,), (0,), (0,)), (1, 2)
    x = np.arange(6.0).reshape(3, 2).astype(ml_dtypes.bfloat16)
    got = lax.gather(x, np.array([[2], [5]], np.int32), dn, sizes, mode="fill")
    assert np.asarray(got).dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(np.asarray(got, f32), [[4, 5], [np.nan, np.nan]])
    idx = np.array([[2], [2]], np.int32)
    got = lax.scatter_add(x, idx, np.ones((2, 2), ml_dtypes.bfloat16), sdn)
    np.testing.assert_array_equal(np.asarray(got, f32), [[0, 1], [2, 3], [6, 7]])
    empty = lax.gather(x.astype(f32), np.zeros((0, 1), np.int32), dn, sizes)
    assert np.asarray(empty).shape == (0, 2)
    assert np.asarray(lax.gather(x, np.zeros((2, 1), np.int32), dn, (1, 0))).shape == (2, 0)


def test_gather_one_hot_mode_is_not_supported():
    with pytest.raises(NotImplementedError):
        lax.gather(np.ones((3, 2), f32), np.zeros((1, 1), np.int32), G((1,), (0,), (0,)), (1, 2),
                   mode="one_hot")  # fmt: skip
