"""lamina.scipy.ndimage.map_coordinates against scipy.ndimage: orders 0 and 1 in every
supported mode, integer input, float64, gradients, jit, vmap and JAX's errors."""

import numpy as np
import pytest
import scipy.ndimage

from lamina.interpreters import enable_x64, jit, vmap
from lamina.interpreters.test_util import check_grads
from lamina.scipy import ndimage

RNG = np.random.default_rng(0)
IMAGE = RNG.standard_normal((5, 7)).astype(np.float32)
# Coordinates inside and outside the image, away from the half-integers where
# rounding conventions differ.
COORDS = [
    np.array([-2.3, -0.6, 0.0, 1.2, 2.7, 4.0, 4.4, 6.2, 7.9], np.float32),
    np.array([9.1, -1.3, 3.3, 0.8, 6.0, 2.2, 7.6, -3.4, 5.9], np.float32),
]
MODES = ["reflect", "constant", "nearest", "mirror", "wrap"]


@pytest.mark.parametrize("order", [0, 1])
def test_matches_scipy(order):
    for mode in MODES:
        got = ndimage.map_coordinates(IMAGE, COORDS, order, mode=mode, cval=1.5)
        assert got.dtype == np.float32
        # JAX's 'wrap' is SciPy's 'grid-wrap' (recorded from JAX 0.10.2).
        scipy_mode = "grid-wrap" if mode == "wrap" else mode
        want = scipy.ndimage.map_coordinates(IMAGE, COORDS, order=order, mode=scipy_mode,
                                             cval=1.5)  # fmt: skip
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=mode)


def test_integer_input_rounds_and_float64():
    image = np.arange(35, dtype=np.int32).reshape(5, 7)
    coords = [c[[2, 3, 4, 5]] for c in COORDS]
    got = ndimage.map_coordinates(image, coords, 1, mode="nearest")
    assert got.dtype == np.int32
    want = scipy.ndimage.map_coordinates(image, coords, order=1, mode="nearest")
    np.testing.assert_array_equal(got, want)
    image, coords = IMAGE.astype(np.float64), [c.astype(np.float64) for c in COORDS]
    with enable_x64():
        got = ndimage.map_coordinates(image, coords, 1, mode="mirror")
        assert got.dtype == np.float64
        want = scipy.ndimage.map_coordinates(image, coords, order=1, mode="mirror")
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_gradients_jit_and_vmap():
    coords = [c[[1, 3, 4, 6]] for c in COORDS]  # off the integers, where it has kinks
    check_grads(lambda im, c: ndimage.map_coordinates(im, [c, coords[1]], 1, mode="wrap"),
                (IMAGE, coords[0]), order=1, atol=1e-2, rtol=1e-2)  # fmt: skip
    got = jit(lambda im: ndimage.map_coordinates(im, COORDS, 1, mode="reflect"))(IMAGE)
    want = scipy.ndimage.map_coordinates(IMAGE, COORDS, order=1, mode="reflect")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    batch = np.stack([IMAGE, -IMAGE])
    got = vmap(lambda im: ndimage.map_coordinates(im, COORDS, 0))(batch)
    want = [scipy.ndimage.map_coordinates(im, COORDS, order=0, mode="constant") for im in batch]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_errors():
    # Messages recorded from JAX 0.10.2 (the order of the set of modes varies with
    # string hashing).
    with pytest.raises(NotImplementedError, match=r"does not yet support mode grid-wrap\. "
                       "Currently supported modes are {'"):  # fmt: skip
        ndimage.map_coordinates(IMAGE, COORDS, 1, mode="grid-wrap")
    with pytest.raises(NotImplementedError, match="map_coordinates currently requires order<=1"):
        ndimage.map_coordinates(IMAGE, COORDS, 3)
    with pytest.raises(ValueError, match=r"coordinates must be a sequence of length input\.ndim, "
                       "but 1 != 2"):  # fmt: skip
        ndimage.map_coordinates(IMAGE, COORDS[:1], 1)
