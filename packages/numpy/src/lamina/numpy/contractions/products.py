"""Products of arrays: ``matmul``, ``dot``, ``vdot``, ``vecdot``, ``inner``,
``tensordot``, ``matvec`` and ``vecmat`` (``outer``, ``kron``, ``cross``, ``trace``
and ``diagonal`` are in :mod:`.outer_and_diagonal`).

Every product is one ``lax.dot_general`` accumulating in the operands' result type (or
``preferred_element_type``): integers stay integers, booleans stay booleans.
"""

from __future__ import annotations

import lamina.lax as lax
import numpy as np
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.lax import canonicalize_precision
from lamina.numpy.base.arguments import aval_of, canonicalize_axis, check_arraylike, to_array
from lamina.numpy.base.shaping import ravel
from lamina.numpy.contractions.labelled_operands import contract_two, finish
from lamina.numpy.functional import vectorize

__all__ = [
    "dot",
    "inner",
    "matmul",
    "matvec",
    "tensordot",
    "vdot",
    "vecdot",
    "vecmat",
]

_STATIC = ("precision", "preferred_element_type", "out_sharding")


def _arrays(fun_name, *args):
    check_arraylike(fun_name, *args)
    return [to_array(x) for x in args]


def _result_type(fun_name, preferred, *args) -> tuple:
    """The dtype a product accumulates in and returns, and whether it is weak."""
    if preferred is None:
        return dtypes.result_type(*args, return_weak_type_flag=True)
    return dtypes.check_and_canonicalize_user_dtype(preferred, fun_name), False


def _product(a, b, numbers, dtype, weak, precision, out_sharding=None):
    extra = {} if out_sharding is None else {"out_sharding": out_sharding}
    out = lax.dot_general(a, b, numbers, precision, preferred_element_type=dtype, **extra)
    return finish(out, dtype, weak)


# Eager calls of the functions that take unhashable arguments (axes as lists) run the
# product as one compiled call, with the canonical dimension numbers static.
_jit_product = jit(_product, static_argnums=(2, 3, 4, 5, 6), inline=True)


def _labelled(a, b, a_labels, b_labels, out, dtype, weak, precision):
    result = contract_two(a, a_labels, b, b_labels, out, preferred=dtype, precision=precision)
    return finish(result, dtype, weak)


_jit_labelled = jit(_labelled, static_argnums=(2, 3, 4, 5, 6, 7), inline=True)


def _contracting_mismatch(a_size, b_size):
    return TypeError(
        "dot_general requires contracting dimensions to have the same shape, got "
        f"{(a_size,)} and {(b_size,)}."
    )


@jit(static_argnames=_STATIC, inline=True)
def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """The matrix product of ``a`` and ``b`` (``a @ b``), NumPy's rules: a 1-D operand
    is a vector (its axis dropped from the result), leading axes are batch axes
    broadcast against each other."""
    a, b = _arrays("matmul", a, b)
    a_aval, b_aval = aval_of(a), aval_of(b)
    for i, aval in enumerate((a_aval, b_aval)):
        if aval.ndim < 1:
            raise ValueError(
                f"matmul input operand {i} must have ndim at least 1, but it has ndim {aval.ndim}"
            )
    dtype, weak = _result_type("matmul", preferred_element_type, a, b)
    a_mat, b_mat = a_aval.ndim > 1, b_aval.ndim > 1
    a_batch = a_aval.shape[:-2] if a_mat else ()
    b_batch = b_aval.shape[:-2] if b_mat else ()
    rank = max(len(a_batch), len(b_batch))
    for size_a, size_b in zip(a_batch[::-1], b_batch[::-1], strict=False):
        if size_a != size_b and 1 not in (size_a, size_b):
            raise ValueError(
                f"Incompatible types for matmul arguments: {a_aval.str_short()} and "
                f"{b_aval.str_short()}"
            )
    k_a, k_b = a_aval.shape[-1], b_aval.shape[-2 if b_mat else -1]
    if k_a != k_b:
        raise _contracting_mismatch(k_a, k_b)
    batch = [("batch", i) for i in range(rank)]
    a_labels = [*batch[rank - len(a_batch) :], *(["n"] if a_mat else []), "k"]
    b_labels = [*batch[rank - len(b_batch) :], "k", *(["m"] if b_mat else [])]
    out = [*batch, *(["n"] if a_mat else []), *(["m"] if b_mat else [])]
    result = contract_two(a, a_labels, b, b_labels, out, preferred=dtype, precision=precision,
                          out_sharding=out_sharding)  # fmt: skip
    return finish(result, dtype, weak)


@jit(static_argnames=_STATIC, inline=True)
def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """NumPy's ``dot``: scalars multiply; otherwise the last axis of ``a`` is
    contracted with the last axis of a 1-D ``b`` or the second-to-last of ``b``."""
    a, b = _arrays("dot", a, b)
    dtype, weak = _result_type("dot", preferred_element_type, a, b)
    a_ndim, b_ndim = aval_of(a).ndim, aval_of(b).ndim
    scalar = a_ndim == 0 or b_ndim == 0
    contracting = ((), ()) if scalar else ((a_ndim - 1,), (max(b_ndim - 2, 0),))
    return _product(a, b, (contracting, ((), ())), dtype, weak, precision, out_sharding)


def _conj_if_complex(x):
    if dtypes.issubdtype(aval_of(x).dtype, np.complexfloating):
        return lax.conj(x)
    return x


@jit(static_argnames=_STATIC[:2], inline=True)
def vdot(a, b, *, precision=None, preferred_element_type=None):
    """The dot product of ``a`` and ``b`` flattened, ``a`` conjugated first."""
    a, b = _arrays("vdot", a, b)
    return dot(ravel(_conj_if_complex(a)), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)  # fmt: skip


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Conjugated dot products of ``x1`` and ``x2`` along ``axis``, the other axes
    broadcast against each other."""
    x1, x2 = _arrays("jnp.vecdot", x1, x2)
    s1, s2 = aval_of(x1).shape, aval_of(x2).shape
    ax1, ax2 = canonicalize_axis(axis, len(s1)), canonicalize_axis(axis, len(s2))
    if s1[ax1] != s2[ax2]:
        raise ValueError(f"axes must match; got shapes {s1} and {s2} with axis={axis}")
    rest1, rest2 = s1[:ax1] + s1[ax1 + 1 :], s2[:ax2] + s2[ax2 + 1 :]
    rank = len(lax.broadcast_shapes(rest1, rest2))
    dtype, weak = _result_type("vecdot", preferred_element_type, x1, x2)
    labels1 = list(range(rank - len(rest1), rank))
    labels2 = list(range(rank - len(rest2), rank))
    labels1.insert(ax1, "k")
    labels2.insert(ax2, "k")
    precision = canonicalize_precision(precision)
    labels = (tuple(labels1), tuple(labels2), tuple(range(rank)))
    return _jit_labelled(_conj_if_complex(x1), x2, *labels, dtype, weak, precision)


@jit(static_argnames=_STATIC[:2], inline=True)
def inner(a, b, *, precision=None, preferred_element_type=None):
    """Sums of products over the last axes of ``a`` and ``b`` (a product with a
    scalar is elementwise)."""
    a, b = _arrays("inner", a, b)
    if aval_of(a).ndim == 0 or aval_of(b).ndim == 0:
        if preferred_element_type is not None:
            dtype = dtypes.check_and_canonicalize_user_dtype(preferred_element_type, "inner")
            a, b = lax.convert_element_type(a, dtype), lax.convert_element_type(b, dtype)
        return a * b
    return tensordot(a, b, (-1, -1), precision=precision,
                     preferred_element_type=preferred_element_type)  # fmt: skip


def _tensordot_axes(axes, a_ndim, b_ndim, a_shape, b_shape):
    if type(axes) is int:
        if axes > min(a_ndim, b_ndim):
            raise TypeError(
                f"Number of tensordot axes (axes {axes}) exceeds input ranks ({a_shape} and "
                f"{b_shape})"
            )
        return tuple(range(a_ndim - axes, a_ndim)), tuple(range(axes))
    if isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax1, ax2 = axes
        if isinstance(ax1, int) and isinstance(ax2, int):
            return (canonicalize_axis(ax1, a_ndim),), (canonicalize_axis(ax2, b_ndim),)
        if isinstance(ax1, (tuple, list)) and isinstance(ax2, (tuple, list)):
            if len(ax1) != len(ax2):
                raise TypeError(
                    f"tensordot requires axes lists to have equal length, got {ax1} and {ax2}."
                )
            return (
                tuple(canonicalize_axis(i, a_ndim) for i in ax1),
                tuple(canonicalize_axis(i, b_ndim) for i in ax2),
            )
        raise TypeError(
            "tensordot requires both axes lists to be either ints, tuples or lists, got "
            f"{ax1} and {ax2}"
        )
    raise TypeError(
        "tensordot axes argument must be an int, a pair of ints, or a pair of lists/tuples of ints."
    )


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None,
              out_sharding=None):  # fmt: skip
    """Sums of products over ``axes``: an int ``n`` pairs the last ``n`` axes of ``a``
    with the first ``n`` of ``b``; a pair of ints or of sequences names them."""
    a, b = _arrays("tensordot", a, b)
    a_aval, b_aval = aval_of(a), aval_of(b)
    dtype, weak = _result_type("tensordot", preferred_element_type, a, b)
    contracting = _tensordot_axes(axes, a_aval.ndim, b_aval.ndim, a_aval.shape, b_aval.shape)
    precision = canonicalize_precision(precision)
    return _jit_product(a, b, (contracting, ((), ())), dtype, weak, precision, out_sharding)


_matvec = vectorize(matmul, signature="(n,m),(m)->(n)")
_vecmat = vectorize(matmul, signature="(n),(n,m)->(m)")


@jit
def matvec(x1, x2, /):
    """Matrix-vector products over the last two axes of ``x1`` and the last of ``x2``,
    the leading axes broadcast."""
    x1, x2 = _arrays("matvec", x1, x2)
    return _matvec(x1, x2)


@jit
def vecmat(x1, x2, /):
    """Conjugated vector-matrix products over the last axis of ``x1`` and the last two
    of ``x2``, the leading axes broadcast."""
    x1, x2 = _arrays("vecmat", x1, x2)
    return _vecmat(_conj_if_complex(x1), x2)
