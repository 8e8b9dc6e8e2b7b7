"""Contractions of labelled operands, the engine under ``einsum``, ``matmul``, ``dot``,
``tensordot`` and friends.

Each operand comes with a sequence of labels, one per axis (einsum's letters, or any
hashable). :func:`contract_one` reduces one operand to the requested labels;
:func:`contract_two` contracts two operands with exactly one ``dot_general``. Before
the product each operand loses what the product cannot express: size-1 axes the other
operand broadcasts, repeated labels (diagonals) and labels nobody else needs (summed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import lamina.lax as lax
import numpy as np
from lamina.ir import dtypes
from lamina.lax import to_dtype
from lamina.numpy.base.arguments import aval_of

__all__ = ["contract_one", "contract_two", "finish", "sum_axes", "transpose_to"]


def sum_axes(x, axes: Sequence[int], preferred):
    """``x`` summed over ``axes``, accumulating in ``preferred`` where that is wider
    (booleans are or-ed, as a boolean product's sum is)."""
    if not axes:
        return x
    dtype = aval_of(x).dtype
    if dtypes.promote_types(dtype, preferred) != dtype:
        x, dtype = to_dtype(x, preferred), np.dtype(preferred)
    if dtype == np.bool_:
        return lax.reduce_or(x, tuple(axes))
    return lax.reduce_sum(x, tuple(axes))


def transpose_to(x, labels: Sequence, wanted: Sequence):
    """``x`` (axes named ``labels``) with its axes in the order of ``wanted``."""
    perm = tuple(list(labels).index(label) for label in wanted)
    if perm == tuple(range(len(perm))):
        return x
    return lax.transpose(x, perm)


def _take_diagonal(x, labels: list, label):
    """The diagonal of ``x`` over every axis named ``label``, as one last axis: those
    axes moved to the end and flattened, where the diagonal is a strided slice (the
    step from (i, i, ..) to (i+1, i+1, ..) is 1 + n + n**2 + ... in the flat index)."""
    axes = [i for i, name in enumerate(labels) if name == label]
    rest = [i for i in range(len(labels)) if i not in axes]
    x = transpose_to(x, range(len(labels)), rest + axes)
    shape = aval_of(x).shape
    kept_shape, n = shape[: len(rest)], shape[len(rest)]
    x = lax.reshape(x, (*kept_shape, n ** len(axes)))
    step = sum(n**k for k in range(len(axes)))
    limit = (n - 1) * step + 1 if n else 0
    zeros, ones = [0] * len(rest), [1] * len(rest)
    x = lax.slice(x, [*zeros, 0], [*kept_shape, limit], [*ones, step])
    return x, [labels[i] for i in rest] + [label]


def take_diagonals(x, labels: Sequence):
    """``x`` with each repeated label's axes replaced by their diagonal."""
    labels = list(labels)
    for label in dict.fromkeys(labels):
        if labels.count(label) > 1:
            x, labels = _take_diagonal(x, labels, label)
    return x, labels


def _sum_out(x, labels: list, keep, preferred):
    gone = [i for i, label in enumerate(labels) if label not in keep]
    x = sum_axes(x, gone, preferred)
    return x, [label for label in labels if label in keep]


def _squeeze_broadcast(x, labels: list, other_shape, other_labels: list):
    """``x`` without the size-1 axes whose label has another size in the other
    operand (size-1 axes broadcast: the label becomes the other operand's alone)."""
    shape = aval_of(x).shape
    drop = [
        i
        for i, label in enumerate(labels)
        if shape[i] == 1 and label in other_labels
        and other_shape[other_labels.index(label)] != 1
    ]  # fmt: skip
    if not drop:
        return x, labels
    return lax.squeeze(x, drop), [label for i, label in enumerate(labels) if i not in drop]


def contract_one(x, labels: Sequence, out: Sequence, preferred):
    """``x`` reduced to the labels ``out``: diagonals taken, other labels summed."""
    x, labels = take_diagonals(x, labels)
    x, labels = _sum_out(x, labels, set(out), preferred)
    return transpose_to(x, labels, out)


def contract_two(lhs, lhs_labels: Sequence, rhs, rhs_labels: Sequence, out: Sequence, *,
                 preferred, precision=None, dot_general: Callable = lax.dot_general,
                 out_sharding=None):  # fmt: skip
    """``lhs`` and ``rhs`` contracted to the labels ``out`` with one ``dot_general``:
    labels in both operands and in ``out`` are batch dimensions, labels in both but not
    in ``out`` are contracted, the rest are free. The operand order is chosen so that
    the product's axes come out in ``out``'s order where they can."""
    out = list(out)
    lhs_labels, rhs_labels = list(lhs_labels), list(rhs_labels)
    lhs, lhs_labels = _squeeze_broadcast(lhs, lhs_labels, aval_of(rhs).shape, rhs_labels)
    rhs, rhs_labels = _squeeze_broadcast(rhs, rhs_labels, aval_of(lhs).shape, lhs_labels)
    lhs, lhs_labels = take_diagonals(lhs, lhs_labels)
    rhs, rhs_labels = take_diagonals(rhs, rhs_labels)
    lhs, lhs_labels = _sum_out(lhs, lhs_labels, {*out, *rhs_labels}, preferred)
    rhs, rhs_labels = _sum_out(rhs, rhs_labels, {*out, *lhs_labels}, preferred)

    shared = [label for label in lhs_labels if label in rhs_labels]
    batch = [label for label in out if label in shared]
    contracting = [label for label in shared if label not in out]
    lhs_free = [label for label in lhs_labels if label not in shared]
    rhs_free = [label for label in rhs_labels if label not in shared]
    operands = [(lhs, lhs_labels, lhs_free), (rhs, rhs_labels, rhs_free)]
    sizes = {
        **dict(zip(lhs_labels, aval_of(lhs).shape, strict=True)),
        **dict(zip(rhs_labels, aval_of(rhs).shape, strict=True)),
    }

    def in_place(order):
        # Axes of size 1 move for free (a transpose of them is a reshape to XLA).
        return [x for x in order if sizes[x] != 1] == [x for x in out if sizes[x] != 1]

    if in_place(batch + rhs_free + lhs_free) and not in_place(batch + lhs_free + rhs_free):
        operands.reverse()
    (a, a_labels, a_free), (b, b_labels, b_free) = operands
    numbers = tuple(
        (tuple(a_labels.index(x) for x in group), tuple(b_labels.index(x) for x in group))
        for group in (contracting, batch)
    )
    extra = {} if out_sharding is None else {"out_sharding": out_sharding}
    result = dot_general(a, b, numbers, precision, preferred_element_type=preferred, **extra)
    return transpose_to(result, batch + a_free + b_free, out)


def finish(x, dtype, weak_type: bool):
    """``x`` as the result type (``dtype`` with ``weak_type``) of the whole contraction."""
    return to_dtype(x, dtype, weak_type=weak_type)
