"""``jax.nn.initializers``: functions ``init(key, shape, dtype=None, out_sharding=None)``
that draw initial parameter arrays, and the constructors that make them (constant,
uniform, normal, truncated normal, variance scaling and its Glorot/He/LeCun variants,
orthogonal and delta-orthogonal). For the same key, shape and dtype they draw the same
values as JAX 0.10.2, because they make the same ``lamina.random`` calls on the same
keys and combine the draws with the same arithmetic."""

from __future__ import annotations

import math
import operator
import typing
from typing import Protocol

import numpy as np

import lamina.numpy as jnp
import lamina.random as random
from lamina.ir import dtypes

__all__ = [
    "Initializer",
    "constant",
    "delta_orthogonal",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "orthogonal",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
]

# The standard deviation of a standard normal truncated to [-2, 2], and of the modulus of
# the complex analogue, to rescale truncated draws back to unit variance.
_TRUNCATED_NORMAL_STDDEV = 0.8796256610342398
_COMPLEX_TRUNCATED_NORMAL_STDDEV = 0.9531116438049121


@typing.runtime_checkable
class Initializer(Protocol):
    """What every initializer is: ``init(key, shape, dtype=None, out_sharding=None)``."""

    def __call__(self, key, shape, dtype=None, out_sharding=None): ...


def _dtype_or_default(dtype):
    return dtypes.default_float_dtype() if dtype is None else dtype


def zeros(key, shape, dtype=None, out_sharding=None):
    """An array of zeros (``key`` is unused)."""
    return jnp.zeros(shape, _dtype_or_default(dtype), out_sharding=out_sharding)


def ones(key, shape, dtype=None, out_sharding=None):
    """An array of ones (``key`` is unused)."""
    return jnp.ones(shape, _dtype_or_default(dtype), out_sharding=out_sharding)


def constant(value, dtype=None) -> Initializer:
    """An initializer filling the array with ``value``."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        return jnp.full(shape, value, dtype=_dtype_or_default(dtype), device=out_sharding)

    return init


def uniform(scale=0.01, dtype=None) -> Initializer:
    """An initializer drawing uniformly from ``[0, scale)``."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype_or_default(dtype)
        draws = random.uniform(key, shape, dtype, out_sharding=out_sharding)
        return draws * jnp.array(scale, dtype)

    return init


def normal(stddev=0.01, dtype=None) -> Initializer:
    """An initializer drawing from a normal distribution of mean 0 and ``stddev``."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype_or_default(dtype)
        draws = random.normal(key, shape, dtype, out_sharding=out_sharding)
        return draws * jnp.array(stddev, dtype)

    return init


def truncated_normal(stddev=0.01, dtype=None, lower=-2.0, upper=2.0) -> Initializer:
    """An initializer drawing ``stddev`` times a standard normal truncated to
    ``[lower, upper]``."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype_or_default(dtype)
        draws = random.truncated_normal(key, lower, upper, shape, dtype, out_sharding=out_sharding)
        return draws * jnp.array(stddev, dtype)

    return init


def _axes_size(shape, axes) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()) -> tuple[float, float]:
    """(fan_in, fan_out) of a weight of ``shape``: the input (output) size times the
    receptive field, the size of the axes that are neither input, output nor batch."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights "
            "tensor with default in_axis. Must be at least 2D or specify in_axis explicitly."
        )
    in_size = _axes_size(shape, in_axis)
    out_size = _axes_size(shape, out_axis)
    batch_size = _axes_size(shape, batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _real_and_complex(dtype):
    real = np.dtype(np.array(0, dtype).real.dtype)
    return real, np.dtype(np.complex128 if real == np.float64 else np.complex64)


def _complex_uniform(key, shape, dtype):
    """Complex draws uniform on the disk of radius sqrt(2) (unit variance)."""
    key_r, key_theta = random.split(key)
    real, dtype = _real_and_complex(dtype)
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    """Complex draws whose modulus is Rayleigh-distributed, truncated at ``upper``."""
    key_r, key_theta = random.split(key)
    real, dtype = _real_and_complex(dtype)
    t = (1 - jnp.exp(jnp.array(-(upper**2), dtype))) * random.uniform(key_r, shape, real).astype(
        dtype
    )
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * jnp.exp(1j * theta)


def _canonical_shape(shape) -> tuple[int, ...]:
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"Shapes must be 1D sequences of concrete values of integer type, got {shape!r}."
        ) from None


def variance_scaling(
    scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None
) -> Initializer:
    """An initializer drawing with variance ``scale / n``, where ``n`` is the fan in,
    fan out, their mean ('fan_avg') or geometric mean ('fan_geo_avg') per ``mode``,
    from a 'truncated_normal' (truncated at two standard deviations, rescaled), 'normal'
    or 'uniform' ``distribution``. ``in_axis``, ``out_axis`` and ``batch_axis`` say which
    axes of the shape are inputs, outputs and batch; the rest are the receptive field.
    Complex dtypes draw complex values of that variance."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = _canonical_shape(shape)
        dtype = _dtype_or_default(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominators = {
            "fan_in": lambda: fan_in,
            "fan_out": lambda: fan_out,
            "fan_avg": lambda: (fan_in + fan_out) / 2,
            "fan_geo_avg": lambda: (fan_in * fan_out) ** 0.5,
        }
        if mode not in denominators:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominators[mode](), dtype=dtype)
        is_real = dtypes.issubdtype(dtype, np.floating)
        if distribution == "truncated_normal":
            if is_real:
                stddev = jnp.sqrt(variance) / jnp.array(_TRUNCATED_NORMAL_STDDEV, dtype)
                draws = random.truncated_normal(key, -2, 2, shape, dtype, out_sharding=out_sharding)
                return draws * stddev
            stddev = jnp.sqrt(variance) / jnp.array(_COMPLEX_TRUNCATED_NORMAL_STDDEV, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            draws = random.normal(key, shape, dtype, out_sharding=out_sharding)
            return draws * jnp.sqrt(variance)
        if distribution == "uniform":
            if is_real:
                draws = random.uniform(key, shape, dtype, -1, out_sharding=out_sharding)
                return draws * jnp.sqrt(3 * variance)
            return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    return init


def _variance_scaling_preset(scale: float, mode: str, distribution: str, name: str, doc: str):
    def make(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None) -> Initializer:
        return variance_scaling(
            scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
            batch_axis=batch_axis, dtype=dtype,
        )  # fmt: skip

    make.__name__ = make.__qualname__ = name
    make.__doc__ = doc
    return make


glorot_uniform = _variance_scaling_preset(
    1.0, "fan_avg", "uniform", "glorot_uniform",
    "Glorot (Xavier) uniform: variance scaling of 1 over the mean fan, uniform.",
)  # fmt: skip
glorot_normal = _variance_scaling_preset(
    1.0, "fan_avg", "truncated_normal", "glorot_normal",
    "Glorot (Xavier) normal: variance scaling of 1 over the mean fan, truncated normal.",
)  # fmt: skip
lecun_uniform = _variance_scaling_preset(
    1.0, "fan_in", "uniform", "lecun_uniform",
    "LeCun uniform: variance scaling of 1 over the fan in, uniform.",
)  # fmt: skip
lecun_normal = _variance_scaling_preset(
    1.0, "fan_in", "truncated_normal", "lecun_normal",
    "LeCun normal: variance scaling of 1 over the fan in, truncated normal.",
)  # fmt: skip
he_uniform = _variance_scaling_preset(
    2.0, "fan_in", "uniform", "he_uniform",
    "He (Kaiming) uniform: variance scaling of 2 over the fan in, uniform.",
)  # fmt: skip
he_normal = _variance_scaling_preset(
    2.0, "fan_in", "truncated_normal", "he_normal",
    "He (Kaiming) normal: variance scaling of 2 over the fan in, truncated normal.",
)  # fmt: skip
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
    """An initializer drawing ``scale`` times a uniformly random orthogonal matrix (or
    one with orthonormal rows/columns), reshaped so that ``column_axis`` holds the
    columns and the other axes together the rows."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError("orthogonal initializers do not take out_sharding")
        dtype = _dtype_or_default(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        rows_shape = tuple(np.delete(np.array(shape), column_axis))
        q = jnp.reshape(q, (*rows_shape, n_cols))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dtype) * q

    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
    """An initializer for 1-, 2- and 3-D convolution kernels (shapes of rank 3 to 5,
    input and output channels last): zero except at the spatial centre, which holds an
    orthogonal (in, out) matrix (Xiao et al., 2018)."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError("delta_orthogonal initializers do not take out_sharding")
        dtype = _dtype_or_default(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dtype).at[centre].set(ortho)

    return init
