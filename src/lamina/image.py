"""`lamina.image`: image resampling (`jax.image`).

``scale_and_translate`` resamples the ``spatial_dims`` of an array one dimension at a
time: output sample ``j`` of a dimension of size ``n`` sits at input coordinate
``(j + 0.5 - translation) / scale - 0.5`` (pixel centres at integers), and takes a
weighted sum of the input samples, the weights a kernel of the distance (stretched by
``1 / scale`` when downsampling with ``antialias``), normalized to sum to one, and zero
for output samples whose centre lies outside the input. Each dimension's weights are an
``(n, m)`` matrix contracted with the array by one ``dot_general``. ``resize`` is
``scale_and_translate`` with ``scale = out / in`` and no translation, except the
nearest-neighbour method, which gathers.
"""

import enum
import math
import operator
from collections.abc import Sequence

import lamina.numpy as jnp
from lamina import lax

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """The resampling methods: NEAREST, LINEAR (triangle), LANCZOS3, LANCZOS5, CUBIC
    (Keys, a = -0.5), CUBIC_PYTORCH (PyTorch's bicubic: without ``antialias``, a =
    -0.75 and edge pixels repeated past the border; with it, as CUBIC; no name gives
    it) and AREA
    (each output sample the mean of the input it covers)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        """The method a name gives: 'nearest', 'linear'/'bilinear'/'trilinear'/
        'triangle', 'lanczos3', 'lanczos5', 'cubic'/'bicubic'/'tricubic', 'area'."""
        method = _NAMES.get(s)
        if method is None:
            raise ValueError(f'Unknown resize method "{s}"')
        return method


_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR,
    "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR,
    "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3,
    "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC,
    "bicubic": ResizeMethod.CUBIC,
    "tricubic": ResizeMethod.CUBIC,
    "area": ResizeMethod.AREA,
}


def _method(method) -> ResizeMethod:
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        # JAX asserts here (a bare AssertionError); the type is kept, with a message.
        raise AssertionError(f"method must be a str or a ResizeMethod, got {method!r}")
    return method


def _shape(shape, image) -> tuple[int, ...]:
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"Shapes must be 1D sequences of concrete values of integer type, got {shape}."
        ) from None
    if len(shape) != image.ndim:
        raise ValueError(
            "shape must have length equal to the number of dimensions of x; "
            f" {shape} vs {image.shape}"
        )
    return shape


def _result_dtype(dtype):
    """Inexact dtypes are kept; integers and booleans resample in float32 (float64 for
    64-bit integers, with x64 on), as JAX does."""
    if jnp.issubdtype(dtype, jnp.inexact):
        return dtype
    wide = jnp.dtype(dtype).itemsize == 8
    return jnp.dtype(jnp.float64 if wide else jnp.float32)


# Kernels of the (non-negative) distance x between an output sample and an input sample.
def _triangle(x):
    return jnp.maximum(0.0, 1.0 - x)


def _keys_cubic(x, a=-0.5):
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, far, near))


def _lanczos(radius: float):
    def kernel(x):
        pix = math.pi * x
        safe = jnp.where(x > 1e-3, x, 1.0)
        value = radius * jnp.sin(math.pi * safe) * jnp.sin(math.pi * safe / radius)
        value = value / (math.pi * math.pi * safe * safe)
        # sinc(x) sinc(x / r) = 1 - (1 + 1/r^2) (pi x)^2 / 6 + O(x^4) near 0.
        series = 1.0 - (1.0 + 1.0 / radius**2) * pix * pix / 6.0
        return jnp.where(x > radius, 0.0, jnp.where(x > 1e-3, value, series))

    return kernel


_KERNELS = {
    ResizeMethod.LINEAR: _triangle,
    ResizeMethod.LANCZOS3: _lanczos(3.0),
    ResizeMethod.LANCZOS5: _lanczos(5.0),
    ResizeMethod.CUBIC: _keys_cubic,
    ResizeMethod.CUBIC_PYTORCH: _keys_cubic,  # with antialias; without, _pytorch_weights
}


def _pytorch_weights(in_size: int, centres, dtype):
    """PyTorch's bicubic without antialiasing: the four taps around each centre, a =
    -0.75, taps outside the input clamped to its edge pixels (no normalization, no
    zeroing of centres outside the input)."""
    taps = jnp.floor(centres)[None, :] + lax.iota(dtype, 4)[:, None] - 1.0
    weights = _keys_cubic(jnp.abs(centres[None, :] - taps), -0.75)
    pixel = jnp.clip(taps, 0, in_size - 1)
    hits = pixel[:, None, :] == lax.iota(dtype, in_size)[None, :, None]
    return jnp.sum(jnp.where(hits, weights[:, None, :], 0.0), axis=0).astype(dtype)


def _weight_dtype(dtype):
    """Weights are computed in float32, or float64 for 64-bit images."""
    return jnp.float64 if jnp.finfo(dtype).bits == 64 else jnp.float32


def _weights(in_size: int, out_size: int, scale, translation, method, antialias, dtype):
    """The (in_size, out_size) matrix taking one dimension of the input to the output."""
    inv_scale = 1.0 / scale
    centres = (lax.iota(dtype, out_size) + 0.5) * inv_scale - translation * inv_scale - 0.5
    if method is ResizeMethod.CUBIC_PYTORCH and not antialias:
        return _pytorch_weights(in_size, centres, dtype)
    distance = jnp.abs(centres[None, :] - lax.iota(dtype, in_size)[:, None])
    if method is ResizeMethod.AREA:
        # The overlap of the output sample's footprint (width 1/scale) with the input
        # pixel's (width 1).
        half = 0.5 * inv_scale
        upper = jnp.minimum(distance + half, 0.5)
        lower = jnp.maximum(distance - half, -0.5)
        weights = jnp.maximum(upper - lower, 0.0)
    else:
        kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else jnp.ones((), dtype)
        weights = _KERNELS[method](distance / kernel_scale)
    total = jnp.sum(weights, axis=0, keepdims=True)
    eps = float(jnp.finfo(dtype).eps)
    weights = jnp.where(
        jnp.abs(total) > 1000.0 * eps,
        weights / jnp.where(total != 0, total, 1.0),
        0.0,
    )
    inside = (centres >= -0.5) & (centres <= in_size - 0.5)
    return jnp.where(inside[None, :], weights, 0.0).astype(dtype)


def _resample(image, shape, spatial_dims, scale, translation, method, antialias, precision):
    dtype = _result_dtype(image.dtype)
    if image.dtype != dtype:
        image = image.astype(dtype)
    weight_dtype = _weight_dtype(dtype)
    for i, d in enumerate(spatial_dims):
        weights = _weights(
            image.shape[d], shape[d], scale[i].astype(weight_dtype),
            translation[i].astype(weight_dtype), method, antialias, weight_dtype,
        )  # fmt: skip
        contracted = lax.dot_general(
            image,
            weights.astype(dtype),
            (((d,), (0,)), ((), ())),
            precision=precision,
            preferred_element_type=dtype,
        )
        image = jnp.moveaxis(contracted, -1, d)
    return image


def scale_and_translate(
    image,
    shape: Sequence[int],
    spatial_dims: Sequence[int],
    scale,
    translation,
    method,
    antialias: bool = True,
    precision=lax.Precision.HIGHEST,
):
    """Resamples ``spatial_dims`` of ``image`` to the sizes ``shape`` gives them, output
    sample ``j`` taken at input coordinate ``(j + 0.5 - translation) / scale - 0.5``.

    ``scale`` and ``translation`` hold one value per spatial dimension and may be
    traced. ``method`` is a ResizeMethod or its name (NEAREST is refused); with
    ``antialias``, downsampling widens the kernel by ``1 / scale``. Dimensions not in
    ``spatial_dims`` keep their size. Integer images give float32 (float64 for 64-bit
    integers). ``precision`` is passed to the contractions.
    """
    jnp.check_arraylike("scale_and_translate", image, scale, translation)
    image = jnp.asarray(image)
    shape = _shape(shape, image)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        raise ValueError(
            "Nearest neighbor resampling is not currently supported for scale_and_translate."
        )
    spatial_dims = tuple(operator.index(d) for d in spatial_dims)
    scale = jnp.asarray(scale)
    translation = jnp.asarray(translation)
    if not len(spatial_dims) == scale.size == translation.size:
        # JAX asserts here (a bare AssertionError); the type is kept, with a message.
        raise AssertionError(
            f"spatial_dims, scale and translation must have equal lengths, got "
            f"{len(spatial_dims)}, {scale.size} and {translation.size}"
        )
    scale = scale.reshape(-1)
    translation = translation.reshape(-1)
    return _resample(image, shape, spatial_dims, scale, translation, method, antialias, precision)


def _nearest(image, shape):
    for d, (n, m) in enumerate(zip(image.shape, shape, strict=True)):
        if n == m:
            continue
        # The input pixel holding output centre j: floor((j + 0.5) * n / m).
        centres = (lax.iota(jnp.float32, m) + 0.5) * float(n) / float(m)
        index = jnp.floor(centres).astype(jnp.int32)
        image = jnp.take(image, index, axis=d, mode="clip")
    return image


def resize(image, shape: Sequence[int], method, antialias: bool = True,
           precision=lax.Precision.HIGHEST):  # fmt: skip
    """``image`` resampled to ``shape`` (one size per dimension, batch and channel
    dimensions included: a dimension whose size does not change is left as it is).

    ``method`` is a ResizeMethod or one of the names 'nearest', 'linear' ('bilinear',
    'trilinear', 'triangle'), 'cubic' ('bicubic', 'tricubic'), 'lanczos3', 'lanczos5',
    'area'. ``antialias`` widens the kernel when downsampling (not for NEAREST, which
    gathers and keeps the dtype; the others give float32 for integer images).
    ``precision`` is passed to the contractions.
    """
    jnp.check_arraylike("resize", image)
    image = jnp.asarray(image)
    shape = _shape(shape, image)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        return _nearest(image, shape)
    spatial_dims = tuple(d for d in range(image.ndim) if image.shape[d] != shape[d])
    scale = [shape[d] / image.shape[d] for d in spatial_dims]
    weight_dtype = _weight_dtype(_result_dtype(image.dtype))
    scale = jnp.asarray(scale, weight_dtype).reshape(-1)
    translation = jnp.zeros(len(spatial_dims), weight_dtype)
    return _resample(image, shape, spatial_dims, scale, translation, method, antialias, precision)
