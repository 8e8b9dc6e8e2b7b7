"""``conv_general_dilated``: the convolution primitive, with all of its rules.

Params as JAX 0.10.2 names them (all printed): ``window_strides``, ``padding`` (a tuple
of ``(low, high)`` pairs), ``lhs_dilation``, ``rhs_dilation``, ``dimension_numbers`` (a
``ConvDimensionNumbers``), ``feature_group_count``, ``batch_group_count``,
``precision``, ``preferred_element_type`` and ``out_sharding``. Batching is reshapes
around one more convolution.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import reverse
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import (
    ShapedArray,
    ShardingTypeError,
    canonicalize_dim,
    dtypes,
    out_type_sharding,
    resized_spec,
    spec_of,
)
from lamina.lax.base.bilinear import bilinear_jvp
from lamina.lax.base.operands import aval_of, check_same_dtypes, standard_primitive
from lamina.lax.base.primitives import convert_element_type, reshape
from lamina.lax.base.reshaping import rev
from lamina.lax.convolution.dimension_numbers import (
    ConvDimensionNumbers,
    conv_dimension_numbers,
    conv_shape_tuple,
    dilate_shape,
    explicit_padding,
    padtype_to_pads,
    swap_first_two,
)
from lamina.lax.dot.dot_general import (
    canonicalize_precision,
    check_preferred_element_type,
    precision_config,
)

__all__ = [
    "conv_general_dilated",
    "conv_general_dilated_p",
]


def _taken(shape, spec) -> tuple[int, ...]:
    return tuple(canonicalize_dim(shape[i]) for i in spec)  # symbolic sizes too


def _check_group_counts(lhs_t, rhs_t, feature_group_count, batch_group_count) -> None:
    """``lhs_t``/``rhs_t``: shapes in (batch, feature, spatial...) order."""
    name = "conv_general_dilated"
    for what, count in (("feature", feature_group_count), ("batch", batch_group_count)):
        if not (isinstance(count, (int, np.integer)) or float(count).is_integer()) or count < 1:
            raise ValueError(f"{name} {what}_group_count must be a positive integer, got {count}.")
    if feature_group_count > 1 and batch_group_count > 1:
        raise ValueError(
            "At most one of batch_group_count and feature_group_count may be > 1, got "
            f"batch_group_count={batch_group_count} and feature_group_count={feature_group_count}"
        )
    lhs_features, rhs_in, rhs_out = lhs_t[1], rhs_t[1], rhs_t[0]
    if lhs_features % feature_group_count:
        raise ValueError(
            f"{name} feature_group_count must divide lhs feature dimension size, but "
            f"{feature_group_count} does not divide {lhs_features}."
        )
    if lhs_features // feature_group_count != rhs_in:
        raise ValueError(
            f"{name} lhs feature dimension size divided by feature_group_count must equal the "
            f"rhs input feature dimension size, but {lhs_features} // {feature_group_count} "
            f"!= {rhs_in}."
        )
    if rhs_out % feature_group_count:
        raise ValueError(
            f"{name} rhs output feature dimension size must be a multiple of "
            f"feature_group_count, but {rhs_out} is not a multiple of {feature_group_count}."
        )
    if lhs_t[0] % batch_group_count:
        raise ValueError(
            f"{name} batch_group_count must divide lhs batch dimension size, but "
            f"{batch_group_count} does not divide {lhs_t[0]}."
        )
    if rhs_out % batch_group_count:
        raise ValueError(
            f"{name} rhs output feature dimension size must be a multiple of "
            f"batch_group_count, but {rhs_out} is not a multiple of {batch_group_count}."
        )


def _abstract_eval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type, out_sharding):  # fmt: skip
    if lhs.ndim != rhs.ndim:
        raise TypeError(
            f"convolution requires lhs and rhs ndim to be equal, got {lhs.ndim} and {rhs.ndim}."
        )
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_t, rhs_t = _taken(lhs.shape, lhs_spec), _taken(rhs.shape, rhs_spec)
    _check_group_counts(lhs_t, rhs_t, feature_group_count, batch_group_count)
    n = lhs.ndim - 2
    if len(window_strides) != n:
        raise ValueError(
            "conv_general_dilated window and window_strides must have the same number of "
            f"dimensions, but got {n} and {len(window_strides)}"
        )
    if any(s < 1 for s in window_strides):
        raise ValueError(f"All window strides must be positive, got {tuple(window_strides)}.")
    for dilation in (lhs_dilation, rhs_dilation):
        if len(dilation) != n:
            raise ValueError(
                "conv_general_dilated dilation and window must have the same number of "
                f"dimensions, but got {len(dilation)} and {n}"
            )
        if any(d < 1 for d in dilation):
            raise TypeError(f"All dilations must be positive, got {tuple(dilation)}.")
    lhs_dilated = (*lhs_t[:2], *dilate_shape(lhs_t[2:], lhs_dilation))
    rhs_dilated = (*rhs_t[:2], *dilate_shape(rhs_t[2:], rhs_dilation))
    out_t = conv_shape_tuple(lhs_dilated, rhs_dilated, window_strides, padding,
                             batch_group_count)  # fmt: skip
    shape = [0] * lhs.ndim
    for size, axis in zip(out_t, out_spec, strict=True):
        shape[axis] = size
    check_same_dtypes("conv_general_dilated", (lhs, rhs))
    if preferred_element_type is None:
        dtype = lhs.dtype
    else:
        check_preferred_element_type(lhs.dtype, preferred_element_type)
        dtype = preferred_element_type
    weak = lhs.weak_type and rhs.weak_type and preferred_element_type is None
    return ShapedArray(tuple(shape), dtype, weak_type=weak)


def _lowering(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
              dimension_numbers, feature_group_count, batch_group_count, precision,
              preferred_element_type, out_sharding):  # fmt: skip
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    numbers = hlo.ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0],
        input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=list(lhs_spec[2:]),
        kernel_output_feature_dimension=rhs_spec[0],
        kernel_input_feature_dimension=rhs_spec[1],
        kernel_spatial_dimensions=list(rhs_spec[2:]),
        output_batch_dimension=out_spec[0],
        output_feature_dimension=out_spec[1],
        output_spatial_dimensions=list(out_spec[2:]),
    )
    n = len(lhs_spec) - 2
    pads = np.asarray(padding, np.int64).reshape(n, 2)
    out = hlo.convolution(
        ctx.ir_type(ctx.avals_out[0]),
        lhs,
        rhs,
        numbers,
        int(feature_group_count),
        int(batch_group_count),
        window_strides=list(window_strides),
        padding=ir.DenseIntElementsAttr.get(pads, shape=(n, 2)),
        lhs_dilation=list(lhs_dilation),
        rhs_dilation=list(rhs_dilation),
        window_reversal=[False] * n,
        precision_config=precision_config(precision),
    )
    return [out]


conv_general_dilated_p = standard_primitive("conv_general_dilated", _abstract_eval, _lowering)


@conv_general_dilated_p.def_sharding
def _sharding_rule(lhs, rhs, **params):
    """Without ``out_sharding``: an unsplit kernel and an unsplit input feature
    dimension; the result keeps the input's splits."""
    out_sharding = params["out_sharding"]
    if out_sharding is not None:
        ndim = len(lhs.shape)
        return tuple(out_sharding.spec) + (None,) * (ndim - len(out_sharding.spec))
    lhs_spec = params["dimension_numbers"].lhs_spec
    if any(e is not None for e in spec_of(rhs)) or spec_of(lhs)[lhs_spec[1]] is not None:
        raise ShardingTypeError(
            "Please specify the output sharding via `out_sharding` parameter of "
            "`conv_general_dilated`"
        )
    shape = _abstract_eval(lhs, rhs, **params).shape
    return resized_spec(lhs, shape, "conv_general_dilated")


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1,
                         precision=None, preferred_element_type=None,
                         out_sharding=None):  # fmt: skip
    """The general n-dimensional convolution: ``rhs`` (the kernel) slid over ``lhs``
    (the input) with strides, explicit or named padding (``'SAME'``, ``'VALID'``,
    ``'SAME_LOWER'``), input and kernel dilation, feature and batch groups, in any
    layout ``dimension_numbers`` describes."""
    lhs_shape, rhs_shape = aval_of(lhs).shape, aval_of(rhs).shape
    numbers = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n = len(lhs_shape) - 2
    if lhs_dilation is None:
        lhs_dilation = (1,) * n
    elif isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError(
            "String padding is not implemented for transposed convolution using this op. "
            "Please either exactly specify the required padding or use conv_transpose."
        )
    if rhs_dilation is None:
        rhs_dilation = (1,) * n
    if isinstance(padding, str):
        kernel = dilate_shape(_taken(rhs_shape, numbers.rhs_spec)[2:], rhs_dilation)
        inputs = _taken(lhs_shape, numbers.lhs_spec)[2:]
        padding = padtype_to_pads(inputs, kernel, window_strides, padding)
    padding = explicit_padding(padding)
    if preferred_element_type is not None:
        preferred_element_type = dtypes.check_and_canonicalize_user_dtype(
            preferred_element_type, "conv_general_dilated"
        )
    return conv_general_dilated_p.bind(
        lhs,
        rhs,
        window_strides=tuple(int(s) for s in window_strides),
        padding=padding,
        lhs_dilation=tuple(int(d) for d in lhs_dilation),
        rhs_dilation=tuple(int(d) for d in rhs_dilation),
        dimension_numbers=numbers,
        feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred_element_type,
        out_sharding=out_type_sharding(out_sharding, "conv_general_dilated"),
    )


# ------------------------------------------------------------------ forward mode


conv_general_dilated_p.def_jvp(bilinear_jvp(conv_general_dilated_p))


# ------------------------------------------------------------------ reshaping helpers


def reshape_axis_into(src: int, dst: int, x):
    """Merges axis ``src`` of ``x`` into axis ``dst`` (numbered with ``src`` removed),
    ``src`` the major part."""

    shape = aval_of(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [d for i, d in enumerate(shape) if i != src]
    new_shape[dst] *= shape[src]
    return reshape(x, tuple(new_shape), tuple(perm))


def reshape_axis_out_of(src: int, major: int, x):
    """Splits axis ``src`` of ``x`` into ``(major, size // major)``."""

    shape = list(aval_of(x).shape)
    shape[src : src + 1] = [major, shape[src] // major]
    return reshape(x, tuple(shape))


# ------------------------------------------------------------------ reverse mode


def _lhs_transpose_padding(in_shape, window, strides, out_shape, padding, lhs_dilation,
                           rhs_dilation):  # fmt: skip
    """Pads of the dilated cotangent so that a stride-``lhs_dilation`` convolution with
    the flipped kernel gives back every input position (negative pads trim)."""
    lhs_d = dilate_shape(in_shape, lhs_dilation)
    rhs_d = dilate_shape(window, rhs_dilation)
    out_d = dilate_shape(out_shape, strides)
    before = [k - lo - 1 for k, (lo, _) in zip(rhs_d, padding, strict=True)]
    after = [i + k - 1 - o - b for i, k, o, b in zip(lhs_d, rhs_d, out_d, before, strict=True)]
    return tuple(zip(before, after, strict=True))


def _rhs_transpose_padding(in_shape, window, strides, out_shape, padding, lhs_dilation,
                           rhs_dilation):  # fmt: skip
    """Pads of the input so that sliding the stride-dilated cotangent over it with
    stride ``rhs_dilation`` gives exactly the kernel's spatial size."""
    lhs_d = dilate_shape(in_shape, lhs_dilation)
    rhs_d = dilate_shape(window, rhs_dilation)
    out_d = dilate_shape(out_shape, strides)
    return tuple(
        (lo, o - i + k - lo - 1)
        for i, k, o, (lo, _) in zip(lhs_d, rhs_d, out_d, padding, strict=True)
    )


def _as_compute_type(x, preferred_element_type):
    """The primal operand in the dtype the cotangent has (with a preferred element
    type, the transposed convolution runs in that type)."""

    if preferred_element_type is None or aval_of(x).dtype == preferred_element_type:
        return x
    return convert_element_type(x, preferred_element_type)


def _back_to(x, dtype):
    return x if aval_of(x).dtype == dtype else convert_element_type(x, dtype)


def _transpose_lhs(ct, rhs, lhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type, out_sharding):  # fmt: skip
    """The input's cotangent: the cotangent convolved with the spatially flipped
    kernel (its feature axes swapped), strides and input dilation trading places."""

    lhs_spec, rhs_spec, out_spec = dimension_numbers
    groups = max(feature_group_count, batch_group_count)
    if groups > 1:  # the groups move from the kernel's output to its input features
        rhs = reshape_axis_out_of(rhs_spec[0], groups, rhs)
        rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    pads = _lhs_transpose_padding(
        _taken(lhs_aval.shape, lhs_spec[2:]),
        _taken(aval_of(rhs).shape, rhs_spec[2:]),
        window_strides,
        _taken(aval_of(ct).shape, out_spec[2:]),
        padding,
        lhs_dilation,
        rhs_dilation,
    )
    flipped = _as_compute_type(rev(rhs, tuple(rhs_spec[2:])), preferred_element_type)
    out = conv_general_dilated_p.bind(
        ct,
        flipped,
        window_strides=tuple(lhs_dilation),
        padding=pads,
        lhs_dilation=tuple(window_strides),
        rhs_dilation=tuple(rhs_dilation),
        dimension_numbers=ConvDimensionNumbers(out_spec, swap_first_two(rhs_spec), lhs_spec),
        feature_group_count=groups,
        batch_group_count=1,
        precision=precision,
        preferred_element_type=preferred_element_type,
        out_sharding=None,
    )
    if batch_group_count > 1:  # the groups were batches: move them back there
        out = reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
        out = reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return _back_to(out, lhs_aval.dtype)


def _transpose_rhs(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type, out_sharding):  # fmt: skip
    """The kernel's cotangent: the input convolved with the cotangent (batch axes
    contracted), strides and kernel dilation trading places; feature groups become
    batch groups and the other way round."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pads = _rhs_transpose_padding(
        _taken(aval_of(lhs).shape, lhs_spec[2:]),
        _taken(rhs_aval.shape, rhs_spec[2:]),
        window_strides,
        _taken(aval_of(ct).shape, out_spec[2:]),
        padding,
        lhs_dilation,
        rhs_dilation,
    )
    out = conv_general_dilated_p.bind(
        _as_compute_type(lhs, preferred_element_type),
        ct,
        window_strides=tuple(rhs_dilation),
        padding=pads,
        lhs_dilation=tuple(lhs_dilation),
        rhs_dilation=tuple(window_strides),
        dimension_numbers=ConvDimensionNumbers(
            swap_first_two(lhs_spec), swap_first_two(out_spec), swap_first_two(rhs_spec)
        ),
        feature_group_count=batch_group_count,
        batch_group_count=feature_group_count,
        precision=precision,
        preferred_element_type=preferred_element_type,
        out_sharding=None,
    )
    return _back_to(out, rhs_aval.dtype)


def _transpose(ct, lhs, rhs, **params):
    """Linear in one operand at a time."""
    l_undef, r_undef = reverse.is_undefined_primal(lhs), reverse.is_undefined_primal(rhs)
    if l_undef and r_undef:
        raise NotImplementedError(
            "conv_general_dilated is not linear in both operands: cannot transpose"
        )
    if l_undef:
        return [_transpose_lhs(ct, rhs, lhs.aval, **params), None]
    return [None, _transpose_rhs(ct, lhs, rhs.aval, **params)]


conv_general_dilated_p.def_transpose(_transpose)


# ------------------------------------------------------------------ batching
# The batch axis is folded into an axis the convolution already has, so one convolution
# computes every example:
# - both operands batched: the kernels stack along the output features and the inputs
#   along the input features, as that many more feature groups (or, with batch groups,
#   the inputs stack along the batch as more batch groups);
# - only the input batched: the examples join the input's batch axis;
# - only the kernel batched: the kernels join the output features (inside each group
#   when there are groups, which must stay outermost).


def _batched_conv(axis_data, vals, dims, *, dimension_numbers, feature_group_count,
                  batch_group_count, **params):  # fmt: skip
    (lhs, rhs), (lhs_bdim, rhs_bdim) = vals, dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    size = axis_data.size

    def conv(new_lhs, new_rhs, features=feature_group_count, batches=batch_group_count):
        return conv_general_dilated_p.bind(
            new_lhs,
            new_rhs,
            dimension_numbers=dimension_numbers,
            feature_group_count=features,
            batch_group_count=batches,
            **params,
        )

    if lhs_bdim is not None and rhs_bdim is not None:
        if batch_group_count > 1:
            new_lhs = reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
            features, batches = feature_group_count, batch_group_count * size
        else:
            new_lhs = reshape_axis_into(lhs_bdim, lhs_spec[1], lhs)
            features, batches = feature_group_count * size, batch_group_count
        new_rhs = reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv(new_lhs, new_rhs, features, batches)
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]

    if lhs_bdim is not None:
        if batch_group_count == 1:
            new_lhs = reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
        else:  # the batch groups stay outermost in the batch axis
            new_lhs = reshape_axis_out_of(
                lhs_spec[0] + int(lhs_bdim <= lhs_spec[0]), batch_group_count, lhs
            )
            new_lhs = reshape_axis_into(
                lhs_bdim + int(lhs_spec[0] < lhs_bdim), lhs_spec[0] + 1, new_lhs
            )
            new_lhs = reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
        out = conv(new_lhs, rhs)
        return reshape_axis_out_of(out_spec[0], size, out), out_spec[0]

    if feature_group_count == 1 and batch_group_count == 1:
        new_rhs = reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv(lhs, new_rhs)
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]

    # Groups must stay outermost in the output features: split them out, put the batch
    # inside each group, then merge back (and undo the same on the output).
    groups = max(feature_group_count, batch_group_count)
    new_rhs = reshape_axis_out_of(rhs_spec[0] + int(rhs_bdim <= rhs_spec[0]), groups, rhs)
    new_rhs = reshape_axis_into(rhs_bdim + int(rhs_spec[0] < rhs_bdim), rhs_spec[0] + 1, new_rhs)
    new_rhs = reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = conv(lhs, new_rhs)
    out = reshape_axis_out_of(out_spec[1], groups, out)
    out = reshape_axis_out_of(out_spec[1] + 1, size, out)
    out = reshape_axis_into(out_spec[1], out_spec[1] + 1, out)
    return out, out_spec[1]


conv_general_dilated_p.def_batching(_batched_conv)
