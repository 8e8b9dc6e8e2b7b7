"""The raw-key operations of JAX's two implementations on XLA's bit generator, ``rbg``
and ``unsafe_rbg``, on ``uint32[4]`` keys.

Both seed a key as two copies of the Threefry key of the seed and draw bits with
``rng_bit_generator`` (the key is its state). ``rbg`` splits and folds in data by
applying Threefry to each half of the key; ``unsafe_rbg`` splits by drawing keys from
the generator (every tenth of ten times as many) and folds in data by xor-ing the key
with a draw seeded by the data. What the generator gives is XLA's, so it may change
between backends and jaxlib versions, as in JAX.
"""

from __future__ import annotations

import math

import numpy as np

from lamina.interpreters import vmap
from lamina.lax.base.primitives import bitwise_xor, reshape
from lamina.lax.base.reshaping import concatenate, slice_in_dim, squeeze
from lamina.lax.prng import threefry
from lamina.lax.rng import rng_bit_generator

__all__ = [
    "rbg_fold_in",
    "rbg_random_bits",
    "rbg_seed",
    "rbg_split",
    "unsafe_rbg_fold_in",
    "unsafe_rbg_split",
]

_U32 = np.dtype(np.uint32)
_DRAWS_PER_KEY = 10  # unsafe_rbg keeps one key of every ten drawn


def _halves(key):
    return reshape(key, (2, 2))


def rbg_seed(seed):
    """``uint32[4]``: the Threefry key of ``seed``, twice."""
    half = threefry.raw_seed(seed)
    return concatenate([half, half], 0)


def rbg_split(key, shape):
    """``uint32[*shape, 4]``: each half of ``key`` split the Threefry way, side by side."""
    split_half = vmap(lambda half: threefry.raw_split(half, shape), out_axes=len(shape))
    return reshape(split_half(_halves(key)), (*shape, 4))


def rbg_fold_in(key, data):
    """``data`` folded into each half of ``key`` the Threefry way."""
    folded = vmap(threefry.raw_fold_in, in_axes=(0, None))(_halves(key), data)
    return reshape(folded, (4,))


def rbg_random_bits(key, bit_width: int, shape):
    """``uint{bit_width}[*shape]`` from XLA's bit generator with state ``key``."""
    _, bits = rng_bit_generator(key, tuple(shape), dtype=np.dtype(f"uint{bit_width}"))
    return bits


def unsafe_rbg_split(key, shape):
    """``uint32[*shape, 4]``: every tenth of ``10 * prod(shape)`` keys drawn from the
    generator."""
    num = math.prod(shape)
    _, keys = rng_bit_generator(key, (_DRAWS_PER_KEY * num, 4), dtype=_U32)
    return reshape(slice_in_dim(keys, None, None, stride=_DRAWS_PER_KEY), (*shape, 4))


def unsafe_rbg_fold_in(key, data):
    """``key`` xor the last of ten keys drawn from the generator seeded with ``data``."""
    _, keys = rng_bit_generator(rbg_seed(data), (_DRAWS_PER_KEY, 4), dtype=_U32)
    last = squeeze(slice_in_dim(keys, _DRAWS_PER_KEY - 1, _DRAWS_PER_KEY), (0,))
    return bitwise_xor(key, last)
