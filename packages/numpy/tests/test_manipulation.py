"""lamina.numpy shape manipulation against NumPy: reshape/ravel, axis permutations,
unit axes, broadcasting, flips and rotations, roll, resize, trim_zeros (dtypes and
weak types included), under jit and vmap, derivatives, and JAX's errors."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import ConcretizationTypeError, jit, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(0)


def _data(shape, dtype="float32"):
    if np.dtype(dtype) == np.bool_:
        return RNG.integers(0, 2, shape).astype(bool)
    return RNG.integers(-9, 10, shape).astype(dtype)


def _check(result, expected, dtype=None, weak=False):
    expected = np.asarray(expected)
    assert result.shape == expected.shape
    assert result.dtype == (dtype or expected.dtype)
    assert result.weak_type == weak
    np.testing.assert_array_equal(np.asarray(result), expected)


@pytest.mark.parametrize(
    "shape, new_shape, order, dtype",
    [
        ((6,), (2, 3), "C", "float32"),
        ((2, 3), (-1,), "C", "int32"),
        ((2, 3, 4), (4, -1), "F", "float32"),
        ((2, 3), (3, 2), "F", "bool"),
        ((), (1, 1), "C", "int8"),
        ((0, 3), (3, 0), "C", "float32"),
        ((4,), 4, "C", "uint16"),
        ((2, 1, 3), np.array([3, 2]), "C", "float16"),
    ],
)
def test_reshape_matches_numpy(shape, new_shape, order, dtype):
    x = _data(shape, dtype)
    _check(jnp.reshape(x, new_shape, order=order), np.reshape(x, new_shape, order=order))


def test_reshape_keeps_weak_type_and_copy_flag():
    _check(jnp.reshape(3.0, (1, 1)), np.full((1, 1), 3.0, np.float32), weak=True)
    x = _data(4)
    _check(jnp.reshape(x, (2, 2), copy=False), x.reshape(2, 2))


def test_reshape_and_ravel_errors():
    x = _data((6,))
    with pytest.raises(TypeError, match="only specify one unknown axis size"):
        jnp.reshape(x, (-1, -1))
    with pytest.raises(TypeError, match=r"product of specified axis sizes \(4\) does not"):
        jnp.reshape(x, (4, -1))
    with pytest.raises(TypeError, match=r"into shape \(4, 2\) \(size 8\)"):
        jnp.reshape(x, (4, 2))
    with pytest.raises(TypeError, match="concrete values of integer type"):
        jnp.reshape(x, (2.0, 3))
    with pytest.raises(ValueError, match="Unexpected value for 'order'"):
        jnp.reshape(x, (6,), order="K")
    with pytest.raises(NotImplementedError, match="order='A'"):
        jnp.reshape(x, (6,), order="A")
    with pytest.raises(NotImplementedError, match="order='K'"):
        jnp.ravel(x, order="K")
    with pytest.raises(TypeError, match="reshape requires ndarray or scalar arguments"):
        jnp.reshape([1, 2], (2,))
    with pytest.raises(TypeError, match="concrete values"):
        jit(lambda n: jnp.reshape(x, (n, 3)))(2)


@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel(order):
    x = _data((2, 3, 2), "int32")
    _check(jnp.ravel(x, order), np.ravel(x, order))


@pytest.mark.parametrize(
    "fun, np_fun, args",
    [
        (jnp.transpose, np.transpose, ()),
        (jnp.transpose, np.transpose, ((1, 0, 2),)),
        (jnp.transpose, np.transpose, ([-1, 0, 1],)),
        (jnp.permute_dims, np.permute_dims, ((2, 0, 1),)),
        (jnp.matrix_transpose, np.matrix_transpose, ()),
        (jnp.moveaxis, np.moveaxis, (0, -1)),
        (jnp.moveaxis, np.moveaxis, ((0, 1), (2, 0))),
        (jnp.swapaxes, np.swapaxes, (0, -1)),
        (jnp.rollaxis, np.rollaxis, (2, 1)),
        (jnp.rollaxis, np.rollaxis, (0, 3)),
        (jnp.rollaxis, np.rollaxis, (1, -1)),
    ],
)
def test_axis_permutations(fun, np_fun, args):
    x = _data((2, 3, 4), "int16")
    _check(fun(x, *args), np_fun(x, *args))


def test_axis_permutation_errors():
    x = _data((2, 3))
    with pytest.raises(TypeError, match="isn't a permutation of operand dimensions"):
        jnp.transpose(x, (0, 0))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        jnp.transpose(x, (2, 0))
    with pytest.raises(ValueError, match="at least two-dimensional"):
        jnp.matrix_transpose(x[0])
    with pytest.raises(ValueError, match="Inconsistent number of elements: 2 vs 1"):
        jnp.moveaxis(x, (0, 1), (1,))
    with pytest.raises(IndexError, match="out of bounds"):
        jnp.swapaxes(x, 3, 0)
    with pytest.raises(ValueError, match="start=3 must satisfy -2<=start<=2"):
        jnp.rollaxis(x, 0, 3)


def test_expand_dims_and_squeeze():
    x = _data((3,), "int32")
    _check(jnp.expand_dims(x, (0, 2)), np.expand_dims(x, (0, 2)))
    _check(jnp.expand_dims(x, (-1, 0)), np.expand_dims(x, (-1, 0)))
    y = _data((1, 3, 1))
    _check(jnp.squeeze(y), np.squeeze(y))
    _check(jnp.squeeze(y, -1), np.squeeze(y, -1))
    _check(jnp.squeeze(y, (0, 2)), np.squeeze(y, (0, 2)))
    _check(jnp.squeeze(2.5), np.float32(2.5), weak=True)
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.expand_dims(x, (0, 0))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.expand_dims(x, 2)
    with pytest.raises(ValueError, match="size not equal to one"):
        jnp.squeeze(y, 1)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.squeeze(x, 1)


def test_broadcasting():
    x = _data((3,), "int32")
    _check(jnp.broadcast_to(x, (2, 3)), np.broadcast_to(x, (2, 3)))
    _check(jnp.broadcast_to(1.0, 3), np.ones(3, np.float32), weak=True)
    _check(jnp.broadcast_to(_data((0, 1)), (2, 0, 4)), np.zeros((2, 0, 4), np.float32))
    arrays = jnp.broadcast_arrays(x, 1.0, _data((2, 1), "float32"))
    assert [(a.shape, a.dtype, a.weak_type) for a in arrays] == [
        ((2, 3), np.int32, False),
        ((2, 3), np.float32, True),
        ((2, 3), np.float32, False),
    ]
    assert jnp.broadcast_arrays() == []
    assert jnp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert jnp.broadcast_shapes(3, (1,)) == (3,)
    assert jnp.broadcast_shapes() == ()
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.broadcast_shapes((2,), (3,))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.broadcast_arrays(x, _data(4))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        jnp.broadcast_to(x, (4,))
    with pytest.raises(ValueError, match="fewer dimensions"):
        jnp.broadcast_to(x, ())
    with pytest.raises(TypeError, match="broadcast_to requires ndarray"):
        jnp.broadcast_to([1.0], 3)


@pytest.mark.parametrize("fun", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast(fun):
    inputs = [np.float32(1), _data((3,)), _data((2, 3)), _data((2, 1, 3))]
    results = getattr(jnp, fun)(*inputs)
    for result, expected in zip(results, getattr(np, fun)(*inputs), strict=True):
        _check(result, expected)
    _check(getattr(jnp, fun)(2), getattr(np, fun)(np.int32(2)), weak=True)
    assert getattr(jnp, fun)() == []
    with pytest.raises(TypeError, match=f"{fun} requires ndarray"):
        getattr(jnp, fun)([1])


def test_flips_and_rotations():
    x = _data((2, 3, 4), "int32")
    rotations = [(k, (0, 1)) for k in range(-3, 5)] + [(1, (2, 0)), (3, (-1, 1))]

    def flips(a):
        return [jnp.flip(a), jnp.flip(a, (0, 2)), jnp.flip(a, -1), jnp.fliplr(a), jnp.flipud(a)]

    def rotated(a):
        return [jnp.rot90(a, k, axes) for k, axes in rotations]

    expected = [np.flip(x), np.flip(x, (0, 2)), np.flip(x, -1), np.fliplr(x), np.flipud(x)]
    for result, reference in zip(flips(x), expected, strict=True):
        _check(result, reference)
    for result, (k, axes) in zip(jit(rotated)(x), rotations, strict=True):
        _check(result, np.rot90(x, k, axes))
    with pytest.raises(TypeError, match="must be unique"):
        jnp.flip(x, (0, 0))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.fliplr(x[0, 0])
    with pytest.raises(ValueError, match="Axes must be different"):
        jnp.rot90(x, 1, (0, 0))
    with pytest.raises(ValueError, match="ndim at least two"):
        jnp.rot90(x[0, 0])


@pytest.mark.parametrize(
    "shape, shift, axis",
    [
        ((6,), 2, None),
        ((2, 3), -7, None),
        ((2, 3), (1, 2), (0, 1)),
        ((2, 3), 1, (0, 1)),
        ((2, 3), (1, 1), (1, 1)),
        ((0, 3), 2, None),
        ((3, 4), 5, -1),
        ((6,), 1.5, 0),
    ],
)
def test_roll_matches_numpy_static_and_traced(shape, shift, axis):
    x = _data(shape, "float32")
    expected = np.roll(x, np.trunc(shift).astype(int) if isinstance(shift, float) else shift, axis)
    _check(jnp.roll(x, shift, axis), expected)
    if np.ndim(shift) or axis is None:  # a sample, with the shift traced
        traced = jit(lambda a, s: jnp.roll(a, s, axis))(x, np.asarray(shift))
        _check(traced, expected)


def test_roll_grads_and_vmap():
    x = _data((3, 4), "float32")
    check_grads(lambda a: jnp.roll(a, (1, -2), (0, 1)), (x,), order=1, eps=1e-3)
    check_grads(
        lambda a: jit(jnp.roll, static_argnums=2)(a, 3, 1), (x,), order=1, modes=("rev",), eps=1e-3
    )
    shifts = np.array([0, 1, -1, 5], np.int32)
    batched = vmap(lambda a, s: jnp.roll(a, s))(np.stack([x] * 4), shifts)
    for i, s in enumerate(shifts):
        np.testing.assert_array_equal(np.asarray(batched)[i], np.roll(x, s))


@pytest.mark.parametrize("new_shape", [(4, 4), 4, (0,), (2, 0), (7,), ()])
def test_resize(new_shape):
    x = _data((2, 3), "int32")
    _check(jnp.resize(x, new_shape), np.resize(x, new_shape))
    _check(jnp.resize(np.zeros(0, np.float32), new_shape), np.zeros(new_shape, np.float32))


def test_resize_weak_and_errors():
    _check(jnp.resize(1.0, 3), np.ones(3, np.float32), weak=True)
    with pytest.raises(ValueError, match="non-negative"):
        jnp.resize(_data(3), -1)
    with pytest.raises(TypeError, match="resize requires ndarray"):
        jnp.resize([1, 2], (5,))


@pytest.mark.parametrize("trim", ["fb", "f", "b", "F", "x"])
def test_trim_zeros_1d(trim):
    # JAX leaves the array alone for a `trim` without 'f' or 'b' (NumPy raises).
    def reference(a):
        return a if trim == "x" else np.trim_zeros(a, trim)

    x = np.array([0, 0, 3, 0, 4, 0], np.int32)
    _check(jnp.trim_zeros(x, trim), reference(x))
    zeros = np.zeros(3, np.float32)
    _check(jnp.trim_zeros(zeros, trim), reference(zeros))


def test_trim_zeros_nd_and_errors():
    x = np.zeros((4, 5), np.float32)
    x[1, 2], x[2, 3] = 1, 2
    for axis in (None, 0, 1, (0, 1), -1):
        _check(jnp.trim_zeros(x, axis=axis), np.trim_zeros(x, axis=axis))
    _check(jnp.trim_zeros(x, "b", axis=0), np.trim_zeros(x, "b", axis=0))
    with pytest.raises(ConcretizationTypeError, match="trim_zeros"):
        jit(jnp.trim_zeros)(x)


def test_jit_matches_eager_and_vmap_matches_loop():
    x = _data((3, 2, 4), "float32")

    def f(a):
        return [
            jnp.reshape(a, (-1, 4), order="F"),
            jnp.moveaxis(a, 0, -1),
            jnp.expand_dims(jnp.squeeze(jnp.split(a, 2, 1)[0]), 1),
            jnp.broadcast_to(jnp.expand_dims(a, 0), (2, 3, 2, 4)),
            jnp.resize(a, (5, 7)),
        ]

    for eager, jitted in zip(f(x), jit(f)(x), strict=True):
        np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted))
    for fun in (
        lambda a: jnp.rot90(a),
        lambda a: jnp.reshape(a, (8,), order="F"),
        lambda a: jnp.swapaxes(a, 0, 1),
        lambda a: jnp.roll(a, 1, 1),
    ):
        batched = vmap(fun)(x)
        for i in range(3):
            np.testing.assert_array_equal(np.asarray(batched)[i], np.asarray(fun(x[i])))
