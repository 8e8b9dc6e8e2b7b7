"""lamina.numpy selection against NumPy: where, select, choose, piecewise, nonzero,
argwhere, flatnonzero, compress, extract, take, take_along_axis, put, put_along_axis,
place and fill_diagonal; dtypes and weak types (recorded from JAX 0.10.2), size= and
fill_value= under jit, the ConcretizationTypeError without size, vmap, gradients and
errors."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import ConcretizationTypeError, enable_x64, jit, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(2)
X = RNG.standard_normal((3, 4)).astype(np.float32)


def assert_same(got, want, dtype=None):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == (want.dtype if dtype is None else dtype), got.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def test_where_three_arguments():
    cond = X > 0
    assert_same(jnp.where(cond, X, 0.0), np.where(cond, X, 0.0))
    assert_same(jnp.where(cond[:, :1], X, X[0]), np.where(cond[:, :1], X, X[0]))
    # Recorded from JAX 0.10.2: weak Python scalars and promotion.
    out = jnp.where(True, 1, 2.0)
    assert out.dtype == np.float32 and out.weak_type and out.shape == ()
    out = jnp.where(np.array([True]), 1, np.float16(2))
    assert out.dtype == np.float16 and not out.weak_type
    assert jnp.where(np.array([1, 0]), np.int8(3), np.int16(4)).dtype == np.int16
    check_grads(lambda x: jnp.where(x > 0, x * x, -x), (X,), order=2, modes=("rev",))
    batched = vmap(lambda c, x: jnp.where(c, x, -1.0))(cond, X)
    assert_same(batched, np.where(cond, X, -1.0))


def test_where_one_argument_is_nonzero():
    x = np.array([[0, 2, 0], [3, 0, 4]], np.int32)
    for got, want in zip(jnp.where(x), np.nonzero(x), strict=True):
        assert_same(got, want, np.int32)
    with pytest.raises(ValueError, match="cannot be used in three-term where"):
        jnp.where(x > 0, 1, 2, size=3)
    with pytest.raises(TypeError, match="where requires ndarray or scalar arguments"):
        jnp.where(x > 0, 1)


@pytest.mark.parametrize(
    "x",
    [
        np.array([0.0, 1.5, 0.0, np.nan, -2.0], np.float32),
        RNG.integers(0, 2, (3, 4, 2)).astype(np.int8),
        RNG.integers(0, 2, (4, 3)).astype(np.bool_),
        np.zeros((2, 0, 3), np.float32),
        (RNG.integers(0, 2, (5,)) * 1j).astype(np.complex64),
    ],
    ids=lambda x: f"{x.dtype}{x.shape}",
)
def test_nonzero_argwhere_flatnonzero(x):
    for got, want in zip(jnp.nonzero(x), np.nonzero(x), strict=True):
        assert_same(got, want, np.int32)
    assert_same(jnp.argwhere(x), np.argwhere(x), np.int32)
    assert_same(jnp.flatnonzero(x), np.flatnonzero(x), np.int32)


def test_nonzero_with_size_under_jit():
    x = np.array([[0, 2, 0], [3, 0, 4]], np.int32)
    rows, cols = np.nonzero(x)

    def padded(x):
        return (
            jnp.nonzero(x, size=5, fill_value=-1),
            jnp.nonzero(x, size=2),
            jnp.nonzero(x, size=4, fill_value=(7, 8)),
            jnp.argwhere(x, size=4, fill_value=9),
            jnp.flatnonzero(x, size=4),
        )

    longer, shorter, tupled, argw, flat = jit(padded)(x)
    assert_same(longer[0], np.r_[rows, -1, -1].astype(np.int32))
    assert_same(longer[1], np.r_[cols, -1, -1].astype(np.int32))
    assert_same(shorter[1], cols[:2].astype(np.int32))
    assert_same(tupled[0], np.r_[rows, 7].astype(np.int32))
    assert_same(tupled[1], np.r_[cols, 8].astype(np.int32))
    assert_same(argw, np.r_[np.argwhere(x), [[9, 9]]].astype(np.int32))
    assert_same(flat, np.r_[np.flatnonzero(x), 0].astype(np.int32))
    assert jnp.argwhere(np.array(3)).shape == (1, 0)
    with pytest.raises(ConcretizationTypeError, match=r"size argument of jnp\.nonzero must be"):
        jit(jnp.nonzero)(x)
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        jnp.nonzero(np.array(1))
    with pytest.raises(ValueError, match="fill_value must be a scalar or a tuple of length 2"):
        jnp.nonzero(x, size=2, fill_value=(1, 2, 3))
    got = vmap(lambda r: jnp.nonzero(r, size=3, fill_value=-1)[0])(x)
    assert_same(got, np.array([[1, -1, -1], [0, 2, -1]], np.int32))


def test_select():
    conds = [X > 0.5, X < -0.5]
    choices = [X * 2, X - 1]
    assert_same(jnp.select(conds, choices, -7.0), np.select(conds, choices, -7.0))
    assert_same(jnp.select(conds, [1, 2]), np.select(conds, [1, 2]).astype(np.int32))
    # Recorded from JAX 0.10.2: weak types survive.
    out = jnp.select([np.array([True, False])], [1.0])
    assert out.dtype == np.float32 and out.weak_type
    out = jnp.select([np.array([True, False])], [np.array([1, 2], np.int32)], 2.5)
    assert out.tolist() == [1.0, 2.5] and out.dtype == np.float32 and out.weak_type
    check_grads(lambda x: jnp.select([x > 0.5, x < -0.5], [x * x, x], 3.0), (X,), 1, modes="rev")
    with pytest.raises(ValueError, match="condlist must have length equal to choicelist"):
        jnp.select([X > 0], [])
    with pytest.raises(ValueError, match="condlist must be non-empty"):
        jnp.select([], [])


def test_choose():
    a = np.array([[0, 2, 1, 3], [4, -1, 2, 0], [1, 1, 0, 5]], np.int32)
    choices = [X, X + 10, np.float32(-1), X[0] * 3]
    for mode in ("wrap", "clip"):
        assert_same(jnp.choose(a, choices, mode=mode), np.choose(a, choices, mode=mode))
    ok = np.clip(a, 0, 3)
    assert_same(jnp.choose(ok, choices), np.choose(ok, choices))
    assert_same(jnp.choose(ok, np.stack([X, -X, X * 2, X])), np.choose(ok, [X, -X, X * 2, X]))
    assert jnp.choose(np.array([0, 1, 0]), [np.array([1, 2, 3]), 5]).tolist() == [1, 5, 3]
    check_grads(lambda x: jnp.choose(ok, [x, x * x, -x, 2 * x]), (X,), 2, modes="rev")
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        jnp.choose(a, choices)
    with pytest.raises(ConcretizationTypeError, match="mode='wrap' or mode='clip'"):
        jit(lambda a: jnp.choose(a, choices))(ok)
    with pytest.raises(ValueError, match="must be integer typed"):
        jnp.choose(X, choices)
    with pytest.raises(ValueError, match="not understood"):
        jnp.choose(ok, choices, mode="x")


def test_piecewise():
    x = np.linspace(-3, 3, 12).astype(np.float32)
    conds = [x < -1, x > 1]
    funcs = [lambda v: 1 + v, lambda v: v * v, 0.5]
    assert_same(jnp.piecewise(x, conds, funcs), np.piecewise(x, conds, funcs))
    assert_same(jnp.piecewise(x, conds, funcs[:2]), np.piecewise(x, conds, funcs[:2]))
    ints = np.arange(-4, 5, dtype=np.int32)
    got = jnp.piecewise(ints, [ints < 0, ints >= 0], [lambda v: 0 * v, lambda v: v])
    assert_same(got, np.piecewise(ints, [ints < 0, ints >= 0], [lambda v: 0 * v, lambda v: v]))
    # The last true condition wins, as in NumPy.
    both = [x < 1, x > -1]
    assert_same(jnp.piecewise(x, both, [1.0, 2.0]), np.piecewise(x, both, [1.0, 2.0]))
    scaled = jit(lambda x, s: jnp.piecewise(x, [x > 0], [lambda v, s: v * s, -1.0], s))(x, 3.0)
    assert_same(scaled, np.where(x > 0, x * 3.0, -1.0).astype(np.float32))
    check_grads(lambda x: jnp.piecewise(x, [x < -1, x > 1], [jnp.sin, lambda v: v**3]), (x,), 1)
    with pytest.raises(ValueError, match="either 1 or 2 functions are expected; got 3"):
        jnp.piecewise(x, [x > 0], [1, 2, 3])


def test_compress_and_extract():
    cond = np.array([1, 0, 1, 1, 0], np.int32)
    a = np.arange(20, dtype=np.float32).reshape(5, 4)
    assert_same(jnp.compress(cond, a, axis=0), np.compress(cond, a, axis=0))
    assert_same(jnp.compress(cond[:4], a, axis=1), np.compress(cond[:4], a, axis=1))
    assert_same(jnp.compress(cond[:3], a), np.compress(cond[:3], a))
    assert_same(jnp.extract(a > 7, a), np.extract(a > 7, a))
    assert_same(
        jnp.compress(np.array([1, 0, 1, 0, 0]), np.arange(3.0)), np.array([0.0, 2.0], np.float32)
    )

    def padded(cond, a):
        return (
            jnp.compress(cond, a, axis=0, size=4, fill_value=-1),
            jnp.compress(cond, a, axis=0, size=2),
            jnp.extract(a > 17, a, size=3, fill_value=9),
        )

    longer, shorter, extracted = jit(padded)(cond, a)
    assert_same(longer, np.r_[a[cond == 1], np.full((1, 4), -1, np.float32)])
    assert_same(shorter, a[cond == 1][:2])
    assert_same(extracted, np.array([18.0, 19.0, 9.0], np.float32))
    with pytest.raises(ConcretizationTypeError, match="pass size="):
        jit(lambda c: jnp.compress(c, a, axis=0))(cond)
    with pytest.raises(ValueError, match="condition must be a 1D array"):
        jnp.compress(np.ones((1, 1)), a)
    with pytest.raises(ValueError, match="condition contains entries that are out of bounds"):
        jnp.compress(np.ones(6), a, axis=0)
    with pytest.raises(ValueError, match="size must be positive and not greater"):
        jnp.extract(np.array([1, 0, 1]), np.array([4.0, 5.0, 6.0]), size=4)


def test_take():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    idx = np.array([[0, 2], [1, 1]], np.int32)
    for axis, mode in ((None, None), (0, "wrap"), (1, "clip"), (-1, "fill")):
        ref_mode = "raise" if mode in (None, "fill") else mode
        assert_same(jnp.take(a, idx, axis=axis, mode=mode), np.take(a, idx, axis, mode=ref_mode))
    far = np.array([-5, 7, -1], np.int32)
    assert_same(jnp.take(a, far, axis=2, mode="wrap"), np.take(a, far, 2, mode="wrap"))
    assert_same(jnp.take(a, far, axis=2, mode="clip"), np.take(a, far, 2, mode="clip"))
    # Recorded from JAX 0.10.2: out-of-range indices give NaN, INT_MIN or True by default.
    assert jnp.take(np.arange(4), np.array([-1, 5, 2])).tolist() == [3, -(2**31), 2]
    assert np.isnan(np.asarray(jnp.take(np.arange(4.0), np.array([-5, 5])))).all()
    assert jnp.take(np.array([True]), np.array([3])).tolist() == [True]
    assert jnp.take(np.arange(4.0), np.array([9]), fill_value=-2.0).tolist() == [-2.0]
    assert jnp.take(a, np.zeros((0,), np.int32), axis=1).shape == (2, 0, 4)
    rows = np.array([[0, 3], [-1, 2], [1, 1]], np.int32)
    got = vmap(lambda row, i: jnp.take(row, i))(a[0], rows)
    assert_same(got, np.stack([np.take(r, i) for r, i in zip(a[0], rows, strict=True)]))
    check_grads(lambda x: jnp.take(x, np.array([2, 0, 2]), axis=1), (X,), 2, modes="rev")
    with pytest.raises(NotImplementedError, match=r"'raise' mode to jnp.take"):
        jnp.take(a, idx, mode="raise")
    with pytest.raises(ValueError, match="Invalid mode 'x'"):
        jnp.take(a, idx, mode="x")
    with pytest.raises(IndexError, match=r"non-empty jnp.take"):
        jnp.take(np.zeros((0,)), np.array([0]))


def test_take_along_axis():
    a = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    idx = RNG.integers(-5, 5, (3, 4, 2)).astype(np.int32)
    assert_same(jnp.take_along_axis(a, idx, axis=-1), np.take_along_axis(a, idx, axis=-1))
    idx0 = RNG.integers(0, 3, (2, 1, 5)).astype(np.int8)
    want = np.take_along_axis(a, idx0.astype(np.int64), axis=0)
    assert_same(jnp.take_along_axis(a, idx0, axis=0), want)
    flat = np.array([0, 59, -1], np.int32)
    assert_same(jnp.take_along_axis(a, flat, axis=None), np.take_along_axis(a, flat, None))
    onehot = jnp.take_along_axis(a, idx, axis=-1, mode="one_hot")
    np.testing.assert_allclose(np.asarray(onehot), np.take_along_axis(a, idx, axis=-1))
    got = jnp.take_along_axis(np.arange(4.0), np.array([-1, 7]), axis=0)
    assert np.asarray(got)[0] == 3.0 and np.isnan(np.asarray(got)[1])
    got = jnp.take_along_axis(np.arange(4.0), np.array([9]), axis=0, mode="clip")
    assert got.tolist() == [3.0]
    check_grads(lambda x: jnp.take_along_axis(x, idx, axis=-1), (a,), 2, modes="rev")
    got = vmap(lambda x, i: jnp.take_along_axis(x, i, axis=1))(a, idx)
    want = np.stack([np.take_along_axis(x, i, 1) for x, i in zip(a, idx, strict=True)])
    assert_same(got, want)
    with pytest.raises(ValueError, match=r"same number of dimensions; 1 vs. 2"):
        jnp.take_along_axis(np.ones((2, 2)), np.ones((2,), np.int32), axis=0)
    with pytest.raises(TypeError, match="indices must be of integer type, got float32"):
        jnp.take_along_axis(np.ones(2), np.ones(2, np.float32), axis=0)


def test_put_and_put_along_axis():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    for mode in ("clip", "wrap"):
        want = a.copy()
        np.put(want, [1, 14, -15], [70, 80, 90], mode=mode)
        got = jnp.put(a, np.array([1, 14, -15]), np.array([70, 80, 90]), mode=mode, inplace=False)
        assert_same(got, want)
    # Recorded from JAX 0.10.2: by default out-of-range indices are clipped.
    got = jnp.put(np.arange(6), np.array([100, -1, -100]), np.array([7, 8, 9]), inplace=False)
    assert got.tolist() == [9, 1, 2, 3, 4, 8]
    got = jnp.put(np.zeros(5, np.float32), np.array([0, 2, 4]), 1.5, inplace=False)
    assert got.tolist() == [1.5, 0, 1.5, 0, 1.5]
    idx = np.array([[1], [0], [3]], np.int32)
    want = a.copy()
    np.put_along_axis(want, idx, -1, axis=1)
    assert_same(jnp.put_along_axis(a, idx, -1, axis=1, inplace=False), want)
    idx = np.array([[2, 0, 1, 2]], np.int32)
    want = a.copy()
    np.put_along_axis(want, idx, np.array([[5, 6, 7, 8]]), axis=0)
    got = jnp.put_along_axis(a, idx, np.array([[5, 6, 7, 8]]), axis=0, inplace=False)
    assert_same(got, want)
    got = jnp.put_along_axis(a, np.array([0, -1]), 0, axis=None, inplace=False)
    assert_same(got, np.r_[0, np.arange(1, 11), 0].reshape(3, 4).astype(np.int32))
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
        jnp.put(a, 0, 1)
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
        jnp.put_along_axis(a, idx, 1, axis=0)
    with pytest.raises(NotImplementedError, match=r"'raise' mode to jnp.put"):
        jnp.put(a, 0, 1, mode="raise", inplace=False)
    with pytest.raises(ValueError, match="must be broadcastable to 'indices'"):
        jnp.put_along_axis(a, idx, np.ones(3), axis=0, inplace=False)


def test_place_and_fill_diagonal():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    mask = (a % 3) == 1
    want = a.copy()
    np.place(want, mask, [-1.0, -2.0])
    assert_same(jnp.place(a, mask, np.array([-1.0, -2.0]), inplace=False), want)
    placed = jit(lambda a, m: jnp.place(a, m, np.array([5.0]), inplace=False))(a, mask)
    assert_same(placed, np.where(mask, 5.0, a).astype(np.float32))
    for shape, val in (((3, 4), 7.0), ((4, 3), np.array([1.0, 2.0])), ((3, 3, 3), -1.0)):
        want = np.zeros(shape, np.float32)
        np.fill_diagonal(want, val)
        assert_same(jnp.fill_diagonal(np.zeros(shape, np.float32), val, inplace=False), want)
    check_grads(lambda x: jnp.fill_diagonal(x, 2.0, inplace=False), (X,), 1, modes="rev")
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
        jnp.place(a, mask, np.ones(2))
    with pytest.raises(ValueError, match="Cannot place values from an empty array"):
        jnp.place(a, mask, np.ones(0), inplace=False)
    with pytest.raises(NotImplementedError, match="must use inplace=False"):
        jnp.fill_diagonal(a, 1.0)
    with pytest.raises(ValueError, match="All dimensions of input must be of equal length"):
        jnp.fill_diagonal(np.zeros((2, 3, 3)), 1.0, inplace=False)


def test_weak_types_and_x64_dtypes():
    weak = jnp.where(np.array([True, False]), 1.0, 2.0)
    # Recorded from JAX 0.10.2: selections of weakly typed values stay weak.
    for out in (
        jnp.compress(np.array([True, False]), weak),
        jnp.take(weak, np.array([0])),
        jnp.take_along_axis(weak, np.array([1]), axis=0),
        jnp.put(weak, np.array([0]), 5, inplace=False),
        jnp.where(np.array([True, False]), 1, 2),
        jnp.select([np.array([True, False])], [1], 0),
    ):
        assert out.weak_type, out
    assert not jnp.choose(np.array([0, 1]), [1, 2]).weak_type
    with enable_x64(True):
        x = np.array([0.0, 2.0, 3.0])
        assert jnp.nonzero(x)[0].dtype == jnp.argwhere(x).dtype == np.int64
        assert jnp.where(x > 1, x, 0).dtype == np.float64
