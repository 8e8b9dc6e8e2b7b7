"""Convolution bookkeeping: dimension numbers, padding types and output shapes.

A ``ConvDimensionNumbers`` holds three specs, each listing axes of an array: for the
input (``lhs_spec``) its batch axis, feature axis, then spatial axes; for the kernel
(``rhs_spec``) its output-feature axis, input-feature axis, then spatial axes; for the
result (``out_spec``) as for the input. String triples such as
``('NHWC', 'HWIO', 'NHWC')`` name the same thing with letters; spatial axes are
matched by letter and ordered as they appear in the kernel spec.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Sequence
from typing import NamedTuple

from lamina.ir import canonicalize_dim, parse_call_args, register_value_reader

__all__ = [
    "ConvDimensionNumbers",
    "ConvGeneralDilatedDimensionNumbers",
    "conv_dimension_numbers",
    "conv_general_permutations",
    "conv_general_shape_tuple",
    "conv_shape_tuple",
    "conv_transpose_shape_tuple",
    "padtype_to_pads",
]


class ConvDimensionNumbers(NamedTuple):
    """Axis positions of the input, kernel and output of a convolution (see the module
    docstring)."""

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


ConvGeneralDilatedDimensionNumbers = (
    tuple[str, str, str] | ConvDimensionNumbers | None  # what the functions accept
)


def _read_conv_dimension_numbers(text: str) -> ConvDimensionNumbers:
    args, kwargs = parse_call_args(text)
    return ConvDimensionNumbers(*args, **kwargs)


# Printed Jaxprs show the param as ``ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), ...)``.
register_value_reader("ConvDimensionNumbers", _read_conv_dimension_numbers)


class PaddingType(enum.Enum):
    VALID = 1
    SAME = 2
    SAME_LOWER = 3


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit ``(low, high)`` pads for a padding type: ``'VALID'`` pads nothing;
    ``'SAME'`` pads so the output has ``ceil(in / stride)`` elements, the odd element
    going to the high side (``'SAME_LOWER'``: to the low side)."""
    if isinstance(padding, str):
        try:
            padding = PaddingType[padding.upper()]
        except KeyError:
            raise RuntimeError(
                "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', "
                f"got {padding}."
            ) from None
    if padding is PaddingType.VALID:
        return [(0, 0)] * len(in_shape)
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides, strict=False):
        out = -(-int(size) // int(stride))
        total = max((out - 1) * int(stride) + int(window) - int(size), 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if padding is PaddingType.SAME else (big, small))
    return pads


def _check_spec_letters(index: int, spec: str, letters: str) -> None:
    if len(set(spec)) != len(spec):
        raise TypeError(
            f"convolution dimension_numbers[{index}] cannot have duplicate characters, got {spec}."
        )
    if not all(spec.count(c) == 1 for c in letters):
        raise TypeError(
            f"convolution dimension_numbers[{index}] must contain the characters "
            f"'{letters[0]}' and '{letters[1]}' exactly once, got {spec}."
        )


def conv_general_permutations(dimension_numbers):
    """The three specs of a string triple as axis permutations: batch (or output
    feature), feature (or input feature), then spatial axes in the kernel's order."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    for index, (spec, letters) in enumerate(((lhs_spec, "NC"), (rhs_spec, "OI"), (out_spec, "NC"))):
        _check_spec_letters(index, spec, letters)
    spatial = [set(spec) - set(letters) for spec, letters in
               ((lhs_spec, "NC"), (rhs_spec, "OI"), (out_spec, "NC"))]  # fmt: skip
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError(
            "convolution dimension_numbers elements must each have the same set of "
            f"spatial characters, got {dimension_numbers}."
        )

    def permutation(spec, first, second):
        rest = sorted(
            (i for i, c in enumerate(spec) if c not in (first, second)),
            key=lambda i: rhs_spec.index(spec[i]),
        )
        return (spec.index(first), spec.index(second), *rest)

    return (
        permutation(lhs_spec, "N", "C"),
        permutation(rhs_spec, "O", "I"),
        permutation(out_spec, "N", "C"),
    )


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None, a ``ConvDimensionNumbers`` or a string triple) as a
    ``ConvDimensionNumbers`` for operands of these shapes; None means ``NCHW``-style
    (batch, feature, spatial... in that order for all three)."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(
            "convolution requires lhs and rhs ndim to be equal, got "
            f"{len(lhs_shape)} and {len(rhs_shape)}."
        )
    if dimension_numbers is None:
        default = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(default, default, default)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError(
            "convolution dimension_numbers must be tuple/list or None, got "
            f"{type(dimension_numbers)}."
        )
    if len(dimension_numbers) != 3:
        raise TypeError(
            "convolution dimension_numbers list/tuple must be length 3, got "
            f"{len(dimension_numbers)}."
        )
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError(
            "convolution dimension_numbers elements must be strings, got "
            f"{tuple(map(type, dimension_numbers))}."
        )
    for i, spec in enumerate(dimension_numbers):
        if len(spec) != len(lhs_shape):
            raise TypeError(
                f"convolution dimension_numbers[{i}] must have len equal to the ndim of lhs "
                f"and rhs, got {len(spec)} for lhs and rhs shapes {tuple(lhs_shape)} and "
                f"{tuple(rhs_shape)}."
            )
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def dilate_dim(size: int, dilation: int) -> int:
    """The size of an axis of ``size`` elements with ``dilation - 1`` holes between
    neighbours."""
    return 0 if size == 0 else 1 + dilation * (size - 1)


def dilate_shape(shape, dilation) -> tuple[int, ...]:
    return tuple(dilate_dim(int(s), int(d)) for s, d in zip(shape, dilation, strict=True))


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of an ``NCHW``/``OIHW`` convolution with explicit pads (or a
    padding type)."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(
            f"Wrong number of explicit pads for convolution: expected {len(lhs_shape) - 2}, "
            f"got {len(pads)}."
        )
    padded = [int(s) + lo + hi for s, (lo, hi) in zip(lhs_shape[2:], pads, strict=True)]
    if any(p < 0 for p in padded):
        raise ValueError(
            "Negative padding is larger than the size of the corresponding dimension: got "
            f"padding={tuple(pads)} for lhs_shape[2:]={tuple(lhs_shape[2:])}"
        )
    spatial = tuple(
        max((p - int(k)) // int(s) + 1, 0)
        for p, k, s in zip(padded, rhs_shape[2:], strides, strict=True)
    )
    batch = canonicalize_dim(lhs_shape[0])  # may be symbolic
    return (batch // batch_group_count, int(rhs_shape[0]), *spatial)


def _permuted(shape, perm) -> tuple[int, ...]:
    return tuple(int(shape[p]) for p in perm)


def _unpermuted(shape, perm) -> tuple[int, ...]:
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = shape[i]
    return tuple(out)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of ``conv_general_dilated`` without dilation, in the output
    layout of ``dimension_numbers``."""
    numbers = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs_t = _permuted(lhs_shape, numbers.lhs_spec)
    rhs_t = _permuted(rhs_shape, numbers.rhs_spec)
    out_t = conv_shape_tuple(lhs_t, rhs_t, window_strides, padding)
    return _unpermuted(out_t, numbers.out_spec)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):  # fmt: skip
    """The output shape of a transposed convolution (the input is dilated by the
    strides, and string paddings are those of the forward convolution)."""
    numbers = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs_t = _permuted(lhs_shape, numbers.lhs_spec)
    rhs_t = _permuted(rhs_shape, numbers.rhs_spec)
    if isinstance(padding, str):
        padding = [
            conv_transpose_padding(k, s, padding)
            for k, s in zip(rhs_t[2:], window_strides, strict=True)
        ]
    spatial = tuple(
        max(dilate_dim(i, s) + lo + hi - k + 1, 0)
        for i, k, s, (lo, hi) in zip(lhs_t[2:], rhs_t[2:], window_strides, padding, strict=True)
    )
    return _unpermuted((lhs_t[0], rhs_t[0], *spatial), numbers.out_spec)


def conv_transpose_padding(k: int, s: int, padding: str) -> tuple[int, int]:
    """Pads of the transposed convolution matching a forward convolution with kernel
    size ``k``, stride ``s`` and padding type ``padding``."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        low = k - 1
    else:
        raise ValueError("Padding mode must be `SAME` or `VALID`.")
    return low, total - low


def explicit_padding(padding, name: str = "conv_general_dilated") -> tuple[tuple[int, int], ...]:
    """A sequence of ``(low, high)`` pairs as a tuple of int pairs."""
    try:
        return tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError(
            f"padding argument to {name} should be a string or a sequence of (low, high) "
            f"pairs, got {padding}"
        ) from None


def conv_spatial_dims(spec: Sequence[int]) -> tuple[int, ...]:
    return tuple(spec[2:])


def swap_first_two(spec: Sequence[int]) -> tuple[int, ...]:
    return (spec[1], spec[0], *spec[2:])
