"""The few draws ``gaussian_kde.resample`` needs, made from lax's PRNG key primitives
with ``jax.random``'s bit-to-float recipe, so a key gives JAX's samples."""

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.ir import dtypes

_UINTS = {16: np.uint16, 32: np.uint32, 64: np.uint64}


def split2(key):
    """Two subkeys of the typed key ``key``, as ``jax.random.split(key)`` gives them."""
    keys = lax.random_split(key, (2,))
    return tuple(lax.squeeze(lax.slice_in_dim(keys, i, i + 1), (0,)) for i in range(2))


def uniform(key, shape, dtype, low=0.0):
    """Floats in [low, 1): random mantissa bits under the exponent of 1.0, less one."""
    info = dtypes.finfo(dtype)
    uint = _UINTS[info.bits]
    bits = lax.random_bits(key, info.bits, shape)
    mantissa = lax.shift_right_logical(bits, np.array(info.bits - info.nmant, uint))
    one = np.array(1.0, dtype).view(uint)
    floats = lax.bitcast_convert_type(lax.bitwise_or(mantissa, one), dtype) - np.array(1, dtype)
    low = np.array(low, dtype)
    return lax.max(low, floats * (np.array(1, dtype) - low) + low)


def normal(key, shape, dtype):
    """Standard normal floats: the inverse error function of uniforms in (-1, 1)."""
    low = -1.0 + 2.0 ** -(dtypes.finfo(dtype).nmant + 1)
    return np.array(np.sqrt(2), dtype) * lax.erf_inv(uniform(key, shape, dtype, low))


def weighted_indices(key, weights, shape):
    """Indices into ``weights`` drawn with those probabilities (with replacement)."""
    cumulative = jnp.cumsum(weights)
    r = cumulative[-1] * (1 - uniform(key, shape, cumulative.dtype))
    return jnp.searchsorted(cumulative, r).astype(int)
