"""The Threefry-2x32 counter-based hash and the raw-key operations built on it.

``threefry2x32_p`` hashes two ``uint32`` counter words under a two-word key (20 rounds,
lowered as a loop-free sequence of StableHLO integer ops). ``iota_2x32_shape_p`` gives
the 64-bit row-major index of every element of a shape as two ``uint32`` words. On top
of them: seeding, splitting, folding in data and drawing bits from a raw ``uint32[2]``
key, following JAX 0.10.2's two Threefry schemes, chosen by the option
``jax_threefry_partitionable``: the "partitionable" one (the default), which hashes each
element's 64-bit index, and the original one, which hashes a flat ``uint32`` count; the
bits are the same as JAX's for the same key. These are what the Threefry implementation
of typed keys (``random_seed``, ``random_split``, ... in :mod:`.key_primitives`) lowers
to, per key.
"""

from __future__ import annotations

import math

import numpy as np

from lamina.interpreters import ad, batching, config, vmap
from lamina.interpreters.mlir import hlo
from lamina.ir import ShapedArray, dtypes
from lamina.lax.base.operands import aval_of, broadcasting_shape, standard_primitive
from lamina.lax.base.primitives import (
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    broadcast_in_dim,
    convert_element_type,
    iota,
    reshape,
    shift_left,
    shift_right_logical,
)
from lamina.lax.base.reshaping import concatenate, expand_dims, slice_in_dim, squeeze

__all__ = [
    "iota_2x32_shape",
    "iota_2x32_shape_p",
    "key_words",
    "partitionable",
    "raw_fold_in",
    "raw_random_bits",
    "raw_seed",
    "raw_split",
    "threefry2x32_p",
    "threefry_2x32",
]

_U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KS_PARITY = 0x1BD11BDA


# ---------------------------------------------------------------- threefry2x32_p


def _threefry_abstract_eval(k1, k2, x1, x2):
    if any(a.dtype != _U32 for a in (k1, k2, x1, x2)):
        got = ", ".join(a.str_short() for a in (k1, k2, x1, x2))
        raise TypeError(f"Arguments to threefry2x32 must have uint32 type, got {got}")
    shape = broadcasting_shape("threefry2x32", [a.shape for a in (k1, k2, x1, x2)])
    out = ShapedArray(shape, _U32)
    return [out, out]


def _threefry_lowering(ctx, k1, k2, x1, x2):
    shape = ctx.avals_out[0].shape
    k1, k2, x1, x2 = ctx.broadcast_to([k1, k2, x1, x2], shape)

    def const(value):
        return ctx.constant(np.broadcast_to(np.uint32(value), shape))

    def rotate_left(v, r):
        return hlo.or_(hlo.shift_left(v, const(r)), hlo.shift_right_logical(v, const(32 - r)))

    ks = [k1, k2, hlo.xor(hlo.xor(k1, k2), const(_KS_PARITY))]
    v0, v1 = hlo.add(x1, ks[0]), hlo.add(x2, ks[1])
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
            v0 = hlo.add(v0, v1)
            v1 = hlo.xor(v0, rotate_left(v1, r))
        # Key injection after every four rounds: the schedule rotates through ks.
        v0 = hlo.add(v0, ks[(block + 1) % 3])
        v1 = hlo.add(hlo.add(v1, ks[(block + 2) % 3]), const(block + 1))
    return [v0, v1]


threefry2x32_p = standard_primitive("threefry2x32", _threefry_abstract_eval, _threefry_lowering)
threefry2x32_p.multiple_results = True
ad.zero_jvp(threefry2x32_p)
batching.defbroadcasting(threefry2x32_p)


def threefry_2x32(keypair, count):
    """The Threefry-2x32 hash of the ``uint32`` array ``count`` under ``keypair`` (two
    ``uint32`` scalars): the flattened counts are cut in two halves (padded with a zero
    when odd) that form the two words of each block."""
    key1, key2 = keypair
    if not all(aval_of(x).dtype == _U32 for x in (key1, key2, count)):
        got = [str(aval_of(x).dtype) for x in (key1, key2, count)]
        raise TypeError(f"threefry_2x32 requires uint32 arguments, got {got}")
    shape = aval_of(count).shape
    flat = reshape(count, (math.prod(shape),))
    odd = flat.shape[0] % 2
    if odd:
        flat = concatenate([flat, np.zeros((1,), _U32)], 0)
    half = flat.shape[0] // 2
    y1, y2 = threefry2x32_p.bind(
        key1, key2, slice_in_dim(flat, 0, half), slice_in_dim(flat, half, 2 * half)
    )
    out = concatenate([y1, y2], 0)
    if odd:
        out = slice_in_dim(out, 0, 2 * half - 1)
    return reshape(out, shape)


# ---------------------------------------------------------------- iota_2x32_shape_p


def _iota_lowering(ctx, *, shape):
    u64 = ShapedArray(shape, np.dtype(np.uint64))
    u64_type = ctx.ir_type(u64)

    def const(value):
        return ctx.constant(np.broadcast_to(np.uint64(value), shape))

    strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
    counts = None
    for dim, stride in enumerate(strides):
        term = hlo.multiply(hlo.iota(u64_type, dim), const(stride))
        counts = term if counts is None else hlo.add(counts, term)
    out_type = ctx.ir_type(ctx.avals_out[0])
    hi = hlo.convert(out_type, hlo.shift_right_logical(counts, const(32)))
    return [hi, hlo.convert(out_type, counts)]


iota_2x32_shape_p = standard_primitive(
    "iota_2x32_shape", lambda *, shape: [ShapedArray(shape, _U32)] * 2, _iota_lowering
)
iota_2x32_shape_p.multiple_results = True


def iota_2x32_shape(shape):
    """``(hi, lo)``: the high and low ``uint32`` words of the row-major index of every
    element of ``shape`` (a 64-bit iota, whatever the x64 setting)."""
    shape = tuple(shape)
    if not shape:
        zero = np.zeros((), _U32)
        return zero, zero
    return iota_2x32_shape_p.bind(shape=shape)


# ---------------------------------------------------------------- raw uint32[2] keys


def key_words(key):
    """The two ``uint32`` words of raw keys ``uint32[..., 2]``, each of shape ``...``."""
    last = aval_of(key).ndim - 1
    return tuple(squeeze(slice_in_dim(key, i, i + 1, axis=last), (last,)) for i in (0, 1))


def raw_seed(seed):
    """The raw key of an integer scalar ``seed``: its high and low 32-bit words (the
    high word is 0 for seeds of 32 bits or less)."""
    aval = aval_of(seed)
    seed = convert_element_type(seed, aval.dtype)  # strips weak types
    bits = dtypes.iinfo(aval.dtype).bits
    if bits > 32:
        high = convert_element_type(shift_right_logical(seed, np.array(32, aval.dtype)), _U32)
    else:
        high = np.zeros((), _U32)
    low = convert_element_type(seed, _U32)  # XLA keeps the low 32 bits
    return concatenate([expand_dims(high, (0,)), expand_dims(low, (0,))], 0)


def partitionable() -> bool:
    """Whether Threefry keys split and draw bits by the partitionable scheme."""
    return bool(config.jax_threefry_partitionable)


def raw_split(key, shape):
    """``uint32[*shape, 2]``: new keys from ``key``, by the scheme in effect."""
    if partitionable():
        return _split_by_index(key, shape)
    return _split_by_count(key, shape)


def _split_by_index(key, shape):
    # Each new key is the hash of its index under ``key``.
    k1, k2 = key_words(key)
    hi, lo = iota_2x32_shape(shape)
    b1, b2 = threefry2x32_p.bind(k1, k2, hi, lo)
    n = len(shape)
    return concatenate([expand_dims(b1, (n,)), expand_dims(b2, (n,))], n)


def _split_by_count(key, shape):
    # The new keys are the hash of the counts 0 .. 2n-1, two words each.
    num = math.prod(shape)
    return reshape(threefry_2x32(key_words(key), iota(_U32, num * 2)), (*shape, 2))


def raw_fold_in(key, data):
    """The key ``key`` with the ``uint32`` scalar ``data`` folded in."""
    return threefry_2x32(key_words(key), raw_seed(data))


def raw_random_bits(key, bit_width: int, shape):
    """Unsigned integers of ``bit_width`` bits and ``shape``, by the scheme in effect."""
    if partitionable():
        return _bits_by_index(key, bit_width, shape)
    return _bits_by_count(key, bit_width, shape)


def _bits_by_index(key, bit_width: int, shape):
    # The hash of each element's index, its two words xor-ed (or joined for 64 bits).
    if math.prod(shape) > 2**64:
        raise NotImplementedError("random bits array of size exceeding 2 ** 64")
    k1, k2 = key_words(key)
    hi, lo = iota_2x32_shape(shape)
    b1, b2 = threefry2x32_p.bind(k1, k2, hi, lo)
    dtype = np.dtype(f"uint{bit_width}")
    if bit_width == 64:
        high = convert_element_type(b1, dtype)
        return bitwise_or(shift_left(high, np.array(32, dtype)), convert_element_type(b2, dtype))
    bits = bitwise_xor(b1, b2)
    return bits if bit_width == 32 else convert_element_type(bits, dtype)


_MAX_COUNT = 2**32 - 1  # counts hashed under one key


def _bits_by_count(key, bit_width: int, shape):
    # Enough 32-bit words (the hash of the counts 0, 1, ...) to hold the bits, cut
    # into ``bit_width``-bit values as a little-endian machine would; past 2**32 - 1
    # words, each block of words is hashed under its own split key.
    size = math.prod(shape)
    words = -(-bit_width * size // 32)
    blocks, rest = divmod(words, _MAX_COUNT)
    if not blocks:
        bits = threefry_2x32(key_words(key), iota(_U32, rest))
    else:
        keys = _split_by_count(key, (blocks + 1,))
        full = vmap(lambda k: threefry_2x32(key_words(k), iota(_U32, _MAX_COUNT)))(
            slice_in_dim(keys, 0, blocks)
        )
        last_key = squeeze(slice_in_dim(keys, blocks, blocks + 1), (0,))
        last = threefry_2x32(key_words(last_key), iota(_U32, rest))
        bits = concatenate([reshape(full, (blocks * _MAX_COUNT,)), last], 0)
    dtype = np.dtype(f"uint{bit_width}")
    if bit_width == 64:
        half = words // 2
        high = convert_element_type(slice_in_dim(bits, 0, half), dtype)
        low = convert_element_type(slice_in_dim(bits, half, 2 * half), dtype)
        bits = bitwise_or(shift_left(high, np.array(32, dtype)), low)
    elif bit_width < 32:
        per_word = 32 // bit_width
        shifts = np.arange(per_word, dtype=_U32) * np.uint32(bit_width)
        parts = shift_right_logical(
            broadcast_in_dim(bits, (words, per_word), (0,)),
            broadcast_in_dim(shifts, (words, per_word), (1,)),
        )
        parts = bitwise_and(parts, np.uint32(2**bit_width - 1))
        parts = convert_element_type(reshape(parts, (words * per_word,)), dtype)
        bits = slice_in_dim(parts, 0, size)
    return reshape(bits, tuple(shape))
