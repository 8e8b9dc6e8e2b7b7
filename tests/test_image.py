"""`lamina.image`: `resize` and `scale_and_translate` against an independent NumPy
implementation (nearest, and linear without antialiasing) and values recorded from JAX
0.10.2 (the other methods), with dtypes, batch and channel dims, transformations and
JAX's errors."""

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina import image, lax
from lamina.image import ResizeMethod
from lamina.test_util import check_grads

A = (np.arange(20, dtype=np.float32) ** 1.5).reshape(4, 5) / 10
B = np.arange(7, dtype=np.float32) ** 2


def np_nearest(x, shape):
    """Output j of a dimension n -> m takes input floor((j + 0.5) n / m)."""
    for d, m in enumerate(shape):
        n = x.shape[d]
        index = np.floor((np.arange(m, dtype=np.float32) + 0.5) * np.float32(n) / np.float32(m))
        x = np.take(x, index.astype(np.int64), axis=d)
    return x


def np_linear(x, shape, spatial_dims=None, scale=None, translation=None):
    """Separable linear interpolation between the two input pixels around each output
    centre c = (j + 0.5 - t) / s - 0.5, clamped to the edge pixels; zero for centres
    outside [-0.5, n - 0.5]."""
    x = np.asarray(x, np.float64)
    if spatial_dims is None:
        spatial_dims = range(x.ndim)
        scale = [m / n for m, n in zip(shape, x.shape, strict=True)]
        translation = [0.0] * x.ndim
    for d, s, t in zip(spatial_dims, scale, translation, strict=True):
        n, m = x.shape[d], shape[d]
        centre = (np.arange(m) + 0.5 - t) / s - 0.5
        inside = (centre >= -0.5) & (centre <= n - 0.5)
        c = np.clip(centre, 0, n - 1)
        lo = np.floor(c).astype(int)
        hi = np.minimum(lo + 1, n - 1)
        frac = c - lo
        moved = np.moveaxis(x, d, -1)
        out = moved[..., lo] * (1 - frac) + moved[..., hi] * frac
        x = np.moveaxis(np.where(inside, out, 0.0), -1, d)
    return x


# fmt: off
RESIZE = {
    ("linear", True): [
        0.04285714, 0.2948271, 0.6798351, 0.6558013, 1.07658, 1.596219, 1.619049, 2.242234,
        2.927525, 3.020264, 3.777836, 4.587212, 4.716562, 5.587529, 6.503773, 6.062557,
        7.013323, 8.005413
    ],
    ("linear", False): [
        0.03333333, 0.2828427, 0.7065384, 0.6342936, 1.067434, 1.630393, 1.583425, 2.236175,
        2.970976, 2.97611, 3.772773, 4.637891, 4.665299, 5.583101, 6.560738, 6.006317, 7.00928,
        8.066856
    ],
    ("cubic", True): [
        -0.05104871, 0.1843029, 0.5749754, 0.4754597, 0.889457, 1.418328, 1.530594, 2.189839,
        2.915531, 2.938981, 3.734764, 4.587756, 4.876498, 5.804473, 6.782196, 6.19333, 7.19869,
        8.250043
    ],
    ("cubic", False): [
        -0.05638804, 0.1796074, 0.6082701, 0.454674, 0.8856997, 1.459684, 1.48925, 2.187262,
        2.968625, 2.887808, 3.732576, 4.649057, 4.815867, 5.802576, 6.851636, 6.127194,
        7.196936, 8.324322
    ],
    ("lanczos3", True): [
        -0.02789862, 0.2026249, 0.6062183, 0.4149343, 0.8197733, 1.353619, 1.509977, 2.194218,
        2.947459, 2.809544, 3.619935, 4.49122, 4.973958, 5.922561, 6.92682, 6.184756, 7.206278,
        8.278728
    ],
    ("lanczos3", False): [
        -0.03255652, 0.2040245, 0.6389946, 0.3953409, 0.8204958, 1.394155, 1.467344, 2.19411,
        3.001267, 2.758099, 3.619892, 4.552529, 4.913071, 5.922591, 6.996727, 6.118698,
        7.206281, 8.353039
    ],
    ("lanczos5", True): [
        -0.1071604, 0.1084135, 0.5083917, 0.5802811, 0.9942529, 1.542971, 1.444719, 2.127833,
        2.881954, 2.800277, 3.616057, 4.493436, 4.875391, 5.799246, 6.786445, 6.256065,
        7.286092, 8.3673
    ],
    ("lanczos5", False): [
        -0.1169285, 0.1125716, 0.5407038, 0.5521792, 0.9969544, 1.587623, 1.392019, 2.128724,
        2.943496, 2.736854, 3.61687, 4.56452, 4.803723, 5.800263, 6.865948, 6.175429, 7.286806,
        8.454291
    ],
    ("area", True): [
        0.04, 0.2936287, 0.6878461, 0.6493491, 1.075666, 1.606472, 1.258698, 1.857703, 2.525097,
        3.356682, 4.161254, 5.017879, 4.701184, 5.587087, 6.520863, 6.045685, 7.012918, 8.023846
    ],
    ("area", False): [
        0.04, 0.2936287, 0.6878461, 0.6493491, 1.075666, 1.606472, 1.258698, 1.857703, 2.525097,
        3.356682, 4.161254, 5.017879, 4.701184, 5.587087, 6.520863, 6.045685, 7.012918, 8.023846
    ],
    ("cubic_pytorch", True): [
        -0.05104871, 0.1843029, 0.5749754, 0.4754597, 0.889457, 1.418328, 1.530594, 2.189839,
        2.915531, 2.938981, 3.734764, 4.587756, 4.876498, 5.804473, 6.782196, 6.19333, 7.19869,
        8.250043
    ],
    ("cubic_pytorch", False): [
        -0.08164314, 0.1466289, 0.5634027, 0.4194573, 0.8513502, 1.419794, 1.562485, 2.269514,
        3.05433, 2.777004, 3.605768, 4.504377, 4.819233, 5.799185, 6.839206, 6.193694, 7.25688,
        8.375763
    ],
}
SCALE_AND_TRANSLATE = {
    ("linear", True, 0.6, 0.7, 4): [
        0, 1.235294, 6.75, 17.41176
    ],
    ("linear", True, 1.3, -0.4, 9): [
        0.1923077, 0.9615384, 3.192308, 6.5, 10.88462, 16.34616, 23.26923, 31.34616, 36
    ],
    ("linear", False, 0.6, 0.7, 4): [
        0, 0.8333334, 6.5, 17.5
    ],
    ("linear", False, 1.3, -0.4, 9): [
        0.1923077, 0.9615384, 3.192308, 6.5, 10.88462, 16.34616, 23.26923, 31.34616, 36
    ],
    ("cubic", True, 0.6, 0.7, 4): [
        0, 0.8003419, 6.210286, 17.85702
    ],
    ("cubic", True, 1.3, -0.4, 9): [
        0.09382398, 0.92461, 2.995563, 6.25, 10.68787, 16.30918, 23.1139, 32.27935, 37.18188
    ],
    ("cubic", False, 0.6, 0.7, 4): [
        0, 0.6979413, 6.25, 17.36111
    ],
    ("cubic", False, 1.3, -0.4, 9): [
        0.09382398, 0.92461, 2.995563, 6.25, 10.68787, 16.30918, 23.1139, 32.27935, 37.18188
    ],
    ("lanczos3", True, 0.6, 0.7, 4): [
        0, 0.7129285, 6.045667, 17.97199
    ],
    ("lanczos3", True, 1.3, -0.4, 9): [
        0.03411989, 0.9363939, 3.080317, 6.25, 10.56125, 16.25404, 22.58987, 32.68029, 37.46016
    ],
    ("lanczos3", False, 0.6, 0.7, 4): [
        0, 0.7262705, 6.25, 17.1013
    ],
    ("lanczos3", False, 1.3, -0.4, 9): [
        0.03411989, 0.9363939, 3.080317, 6.25, 10.56125, 16.25404, 22.58987, 32.68029, 37.46016
    ],
    ("lanczos5", True, 0.6, 0.7, 4): [
        0, 0.9108954, 6.02184, 17.67321
    ],
    ("lanczos5", True, 1.3, -0.4, 9): [
        0.03520235, 0.9301895, 3.142241, 5.769298, 11.29477, 16.17024, 22.25227, 32.71913,
        37.53963
    ],
    ("lanczos5", False, 0.6, 0.7, 4): [
        0, 0.7091857, 5.769298, 16.74777
    ],
    ("lanczos5", False, 1.3, -0.4, 9): [
        0.03520235, 0.9301895, 3.142241, 5.769298, 11.29477, 16.17024, 22.25227, 32.71913,
        37.53963
    ],
    ("area", True, 0.6, 0.7, 4): [
        0, 0.9999998, 6.5, 18
    ],
    ("area", True, 1.3, -0.4, 9): [
        0.1000001, 0.9999999, 3.4, 6.5, 10.4, 16, 24.1, 31.6, 36
    ],
    ("area", False, 0.6, 0.7, 4): [
        0, 0.9999998, 6.5, 18
    ],
    ("area", False, 1.3, -0.4, 9): [
        0.1000001, 0.9999999, 3.4, 6.5, 10.4, 16, 24.1, 31.6, 36
    ],
    ("cubic_pytorch", True, 0.6, 0.7, 4): [
        0, 0.8003419, 6.210286, 17.85702
    ],
    ("cubic_pytorch", True, 1.3, -0.4, 9): [
        0.09382398, 0.92461, 2.995563, 6.25, 10.68787, 16.30918, 23.1139, 32.27935, 37.18188
    ],
    ("cubic_pytorch", False, 0.6, 0.7, 4): [
        -0.01736116, 0.5960644, 6.125, 17.70834
    ],
    ("cubic_pytorch", False, 1.3, -0.4, 9): [
        0.1012032, 0.8900624, 2.760984, 6.125, 10.90732, 16.44429, 22.60611, 32.14647, 37.22089
    ],
}
BATCHED_LANCZOS3 = [
    0.1322971, 1.960862, 2.274827, 3.314031, 3.158588, 4.795176, 3.672113, 3.186998, 5.164501,
    0.05154823, 2.955596, 1.708781, 1.228116, 3.559392, 4.294902, 2.314394, 3.691764, 3.963919,
    1.634546, 3.380718, 1.388355, 2.670821, 3.435016, 4.25712, 2.800792, 3.683883, 1.850193,
    2.916047, 3.433244, 1.852434, 2.570409, 3.553253, 4.307953, 2.584338, 5.22803, 1.576602,
    2.685086, 3.415807, 1.675147, 3.143604, 1.730788, 2.490304, 3.844593, 4.898798, 0.6271814,
    2.385807, 0.9111135, 2.324233, 3.214909, 4.422945, 3.153028, 4.323381, 4.52346, 1.192128,
    5.387695, -0.7184041, 2.619335, 3.425074, 3.972393, 2.252561, 4.294119, 3.270408, 2.534767,
    4.035203, 1.021997, 2.538315, 2.647225, 3.630318, 4.043438, 4.703541, 1.566003, 2.389245,
    3.215333, 1.638384, 3.013636, 2.956019, 3.212997, 3.431721, 5.420023, 1.489854, 3.542618,
    2.706221, 1.817904, 3.975413
]
# fmt: on


def test_names_match_jax():
    assert sorted(image.__all__) == ["ResizeMethod", "resize", "scale_and_translate"]
    assert jax.image is image
    assert [m.name for m in ResizeMethod] == [
        "NEAREST", "LINEAR", "LANCZOS3", "LANCZOS5", "CUBIC", "CUBIC_PYTORCH", "AREA",
    ]  # fmt: skip
    assert [m.value for m in ResizeMethod] == list(range(7))


@pytest.mark.parametrize(
    ("name", "method"),
    [
        ("nearest", ResizeMethod.NEAREST),
        ("linear", ResizeMethod.LINEAR),
        ("bilinear", ResizeMethod.LINEAR),
        ("trilinear", ResizeMethod.LINEAR),
        ("triangle", ResizeMethod.LINEAR),
        ("cubic", ResizeMethod.CUBIC),
        ("bicubic", ResizeMethod.CUBIC),
        ("tricubic", ResizeMethod.CUBIC),
        ("lanczos3", ResizeMethod.LANCZOS3),
        ("lanczos5", ResizeMethod.LANCZOS5),
        ("area", ResizeMethod.AREA),
    ],
)
def test_method_names(name, method):
    assert ResizeMethod.from_string(name) is method


@pytest.mark.parametrize("name", ["NEAREST", "cubic_pytorch", "keyscubic", "foo"])
def test_unknown_method_names(name):
    with pytest.raises(ValueError, match=f'Unknown resize method "{name}"'):
        ResizeMethod.from_string(name)
    with pytest.raises(ValueError, match=f'Unknown resize method "{name}"'):
        image.resize(jnp.ones(3), (5,), name)


@pytest.mark.parametrize(
    ("in_shape", "out_shape"),
    [((4, 5), (6, 3)), ((7,), (3,)), ((3,), (8,)), ((2, 5, 4, 3), (2, 3, 9, 3)), ((5, 5), (5, 5))],
)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
def test_nearest_against_numpy(in_shape, out_shape, dtype):
    x = (np.arange(np.prod(in_shape)).reshape(in_shape) % 11).astype(dtype)
    out = image.resize(x, out_shape, "nearest")
    assert out.dtype == dtype  # nearest gathers: the dtype is kept
    np.testing.assert_array_equal(np.asarray(out), np_nearest(x, out_shape))


@pytest.mark.parametrize(
    ("in_shape", "out_shape"),
    [((4, 5), (6, 3)), ((7,), (3,)), ((3,), (8,)), ((2, 5, 4, 3), (2, 3, 9, 3)), ((3, 4), (3, 4))],
)
@pytest.mark.parametrize("method", ["linear", "bilinear", ResizeMethod.LINEAR])
def test_linear_without_antialias_against_numpy(in_shape, out_shape, method):
    x = (np.arange(np.prod(in_shape), dtype=np.float32).reshape(in_shape) ** 1.3) % 17
    out = image.resize(x, out_shape, method, antialias=False)
    assert out.dtype == np.float32 and out.shape == out_shape
    np.testing.assert_allclose(np.asarray(out), np_linear(x, out_shape), rtol=1e-5, atol=1e-5)


def test_linear_upsampling_ignores_antialias():
    out = image.resize(A, (7, 9), "linear")
    np.testing.assert_allclose(np.asarray(out), np_linear(A, (7, 9)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("scale", "translation", "out"), [(0.6, 0.7, 4), (1.3, -0.4, 9), (2.0, 3.0, 12)]
)
def test_scale_and_translate_linear_against_numpy(scale, translation, out):
    got = image.scale_and_translate(
        B, (out,), (0,), jnp.array([scale]), jnp.array([translation]), "linear",
        antialias=False,
    )  # fmt: skip
    want = np_linear(B, (out,), [0], [scale], [translation])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def _method(name):
    return ResizeMethod.CUBIC_PYTORCH if name == "cubic_pytorch" else name


@pytest.mark.parametrize(("name", "antialias"), sorted(RESIZE))
def test_resize_recorded(name, antialias):
    out = image.resize(A, (6, 3), _method(name), antialias=antialias)
    assert out.dtype == np.float32
    np.testing.assert_allclose(
        np.asarray(out).ravel(), RESIZE[name, antialias], rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("key", sorted(SCALE_AND_TRANSLATE))
def test_scale_and_translate_recorded(key):
    name, antialias, scale, translation, out = key
    got = image.scale_and_translate(
        B, (out,), (0,), jnp.array([scale]), jnp.array([translation]), _method(name),
        antialias=antialias,
    )  # fmt: skip
    np.testing.assert_allclose(np.asarray(got), SCALE_AND_TRANSLATE[key], rtol=1e-5, atol=1e-4)


def test_batch_and_channel_dims():
    c = (np.arange(2 * 4 * 5 * 2, dtype=np.float32) % 7).reshape(2, 4, 5, 2)
    got = image.scale_and_translate(
        c, (2, 3, 7, 2), (1, 2), jnp.array([0.7, 1.4]), jnp.array([0.2, -0.3]), "lanczos3"
    )
    assert got.shape == (2, 3, 7, 2)
    np.testing.assert_allclose(np.asarray(got).ravel(), BATCHED_LANCZOS3, rtol=1e-5, atol=1e-5)
    # resize of an NHWC batch is the resize of each image and channel
    out = image.resize(c, (2, 6, 3, 2), "cubic")
    for n in range(2):
        for ch in range(2):
            one = image.resize(c[n, :, :, ch], (6, 3), "cubic")
            np.testing.assert_allclose(np.asarray(out[n, :, :, ch]), np.asarray(one), rtol=1e-5)


def test_dimensions_outside_spatial_dims_keep_their_size():
    # as JAX: shape's entries for the other dimensions are not used
    got = image.scale_and_translate(
        jnp.ones((3, 3)), (5, 4), (0,), jnp.array([2.0]), jnp.array([0.0]), "linear"
    )
    assert got.shape == (5, 3)


@pytest.mark.parametrize(
    ("dtype", "want"),
    [
        (np.int32, np.float32),
        (np.int8, np.float32),
        (np.uint8, np.float32),
        (np.bool_, np.float32),
        (np.float16, np.float16),
        (jnp.bfloat16, jnp.bfloat16),
        (np.complex64, np.complex64),
    ],
)
@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "area"])
def test_dtypes(dtype, want, method):
    x = np.ones((2, 3), dtype)
    out = image.resize(x, (4, 5), method)
    assert out.dtype == want
    np.testing.assert_allclose(np.asarray(out).astype(np.complex64), np.ones((4, 5)), atol=1e-2)
    # an unchanged shape still converts integers
    assert image.resize(x, (2, 3), method).dtype == want
    sat = image.scale_and_translate(x, (4, 3), (0,), jnp.array([2.0]), jnp.array([0.0]), method)
    assert sat.dtype == want


def test_integer_values():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = image.resize(x, (4, 5), "linear")
    np.testing.assert_allclose(np.asarray(out), np_linear(x, (4, 5)), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(image.resize(x, (4, 5), "nearest")), np_nearest(x, (4, 5)))  # fmt: skip # noqa: E501


def test_x64_dtypes():
    with jax.enable_x64(True):
        assert image.resize(jnp.ones(3, jnp.int64), (5,), "linear").dtype == np.float64
        assert image.resize(jnp.ones(3, jnp.int32), (5,), "linear").dtype == np.float32
        x = jnp.arange(3, dtype=jnp.float64)
        out = image.resize(x, (5,), "lanczos3")
        assert out.dtype == np.float64
        # recorded from JAX 0.10.2
        want = [-0.07533157, 0.22601326, 1.0, 1.77398674, 2.07533157]
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-7)


def test_weak_type_of_a_scalar_is_kept():
    assert image.resize(2.0, (), "linear").weak_type
    assert image.resize(2.0, (), "nearest").weak_type


@pytest.mark.parametrize("precision", [lax.Precision.DEFAULT, lax.Precision.HIGHEST, None])
def test_precision_is_passed_to_the_contraction(precision):
    out = image.resize(A, (6, 3), "cubic", precision=precision)
    np.testing.assert_allclose(np.asarray(out).ravel(), RESIZE["cubic", True], rtol=1e-3, atol=1e-3)
    text = str(jax.make_jaxpr(lambda a: image.resize(a, (6, 3), "cubic", precision=precision))(A))
    assert "dot_general" in text


@pytest.mark.parametrize("method", ["nearest", "linear", "cubic", "lanczos5", "area"])
def test_jit_matches_eager(method):
    f = jax.jit(lambda a: image.resize(a, (6, 3), method))
    np.testing.assert_allclose(
        np.asarray(f(A)), np.asarray(image.resize(A, (6, 3), method)), rtol=1e-6, atol=1e-6
    )


def test_traced_scale_and_translation_under_jit():
    f = jax.jit(
        lambda x, s, t: image.scale_and_translate(x, (4,), (0,), s, t, "linear", antialias=False)
    )
    got = f(B, jnp.array([0.6]), jnp.array([0.7]))
    np.testing.assert_allclose(np.asarray(got), np_linear(B, (4,), [0], [0.6], [0.7]), rtol=1e-5)


@pytest.mark.parametrize("method", ["nearest", "linear", "lanczos3"])
def test_vmap_against_a_loop(method):
    x = (np.arange(3 * 4 * 5, dtype=np.float32) ** 1.2).reshape(3, 4, 5)
    out = jax.vmap(lambda a: image.resize(a, (6, 2), method))(x)
    for i in range(3):
        one = image.resize(x[i], (6, 2), method)
        np.testing.assert_allclose(np.asarray(out[i]), np.asarray(one), rtol=1e-6)
    scales = jnp.array([[0.6], [1.3], [2.0]])
    got = jax.vmap(
        lambda s: image.scale_and_translate(B, (5,), (0,), s, jnp.array([0.1]), "cubic")
    )(scales)
    for i in range(3):
        one = image.scale_and_translate(B, (5,), (0,), scales[i], jnp.array([0.1]), "cubic")
        np.testing.assert_allclose(np.asarray(got[i]), np.asarray(one), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "lanczos5", "area"])
def test_gradients(method):
    x = jnp.asarray(A)
    check_grads(
        lambda a: image.resize(a, (6, 3), method), (x,), order=2, modes=["fwd", "rev"], eps=1e-3
    )
    if method == "area":
        return  # the overlaps have kinks in the scale that numerical differences straddle
    check_grads(
        lambda s, t: image.scale_and_translate(x, (5, 7), (0, 1), s, t, method),
        (jnp.array([1.3, 1.7]), jnp.array([0.2, -0.1])),
        order=1,
        modes=["fwd", "rev"],
        atol=5e-2,
        rtol=5e-2,
    )


def test_nearest_gradient():
    check_grads(lambda a: image.resize(a, (6, 3), "nearest"), (jnp.asarray(A),), order=1)


def test_errors():
    msg = r"shape must have length equal to the number of dimensions of x;  \(3,\) vs \(2, 2\)"
    with pytest.raises(ValueError, match=msg):
        image.resize(jnp.ones((2, 2)), (3,), "linear")
    with pytest.raises(ValueError, match=msg):
        image.scale_and_translate(
            jnp.ones((2, 2)), (3,), (0, 1), jnp.ones(2), jnp.zeros(2), "linear"
        )
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
        image.resize(jnp.ones(3), (5.5,), "linear")
    with pytest.raises(ValueError, match='Unknown resize method "foo"'):
        image.scale_and_translate(jnp.ones(3), (5,), (0,), jnp.ones(1), jnp.zeros(1), "foo")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently supported"):
        image.scale_and_translate(jnp.ones(3), (5,), (0,), jnp.ones(1), jnp.zeros(1), "nearest")
    # JAX asserts (AssertionError) on a method that is neither a str nor a ResizeMethod,
    # and on spatial_dims, scale and translation of different lengths.
    with pytest.raises(AssertionError):
        image.resize(jnp.ones(3), (5,), 3)
    with pytest.raises(AssertionError):
        image.scale_and_translate(
            jnp.ones((2, 2)), (3, 3), (0, 1), jnp.ones(1), jnp.zeros(1), "linear"
        )
    with pytest.raises(TypeError, match="resize requires ndarray or scalar arguments"):
        image.resize([1.0, 2.0], (5,), "linear")
