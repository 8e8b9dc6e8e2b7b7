"""The ``reduce`` and ``accumulate`` methods of the ufuncs that have a lax reduction:
``add`` (reduce_sum), ``multiply`` (reduce_prod), ``maximum``/``minimum``
(reduce_max/min), the bitwise and logical ufuncs (reduce_and/or/xor) and
``logaddexp``/``logaddexp2`` (a stable log-sum-exp). Each takes the canonical axes (a
sorted tuple) from ``ufunc.reduce`` and follows ``jnp.sum``-style dtype rules."""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.interpreters import stop_gradient
from lamina.ir import dtypes
from lamina.numpy.base.arguments import aval_of, promote_dtypes_inexact, to_array
from lamina.numpy.base.shaping import broadcast_to
from lamina.numpy.ufuncs.binary import lexicographic_less, maximum, minimum
from lamina.numpy.ufuncs.bits import to_bool
from lamina.numpy.ufuncs.log_sum_exp import logaddexp, logaddexp2
from lamina.numpy.ufuncs.operands import dtype_of, full_like, is_bool, is_complex, select

__all__ = ["FAST_ACCUMULATE", "FAST_REDUCE"]


def _promoted_integer(dtype):
    """What ``jnp.sum`` of ``dtype`` returns: small integers and bools widened to the
    default integer of their signedness."""
    if dtype == np.bool_:
        return dtypes.default_int_dtype()
    if dtypes.issubdtype(dtype, np.unsignedinteger):
        default = dtypes.canonicalize_dtype(np.uint64)
        return default if dtype.itemsize < default.itemsize else dtype
    if dtypes.issubdtype(dtype, np.integer):
        default = dtypes.default_int_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    return dtype


def _keep_dims(x, axes, in_shape):
    shape = tuple(1 if i in axes else d for i, d in enumerate(in_shape))
    return lax.reshape(x, shape)


def _masked(a, where, fill):
    if where is None:
        return a
    return select(broadcast_to(where, aval_of(a).shape), a, full_like(a, fill))


def _arithmetic(lax_reduce, combine, identity):
    """A ``jnp.sum``-like reduction: integers widened, float16/bfloat16 computed in
    float32, ``where`` filled with ``identity``, ``initial`` combined at the end."""

    def reduce(a, axes, dtype, keepdims, initial, where):
        in_dtype = dtype_of(a)
        result_dtype = dtype or _promoted_integer(in_dtype)
        work_dtype = result_dtype
        if work_dtype == np.bool_:
            work_dtype = dtypes.default_int_dtype()
        if work_dtype in (np.float16, dtypes.bfloat16):
            work_dtype = np.dtype(np.float32)
        a = lax.convert_element_type(a, work_dtype)
        a = _masked(a, where, identity)
        out = lax_reduce(a, axes)
        if initial is not None:
            out = combine(out, lax.convert_element_type(initial, work_dtype))
        out = lax.convert_element_type(out, result_dtype)
        return _keep_dims(out, axes, aval_of(a).shape) if keepdims else out

    return reduce


def _extremum(name, lax_reduce, combine, lowest):
    """``max``/``min`` reductions: no identity, so an empty reduction needs ``initial``."""

    def reduce(a, axes, dtype, keepdims, initial, where):
        shape = aval_of(a).shape
        if initial is None and any(shape[i] == 0 for i in axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        if dtype is not None:
            a = lax.convert_element_type(a, dtype)
        a = _masked(a, where, _lowest_value(dtype_of(a), lowest))
        out = _complex_extremum(a, axes, lowest) if is_complex(a) else lax_reduce(a, axes)
        if initial is not None:
            initial = lax.convert_element_type(initial, dtype_of(out))
            if is_complex(out):  # ordered as JAX orders complex numbers
                out = (maximum if lowest else minimum)(out, initial)
            else:
                out = combine(out, initial)
        return _keep_dims(out, axes, shape) if keepdims else out

    return reduce


def _complex_extremum(a, axes, largest):
    """max (``largest``) or min of complex numbers ordered by real part, then imaginary
    part, as JAX orders them."""

    def pick(x, y):
        x_first = lexicographic_less(y, x) if largest else lexicographic_less(x, y)
        return lax.select_n(x_first, y, x)

    init = np.array(complex(-np.inf, -np.inf) if largest else complex(np.inf, np.inf),
                    dtype_of(a))  # fmt: skip
    return lax.reduce(a, init, pick, axes)


def _lowest_value(dtype, lowest):
    """The identity of max (``lowest``) or min (``not lowest``) in ``dtype``."""
    if dtype == np.bool_:
        return not lowest
    if dtypes.issubdtype(dtype, np.complexfloating):
        return complex(-np.inf, -np.inf) if lowest else complex(np.inf, np.inf)
    if dtypes.issubdtype(dtype, np.integer):
        info = dtypes.iinfo(dtype)
        return info.min if lowest else info.max
    return -np.inf if lowest else np.inf


def _bitwise(name, lax_reduce, combine, identity, logical):
    def reduce(a, axes, dtype, keepdims, initial, where):
        if logical:
            a = to_bool(a)
        elif not (is_bool(a) or dtypes.issubdtype(dtype_of(a), np.integer)):
            raise ValueError(f"integer argument required; got dtype={dtype_of(a)}")
        if dtype is not None and not logical:
            a = lax.convert_element_type(a, dtype)
        fill = identity if is_bool(a) or identity >= 0 else np.array(identity).astype(dtype_of(a))
        a = _masked(a, where, bool(fill) if is_bool(a) else fill)
        out = lax_reduce(a, axes)
        if initial is not None:
            out = combine(out, lax.convert_element_type(initial, dtype_of(out)))
        if dtype is not None:
            out = lax.convert_element_type(out, dtype)
        return _keep_dims(out, axes, aval_of(a).shape) if keepdims else out

    return reduce


def _logsumexp(base2):
    def reduce(a, axes, dtype, keepdims, initial, where):
        if dtype is not None:
            dtypes.check_and_canonicalize_user_dtype(dtype, "jnp.logaddexp.reduce")
        (a,) = promote_dtypes_inexact(a)
        if base2:
            a = lax.mul(a, np.array(np.log(2), dtype_of(a)))
        shape = aval_of(a).shape
        real = lax.real(a) if dtypes.issubdtype(dtype_of(a), np.complexfloating) else a
        peak = lax.reduce_max(_masked(real, where, -np.inf), axes)
        peak = stop_gradient(select(lax.is_finite(peak), peak, full_like(peak, 0)))
        peak_kept = _keep_dims(peak, axes, shape)
        terms = lax.exp(lax.sub(a, lax.convert_element_type(peak_kept, dtype_of(a))))
        total = lax.reduce_sum(_masked(terms, where, 0), axes)
        out = lax.add(lax.log(total), lax.convert_element_type(peak, dtype_of(total)))
        if keepdims:
            out = _keep_dims(out, axes, shape)
        if base2:
            out = lax.div(out, np.array(np.log(2), dtype_of(out)))
        if initial is not None:
            out = (logaddexp2 if base2 else logaddexp)(initial, out)
        return out

    return reduce


FAST_REDUCE = {
    "add": _arithmetic(lax.reduce_sum, lax.add, 0),
    "multiply": _arithmetic(lax.reduce_prod, lax.mul, 1),
    "maximum": _extremum("max", lax.reduce_max, lax.max, lowest=True),
    "minimum": _extremum("min", lax.reduce_min, lax.min, lowest=False),
    "bitwise_and": _bitwise("bitwise_and", lax.reduce_and, lax.bitwise_and, -1, False),
    "bitwise_or": _bitwise("bitwise_or", lax.reduce_or, lax.bitwise_or, 0, False),
    "bitwise_xor": _bitwise("bitwise_xor", lax.reduce_xor, lax.bitwise_xor, 0, False),
    "logical_and": _bitwise("logical_and", lax.reduce_and, lax.bitwise_and, True, True),
    "logical_or": _bitwise("logical_or", lax.reduce_or, lax.bitwise_or, False, True),
    "logical_xor": _bitwise("logical_xor", lax.reduce_xor, lax.bitwise_xor, False, True),
    "logaddexp": _logsumexp(base2=False),
    "logaddexp2": _logsumexp(base2=True),
}


def _cumulative(lax_cumulative):
    """``jnp.cumsum``-like: bools count as the default integer; ``axis=None`` runs
    over the flattened array."""

    def accumulate(a, axis, dtype):
        a = to_array(a)
        if axis is None:
            a = lax.reshape(a, (aval_of(a).size,))
            axis = 0
        if dtype is None:
            dtype = dtypes.default_int_dtype() if is_bool(a) else dtype_of(a)
        return lax_cumulative(lax.convert_element_type(a, dtype), axis=axis)

    return accumulate


FAST_ACCUMULATE = {
    "add": _cumulative(lax.cumsum),
    "multiply": _cumulative(lax.cumprod),
}
