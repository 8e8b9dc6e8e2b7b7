"""gather and scatter transformed: derivatives (check_grads forward and reverse, and
hand-derived values), vmap against Python loops with the batch axis at each position,
JAX 0.10.2's printed Jaxprs and its shape-check messages."""

from __future__ import annotations

import numpy as np
import pytest
from gather_scatter_reference import FORMS, G, np_gather, np_scatter, random_indices, to_scatter

from lamina import lax
from lamina.interpreters import grad, jvp, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(1)
f32 = np.float32
B = 3
SCATTERS = {
    "add": lax.scatter_add,
    "sub": lax.scatter_sub,
    "mul": lax.scatter_mul,
    "min": lax.scatter_min,
    "max": lax.scatter_max,
}
ROWS_DN, ROWS_SIZES = G((1,), (0,), (0,)), (1, 3)
ROWS_SDN = to_scatter(ROWS_DN)


def _sum(x):
    return lax.reduce_sum(x, tuple(range(len(np.shape(x)))))


# ------------------------------------------------------------------ derivatives


@pytest.mark.parametrize("form", FORMS[::2], ids=lambda f: f[0])
@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather_grads(form, mode):
    _, shape, idx_shape, dn, sizes = form
    x = rng.standard_normal(shape).astype(f32)
    idx = random_indices(rng, shape, idx_shape, dn, sizes, spread=1)
    check_grads(lambda x: lax.gather(x, idx, dn, sizes, mode=mode, fill_value=0.5), (x,), 2,
                modes=("fwd", "rev"))  # fmt: skip


def test_gather_grad_counts_repeats_and_drops_out_of_bounds():
    x = np.zeros((4, 3), f32)
    idx = np.array([[1], [1], [3], [9], [-1]], np.int32)
    for mode, row_counts in (("fill", [0, 2, 0, 1]), ("clip", [1, 2, 0, 2])):
        g = grad(lambda x, mode=mode: _sum(lax.gather(x, idx, ROWS_DN, ROWS_SIZES, mode=mode)))
        np.testing.assert_array_equal(g(x), np.repeat(np.array(row_counts, f32)[:, None], 3, 1))


def _scatter_args(kind, idx):
    x = rng.standard_normal((4, 3)).astype(f32)
    u = rng.standard_normal((len(idx), 3)).astype(f32)
    if kind == "mul":
        x, u = x + 3, u + 3
    return x, u


@pytest.mark.parametrize("kind", list(SCATTERS))
def test_scatter_grads(kind):
    unique = kind == "mul"  # scatter_mul differentiates in updates only when unique
    idx = np.array([[2], [0], [3]] if unique else [[2], [0], [2], [7]], np.int32)
    x, u = _scatter_args(kind, idx)
    f = SCATTERS[kind]
    check_grads(lambda x, u: f(x, idx, u, ROWS_SDN, unique_indices=unique), (x, u), 2,
                modes=("fwd", "rev"), eps=1e-3)  # fmt: skip


def test_scatter_mul_grads_in_operand_with_repeats():
    idx = np.array([[1], [1], [2]], np.int32)
    x, u = _scatter_args("mul", idx)
    check_grads(lambda x: lax.scatter_mul(x, idx, u, ROWS_SDN), (x,), 2, modes=("fwd", "rev"))
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
        grad(lambda u: _sum(lax.scatter_mul(x, idx, u, ROWS_SDN)))(u)


@pytest.mark.parametrize("unique", [True, False])
def test_overwriting_scatter_grads(unique):
    idx = np.array([[2], [0], [3]] if unique else [[2], [0], [2], [3]], np.int32)
    x, u = _scatter_args("scatter", idx)
    f = lambda x, u: lax.scatter(x, idx, u, ROWS_SDN, unique_indices=unique)  # noqa: E731
    check_grads(f, (x, u), 2, modes=("fwd", "rev"))
    gx, gu = grad(lambda x, u: _sum(f(x, u) * f(x, u)), (0, 1))(x, u)
    out = np.asarray(f(x, u))
    np.testing.assert_allclose(gx, np.where(np.isin(np.arange(4), idx)[:, None], 0, 2 * x))
    winners = [np.allclose(out[i[0]], row) for i, row in zip(idx, u, strict=True)]
    want_gu = np.where(np.array(winners)[:, None], 2 * u, 0)
    np.testing.assert_allclose(gu, want_gu, rtol=1e-6)


def test_scatter_max_ties_share_the_derivative():
    x = np.arange(12.0, dtype=f32).reshape(4, 3)
    idx = np.array([[0], [0]], np.int32)
    u = np.full((2, 3), 4.0, f32)
    gx, gu = grad(lambda x, u: _sum(lax.scatter_max(x, idx, u, ROWS_SDN)), (0, 1))(x, u)
    np.testing.assert_array_equal(gx, [[0] * 3] + [[1] * 3] * 3)  # values from JAX 0.10.2
    np.testing.assert_array_equal(gu, np.full((2, 3), 0.5))


def test_jvp_of_gather_and_scatter_add():
    x = rng.standard_normal((4, 3)).astype(f32)
    t = rng.standard_normal((4, 3)).astype(f32)
    idx = np.array([[3], [1]], np.int32)
    _, tan = jvp(lambda x: lax.gather(x, idx, ROWS_DN, ROWS_SIZES), (x,), (t,))
    np.testing.assert_array_equal(tan, t[[3, 1]])
    u, tu = np.ones((2, 3), f32), np.full((2, 3), 2.0, f32)
    _, tan = jvp(lambda x, u: lax.scatter_add(x, idx, u, ROWS_SDN), (x, u), (t, tu))
    np.testing.assert_allclose(tan, np_scatter("add", t, idx, tu, ROWS_SDN), rtol=1e-6)


# ------------------------------------------------------------------ vmap


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f[0])
@pytest.mark.parametrize("axes", [(0, None), (None, 0), (1, 1), (-1, 0)])
def test_gather_vmap(form, axes):
    _, shape, idx_shape, dn, sizes = form
    xs = rng.standard_normal((B, *shape)).astype(f32)
    idxs = np.stack([random_indices(rng, shape, idx_shape, dn, sizes) for _ in range(B)])
    x_ax, i_ax = axes
    x_in = xs[0] if x_ax is None else np.moveaxis(xs, 0, x_ax)
    i_in = idxs[0] if i_ax is None else np.moveaxis(idxs, 0, i_ax)
    got = vmap(lambda x, i: lax.gather(x, i, dn, sizes, mode="fill"), in_axes=axes)(x_in, i_in)
    want = [
        np_gather(xs[0 if x_ax is None else b], idxs[0 if i_ax is None else b], dn, sizes, "fill")
        for b in range(B)
    ]
    np.testing.assert_array_equal(got, np.stack(want))


@pytest.mark.parametrize("kind", ["add", "max", "scatter"])
@pytest.mark.parametrize("axes", [(0, None, None), (None, 0, None), (None, None, 1),
                                  (1, 0, None), (-1, 1, 0)])  # fmt: skip
def test_scatter_vmap(kind, axes):
    form = FORMS[1]  # columns: window dims on both sides of the scatter dims
    _, shape, _, dn, _ = form
    sdn = to_scatter(dn)
    xs = rng.standard_normal((B, *shape)).astype(f32)
    idxs = np.stack([rng.permutation(shape[1])[:4, None].astype(np.int32) for _ in range(B)])
    us = rng.standard_normal((B, 3, 4)).astype(f32)
    ins = [
        a[0] if ax is None else np.moveaxis(a, 0, ax)
        for a, ax in zip((xs, idxs, us), axes, strict=True)
    ]
    f = lax.scatter if kind == "scatter" else SCATTERS[kind]
    got = vmap(lambda x, i, u: f(x, i, u, sdn), in_axes=axes)(*ins)
    want = [
        np_scatter(
            kind,
            *(a[0 if ax is None else b] for a, ax in zip((xs, idxs, us), axes, strict=True)),
            sdn,
        )
        for b in range(B)
    ]
    np.testing.assert_allclose(got, np.stack(want), rtol=1e-6)


def test_vmap_of_grad_through_gather():
    xs = rng.standard_normal((B, 4, 3)).astype(f32)
    idx = np.array([[1], [1], [0]], np.int32)
    g = vmap(grad(lambda x: _sum(lax.gather(x, idx, ROWS_DN, ROWS_SIZES) ** 2)))(xs)
    want = np.zeros_like(xs)
    for b in range(B):
        np.add.at(want[b], idx[:, 0], 2 * xs[b][idx[:, 0]])
    np.testing.assert_allclose(g, want, rtol=1e-6)


# ------------------------------------------------------------------ Jaxprs and errors

GATHER_JAXPR = """{ lambda ; a:f32[3,4] b:i32[2,1]. let
    c:f32[2,4] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=-1
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      slice_sizes=(1, 4)
      unique_indices=False
    ] a b
  in (c,) }"""  # noqa: E501

SCATTER_ADD_JAXPR = """{ lambda ; a:f32[3,4] b:i32[2,1] c:f32[2,4]. let
    d:f32[3,4] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.CLIP
      unique_indices=False
      update_consts=()
      update_jaxpr={ lambda ; e:f32[] f:f32[]. let g:f32[] = add e f in (g,) }
    ] a b c
  in (d,) }"""  # noqa: E501


def test_printed_jaxprs():
    x, idx, u = np.zeros((3, 4), f32), np.zeros((2, 1), np.int32), np.zeros((2, 4), f32)
    dn, sdn = G((1,), (0,), (0,)), lax.ScatterDimensionNumbers((1,), (0,), (0,))
    gather = make_jaxpr(lambda x, i: lax.gather(x, i, dn, (1, 4), mode="fill", fill_value=-1))
    assert str(gather(x, idx)) == GATHER_JAXPR
    scatter = make_jaxpr(lambda x, i, u: lax.scatter_add(x, i, u, sdn, mode="clip"))
    assert str(scatter(x, idx, u)) == SCATTER_ADD_JAXPR
    plain = make_jaxpr(lambda x, i: lax.gather(x, i, dn, (1, 4)))(x, idx)
    assert "mode=GatherScatterMode.PROMISE_IN_BOUNDS" in str(plain)
    assert "update_jaxpr=None" in str(make_jaxpr(lambda x, i, u: lax.scatter(x, i, u, sdn))(
        x, idx, u))  # fmt: skip


def test_vmapped_gather_jaxprs_use_batching_dims():
    dn = G((1,), (0,), (0,))
    both = make_jaxpr(vmap(lambda x, i: lax.gather(x, i, dn, (1, 4))))(
        np.zeros((5, 3, 4), f32), np.zeros((5, 2, 1), np.int32)
    )
    assert (
        "GatherDimensionNumbers(offset_dims=(2,), collapsed_slice_dims=(1,), start_index_map=(1,), "
        "operand_batching_dims=(0,), start_indices_batching_dims=(0,))" in str(both)
    )
    assert "slice_sizes=(1, 1, 4)" in str(both)


X, IDX = np.zeros((3, 4), f32), np.zeros((2, 1), np.int32)


@pytest.mark.parametrize(
    "args, error, message",
    [
        ((X, IDX, G((1,), (0,), (0,)), (1, 4, 1)), TypeError,
         "Gather op must have one slice size for every input dimension; got: "
         "len(slice_sizes)=3, input_shape.rank=2"),
        ((X, IDX, G((1,), (0,), (0,)), (2, 4)), TypeError,
         "Gather op can only collapse slice dims with bound 1, but bound is 2 for index 0 at "
         "position 0."),
        ((X, IDX, G((1,), (0,), (0,)), (1, 5)), TypeError,
         "Slice size at index 1 in gather op is out of range, must be within [0, 4 + 1), got 5."),
        ((X, np.zeros((2, 2), np.int32), G((1,), (0,), (0,)), (1, 4)), TypeError,
         "Gather op has 1 elements in start_index_map and the bound of dimension "
         "index_vector_dim=1 of indices is 2. These two numbers must be equal."),
        ((X, IDX.astype(f32), G((1,), (0,), (0,)), (1, 4)), ValueError,
         "indices must have an integer type"),
        ((X, IDX, G((1,), (0,), (2,)), (1, 4)), TypeError,
         "Invalid start_index_map; domain is [0, 2), got: 0->2."),
    ],
)  # fmt: skip
def test_gather_errors(args, error, message):
    with pytest.raises(error) as info:
        lax.gather(*args)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "updates, message",
    [
        (np.zeros((2, 5), f32),
         "Bounds of the window dimensions of updates must not exceed the bounds of the "
         "corresponding dimensions of operand. For dimension 1, updates bound is 5, operand "
         "bound is 4."),
        (np.zeros((2, 4), np.int32),
         "lax.scatter requires arguments to have the same dtypes, got float32, int32."),
        (np.zeros((2, 4, 1), f32), "Updates tensor must be of rank 2; got 3."),
    ],
)  # fmt: skip
def test_scatter_errors(updates, message):
    with pytest.raises(TypeError) as info:
        lax.scatter_add(X, IDX, updates, lax.ScatterDimensionNumbers((1,), (0,), (0,)))
    assert str(info.value) == message


def test_vmapped_jaxprs_match_jax():
    dn, sdn = G((1,), (0,), (0,)), lax.ScatterDimensionNumbers((1,), (0,), (0,))
    xs, idxs = np.zeros((5, 3, 4), f32), np.zeros((5, 2, 1), np.int32)
    indices_only = str(make_jaxpr(vmap(lambda i: lax.gather(xs[0], i, dn, (1, 4))))(idxs))
    assert "offset_dims=(2,), collapsed_slice_dims=(0,), start_index_map=(0,)" in indices_only
    assert "slice_sizes=(1, 4)" in indices_only
    operand_only = str(
        make_jaxpr(vmap(lambda x: lax.scatter_add(x, idxs[0], np.ones((2, 4), f32), sdn)))(xs)
    )
    assert (
        "ScatterDimensionNumbers(update_window_dims=(0, 2), inserted_window_dims=(1,), "
        "scatter_dims_to_operand_dims=(1,), operand_batching_dims=(), "
        "scatter_indices_batching_dims=())" in operand_only
    )


@pytest.mark.parametrize("mode", ["fill", "clip"])
@pytest.mark.parametrize("kind", ["add", "scatter"])
def test_scatter_grads_out_of_bounds(kind, mode):
    idx = np.array([[2], [-1], [2], [6], [0]], np.int32)
    x, u = _scatter_args(kind, idx)
    f = lax.scatter if kind == "scatter" else lax.scatter_add
    check_grads(lambda x, u: f(x, idx, u, ROWS_SDN, mode=mode), (x, u), 1, modes=("fwd", "rev"))


def test_batching_dims_scatter_under_vmap_and_grad():
    _, shape, idx_shape, dn, sizes = FORMS[6]  # take_along_axis: operand/indices batching dims
    sdn = to_scatter(dn)
    xs = rng.standard_normal((B, *shape)).astype(f32)
    idxs = np.stack([random_indices(rng, shape, idx_shape, dn, sizes) for _ in range(B)])
    us = rng.standard_normal((B, *idx_shape[:-1])).astype(f32)
    got = vmap(lambda x, i, u: lax.scatter_add(x, i, u, sdn), in_axes=(1, 0, 2))(
        np.moveaxis(xs, 0, 1), idxs, np.moveaxis(us, 0, 2)
    )
    want = [np_scatter("add", xs[b], idxs[b], us[b], sdn) for b in range(B)]
    np.testing.assert_allclose(got, np.stack(want), rtol=1e-6)
    check_grads(lambda x, u: lax.scatter_max(x, idxs[0], u, sdn), (xs[0], us[0]), 1,
                modes=("fwd", "rev"))  # fmt: skip
