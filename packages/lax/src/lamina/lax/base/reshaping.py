"""Primitives that move elements without arithmetic, beyond broadcast, reshape and
transpose: ``rev[dimensions]``, ``pad[padding_config]`` and its adjoint
``slice[start_indices, limit_indices, strides]`` (with ``slice_in_dim`` and
``index_in_dim``), ``concatenate[dimension]``, ``split[sizes, axis]``,
``squeeze[dimensions]`` and ``expand_dims``, with the params JAX 0.10.2 gives them.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from lamina.interpreters import ad, batching, reverse
from lamina.interpreters.mlir import eval_dynamic_shape_as_tensor, hlo
from lamina.ir import (
    ShapedArray,
    ShardingTypeError,
    canonicalize_dim,
    is_constant_shape,
    padded_sharding,
    resized_spec,
    spec_of,
)
from lamina.lax.base.operands import aval_of, check_same_dtypes, standard_primitive
from lamina.lax.base.primitives import broadcast_in_dim, reduce_sum, select_n, sub

__all__ = [
    "concatenate",
    "concatenate_p",
    "expand_dims",
    "index_in_dim",
    "pad",
    "pad_p",
    "rev",
    "rev_p",
    "slice",
    "slice_in_dim",
    "slice_p",
    "split",
    "split_p",
    "squeeze",
    "squeeze_p",
]


def _ints(xs) -> tuple[int, ...]:
    return tuple(operator.index(x) for x in xs)


# ------------------------------------------------------------------ rev


def _rev_abstract_eval(x, *, dimensions):
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if any(d < 0 for d in dimensions):
        raise TypeError(f"rev dimensions must have every element be nonnegative, got {dimensions}.")
    if any(d >= x.ndim for d in dimensions):
        raise TypeError(
            f"rev dimensions must all be less than operand ndim, got dimensions {dimensions} "
            f"for operand ndim {x.ndim}."
        )
    return x


def _rev_lowering(ctx, x, *, dimensions):
    return [hlo.reverse(x, list(dimensions))]


rev_p = standard_primitive("rev", _rev_abstract_eval, _rev_lowering)
rev_p.def_sharding(lambda x, *, dimensions: spec_of(x))


def _rev_batching(axis_data, vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    return rev_p.bind(x, dimensions=tuple(a + (a >= d) for a in dimensions)), d


rev_p.def_batching(_rev_batching)
ad.deflinear(rev_p)
rev_p.def_transpose(lambda ct, x, *, dimensions: [rev_p.bind(ct, dimensions=dimensions)])


def rev(operand, dimensions):
    """``operand`` with the order of its elements reversed along ``dimensions``."""
    return rev_p.bind(operand, dimensions=_ints(dimensions))


# ------------------------------------------------------------------ pad


def _padded_size(size: int, lo: int, hi: int, interior: int) -> int:
    return lo + hi + size + max(size - 1, 0) * interior


def _pad_abstract_eval(x, padding_value, *, padding_config):
    if x.dtype != padding_value.dtype:
        raise TypeError(
            "pad operand and padding_value must be same dtype: got "
            f"{x.dtype.name} and {padding_value.dtype.name}."
        )
    if len(padding_config) != x.ndim:
        raise ValueError(
            "length of padding_config must equal the number of axes of operand, got "
            f"padding_config {padding_config} for operand shape {x.shape}"
        )
    if any(interior < 0 for _, _, interior in padding_config):
        raise ValueError(
            f"interior padding in padding_config must be nonnegative, got padding_config "
            f"{padding_config}"
        )
    shape = tuple(_padded_size(d, *cfg) for d, cfg in zip(x.shape, padding_config, strict=True))
    if any(d < 0 for d in shape):
        raise ValueError(
            f"Dimension size after padding is not at least 0, got result shape {shape}, for "
            f"padding_config {padding_config} and operand shape {x.shape}"
        )
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


def _pad_lowering(ctx, x, padding_value, *, padding_config):
    lo, hi, interior = zip(*padding_config, strict=True) if padding_config else ((), (), ())
    return [hlo.pad(x, padding_value, list(lo), list(hi), list(interior))]


pad_p = standard_primitive("pad", _pad_abstract_eval, _pad_lowering)


@pad_p.def_sharding
def _pad_sharding(x, padding_value, *, padding_config):
    shape = _pad_abstract_eval(x, padding_value, padding_config=padding_config).shape
    return resized_spec(x, shape, "padding")


ad.deflinear(pad_p)


def _pad_transpose(ct, x, padding_value, *, padding_config):
    """The operand's cotangent is ``ct`` with the padding cut off (a negative pad of the
    edges, then a strided slice past the interior padding); the padding value's is what
    is left of the sum of ``ct``."""

    ct_aval = aval_of(ct)
    zero = np.zeros((), ct_aval.dtype)
    unpadded = pad_p.bind(
        ct, zero, padding_config=tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    )
    shape = aval_of(unpadded).shape
    strides = tuple(interior + 1 for _, _, interior in padding_config)
    t_operand = slice(unpadded, (0,) * len(shape), shape, strides)
    t_padding = None
    if reverse.is_undefined_primal(padding_value):
        all_axes = tuple(range(len(shape)))
        t_padding = sub(reduce_sum(ct, all_axes), reduce_sum(t_operand, all_axes))
    return [t_operand if reverse.is_undefined_primal(x) else None, t_padding]


pad_p.def_transpose(_pad_transpose)


def _pad_batching(axis_data, vals, dims, *, padding_config):
    """A batched padding value pads with zeros, then selects it where a mask padded the
    same way is false."""

    (x, padding_value), (xd, pd) = vals, dims
    if pd is batching.not_mapped:
        cfg = list(padding_config)
        cfg.insert(xd, (0, 0, 0))
        return pad_p.bind(x, padding_value, padding_config=tuple(cfg)), xd
    x = batching.bdim_at_front(x, xd, axis_data.size)
    cfg = ((0, 0, 0), *padding_config)
    aval = aval_of(x)
    zero = np.zeros((), aval.dtype)
    padded = pad_p.bind(x, zero, padding_config=cfg)
    inside = broadcast_in_dim(np.array(True), aval.shape, ())
    mask = pad_p.bind(inside, np.array(False), padding_config=cfg)
    out_shape = aval_of(padded).shape
    fill = broadcast_in_dim(batching.moveaxis(padding_value, pd, 0), out_shape, (0,))
    return select_n(mask, fill, padded), 0


pad_p.def_batching(_pad_batching)


def pad(operand, padding_value, padding_config):
    """``operand`` padded with ``padding_value``: ``padding_config`` holds a
    ``(low, high, interior)`` triple per dimension (edges may be negative, cutting
    elements off; interior padding goes between elements)."""
    if aval_of(padding_value).ndim:
        raise ValueError(
            f"padding_value must be a scalar; got np.shape(padding_value)="
            f"{tuple(aval_of(padding_value).shape)}"
        )
    config = tuple(_ints(triple) for triple in padding_config)
    return pad_p.bind(operand, padding_value, padding_config=config)


# ------------------------------------------------------------------ axis helpers


def canonical_axis(axis, ndim: int) -> int:
    """``axis`` counted from the front, with NumPy's error when out of range."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


# ------------------------------------------------------------------ concatenate


def _concatenate_abstract_eval(*xs, dimension):
    check_same_dtypes("concatenate", xs, tip="concatenate")
    shapes = ", ".join(str(x.shape) for x in xs)
    if len({x.ndim for x in xs}) != 1:
        raise TypeError(
            f"Cannot concatenate arrays with different numbers of dimensions: got {shapes}."
        )
    if not 0 <= dimension < xs[0].ndim:
        raise TypeError(
            f"concatenate dimension out of bounds: dimension {dimension} for shapes {shapes}."
        )
    others = {tuple(d for i, d in enumerate(x.shape) if i != dimension) for x in xs}
    if len(others) != 1:
        raise TypeError(
            "Cannot concatenate arrays with shapes that differ in dimensions other than the "
            f"one being concatenated: concatenating along dimension {dimension} for shapes "
            f"{shapes}."
        )
    shape = list(xs[0].shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(tuple(shape), xs[0].dtype, weak_type=all(x.weak_type for x in xs))


def _concatenate_lowering(ctx, *xs, dimension):
    return [hlo.concatenate(list(xs), dimension)]


concatenate_p = standard_primitive("concatenate", _concatenate_abstract_eval, _concatenate_lowering)


@concatenate_p.def_sharding
def _concatenate_sharding(*xs, dimension):
    """The typed operands must be split alike; the result is split as they are."""
    specs = [spec_of(x) for x in xs if x.type_sharding is not None]
    if any(sp != specs[0] for sp in specs):
        shown = ", ".join(_sharding_str(x) for x in xs)
        raise ShardingTypeError(
            f"All operands should have the same sharding. Got shardings {shown}"
        )
    return specs[0]


def _sharding_str(x) -> str:
    return str(padded_sharding(x)) if x.type_sharding is not None else "None"


ad.deflinear(concatenate_p)


def _concatenate_transpose(ct, *xs, dimension):
    """The cotangent split back into the operands' pieces."""
    sizes = tuple(aval_of_operand(x).shape[dimension] for x in xs)
    if type(ct) is ad.Zero:
        return [None for _ in xs]
    pieces = split_p.bind(ct, sizes=sizes, axis=dimension)
    return [p if reverse.is_undefined_primal(x) else None for p, x in zip(pieces, xs, strict=True)]


def aval_of_operand(x):
    """The type of a transpose rule's operand, known or linear."""
    return x.aval if reverse.is_undefined_primal(x) else aval_of(x)


concatenate_p.def_transpose(_concatenate_transpose)


def _concatenate_batching(axis_data, vals, dims, *, dimension):
    """Operands meet at the first batched one's batch dim (unbatched ones broadcast)."""
    bd = next(d for d in dims if d is not batching.not_mapped)
    moved = [batching.matchaxis(axis_data, d, bd, v) for v, d in zip(vals, dims, strict=True)]
    return concatenate_p.bind(*moved, dimension=dimension + (dimension >= bd)), bd


concatenate_p.def_batching(_concatenate_batching)


def concatenate(operands, dimension):
    """The ``operands`` joined along ``dimension`` (their other sizes agree)."""
    operands = list(operands)
    if not operands:
        raise ValueError("concatenate requires a non-empty sequences of arrays")
    if len(operands) == 1 and hasattr(operands[0], "aval"):
        return operands[0]
    return concatenate_p.bind(*operands, dimension=operator.index(dimension))


# ------------------------------------------------------------------ split


def _split_abstract_eval(x, *, sizes, axis):
    if not 0 <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if sum(sizes) != x.shape[axis]:
        raise ValueError(
            f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the operand "
            f"shape {list(x.shape)}"
        )
    return [
        ShapedArray((*x.shape[:axis], s, *x.shape[axis + 1 :]), x.dtype, weak_type=x.weak_type)
        for s in sizes
    ]


def _split_lowering(ctx, x, *, sizes, axis):
    outs, start = [], 0
    shape = ctx.avals_in[0].shape
    for size in sizes:
        begin = [0] * len(shape)
        limit = list(shape)
        begin[axis], limit[axis] = start, start + size
        if is_constant_shape((*begin, *limit)):
            outs.append(hlo.slice(x, begin, limit, [1] * len(shape)))
        else:  # symbolic sizes: bounds computed in the program
            outs.append(_slice_lowering(ctx.replace(avals_out=[ctx.avals_out[len(outs)]]), x,
                                        start_indices=begin, limit_indices=limit,
                                        strides=None)[0])  # fmt: skip
        start += size
    return outs


split_p = standard_primitive("split", _split_abstract_eval, _split_lowering)
split_p.multiple_results = True


@split_p.def_sharding
def _split_sharding(x, *, sizes, axis):
    outs = _split_abstract_eval(x, sizes=sizes, axis=axis)
    return [resized_spec(x, o.shape, "split") for o in outs]


ad.deflinear(split_p)


def _split_transpose(cts, x, *, sizes, axis):
    return [concatenate_p.bind(*map(ad.instantiate_zeros, cts), dimension=axis)]


split_p.def_transpose(_split_transpose)


def _split_batching(axis_data, vals, dims, *, sizes, axis):
    (x,), (d,) = vals, dims
    outs = split_p.bind(x, sizes=sizes, axis=axis + (axis >= d))
    return outs, [d] * len(outs)


split_p.def_batching(_split_batching)


def split(operand, sizes, axis=0):
    """``operand`` cut along ``axis`` into consecutive pieces of ``sizes``."""
    axis = canonical_axis(axis, aval_of(operand).ndim)
    return split_p.bind(operand, sizes=tuple(map(canonicalize_dim, sizes)), axis=axis)


# ------------------------------------------------------------------ squeeze


def _squeeze_abstract_eval(x, *, dimensions):
    if any(x.shape[d] != 1 for d in dimensions):
        raise ValueError(
            "cannot select an axis to squeeze out which has size not equal to one, got "
            f"shape={x.shape} and dimensions={dimensions}"
        )
    shape = tuple(d for i, d in enumerate(x.shape) if i not in dimensions)
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


def _squeeze_lowering(ctx, x, *, dimensions):
    return [ctx.reshape(x, ctx.avals_out[0])]


squeeze_p = standard_primitive("squeeze", _squeeze_abstract_eval, _squeeze_lowering)
squeeze_p.def_sharding(
    lambda x, *, dimensions: tuple(e for i, e in enumerate(spec_of(x)) if i not in dimensions)
)
ad.deflinear(squeeze_p)
squeeze_p.def_transpose(lambda ct, x, *, dimensions: [expand_dims(ct, dimensions)])


def _squeeze_batching(axis_data, vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    dimensions = tuple(a + (a >= d) for a in dimensions)
    return squeeze_p.bind(x, dimensions=dimensions), d - sum(a < d for a in dimensions)


squeeze_p.def_batching(_squeeze_batching)


def squeeze(array, dimensions):
    """``array`` without its size-1 axes ``dimensions``."""
    ndim = aval_of(array).ndim
    dims = tuple(sorted(canonical_axis(d, ndim) for d in dimensions))
    if len(set(dims)) != len(dims):
        raise ValueError(f"dimensions are not unique: {tuple(dimensions)}")
    if not dims and hasattr(array, "aval"):
        return array
    return squeeze_p.bind(array, dimensions=dims)


def expand_dims(array, dimensions):
    """``array`` with new axes of size 1 at ``dimensions`` (positions in the result)."""

    shape = aval_of(array).shape
    ndim_out = len(shape) + len(dimensions)
    dims = [canonical_axis(d, ndim_out) for d in dimensions]
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {tuple(dimensions)}")
    out_shape = list(shape)
    for d in sorted(dims):
        out_shape.insert(d, 1)
    kept = tuple(i for i in range(ndim_out) if i not in dims)
    return broadcast_in_dim(array, tuple(out_shape), kept)


# ------------------------------------------------------------------ slice


def check_slice_sizes(x, sizes, prefix: str = "dynamic_slice "):
    """JAX's checks of the window sizes of ``slice`` and ``dynamic_slice``."""
    if len(sizes) != x.ndim:
        raise ValueError(
            f"{prefix}slice_sizes must have length equal to the number of dimensions "
            f"of the operand, got slice_sizes {sizes} for operand shape {x.shape}."
        )
    if any(s > d for s, d in zip(sizes, x.shape, strict=True)):
        raise TypeError(
            "slice slice_sizes must be less than or equal to operand shape, got "
            f"slice_sizes {sizes} for operand shape {x.shape}."
        )
    if any(s < 0 for s in sizes):
        raise TypeError(
            f"slice slice_sizes must be greater than or equal to zero, got slice_sizes of {sizes}."
        )


def _check_static_slice(x, start_indices, limit_indices):
    """JAX checks an unstrided slice as a dynamic slice with static starts: by its sizes
    alone (a start out of range is clamped, as XLA clamps dynamic slices)."""
    sizes = tuple(lim - s for s, lim in zip(start_indices, limit_indices, strict=True))
    check_slice_sizes(x, sizes, prefix="")
    return sizes


def _check_strided_slice(x, start_indices, limit_indices, strides):
    if any(s < 0 for s in start_indices):
        raise TypeError(
            f"slice start_indices must have every element be nonnegative, got {start_indices}."
        )
    if any(lim > d for lim, d in zip(limit_indices, x.shape, strict=True)):
        raise TypeError(
            "slice limit_indices must be less than or equal to operand shape, got "
            f"limit_indices {limit_indices} for operand shape {x.shape}."
        )
    if any(lim < s for s, lim in zip(start_indices, limit_indices, strict=True)):
        raise TypeError(
            "slice limit_indices must be greater than or equal to start_indices, got "
            f"start_indices {start_indices} and limit_indices {limit_indices}."
        )
    if len(strides) != x.ndim:
        raise TypeError(
            "slice strides must have length equal to the number of dimensions of the "
            f"operand, got strides {strides} for operand shape {x.shape}."
        )
    if any(s < 0 for s in strides):
        raise TypeError(f"slice strides must have every element be nonnegative, got {strides}.")
    sizes = (lim - s for s, lim in zip(start_indices, limit_indices, strict=True))
    return tuple(-(-size // st) for size, st in zip(sizes, strides, strict=True))


def _slice_abstract_eval(x, *, start_indices, limit_indices, strides):
    if len(start_indices) != x.ndim or len(limit_indices) != x.ndim:
        raise ValueError(
            "slice start_indices and limit_indices must have length equal to the number of "
            f"dimensions of the operand, got start_indices {start_indices} and "
            f"limit_indices {limit_indices} for operand shape {x.shape}."
        )
    if strides is None:
        shape = _check_static_slice(x, start_indices, limit_indices)
    else:
        shape = _check_strided_slice(x, start_indices, limit_indices, strides)
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


def _clamped_starts(shape, start_indices, limit_indices):
    """Where an unstrided slice really starts: its start clamped so it fits."""
    return tuple(
        builtins.min(builtins.max(s, 0), d - (lim - s))
        for d, s, lim in zip(shape, start_indices, limit_indices, strict=True)
    )


def _slice_lowering(ctx, x, *, start_indices, limit_indices, strides):
    if not is_constant_shape((*start_indices, *limit_indices, *ctx.avals_in[0].shape)):
        # Symbolic bounds or operand: a slice whose bounds are computed in the program.
        steps = [1] * len(start_indices) if strides is None else list(strides)
        return [
            hlo.real_dynamic_slice(
                ctx.ir_type(ctx.avals_out[0]),
                x,
                eval_dynamic_shape_as_tensor(ctx, start_indices),
                eval_dynamic_shape_as_tensor(ctx, limit_indices),
                eval_dynamic_shape_as_tensor(ctx, steps),
            )
        ]
    if strides is None:
        sizes = [lim - s for s, lim in zip(start_indices, limit_indices, strict=True)]
        start_indices = _clamped_starts(ctx.avals_in[0].shape, start_indices, limit_indices)
        limit_indices = [s + n for s, n in zip(start_indices, sizes, strict=True)]
        strides = [1] * len(sizes)
    return [hlo.slice(x, list(start_indices), list(limit_indices), list(strides))]


slice_p = standard_primitive("slice", _slice_abstract_eval, _slice_lowering)


@slice_p.def_sharding
def _slice_sharding(x, **params):
    return resized_spec(x, _slice_abstract_eval(x, **params).shape, "slicing")


ad.deflinear(slice_p)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    """The cotangent padded back into place: zeros at the edges and between strided
    elements."""
    shape = x.aval.shape
    if strides is None:
        start_indices = _clamped_starts(shape, start_indices, limit_indices)
        strides = (1,) * len(shape)
    config = []
    for dim, start, stride, n in zip(shape, start_indices, strides, aval_of(ct).shape,
                                     strict=True):  # fmt: skip
        covered = n + max(n - 1, 0) * (stride - 1)
        config.append((start, dim - start - covered, stride - 1))
    return [pad(ct, np.zeros((), aval_of(ct).dtype), config)]


slice_p.def_transpose(_slice_transpose)


def _slice_batching(axis_data, vals, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = vals, dims
    start = (*start_indices[:d], 0, *start_indices[d:])
    limit = (*limit_indices[:d], axis_data.size, *limit_indices[d:])
    if strides is not None:
        strides = (*strides[:d], 1, *strides[d:])
    out = slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides)
    return out, d


slice_p.def_batching(_slice_batching)


def slice(operand, start_indices, limit_indices, strides=None):
    """The elements of ``operand`` from ``start_indices`` up to (not including)
    ``limit_indices``, every ``strides``-th along each dimension."""
    return slice_p.bind(
        operand,
        start_indices=tuple(map(canonicalize_dim, start_indices)),
        limit_indices=tuple(map(canonicalize_dim, limit_indices)),
        strides=None if strides is None else _ints(strides),
    )


def _canonical_axis(axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    return axis + ndim if axis < 0 else axis


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``operand[..., start_index:limit_index:stride, ...]`` along ``axis``: ``None``
    bounds mean the ends, negative ones count from the end (no clamping, as in JAX)."""
    shape = aval_of(operand).shape
    axis = _canonical_axis(axis, len(shape))
    size = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = size if limit_index is None else operator.index(limit_index)
    start, limit = start + size if start < 0 else start, limit + size if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """The ``index``-th slice of ``operand`` along ``axis`` (negative counts from the
    end), with that axis kept at size 1 or removed."""
    shape = aval_of(operand).shape
    axis = _canonical_axis(axis, len(shape))
    index = operator.index(index)
    size = shape[axis]
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))
