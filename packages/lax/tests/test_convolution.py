"""conv_general_dilated against a NumPy convolution written from the definition
(conv_reference.py), in every layout and with strides, padding, dilations and groups;
the dimension-number and padding helpers and the wrappers against values recorded from
JAX 0.10.2; JAX's errors; the Jaxprs JAX prints."""

import pathlib
import sys

import ml_dtypes
import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import grad, jit, make_jaxpr

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from conv_reference import ref_conv

from lamina.ir import parse_jaxpr

rng = np.random.default_rng(7)


def data(shape, dtype=np.float32):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-3, 4, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def to_layout(x, spec):
    """An ``N, C, spatial...`` array laid out as ``spec`` (a ConvDimensionNumbers spec)."""
    perm = [0] * x.ndim
    for i, axis in enumerate(spec):
        perm[axis] = i
    return np.transpose(x, perm)


# (lhs NC.. shape, rhs OI.. shape, strides, padding, lhs_dilation, rhs_dilation, fgc, bgc)
CASES = [
    ((2, 3, 6, 5), (4, 3, 3, 2), (1, 1), ((0, 0), (0, 0)), None, None, 1, 1),
    ((2, 4, 5, 6), (6, 2, 3, 2), (2, 1), ((1, 0), (2, 1)), (1, 2), (2, 1), 2, 1),
    ((4, 3, 5, 6), (6, 3, 3, 2), (1, 2), ((1, -1), (0, 2)), None, (1, 2), 1, 2),
    ((2, 3, 7), (4, 3, 3), (3,), ((-1, 2),), (2,), None, 1, 1),
    ((1, 2, 4, 4, 3), (2, 2, 2, 1, 2), (1, 1, 2), ((0, 0), (1, 1), (0, 1)), None, None, 1, 1),
    ((2, 6, 5), (6, 1, 3), (1,), ((1, 1),), None, None, 6, 1),  # depthwise
    ((3, 2), (4, 2), (), (), None, None, 1, 1),  # no spatial axes
]


@pytest.mark.parametrize("case", CASES)
def test_values_default_layout(case):
    ls, rs, strides, pads, ld, rd, fgc, bgc = case
    x, w = data(ls), data(rs)
    got = lax.conv_general_dilated(
        x,
        w,
        strides,
        pads,
        ld,
        rd,
        feature_group_count=fgc,
        batch_group_count=bgc,
        precision="highest",
    )
    want = ref_conv(x, w, strides, pads, ld, rd, fgc, bgc)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


LAYOUTS = [
    ("NHWC", "HWIO", "NHWC"),
    ("NCHW", "OIHW", "NHWC"),
    ("HWNC", "OHWI", "CNHW"),
    ("NWHC", "HWIO", "WNHC"),
]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_values_string_layouts(layout):
    ls, rs, strides, pads, ld, rd, fgc, bgc = CASES[1]
    x, w = data(ls), data(rs)
    numbers = lax.conv_dimension_numbers(ls, rs, layout)
    got = lax.conv_general_dilated(
        to_layout(x, numbers.lhs_spec),
        to_layout(w, numbers.rhs_spec),
        strides,
        pads,
        ld,
        rd,
        layout,
        feature_group_count=fgc,
        precision="highest",
    )
    want = to_layout(ref_conv(x, w, strides, pads, ld, rd, fgc, bgc), numbers.out_spec)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_conv_dimension_numbers_object_and_jit():
    numbers = lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    x, w = data((2, 6, 5, 3)), data((3, 2, 3, 4))
    f = jit(
        lambda x, w: lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=numbers, precision="highest"
        )
    )
    want = ref_conv(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 1), ((1, 1), (0, 1)))
    np.testing.assert_allclose(
        np.asarray(f(x, w)), want.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize(
    "padding, pads",
    [
        ("SAME", ((1, 2), (0, 1))),
        ("VALID", ((0, 0), (0, 0))),
        ("SAME_LOWER", ((2, 1), (1, 0))),
        ("same", ((1, 2), (0, 1))),
    ],
)
def test_string_padding(padding, pads):
    x, w = data((1, 2, 7, 6)), data((3, 2, 4, 3))
    got = lax.conv_general_dilated(x, w, (2, 2), padding, precision="highest")
    np.testing.assert_allclose(np.asarray(got), ref_conv(x, w, (2, 2), pads), rtol=1e-5, atol=1e-5)


def test_same_padding_uses_the_dilated_kernel():
    x, w = data((1, 1, 9)), data((1, 1, 3))
    got = lax.conv_general_dilated(x, w, (1,), "SAME", rhs_dilation=(3,), precision="highest")
    assert got.shape == (1, 1, 9)
    np.testing.assert_allclose(
        np.asarray(got), ref_conv(x, w, (1,), ((3, 3),), None, (3,)), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize(
    "dtype", [np.float16, ml_dtypes.bfloat16, np.int32, np.complex64, np.float32]
)
def test_dtypes(dtype):
    x, w = data((2, 2, 5), dtype), data((3, 2, 2), dtype)
    if dtype == np.complex64:
        x, w = x + 1j * data((2, 2, 5)), w - 2j * data((3, 2, 2))
    got = lax.conv_general_dilated(x, w, (1,), "VALID")
    assert got.dtype == np.dtype(dtype)
    want = ref_conv(x.astype(np.complex128), w.astype(np.complex128), (1,), ((0, 0),))
    tol = 5e-2 if dtype in (np.float16, ml_dtypes.bfloat16) else 1e-5
    np.testing.assert_allclose(np.asarray(got).astype(np.complex128), want, rtol=tol, atol=tol)


def test_preferred_element_type():
    x, w = data((2, 2, 5), np.int8), data((3, 2, 2), np.int8)
    got = lax.conv_general_dilated(x, w, (1,), "VALID", preferred_element_type=np.int32)
    assert got.dtype == np.int32
    want = ref_conv(x.astype(np.int32), w.astype(np.int32), (1,), ((0, 0),))
    np.testing.assert_array_equal(np.asarray(got), want)
    got = lax.conv_general_dilated(x, w, (1,), "VALID", preferred_element_type=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), want.astype(np.float32))
    h = data((2, 2, 5), np.float16)
    assert (
        lax.conv_general_dilated(h, h[:1], (1,), "VALID", preferred_element_type=np.float32).dtype
        == np.float32
    )


def test_gradient_with_preferred_element_type_keeps_operand_dtypes():
    x, w = data((2, 2, 5), np.float16), data((3, 2, 2), np.float16)

    def loss(x, w):
        out = lax.conv_general_dilated(x, w, (1,), "SAME", preferred_element_type=np.float32)
        return lax.reduce_sum(out, (0, 1, 2))

    gx, gw = grad(loss, (0, 1))(x, w)
    assert gx.dtype == np.float16 and gw.dtype == np.float16
    ones = np.ones((2, 3, 5), np.float32)
    want_gw = ref_conv(
        x.astype(np.float32).transpose(1, 0, 2), ones.transpose(1, 0, 2), (1,), ((0, 1),)
    ).transpose(1, 0, 2)
    np.testing.assert_allclose(np.asarray(gw).astype(np.float32), want_gw, rtol=2e-2, atol=2e-2)


def test_dimension_number_helpers_match_jax():
    assert lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), ("NHWC", "HWIO", "NHWC")) == (
        (0, 3, 1, 2),
        (3, 2, 0, 1),
        (0, 3, 1, 2),
    )
    assert lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), ("NWHC", "HWIO", "WNHC")) == (
        (0, 3, 2, 1),
        (3, 2, 0, 1),
        (1, 3, 2, 0),
    )
    assert lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), None) == ((0, 1, 2, 3),) * 3
    assert lax.conv_general_permutations(("NWHC", "HWIO", "WNHC")) == (
        (0, 3, 2, 1),
        (3, 2, 0, 1),
        (1, 3, 2, 0),
    )
    assert isinstance(lax.conv_dimension_numbers((1, 2), (1, 2), None), lax.ConvDimensionNumbers)
    assert lax.padtype_to_pads((5, 6), (3, 3), (2, 2), "same") == [(1, 1), (0, 1)]
    assert lax.padtype_to_pads((5, 6), (3, 3), (2, 2), "SAME_LOWER") == [(1, 1), (1, 0)]
    assert lax.padtype_to_pads((5, 6), (3, 3), (2, 2), "valid") == [(0, 0), (0, 0)]
    assert lax.conv_shape_tuple((2, 4, 8, 8), (6, 4, 3, 3), (1, 1), [(1, 1), (1, 1)]) == (
        2,
        6,
        8,
        8,
    )
    assert lax.conv_shape_tuple((2, 4, 8, 8), (6, 4, 3, 3), (1, 1), "SAME") == (2, 6, 8, 8)
    assert lax.conv_shape_tuple((2, 4, 8, 8), (6, 4, 3, 3), (2, 1), "VALID", 2) == (1, 6, 3, 6)
    layout = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_general_shape_tuple((2, 8, 8, 4), (3, 3, 4, 6), (2, 1), "SAME", layout) == (
        2,
        4,
        8,
        6,
    )
    assert lax.conv_transpose_shape_tuple((2, 8, 8, 4), (3, 3, 4, 6), (2, 1), "SAME", layout) == (
        2,
        16,
        8,
        6,
    )
    assert lax.conv_transpose_shape_tuple(
        (2, 8, 8, 4), (3, 3, 4, 6), (2, 1), [(1, 1), (0, 2)], layout
    ) == (2, 15, 8, 6)


DN_ERRORS = [
    (("NCHW", "OIHW"), "convolution dimension_numbers list/tuple must be length 3, got 2."),
    (
        ("NCHW", "OIHW", 3),
        "convolution dimension_numbers elements must be strings, got "
        "(<class 'str'>, <class 'str'>, <class 'int'>).",
    ),
    (
        ("NCH", "OIHW", "NCHW"),
        "convolution dimension_numbers[0] must have len equal to the ndim "
        "of lhs and rhs, got 3 for lhs and rhs shapes (1, 2, 3, 4) and (1, 2, 3, 4).",
    ),
    (
        ("NCHH", "OIHW", "NCHW"),
        "convolution dimension_numbers[0] cannot have duplicate characters, got NCHH.",
    ),
    (
        ("NXHW", "OIHW", "NCHW"),
        "convolution dimension_numbers[0] must contain the characters "
        "'N' and 'C' exactly once, got NXHW.",
    ),
    (
        ("NCHW", "OIHW", "NCHX"),
        "convolution dimension_numbers elements must each have the same "
        "set of spatial characters, got ('NCHW', 'OIHW', 'NCHX').",
    ),
]


@pytest.mark.parametrize("numbers, message", DN_ERRORS)
def test_dimension_number_errors(numbers, message):
    with pytest.raises(TypeError) as info:
        lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), numbers)
    assert str(info.value) == message


X = np.ones((2, 4, 8, 8), np.float32)
CONV_ERRORS = [
    (
        dict(rhs=(6, 2, 3, 3)),
        ValueError,
        "conv_general_dilated lhs feature dimension size divided "
        "by feature_group_count must equal the rhs input feature dimension size, but 4 // 1 != 2.",
    ),
    (
        dict(feature_group_count=3),
        ValueError,
        "conv_general_dilated feature_group_count must "
        "divide lhs feature dimension size, but 3 does not divide 4.",
    ),
    (
        dict(rhs=(5, 2, 3, 3), feature_group_count=2),
        ValueError,
        "conv_general_dilated rhs output "
        "feature dimension size must be a multiple of feature_group_count, but 5 is not a multiple "
        "of 2.",
    ),
    (
        dict(feature_group_count=0),
        ValueError,
        "conv_general_dilated feature_group_count must be a positive integer, got 0.",
    ),
    (
        dict(batch_group_count=0),
        ValueError,
        "conv_general_dilated batch_group_count must be a positive integer, got 0.",
    ),
    (
        dict(batch_group_count=3),
        ValueError,
        "conv_general_dilated batch_group_count must divide "
        "lhs batch dimension size, but 3 does not divide 2.",
    ),
    (
        dict(rhs=(5, 4, 3, 3), batch_group_count=2),
        ValueError,
        "conv_general_dilated rhs output "
        "feature dimension size must be a multiple of batch_group_count, but 5 is not a multiple "
        "of 2.",
    ),
    (
        dict(rhs=(6, 2, 3, 3), batch_group_count=2, feature_group_count=2),
        ValueError,
        "At most one of batch_group_count and feature_group_count may be > 1, got "
        "batch_group_count=2 and feature_group_count=2",
    ),
    (
        dict(rhs=(6, 4, 3)),
        TypeError,
        "convolution requires lhs and rhs ndim to be equal, got 4 and 3.",
    ),
    (
        dict(window_strides=(1,)),
        ValueError,
        "conv_general_dilated window and window_strides "
        "must have the same number of dimensions, but got 2 and 1",
    ),
    (
        dict(padding=[(1, 1)]),
        TypeError,
        "Wrong number of explicit pads for convolution: expected 2, got 1.",
    ),
    (
        dict(padding="FOO"),
        RuntimeError,
        "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got FOO.",
    ),
    (
        dict(padding=3),
        ValueError,
        "padding argument to conv_general_dilated should be a string "
        "or a sequence of (low, high) pairs, got 3",
    ),
    (
        dict(padding="SAME", lhs_dilation=(2, 1)),
        ValueError,
        "String padding is not implemented "
        "for transposed convolution using this op. Please either exactly specify the required "
        "padding or use conv_transpose.",
    ),
    (
        dict(padding="VALID", rhs_dilation=(0, 1)),
        TypeError,
        "All dilations must be positive, got (0, 1).",
    ),
    (
        dict(rhs_dtype=np.float16),
        TypeError,
        "lax.conv_general_dilated requires arguments to "
        "have the same dtypes, got float32, float16.",
    ),
    (
        dict(preferred_element_type=np.float16),
        TypeError,
        "`preferred_element_type` must not be narrower than the original type.",
    ),
    (
        dict(preferred_element_type=np.int32),
        TypeError,
        "Input type is incompatible with "
        "`preferred_element_type`. The compatible combinations of (input_type, "
        "preferred_element_type) are (integral, integral), (integral, floating), (floating, "
        "floating), (complex, complex.",
    ),
    (
        dict(padding=[(-9, 0), (0, 0)]),
        ValueError,
        "Negative padding is larger than the size of "
        "the corresponding dimension: got padding=((-9, 0), (0, 0)) for lhs_shape[2:]=(8, 8)",
    ),
]


@pytest.mark.parametrize("kwargs, error, message", CONV_ERRORS)
def test_conv_errors(kwargs, error, message):
    kwargs = dict(kwargs)
    rhs = np.ones(kwargs.pop("rhs", (6, 4, 3, 3)), kwargs.pop("rhs_dtype", np.float32))
    strides = kwargs.pop("window_strides", (1, 1))
    padding = kwargs.pop("padding", "SAME")
    with pytest.raises(error) as info:
        lax.conv_general_dilated(X, rhs, strides, padding, **kwargs)
    assert str(info.value) == message


JAXPR = """\
{ lambda ; a:f32[2,8,8,3] b:f32[3,3,3,4]. let
    c:f32[2,4,13,4] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(1, 2)
      out_sharding=None
      padding=((1, 2), (0, 0))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
      rhs_dilation=(2, 1)
      window_strides=(2, 1)
    ] a b
  in (c,) }"""  # noqa: E501


def test_printed_jaxpr_matches_jax():
    f = lambda x, w: lax.conv_general_dilated(  # noqa: E731
        x,
        w,
        (2, 1),
        [(1, 2), (0, 0)],
        lhs_dilation=(1, 2),
        rhs_dilation=(2, 1),
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        preferred_element_type=np.float32,
        precision="highest",
    )
    assert (
        str(make_jaxpr(f)(np.ones((2, 8, 8, 3), np.float32), np.ones((3, 3, 3, 4), np.float32)))
        == JAXPR
    )


def test_printed_jaxpr_reads_back():

    jaxpr = parse_jaxpr(JAXPR)
    assert str(jaxpr) == JAXPR
    assert jaxpr.eqns[0].params["dimension_numbers"] == lax.ConvDimensionNumbers(
        (0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)
    )
