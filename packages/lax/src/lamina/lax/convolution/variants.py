"""Convenience convolutions built on ``conv_general_dilated``: ``conv``,
``conv_with_general_padding``, ``conv_transpose``, ``conv_general_dilated_patches``
(image patches as features) and ``conv_general_dilated_local`` (unshared weights)."""

from __future__ import annotations

import math

import numpy as np

from lamina.interpreters import device_put_value
from lamina.lax.base.operands import aval_of
from lamina.lax.base.primitives import transpose
from lamina.lax.base.reshaping import rev
from lamina.lax.convolution.conv_general_dilated import conv_general_dilated
from lamina.lax.convolution.dimension_numbers import (
    conv_dimension_numbers,
    conv_transpose_padding,
    dilate_dim,
    explicit_padding,
)
from lamina.lax.dot.dot_general import Precision, dot_general

__all__ = [
    "conv",
    "conv_general_dilated_local",
    "conv_general_dilated_patches",
    "conv_transpose",
    "conv_with_general_padding",
]


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """An ``NCHW`` input convolved with an ``OIHW`` kernel."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)  # fmt: skip


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):  # fmt: skip
    """``conv`` with explicit padding and input/kernel dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)  # fmt: skip


_TRANSPOSE_LAYOUTS = {
    2: ("NC", "IO", "NC"),
    3: ("NHC", "HIO", "NHC"),
    4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def _moveaxes(x, sources, destinations):
    ndim = aval_of(x).ndim
    sources = [s % ndim for s in sources]
    rest = [i for i in range(ndim) if i not in sources]
    perm = [None] * ndim
    for s, d in zip(sources, destinations, strict=True):
        perm[d % ndim] = s
    it = iter(rest)
    perm = [next(it) if p is None else p for p in perm]
    return transpose(x, tuple(perm))


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):  # fmt: skip
    """The fractionally strided convolution (the input dilated by ``strides``), laid
    out as TensorFlow's by default (``NHWC``/``HWIO``). ``'SAME'``/``'VALID'`` name the
    forward convolution's padding; explicit pads are the transposed convolution's own,
    or with ``use_consistent_padding`` the forward convolution's. ``transpose_kernel``
    flips the kernel spatially and swaps its feature axes (the gradient of a forward
    convolution with that kernel)."""

    lhs_shape, rhs_shape = aval_of(lhs).shape, aval_of(rhs).shape
    if len(lhs_shape) != len(rhs_shape) or len(lhs_shape) < 2:
        raise ValueError(
            "conv_transpose requires lhs and rhs of the same rank, at least 2, got shapes "
            f"{lhs_shape} and {rhs_shape}"
        )
    ndim = len(lhs_shape)
    if dimension_numbers is None:
        if ndim not in _TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_LAYOUTS[ndim]
    numbers = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    kernel = [int(rhs_shape[i]) for i in numbers.rhs_spec[2:]]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (ndim - 2)
    effective = [dilate_dim(k, d) for k, d in zip(kernel, rhs_dilation, strict=True)]
    if isinstance(padding, str):
        if padding not in ("SAME", "VALID"):
            raise ValueError("Padding mode must be `SAME` or `VALID`.")
        pads = [conv_transpose_padding(k, s, padding)
                for k, s in zip(effective, strides, strict=True)]  # fmt: skip
    elif use_consistent_padding:
        forward = explicit_padding(padding, "conv_transpose")
        pads = [(k - 1 - lo, k - 1 - hi) for k, (lo, hi) in zip(effective, forward, strict=True)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(numbers.rhs_spec[2:]))
        o, i = numbers.rhs_spec[0], numbers.rhs_spec[1]
        perm = list(range(ndim))
        perm[o], perm[i] = i, o

        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), pads, strides, rhs_dilation,
                                numbers, precision=precision,
                                preferred_element_type=preferred_element_type)  # fmt: skip


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):  # fmt: skip
    """The patches a ``filter_shape`` window sees, as features: output feature
    ``c * prod(filter_shape) + s`` is input feature ``c`` at window position ``s``
    (row-major over ``filter_shape``)."""
    lhs_aval = aval_of(lhs)
    filter_shape = tuple(int(f) for f in filter_shape)
    numbers = conv_dimension_numbers(lhs_aval.shape, (1, 1, *filter_shape), dimension_numbers)
    lhs_spec, rhs_spec, _ = numbers
    window = math.prod(filter_shape)
    channels = int(lhs_aval.shape[lhs_spec[1]])
    # One output feature per (channel, window position): a one-hot kernel per group.
    kernel = np.eye(window, dtype=lhs_aval.dtype).reshape((window, 1, *filter_shape))
    kernel = np.tile(kernel, (channels,) + (1,) * (kernel.ndim - 1))
    kernel = np.moveaxis(kernel, (0, 1), (rhs_spec[0], rhs_spec[1]))
    return conv_general_dilated(
        lhs,
        device_put_value(np.ascontiguousarray(kernel)),
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        numbers,
        feature_group_count=channels,
        # JAX applies the precision to the input only (the one-hot kernel is exact).
        precision=None if precision is None else (precision, Precision.DEFAULT),
        preferred_element_type=preferred_element_type,
    )


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):  # fmt: skip
    """A convolution whose kernel differs at every output position (a locally
    connected layer): ``rhs`` has the output's spatial axes, an input-feature axis of
    ``in_features * prod(filter_shape)`` (ordered as the patches are) and an
    output-feature axis, in the kernel layout of ``dimension_numbers``."""

    if isinstance(precision, (tuple, list)):
        lhs_precision, rhs_precision = precision
    else:
        lhs_precision = rhs_precision = precision
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers,
                                           lhs_precision)  # fmt: skip
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(
        aval_of(lhs).shape, (1, 1, *filter_shape), dimension_numbers
    )
    n = len(lhs_spec) - 2
    rhs_batch = [rhs_spec[2 + k] for k in sorted(range(n), key=lambda k: lhs_spec[k + 2])]
    numbers = (((out_spec[1],), (rhs_spec[1],)), (tuple(sorted(out_spec[2:])), tuple(rhs_batch)))
    out = dot_general(patches, rhs, numbers, precision=rhs_precision)
    return _moveaxes(out, (-2, -1), (out_spec[0], out_spec[1]))
