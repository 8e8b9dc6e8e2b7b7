"""Small public helpers of ``lax`` (``select``, ``dtype``, ``index_take``,
``shape_as_value``, ``stage``), ``optimization_barrier``, and XLA's own random number
generators: ``rng_uniform`` and ``rng_bit_generator`` (with :class:`RandomAlgorithm`).

``rng_bit_generator`` takes a ``uint32[4]`` key, which the lowering reinterprets as the
``uint64[2]`` state XLA's generators use (as JAX does), so bits match JAX's for the same
key, shape, dtype and algorithm.
"""

from __future__ import annotations

import enum

import numpy as np

from lamina.interpreters import Token, ad, batching, moveaxis, not_mapped
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import AbstractToken, Primitive, ShapedArray, abstract_token, dtypes, tree_util
from lamina.lax.base.operands import aval_of, check_dtype, standard_primitive
from lamina.lax.base.primitives import (
    add,
    broadcast_in_dim,
    convert_element_type,
    eq,
    iota,
    reduce_max,
    rem,
    select_n,
)
from lamina.lax.base.reshaping import concatenate
from lamina.lax.slicing.gather_scatter import GatherDimensionNumbers, gather

__all__ = [
    "RandomAlgorithm",
    "after_all",
    "after_all_p",
    "create_token",
    "create_token_p",
    "dtype",
    "index_take",
    "optimization_barrier",
    "optimization_barrier_p",
    "rng_bit_generator",
    "rng_bit_generator_p",
    "rng_uniform",
    "rng_uniform_p",
    "select",
    "shape_as_value",
    "stage",
    "stage_p",
]


# ---------------------------------------------------------------- optimization_barrier


def _barrier_lowering(ctx, *operands):
    return list(hlo.OptimizationBarrierOp(list(operands)).results) if operands else []


optimization_barrier_p = standard_primitive(
    "optimization_barrier", lambda *avals: list(avals), _barrier_lowering
)
optimization_barrier_p.multiple_results = True


def _barrier_jvp(primals, tangents):
    # Separate barriers: one over primals alone keeps them known under partial
    # evaluation (a joint one would make them depend on the tangents).
    primals_out = optimization_barrier_p.bind(*primals)
    live = iter(optimization_barrier_p.bind(*[t for t in tangents if type(t) is not ad.Zero]))
    return primals_out, [t if type(t) is ad.Zero else next(live) for t in tangents]


def _barrier_transpose(cts, *operands):
    live = [type(c) is not ad.Zero for c in cts]
    outs = iter(optimization_barrier_p.bind(*[c for c in cts if type(c) is not ad.Zero]))
    return [next(outs) if nz else c for nz, c in zip(live, cts, strict=True)]


optimization_barrier_p.def_jvp(_barrier_jvp)
optimization_barrier_p.def_transpose(_barrier_transpose)
optimization_barrier_p.def_batching(
    lambda axis_data, vals, dims: (optimization_barrier_p.bind(*vals), list(dims))
)


def optimization_barrier(operand, /):
    """``operand`` (a pytree) unchanged, with XLA kept from moving computations across
    this point (for example, from merging a recomputation into the forward pass)."""
    leaves, tree = tree_util.tree_flatten(operand)
    return tree_util.tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


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


# ---------------------------------------------------------------- small helpers


def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` holds, else ``on_false`` (``select_n`` with the
    cases in the other order)."""
    return select_n(pred, on_false, on_true)


def dtype(x):
    """The canonical dtype of a value or a type (``lax.dtype(1.0)`` is float32)."""
    return dtypes.canonicalize_dtype(dtypes.dtype(x))


def index_take(src, idxs, axes):
    """``src`` indexed at the points ``zip(*idxs)`` along ``axes`` (indices taken
    modulo the axis sizes, so negative ones count from the end)."""

    shape = aval_of(src).shape
    axes = tuple(int(a) for a in axes)
    columns = []
    for index, axis in zip(idxs, axes, strict=True):
        index = convert_element_type(index, np.int32)
        size = np.int32(shape[axis])
        wrapped = rem(add(rem(index, size), size), size)
        columns.append(broadcast_in_dim(wrapped, (*aval_of(index).shape, 1), (0,)))
    starts = concatenate(columns, 1)
    numbers = GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape) - len(axes) + 1)),
        collapsed_slice_dims=axes,
        start_index_map=axes,
    )
    sizes = tuple(1 if d in axes else n for d, n in enumerate(shape))
    return gather(src, starts, numbers, sizes, mode="promise_in_bounds")


def shape_as_value(shape):
    """``shape`` as an int32 array (shapes here are always concrete)."""
    from lamina.interpreters import device_put

    return device_put(np.asarray([int(d) for d in shape], np.int32))


def stage(x, /):
    """``x`` as an array: a value of the current transformation if it is traced, else
    put on the device. Like JAX, staging leaves no equation in a Jaxpr: a traced value
    is already staged and a constant becomes a literal where it is used."""
    from lamina.interpreters import Tracer, device_put

    return x if isinstance(x, Tracer) else device_put(x)


def _stage_impl(x):
    from lamina.interpreters import device_put

    return device_put(x)


# The primitive itself, for programs that bind it: the identity, linear in ``x``.
stage_p = Primitive("stage")
stage_p.def_abstract_eval(lambda x: x)
stage_p.def_impl(_stage_impl)
stage_p.def_lowering(lambda ctx, x: [x])
ad.deflinear(stage_p)
stage_p.def_transpose(lambda ct, x: [ct])
stage_p.def_batching(lambda axis_data, vals, dims: (stage_p.bind(vals[0]), dims[0]))


# ---------------------------------------------------------------- tokens


def _create_token_lowering(ctx, *operands):
    return [hlo.create_token()]


def _after_all_abstract_eval(*operands):
    if any(not isinstance(a, AbstractToken) for a in operands):
        raise TypeError("Arguments to after_all must be tokens")
    return abstract_token


def _after_all_lowering(ctx, *operands):
    return [hlo.AfterAllOp(list(operands)).result] if operands else [hlo.create_token()]


create_token_p = Primitive("create_token")
create_token_p.def_abstract_eval(lambda *operands: abstract_token)
create_token_p.def_lowering(_create_token_lowering)
create_token_p.def_impl(lambda *operands: Token())
create_token_p.def_batching(lambda axis_data, vals, dims: (create_token_p.bind(), not_mapped))


def _after_all_impl(*operands):
    _after_all_abstract_eval(*(getattr(x, "aval", None) for x in operands))
    return Token()


after_all_p = Primitive("after_all")
after_all_p.def_abstract_eval(_after_all_abstract_eval)
after_all_p.def_lowering(_after_all_lowering)
after_all_p.def_impl(_after_all_impl)
after_all_p.def_batching(lambda axis_data, vals, dims: (after_all_p.bind(*vals), not_mapped))


def create_token(_=None):
    """A new token, which orders effectful operations (its argument is ignored)."""
    return create_token_p.bind()


def after_all(*operands):
    """A token that comes after every token in ``operands``."""
    return after_all_p.bind(*operands)
