"""Whole JAX programs written against the assembled library exactly as a JAX user writes
them (``import lamina as jax``, ``import lamina.numpy as jnp``): indexing and ``.at``
updates under jit, selection, sorting and set operations, cumulative sums and einsum,
linear algebra and decompositions, FFT round trips, histograms and padding, statistics,
grids/interp/vectorize/polyfit, array-method chains, the dtype rules (float32 default,
weak Python scalars, x64), the errors JAX raises, and printed Jaxprs. Results are checked
against NumPy references or facts recorded from JAX 0.10.2."""

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp

rng = np.random.default_rng(20261123)


def assert_close(actual, expected, rtol=1e-5, atol=1e-5):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def assert_same(actual, expected, dtype):
    actual = np.asarray(actual)
    assert actual.dtype == np.dtype(dtype), (actual.dtype, dtype)
    np.testing.assert_array_equal(actual, expected)


def test_gather_and_scatter_under_jit():
    x = rng.standard_normal((5, 6)).astype(np.float32)
    rows = np.array([4, 0, 2, 2], dtype=np.int32)

    @jax.jit
    def program(x, rows, i):
        picked = x[rows, 1:4]
        strided = x[::2, ::-1]
        dynamic_row = x[i]
        masked = jnp.where(x > 0, x, 0.0)
        y = x.at[rows, 0].add(1.0)
        y = y.at[1].set(jnp.arange(6.0))
        y = y.at[:, 2].multiply(2.0)
        y = y.at[jnp.array([0, 3]), -1].min(-1.0)
        # out-of-bounds updates are dropped; out-of-bounds reads clamp
        y = y.at[jnp.array([7])].set(100.0)
        clamped = x[jnp.array([9, -1])]
        return picked, strided, dynamic_row, masked, y, clamped

    picked, strided, dynamic_row, masked, y, clamped = program(x, rows, 3)
    expected = x.copy()
    np.add.at(expected, (rows, 0), 1.0)
    expected[1] = np.arange(6.0)
    expected[:, 2] *= 2.0
    expected[[0, 3], -1] = np.minimum(expected[[0, 3], -1], -1.0)
    assert_same(picked, x[rows, 1:4], np.float32)
    assert_same(strided, x[::2, ::-1], np.float32)
    assert_same(dynamic_row, x[3], np.float32)
    assert_same(masked, np.where(x > 0, x, 0.0), np.float32)
    assert_same(y, expected, np.float32)
    assert_same(clamped, x[[4, 4]], np.float32)


def test_selection_program():
    x = rng.integers(-5, 6, size=(4, 5)).astype(np.int32)

    @jax.jit
    def program(x):
        sign_class = jnp.select([x < 0, x == 0], [-1, 0], default=1)
        clipped = jnp.clip(x, -2, 3)
        where_rows, where_cols = jnp.where(x > 2, size=6, fill_value=-1)
        return sign_class, clipped, where_rows, where_cols, jnp.count_nonzero(x > 2)

    sign_class, clipped, where_rows, where_cols, count = program(x)
    assert_same(sign_class, np.sign(x), np.int32)
    assert_same(clipped, np.clip(x, -2, 3), np.int32)
    rows_np, cols_np = np.nonzero(x > 2)
    count_np = len(rows_np)
    assert int(count) == count_np
    pad = 6 - min(count_np, 6)
    assert_same(where_rows, np.concatenate([rows_np[:6], [-1] * pad]), np.int32)
    assert_same(where_cols, np.concatenate([cols_np[:6], [-1] * pad]), np.int32)
    # eager: the size comes from the data
    eager_rows, eager_cols = jnp.nonzero(x > 2)
    assert_same(eager_rows, rows_np, np.int32)
    assert_same(eager_cols, cols_np, np.int32)


def test_sorting_and_set_operations():
    x = np.array([3, 1, 2, 3, 1, 5, 0, 2, 5, 5], dtype=np.int32)
    matrix = rng.standard_normal((4, 3)).astype(np.float32)
    assert_same(jnp.sort(x), np.sort(x), np.int32)
    assert_same(jnp.argsort(x, stable=True), np.argsort(x, kind="stable"), np.int32)
    assert_same(jnp.sort(matrix, axis=0), np.sort(matrix, axis=0), np.float32)
    assert_same(jnp.sort(matrix, axis=1, descending=True), -np.sort(-matrix, axis=1), np.float32)

    values, index, inverse, counts = jnp.unique(
        x, return_index=True, return_inverse=True, return_counts=True
    )
    v_np, i_np, inv_np, c_np = np.unique(
        x, return_index=True, return_inverse=True, return_counts=True
    )
    assert_same(values, v_np, np.int32)
    assert_same(index, i_np, np.int32)
    assert_same(inverse, inv_np, np.int32)
    assert_same(counts, c_np, np.int32)

    @jax.jit
    def padded_unique(x):
        return jnp.unique(x, size=8, fill_value=-1), jnp.searchsorted(jnp.sort(x), 2)

    unique_fixed, position = padded_unique(x)
    assert_same(unique_fixed, [0, 1, 2, 3, 5, -1, -1, -1], np.int32)
    assert int(position) == np.searchsorted(np.sort(x), 2)
    assert_same(jnp.intersect1d(x, jnp.array([5, 7, 1])), [1, 5], np.int32)
    assert_same(jnp.isin(x, jnp.array([1, 5])), np.isin(x, [1, 5]), np.bool_)


def test_cumulative_sums_and_einsum():
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    batch_a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    batch_b = rng.standard_normal((2, 4, 5)).astype(np.float32)

    @jax.jit
    def program(a, b, batch_a, batch_b):
        return (
            jnp.cumsum(a, axis=1),
            jnp.cumprod(a, axis=0),
            jnp.einsum("ij,jk->ik", a, b),
            jnp.einsum("bij,bjk->bik", batch_a, batch_b),
            jnp.einsum("ij,ij->i", a, a),
            jnp.einsum("ii->i", b[:4, :4]),
            jnp.einsum("bij->", batch_a),
        )

    results = program(a, b, batch_a, batch_b)
    expected = (
        np.cumsum(a, axis=1),
        np.cumprod(a, axis=0),
        a @ b,
        batch_a @ batch_b,
        (a * a).sum(1),
        np.diag(b[:4, :4]),
        batch_a.sum(),
    )
    for result, reference in zip(results, expected, strict=True):
        assert np.asarray(result).dtype == np.float32
        assert_close(result, reference, rtol=1e-4, atol=1e-4)
    # JAX keeps the input dtype for cumsum (unlike NumPy) but widens sum
    small = jnp.ones(3, jnp.int8)
    assert_same(jnp.cumsum(small), [1, 2, 3], np.int8)
    assert_same(jnp.sum(small), 3, np.int32)
    assert_same(jnp.cumsum(jnp.array([True, False, True])), [1, 1, 2], np.int32)


def test_linear_algebra_program():
    m = rng.standard_normal((4, 4))
    spd = (m @ m.T + 4 * np.eye(4)).astype(np.float32)
    rhs = rng.standard_normal((4, 2)).astype(np.float32)

    @jax.jit
    def program(a, b):
        solution = jnp.linalg.solve(a, b)
        inverse = jnp.linalg.inv(a)
        eigenvalues, eigenvectors = jnp.linalg.eigh(a)
        sign, logdet = jnp.linalg.slogdet(a)
        return solution, inverse, jnp.linalg.det(a), eigenvalues, eigenvectors, sign, logdet

    solution, inverse, det, eigenvalues, eigenvectors, sign, logdet = program(spd, rhs)
    spd64 = spd.astype(np.float64)
    assert_close(solution, np.linalg.solve(spd64, rhs), rtol=1e-4, atol=1e-4)
    assert_close(inverse, np.linalg.inv(spd64), rtol=1e-4, atol=1e-4)
    assert_close(det, np.linalg.det(spd64), rtol=1e-4)
    assert_close(eigenvalues, np.linalg.eigvalsh(spd64), rtol=1e-4, atol=1e-4)
    v = np.asarray(eigenvectors, dtype=np.float64)
    assert_close(spd64 @ v, v * np.asarray(eigenvalues), rtol=1e-3, atol=1e-3)
    assert_close(v.T @ v, np.eye(4), atol=1e-5)
    assert float(sign) == 1.0
    assert_close(logdet, np.log(np.linalg.det(spd64)), rtol=1e-5)
    for result in (solution, inverse, det, eigenvalues, eigenvectors, logdet):
        assert np.asarray(result).dtype == np.float32
    assert_close(jnp.linalg.norm(rhs, axis=0), np.linalg.norm(rhs, axis=0), rtol=1e-5)


def test_fft_round_trips():
    signal = rng.standard_normal(16).astype(np.float32)
    image = rng.standard_normal((4, 6)).astype(np.float32)

    @jax.jit
    def program(signal, image):
        spectrum = jnp.fft.fft(signal)
        half_spectrum = jnp.fft.rfft(signal)
        image_spectrum = jnp.fft.fft2(image)
        return (
            spectrum,
            jnp.fft.ifft(spectrum),
            half_spectrum,
            jnp.fft.irfft(half_spectrum, n=16),
            jnp.fft.ifft2(image_spectrum).real,
        )

    spectrum, back, half, real_back, image_back = program(signal, image)
    assert np.asarray(spectrum).dtype == np.complex64
    assert np.asarray(real_back).dtype == np.float32
    assert_close(spectrum, np.fft.fft(signal), rtol=1e-4, atol=1e-4)
    assert_close(back, signal.astype(np.complex64), atol=1e-5)
    assert_close(half, np.fft.rfft(signal), rtol=1e-4, atol=1e-4)
    assert_close(real_back, signal, atol=1e-5)
    assert_close(image_back, image, atol=1e-5)
    assert_close(jnp.fft.fftfreq(8, d=0.5), np.fft.fftfreq(8, d=0.5))
    assert_close(jnp.fft.fftshift(jnp.arange(6)), np.fft.fftshift(np.arange(6)))


def test_histogram_and_padding():
    samples = rng.standard_normal(200).astype(np.float32)
    labels = np.array([0, 3, 3, 1, 0, 3], dtype=np.int32)
    block = np.arange(12, dtype=np.float32).reshape(3, 4)
    modes = ("constant", "edge", "reflect", "symmetric", "wrap")

    @jax.jit
    def program(samples, labels, block):
        counts, edges = jnp.histogram(samples, bins=7, range=(-2.0, 2.0))
        density = jnp.histogram(samples, bins=5, density=True)[0]
        padded = [jnp.pad(block, ((1, 2), (2, 1)), mode=mode) for mode in modes]
        filled = jnp.pad(block, 1, constant_values=-1.0)
        return counts, edges, density, jnp.bincount(labels, length=5), padded, filled

    counts, edges, density, bins, padded, filled = program(samples, labels, block)
    counts_np, edges_np = np.histogram(samples, bins=7, range=(-2.0, 2.0))
    assert_close(counts, counts_np)
    assert_close(edges, edges_np, rtol=1e-6)
    assert_close(density, np.histogram(samples, bins=5, density=True)[0], rtol=1e-4)
    assert_same(bins, [2, 1, 0, 3, 0], np.int32)
    for mode, result in zip(modes, padded, strict=True):
        assert_same(result, np.pad(block, ((1, 2), (2, 1)), mode=mode), np.float32)
    assert_same(filled, np.pad(block, 1, constant_values=-1.0), np.float32)
    # eagerly, the histogram's range may come from the data
    eager_counts, eager_edges = jnp.histogram(samples, bins=4)
    assert_close(eager_counts, np.histogram(samples, bins=4)[0])
    assert_close(eager_edges, np.histogram(samples, bins=4)[1], rtol=1e-5, atol=1e-6)


def test_array_method_chain():
    x = jnp.arange(12.0)
    column_sums = x.reshape(3, 4).T.sum(axis=0).astype(jnp.int32)
    assert_same(column_sums, [6, 22, 38], np.int32)
    assert float(x.mean()) == 5.5
    assert_close(x.reshape(4, 3).std(axis=1), np.arange(12.0).reshape(4, 3).std(axis=1))
    updated = x.at[::3].add(100.0).reshape(2, 6)
    assert int(updated.argmax()) == 9
    assert_same(updated.argmax(axis=1), [3, 3], np.int32)
    assert updated.max(axis=0, keepdims=True).shape == (1, 6)
    chained = jax.jit(lambda v: v.reshape(3, 4).T.ravel().clip(2, 8).round().cumsum()[-1])(x)
    assert float(chained) == float(np.clip(np.arange(12.0).reshape(3, 4).T.ravel(), 2, 8).sum())
    assert x.ndim == 1 and x.size == 12 and x.shape == (12,)
    assert_same(x.astype(bool).sum(), 11, np.int32)
    assert_same(jnp.ones((2, 1, 3)).squeeze().flatten(), np.ones(6), np.float32)
    assert x[3].item() == 3.0 and x.tolist()[:3] == [0.0, 1.0, 2.0]


def test_dtype_rules_end_to_end():
    assert jnp.array(1.0).dtype == np.float32
    assert jnp.zeros(3).dtype == np.float32
    assert jnp.arange(3).dtype == np.int32
    assert jnp.linspace(0, 1, 3).dtype == np.float32
    half = jnp.ones(2, jnp.float16)
    assert (half * 2.0).dtype == np.float16
    small_int = jnp.ones(2, jnp.int8)
    assert (small_int + 3).dtype == np.int8
    mixed = small_int + 3.0
    assert mixed.dtype == np.float32 and mixed.weak_type
    assert (jnp.ones(2) + 1).weak_type is False
    assert jnp.asarray(2.0).weak_type
    assert (jnp.ones(2, jnp.uint8) + jnp.ones(2, jnp.int8)).dtype == np.int16
    assert (jnp.ones(2, jnp.bfloat16) + jnp.ones(2, jnp.float16)).dtype == np.float32
    ints = jnp.ones(2, jnp.int32)
    assert (ints / 2).dtype == np.float32 and (ints // 2).dtype == np.int32
    assert ints.mean().dtype == np.float32 and jnp.sqrt(ints).dtype == np.float32
    scalar_through_jit = jax.jit(lambda v: v)(1.0)
    assert scalar_through_jit.dtype == np.float32 and scalar_through_jit.weak_type
    assert jax.jit(lambda v: v * 2)(half).dtype == np.float16

    with jax.enable_x64(True):
        assert jnp.array(1.0).dtype == np.float64
        assert jnp.arange(3).dtype == np.int64
        assert jnp.zeros(2).dtype == np.float64
        assert jax.jit(lambda v: v * 2)(1.0).dtype == np.float64
        assert (jnp.ones(2, jnp.float32) * 2.0).dtype == np.float32
        precise = jax.jit(lambda v: jnp.sum(v) - 1.0)(jnp.full(3, 1.0 + 1e-12))
        assert precise.dtype == np.float64 and abs(float(precise) - (2.0 + 3e-12)) < 1e-14
    assert jnp.array(1.0).dtype == np.float32


def test_errors_match_jax():
    with pytest.raises(TypeError, match="sin requires ndarray or scalar arguments"):
        jnp.sin([1, 2])
    # same rank: lax's TypeError; different ranks: broadcast_shapes' ValueError
    with pytest.raises(TypeError, match="add got incompatible shapes for broadcasting"):
        jnp.ones(3) + jnp.ones(4)
    with pytest.raises(TypeError, match="mul got incompatible shapes for broadcasting"):
        jax.jit(jnp.multiply)(jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.ones(3) + jnp.ones((2, 4))
    with pytest.raises(TypeError, match="cannot reshape array of shape"):
        jnp.reshape(jnp.ones((3, 4)), (5,))
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(jnp.nonzero)(jnp.ones(3))
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(jnp.unique)(jnp.ones(3))
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError):
        jax.jit(lambda v: v[v > 0])(jnp.ones(3))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(lambda v: v if v > 0 else -v)(1.0)
    with pytest.raises(TypeError):
        jax.jit(lambda n: jnp.zeros(n))(3)
    # concrete boolean masks are fine outside jit
    values = jnp.array([-1.0, 2.0, -3.0, 4.0])
    assert_same(values[values > 0], [2.0, 4.0], np.float32)


def test_statistics_program():
    data = rng.standard_normal((5, 7)).astype(np.float32)
    data_with_nan = data.copy()
    data_with_nan[1, 3] = data_with_nan[4, 0] = np.nan
    weights = rng.random(7).astype(np.float32)

    @jax.jit
    def program(data, data_with_nan, weights):
        order = jnp.argsort(data, axis=1)
        return (
            jnp.median(data, axis=0),
            jnp.percentile(data, jnp.array([10.0, 50.0, 90.0]), axis=1),
            jnp.var(data, axis=1, ddof=1),
            jnp.average(data, axis=1, weights=weights),
            jnp.nanmean(data_with_nan, axis=1),
            jnp.nanmax(data_with_nan),
            jnp.take_along_axis(data, order[:, :2], axis=1),
            jnp.corrcoef(data[:3]),
        )

    results = program(data, data_with_nan, weights)
    order_np = np.argsort(data, axis=1)
    expected = (
        np.median(data, axis=0),
        np.percentile(data, [10.0, 50.0, 90.0], axis=1),
        np.var(data, axis=1, ddof=1),
        np.average(data, axis=1, weights=weights),
        np.nanmean(data_with_nan, axis=1),
        np.nanmax(data_with_nan),
        np.take_along_axis(data, order_np[:, :2], axis=1),
        np.corrcoef(data[:3]),
    )
    for result, reference in zip(results, expected, strict=True):
        assert np.asarray(result).dtype == np.float32
        assert_close(result, reference, rtol=1e-4, atol=1e-5)


def test_grids_interpolation_and_vectorize():
    xs, ys = jnp.meshgrid(jnp.arange(3), jnp.linspace(0.0, 1.0, 2), indexing="ij")
    xs_np, ys_np = np.meshgrid(np.arange(3), np.linspace(0.0, 1.0, 2), indexing="ij")
    assert_same(xs, xs_np, np.int32)
    assert_same(ys, ys_np.astype(np.float32), np.float32)
    knots_x, knots_y = np.array([0.0, 1.0, 3.0]), np.array([2.0, 0.0, 4.0])
    query = np.array([-1.0, 0.5, 2.0, 5.0], np.float32)
    assert_close(jax.jit(jnp.interp)(query, knots_x, knots_y), np.interp(query, knots_x, knots_y))

    @jnp.vectorize
    def clipped_ratio(a, b):
        return jnp.clip(a / b, -1.0, 1.0)

    a = rng.standard_normal((3, 1)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32) + 3.0
    assert_close(clipped_ratio(a, b), np.clip(a / b, -1.0, 1.0), rtol=1e-6)
    outer = jnp.vectorize(jnp.dot, signature="(n),(n)->()")(a * jnp.ones((3, 4)), b)
    assert_close(outer, (a * np.ones((3, 4))) @ b, rtol=1e-5)
    coefficients = jnp.polyfit(knots_x, knots_y, 2)
    assert_close(coefficients, np.polyfit(knots_x, knots_y, 2), rtol=1e-4, atol=1e-4)
    assert_close(jnp.polyval(coefficients, 2.0), np.polyval(np.polyfit(knots_x, knots_y, 2), 2.0))


def test_matrix_decompositions():
    matrix = rng.standard_normal((5, 3)).astype(np.float32)
    rhs = rng.standard_normal(5).astype(np.float32)

    @jax.jit
    def program(a, b):
        u, s, vt = jnp.linalg.svd(a, full_matrices=False)
        q, r = jnp.linalg.qr(a)
        gram = a.T @ a
        return (
            u,
            s,
            vt,
            q,
            r,
            jnp.linalg.lstsq(a, b)[0],
            jnp.linalg.cholesky(gram),
            jnp.linalg.pinv(a),
        )

    u, s, vt, q, r, solution, chol, pinv = program(matrix, rhs)
    assert_close(s, np.linalg.svd(matrix, compute_uv=False), rtol=1e-4)
    assert_close((np.asarray(u) * np.asarray(s)) @ np.asarray(vt), matrix, atol=1e-5)
    assert_close(np.asarray(q) @ np.asarray(r), matrix, atol=1e-5)
    assert_close(np.triu(r), r)
    assert_close(solution, np.linalg.lstsq(matrix, rhs, rcond=None)[0], rtol=1e-4, atol=1e-5)
    assert_close(chol, np.linalg.cholesky(matrix.T.astype(np.float64) @ matrix), rtol=1e-4)
    assert_close(pinv, np.linalg.pinv(matrix), rtol=1e-4, atol=1e-5)
    assert_close(jnp.linalg.matrix_power(np.float32([[1, 1], [1, 0]]), 10), [[89, 55], [55, 34]])


RECORDED_JAXPRS = {
    "sum": (
        lambda a: jnp.sum(a),
        ((3,),),
        """{ lambda ; a:f32[3]. let
    b:f32[] = reduce_sum[axes=(0,) out_sharding=None] a
  in (b,) }""",
    ),
    "dot": (
        jnp.dot,
        ((2, 3), (3,)),
        """{ lambda ; a:f32[2,3] b:f32[3]. let
    c:f32[2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) }""",
    ),
    "slice": (
        lambda a: a[1:, 0],
        ((3, 3),),
        """{ lambda ; a:f32[3,3]. let
    b:f32[2,1] = slice[limit_indices=(3, 1) start_indices=(1, 0) strides=None] a
    c:f32[2] = squeeze[dimensions=(1,)] b
  in (c,) }""",
    ),
    "at_set": (
        lambda a: a.at[0].set(2.0),
        ((3,),),
        """{ lambda ; a:f32[3]. let
    b:i32[1] = broadcast_in_dim 0:i32[]
    c:f32[3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), \
inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), \
scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] a b 2.0:f32[]
  in (c,) }""",
    ),
    "grad": (
        jax.grad(lambda a: jnp.sum(jnp.sin(a) ** 2)),
        ((3,),),
        """{ lambda ; a:f32[3]. let
    b:f32[3] = sin a
    c:f32[3] = cos a
    d:f32[3] = integer_pow[y=2] b
    e:f32[3] = mul 2.0:f32[] b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] d
    f:f32[3] = broadcast_in_dim 1.0:f32[]
    g:f32[3] = mul f e
    h:f32[3] = mul g c
  in (h,) }""",
    ),
}


@pytest.mark.parametrize("name", sorted(RECORDED_JAXPRS))
def test_printed_jaxpr_matches_jax(name):
    program, shapes, recorded = RECORDED_JAXPRS[name]
    assert str(jax.make_jaxpr(program)(*[jnp.ones(shape) for shape in shapes])) == recorded
