"""XLA's own random number generators: ``rng_uniform`` and ``rng_bit_generator`` (with
:class:`RandomAlgorithm`).

``rng_bit_generator`` takes a ``uint32[4]`` key, which the lowering reinterprets as the
``uint64[2]`` state XLA's generators use (as JAX does), so bits match JAX's for the same
key, shape, dtype and algorithm.
"""

from __future__ import annotations

import enum

import numpy as np

from lamina.interpreters import ad, batching, moveaxis
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import ShapedArray, dtypes
from lamina.lax.base.operands import aval_of, check_dtype, standard_primitive
from lamina.lax.base.primitives import (
    broadcast_in_dim,
    eq,
    iota,
    reduce_max,
    select_n,
)

__all__ = [
    "RandomAlgorithm",
    "rng_bit_generator",
    "rng_bit_generator_p",
    "rng_uniform",
    "rng_uniform_p",
]


# ---------------------------------------------------------------- rng_uniform


def _rng_uniform_abstract_eval(a, b, *, shape):
    if a.dtype != b.dtype:
        raise ValueError(
            f"Arguments to rng_uniform must have identical dtypes, got {a.dtype} and {b.dtype}."
        )
    if a.shape or b.shape:
        raise ValueError(
            f"Arguments to rng_uniform must be scalars; got shapes {a.shape} and {b.shape}."
        )
    return ShapedArray(tuple(shape), a.dtype)


def _rng_uniform_lowering(ctx, a, b, *, shape):
    dims = ctx.constant(np.asarray(shape, np.int64), ShapedArray((len(shape),), np.int64))
    distribution = hlo.RngDistributionAttr.get("UNIFORM")
    return [hlo.rng(a, b, dims, distribution)]


rng_uniform_p = standard_primitive("rng_uniform", _rng_uniform_abstract_eval, _rng_uniform_lowering)


def rng_uniform(a, b, shape):
    """Values uniform in ``[a, b)`` from XLA's stateful generator (not reproducible;
    use ``lamina.random`` for keyed randomness)."""
    return rng_uniform_p.bind(a, b, shape=tuple(int(d) for d in shape))


# ---------------------------------------------------------------- rng_bit_generator


class RandomAlgorithm(enum.IntEnum):
    """XLA's bit-generator algorithms."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


_XLA_ALGORITHM = {
    RandomAlgorithm.RNG_DEFAULT: "DEFAULT",
    RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
    RandomAlgorithm.RNG_PHILOX: "PHILOX",
}
_BIT_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))


def _rng_bit_generator_abstract_eval(key, *, shape, dtype, algorithm, out_sharding):
    if key.dtype != np.uint32 or key.shape != (4,):
        raise TypeError(
            "rng_bit_generator requires a key of dtype uint32 and shape (4,), got "
            f"{key.str_short()}."
        )
    check_dtype("rng_bit_generator", dtype, (("unsigned integer", np.unsignedinteger),))
    return [key, ShapedArray(tuple(shape), np.dtype(dtype))]


def _rng_bit_generator_lowering(ctx, key, *, shape, dtype, algorithm, out_sharding):
    u32 = ir.IntegerType.get_unsigned(32)
    u64 = ir.IntegerType.get_unsigned(64)
    pairs = hlo.reshape(ir.RankedTensorType.get([2, 2], u32), key)
    state = hlo.bitcast_convert(ir.RankedTensorType.get([2], u64), pairs)
    bits_type = ctx.ir_type(ctx.avals_out[1])
    op = hlo.RngBitGeneratorOp(
        state.type, bits_type, hlo.RngAlgorithmAttr.get(_XLA_ALGORITHM[algorithm]), state
    )
    new_pairs = hlo.bitcast_convert(ir.RankedTensorType.get([2, 2], u32), op.output_state)
    return [hlo.reshape(ctx.ir_type(ctx.avals_out[0]), new_pairs), op.output]


rng_bit_generator_p = standard_primitive(
    "rng_bit_generator", _rng_bit_generator_abstract_eval, _rng_bit_generator_lowering
)
rng_bit_generator_p.multiple_results = True
ad.zero_jvp(rng_bit_generator_p)


def _rng_bit_generator_batching(axis_data, vals, dims, *, shape, **params):
    """Like JAX: the first key generates the bits of the whole batch; the new state
    replaces the first key only."""

    (keys,), (d,) = vals, dims
    size = axis_data.size
    keys = moveaxis(keys, d, 0)
    is_first = broadcast_in_dim(eq(iota(np.int32, size), np.int32(0)), (size, 4), (0,))
    # The others zeroed, the largest entry of each column is the first key's.
    key = reduce_max(select_n(is_first, np.zeros((size, 4), np.uint32), keys), (0,))
    new_key, bits = rng_bit_generator_p.bind(key, shape=(size, *shape), **params)
    new_keys = select_n(is_first, keys, broadcast_in_dim(new_key, (size, 4), (1,)))
    return [new_keys, bits], [0, 0]


batching.batching_rules[rng_bit_generator_p] = _rng_bit_generator_batching


def rng_bit_generator(
    key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *, out_sharding=None
):
    """``(new_key, bits)``: unsigned random bits of ``shape`` and ``dtype`` from XLA's
    generator ``algorithm`` seeded by the ``uint32[4]`` ``key``."""
    dtype = dtypes.canonicalize_dtype(
        dtypes.check_and_canonicalize_user_dtype(dtype, "rng_bit_generator")
    )
    if np.dtype(dtype) not in _BIT_DTYPES:
        raise TypeError(
            "rng_bit_generator: dtype must be an unsigned integer type, got "
            f"{np.dtype(dtype).name}."
        )
    aval_of(key)
    return tuple(
        rng_bit_generator_p.bind(
            key,
            shape=tuple(int(d) for d in shape),
            dtype=np.dtype(dtype),
            algorithm=RandomAlgorithm(algorithm),
            out_sharding=out_sharding,
        )
    )
