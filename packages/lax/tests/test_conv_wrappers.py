"""The convenience convolutions: conv and conv_with_general_padding against the NumPy
reference, conv_transpose against values recorded from JAX 0.10.2 (and its
transpose_kernel form against the gradient of a forward convolution), image patches and
locally connected convolutions."""

import pathlib
import sys

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import vjp

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from conv_reference import ref_conv

rng = np.random.default_rng(3)


def test_conv_and_conv_with_general_padding():
    x = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)
    got = lax.conv(x, w, (2, 1), "VALID", precision="highest")
    np.testing.assert_allclose(
        np.asarray(got), ref_conv(x, w, (2, 1), ((0, 0), (0, 0))), rtol=1e-5, atol=1e-5
    )
    pads = ((1, 2), (0, 1))
    got = lax.conv_with_general_padding(x, w, (1, 2), pads, (2, 1), (1, 2), precision="highest")
    np.testing.assert_allclose(
        np.asarray(got), ref_conv(x, w, (1, 2), pads, (2, 1), (1, 2)), rtol=1e-5, atol=1e-5
    )


# (padding, transpose_kernel, use_consistent_padding, strides, JAX's result) for the input
# [1, 2, 3, 4, 5] and kernel [1, 10, 100] laid out as NHC / HIO.
TRANSPOSE_CASES = [
    ("SAME", False, False, 1, [210, 321, 432, 543, 54]),
    ("SAME", False, False, 2, [100, 10, 201, 20, 302, 30, 403, 40, 504, 50]),
    ("SAME", True, True, 2, [1, 10, 102, 20, 203, 30, 304, 40, 405, 50]),
    ("VALID", False, False, 2, [100, 10, 201, 20, 302, 30, 403, 40, 504, 50, 5]),
    ("VALID", True, False, 1, [1, 12, 123, 234, 345, 450, 500]),
    ("VALID", True, False, 3, [1, 10, 100, 2, 20, 200, 3, 30, 300, 4, 40, 400, 5, 50, 500]),
    ([(1, 2)], False, False, 2, [10, 201, 20, 302, 30, 403, 40, 504, 50, 5]),
    ([(1, 2)], False, True, 2, [10, 201, 20, 302, 30, 403, 40, 504]),
    ([(1, 2)], True, True, 3, [10, 100, 2, 20, 200, 3, 30, 300, 4, 40, 400, 5]),
]


@pytest.mark.parametrize("padding, flip, consistent, stride, want", TRANSPOSE_CASES)
def test_conv_transpose_matches_jax(padding, flip, consistent, stride, want):
    x = (np.arange(5, dtype=np.float32) + 1).reshape(1, 5, 1)
    w = np.array([1.0, 10.0, 100.0], np.float32).reshape(3, 1, 1)
    got = lax.conv_transpose(
        x, w, (stride,), padding, transpose_kernel=flip, use_consistent_padding=consistent
    )
    np.testing.assert_allclose(np.asarray(got).ravel(), want)


def test_conv_transpose_with_flipped_kernel_is_the_gradient_of_conv():
    x = rng.standard_normal((2, 4, 4, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 5, 3)).astype(np.float32)  # HWIO: 5 -> 3 features
    layout = ("NHWC", "HWIO", "NHWC")
    got = lax.conv_transpose(
        x, w, (2, 2), "SAME", dimension_numbers=layout, transpose_kernel=True, precision="highest"
    )
    assert got.shape == (2, 8, 8, 5)

    def forward(y):
        return lax.conv_general_dilated(
            y, w, (2, 2), "SAME", dimension_numbers=layout, precision="highest"
        )

    _, pullback = vjp(forward, np.zeros((2, 8, 8, 5), np.float32))
    np.testing.assert_allclose(np.asarray(got), np.asarray(pullback(x)[0]), rtol=1e-4, atol=1e-4)


def test_conv_transpose_shape_with_dilation_and_layout():
    x, w = np.ones((2, 3, 4, 4), np.float32), np.ones((2, 3, 5, 4), np.float32)
    got = lax.conv_transpose(
        x,
        w,
        (2, 1),
        "SAME",
        rhs_dilation=(1, 2),
        dimension_numbers=("NCHW", "IOHW", "NCHW"),
        transpose_kernel=True,
    )
    assert got.shape == (2, 2, 8, 4)


def test_patches_match_jax():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    p = lax.conv_general_dilated_patches(x, (2, 3), (1, 2), "VALID")
    assert p.shape == (2, 18, 3, 2)
    np.testing.assert_array_equal(
        np.asarray(p)[1, :, 0, 1],
        [62, 63, 64, 67, 68, 69, 82, 83, 84, 87, 88, 89, 102, 103, 104, 107, 108, 109],
    )
    x = np.arange(2 * 4 * 5 * 3, dtype=np.float32).reshape(2, 4, 5, 3)
    p = lax.conv_general_dilated_patches(
        x, (2, 3), (1, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )
    assert p.shape == (2, 4, 3, 18)
    np.testing.assert_array_equal(
        np.asarray(p)[1, 1, 1, :],
        [78, 81, 84, 93, 96, 99, 79, 82, 85, 94, 97, 100, 80, 83, 86, 95, 98, 101],
    )


def test_local_convolution_is_a_per_position_contraction_of_patches():
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((6, 3 * 2 * 2, 3, 4)).astype(np.float32)
    got = lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2), precision="highest")
    patches = np.asarray(lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID"))
    np.testing.assert_allclose(
        np.asarray(got), np.einsum("nkyx,okyx->noyx", patches, w), rtol=1e-4, atol=1e-4
    )
    layout = ("NHWC", "HWIO", "NHWC")
    x = rng.standard_normal((2, 4, 5, 3)).astype(np.float32)
    w = rng.standard_normal((3, 4, 3 * 2 * 2, 6)).astype(np.float32)
    got = lax.conv_general_dilated_local(
        x, w, (1, 1), "VALID", (2, 2), dimension_numbers=layout, precision="highest"
    )
    patches = np.asarray(
        lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID", dimension_numbers=layout)
    )
    assert got.shape == (2, 3, 4, 6)
    np.testing.assert_allclose(
        np.asarray(got), np.einsum("nyxk,yxko->nyxo", patches, w), rtol=1e-4, atol=1e-4
    )
