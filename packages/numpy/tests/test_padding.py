"""lamina.numpy.pad against NumPy (and values recorded from JAX 0.10.2 where the two
differ) in every mode and every pad-width form: dtypes and weak types, widths past
the array's size, traced constant values, jit, vmap, derivatives and JAX's errors."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import ConcretizationTypeError, jit, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(2)


def _data(shape, dtype="float32"):
    return RNG.integers(-9, 10, shape).astype(dtype)


def _check(result, expected, dtype=None, weak=False, exact=True):
    expected = np.asarray(expected)
    assert result.shape == expected.shape
    assert result.dtype == (dtype or expected.dtype)
    assert result.weak_type == weak
    if exact:
        np.testing.assert_array_equal(np.asarray(result), expected)
    else:
        np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-6, atol=1e-6)


WIDTH_FORMS = [2, (3,), (1, 2), ((2, 0),), ((0, 1), (2, 3)), np.array([[1, 1], [0, 2]]), 0]


@pytest.mark.parametrize("pad_width", WIDTH_FORMS)
def test_constant_pad_width_forms(pad_width):
    x = _data((2, 3), "int32")
    _check(jnp.pad(x, pad_width), np.pad(x, pad_width))


@pytest.mark.parametrize(
    "constant_values",
    [7, 2.7, (5,), (1, 2), ((1, 2),), ((1, 2), (3, 4)), np.array([[1, 2], [3, 4]])],
)
def test_constant_values_forms(constant_values):
    x = _data((2, 3), "float32")
    expected = np.pad(x, ((1, 2), (2, 1)), constant_values=constant_values)
    _check(jnp.pad(x, ((1, 2), (2, 1)), constant_values=constant_values), expected)


def test_constant_dtype_weak_type_and_traced_value():
    i = np.arange(3, dtype=np.int32)
    _check(jnp.pad(i, 1, constant_values=2.7), np.array([2, 0, 1, 2, 2], np.int32))
    _check(jnp.pad(1.0, 2), np.float32(1), weak=True)
    _check(jnp.pad(np.array([True]), 1), np.array([False, True, False]))
    padded = jit(lambda c: jnp.pad(i, 1, constant_values=c))(5)
    _check(padded, np.array([5, 0, 1, 2, 5], np.int32))
    _check(jnp.pad(i, 2, mode="empty"), np.array([0, 0, 0, 1, 2, 0, 0], np.int32))


MODE_CASES = [
    ("edge", {}),
    ("wrap", {}),
    ("reflect", {}),
    ("symmetric", {}),
    ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {"reflect_type": "odd"}),
    ("linear_ramp", {"end_values": (4, -3)}),
    ("linear_ramp", {"end_values": ((1, 2), (3.5, -1))}),
    ("maximum", {}),
    ("minimum", {"stat_length": 2}),
    ("mean", {"stat_length": ((1, 3), (2, 9))}),
    ("median", {}),
    ("median", {"stat_length": (2, 3)}),
    ("mean", {}),
]


@pytest.mark.parametrize("mode, options", MODE_CASES)
def test_modes_match_numpy_float(mode, options):
    x = _data((3, 4), "float32")
    widths = ((2, 3), (1, 0))
    expected = np.pad(x, widths, mode, **options).astype(np.float32)
    exact = mode not in ("linear_ramp", "mean")
    _check(jnp.pad(x, widths, mode, **options), expected, exact=exact)


@pytest.mark.parametrize(
    "mode, options", [c for c in MODE_CASES if c[0] in ("wrap", "reflect", "symmetric")]
)
def test_widths_past_the_array(mode, options):
    # Several periods of the array; the 'even' ones take the gather route.
    x = _data((3, 2), "float32")
    widths = ((7, 9), (40, 3))
    _check(jnp.pad(x, widths, mode, **options), np.pad(x, widths, mode, **options))


# Integer arithmetic matters where values are computed (odd reflections, rounded
# statistics); the other modes only move elements.
ONE_D_CASES = [
    ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {"reflect_type": "odd"}),
    ("maximum", {}),
    ("mean", {"stat_length": 3}),
    ("median", {}),
]


@pytest.mark.parametrize("mode, options", ONE_D_CASES)
def test_modes_match_numpy_int(mode, options):
    x = _data((4,), "int32")
    _check(jnp.pad(x, (5, 6), mode, **options), np.pad(x, (5, 6), mode, **options))


def test_values_recorded_from_jax():
    # Where NumPy differs (integer ramps floor, integer means round half to even) or
    # raises, these are JAX 0.10.2's results.
    i = np.arange(3, dtype=np.int32)
    ramp = jnp.pad(i, (4, 3), mode="linear_ramp", end_values=(10, -5))
    _check(ramp, np.array([10, 7, 5, 2, 0, 1, 2, -1, -3, -5], np.int32))
    ramp = jnp.pad(np.array([1.0, 2.0], np.float32), 3, mode="linear_ramp")
    expected = [0.0, 0.33333334, 0.6666667, 1.0, 2.0, 1.3333334, 0.6666667, 0.0]
    _check(ramp, np.array(expected, np.float32))
    _check(jnp.pad(np.array([1, 2, 2], np.int32), 2, "mean"), np.array([2, 2, 1, 2, 2, 2, 2], "i4"))
    _check(jnp.pad(np.array([1, 2], np.uint8), 2, "mean"), np.array([2, 2, 1, 2, 2, 2], np.uint8))
    odd = jnp.pad(np.array([1, 5], np.uint8), 3, mode="reflect", reflect_type="odd")
    _check(odd, np.array([245, 249, 253, 1, 5, 9, 13, 17], np.uint8))
    _check(jnp.pad(np.array([5], np.int32), 3, "reflect"), np.full(7, 5, np.int32))
    _check(jnp.pad(np.array([True, False]), 1, mode="mean"), np.array([True, True, False, True]))
    median = jnp.pad(np.array([1.0, np.nan, 3.0], np.float32), 1, "median")
    np.testing.assert_array_equal(np.asarray(median), [np.nan, 1, np.nan, 3, np.nan])


def test_callable_mode():
    def fill(row, widths, axis, kwargs):
        inside = np.zeros(row.shape, np.float32)
        inside[widths[0] : row.shape[0] - widths[1]] = 1
        return row * inside + (1 - inside) * (kwargs.get("value", 0.0) + axis)

    x = _data((2, 3), "float32")

    def reference(row, widths, axis, kwargs):
        row[: widths[0]] = kwargs.get("value", 0.0) + axis
        row[row.shape[0] - widths[1] :] = kwargs.get("value", 0.0) + axis

    _check(jnp.pad(x, ((1, 2), (2, 1)), fill, value=5.0),
           np.pad(x, ((1, 2), (2, 1)), reference, value=5.0))  # fmt: skip
    # Applied along each axis in turn (NumPy's protocol, with the row returned).
    _check(jnp.pad(x, 1, lambda row, *_: row + 1), np.pad(x, 1) + 2)


def test_zero_d_and_empty_axes():
    _check(jnp.pad(np.float32(3), 2, "reflect"), np.float32(3))
    empty = np.zeros((0, 2), np.float32)
    _check(jnp.pad(empty, 1), np.zeros((2, 4), np.float32))
    _check(jnp.pad(empty, ((0, 0), (1, 1)), "edge"), np.zeros((0, 4), np.float32))
    for mode in ("edge", "wrap", "reflect", "symmetric", "linear_ramp"):
        with pytest.raises(ValueError, match=f"Cannot apply '{mode}' padding to empty axis"):
            jnp.pad(empty, 1, mode)
    with pytest.raises(ValueError, match="empty array"):
        jnp.pad(empty, ((0, 0), (1, 1)), "maximum")


def test_pad_errors():
    i = np.arange(3, dtype=np.int32)
    x = _data((2, 3))
    with pytest.raises(ValueError, match="index can't contain negative values"):
        jnp.pad(i, -1)
    with pytest.raises(TypeError, match="`pad_width` must be of integral type"):
        jnp.pad(i, 1.5)
    with pytest.raises(TypeError, match="entries must be the same shape"):
        jnp.pad(x, ((1, 2), (1,)))
    with pytest.raises(ValueError, match=r"unsupported shape \(3, 2\)"):
        jnp.pad(x, ((1, 2), (1, 2), (3, 4)))
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode 'foo'"):
        jnp.pad(i, 1, mode="foo")
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        jnp.pad(i, 1, mode="edge", constant_values=3)
    with pytest.raises(ValueError, match="stat_length of 0"):
        jnp.pad(x, 1, mode="median", stat_length=0)
    with pytest.raises(ValueError, match="constant_values has unsupported shape"):
        jnp.pad(x, 1, constant_values=(5, 6, 7))
    with pytest.raises(ValueError, match="reflect_type"):
        jnp.pad(i, 1, mode="reflect", reflect_type="neither")
    with pytest.raises(ConcretizationTypeError, match=r"pad_width argument of jnp\.pad"):
        jit(lambda p: jnp.pad(i, p))(1)
    with pytest.raises(TypeError, match="pad requires ndarray"):
        jnp.pad([1, 2], 1)


def test_jit_and_vmap():
    x = _data((3, 4))

    def padded(a):
        return [jnp.pad(a, ((1, 5), (2, 0)), mode, **options) for mode, options in MODE_CASES[:4]]

    for jitted, eager in zip(jit(padded)(x), padded(x), strict=True):
        np.testing.assert_array_equal(np.asarray(jitted), np.asarray(eager))
    for mode, options in [("reflect", {"reflect_type": "odd"}), ("median", {}), ("wrap", {})]:
        batched = vmap(lambda row, m=mode, o=options: jnp.pad(row, (2, 3), m, **o))(x)
        np.testing.assert_array_equal(
            np.asarray(batched), np.stack([np.pad(row, (2, 3), mode, **options) for row in x])
        )
    constant = vmap(lambda c: jnp.pad(x, 1, constant_values=c))(np.arange(2, dtype=np.float32))
    for c in range(2):
        np.testing.assert_array_equal(np.asarray(constant)[c], np.pad(x, 1, constant_values=c))


GRAD_CASES = [
    ("constant", {"constant_values": ((1.0, 2.0), (3.0, 4.0))}),
    ("edge", {}),
    ("wrap", {}),
    ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {}),
    ("linear_ramp", {"end_values": (1.0, -2.0)}),
    ("mean", {"stat_length": 2}),
    ("maximum", {}),
    ("median", {}),
]


def test_pad_grads():
    # Distinct values, so that maximum and median have unique derivatives.
    x = RNG.permutation(12).astype(np.float32).reshape(3, 4)

    def padded(a):
        return [jnp.pad(a, ((2, 1), (5, 3)), mode, **options) for mode, options in GRAD_CASES]

    check_grads(jit(padded), (x,), order=1, modes=("rev",), eps=1e-3)
    check_grads(lambda a: jnp.pad(a, (1, 2), "reflect"), (x,), order=2, modes=("rev",), eps=1e-3)


def test_pad_grad_of_traced_constant_value():
    x = _data((2, 2))
    check_grads(lambda c: jnp.pad(x, 1, constant_values=c), (np.float32(1.5),), order=2)
