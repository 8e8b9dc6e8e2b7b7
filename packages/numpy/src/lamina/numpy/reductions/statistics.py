"""Statistics of jax.numpy: ``average``, ``cov``, ``corrcoef`` and the quantile family
(``quantile``, ``percentile``, ``median`` and their NaN-ignoring variants, written in
:mod:`.quantiles`)."""

from __future__ import annotations

import builtins

import numpy as np
from lamina import lax
from lamina.ir import dtypes
from lamina.numpy.base.arguments import (
    check_arraylike,
    promote_args_inexact,
    promote_dtypes_inexact,
)
from lamina.numpy.base.shaping import broadcast_to
from lamina.numpy.base.static_values import as_array
from lamina.numpy.reductions import folding
from lamina.numpy.reductions import rules as rc
from lamina.numpy.reductions.quantiles import quantile_impl

__all__ = [
    "average",
    "corrcoef",
    "cov",
    "median",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "percentile",
    "quantile",
]


def quantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
):
    """The ``q``-th quantiles (``0 <= q <= 1``) of ``a`` over ``axis``."""
    return quantile_impl(
        "quantile", a, q, axis, out, overwrite_input, method, keepdims, weights, skip_nans=False
    )


def nanquantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
):
    """:func:`quantile` of the non-NaN elements."""
    return quantile_impl(
        "nanquantile", a, q, axis, out, overwrite_input, method, keepdims, weights, skip_nans=True
    )


def _percent(name, q):
    (q,) = promote_dtypes_inexact(as_array(name, q))
    return lax.div(q, np.array(100, q.dtype))


def percentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
    out_sharding=None,
):
    """The ``q``-th percentiles (``0 <= q <= 100``) of ``a`` over ``axis``."""
    check_arraylike("percentile", a)
    del out_sharding  # one device: every result is replicated
    return quantile_impl(
        "quantile",
        a,
        _percent("percentile", q),
        axis,
        out,
        overwrite_input,
        method,
        keepdims,
        weights,
        skip_nans=False,
    )


def nanpercentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
):
    """:func:`percentile` of the non-NaN elements."""
    check_arraylike("nanpercentile", a)
    return quantile_impl(
        "nanquantile",
        a,
        _percent("nanpercentile", q),
        axis,
        out,
        overwrite_input,
        method,
        keepdims,
        weights,
        skip_nans=True,
    )


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of ``a`` over ``axis`` (the mean of the two middle values for even
    counts)."""
    check_arraylike("median", a)
    return quantile_impl(
        "quantile", a, 0.5, axis, out, overwrite_input, "midpoint", keepdims, None, skip_nans=False
    )


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """:func:`median` of the non-NaN elements."""
    check_arraylike("nanmedian", a)
    return quantile_impl(
        "nanquantile",
        a,
        0.5,
        axis,
        out,
        overwrite_input,
        "midpoint",
        keepdims,
        None,
        skip_nans=True,
    )


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The (``weights``-weighted) mean over ``axis``; with ``returned``, also the sum of
    the weights, broadcast to the average's shape."""
    axis = rc.static_axis(axis, "average")
    if weights is None:
        (a,) = promote_dtypes_inexact(as_array("average", a))
        avg = folding.mean(a, axis, keepdims=keepdims)
        axes = rc.reduction_axes(axis, a.ndim)
        weights_sum = rc.full((), int(np.prod([a.shape[d] for d in axes])), avg.dtype)
    else:
        check_arraylike("average", a, weights)
        a, weights = promote_dtypes_inexact(rc.to_array(a), rc.to_array(weights))
        if a.shape != weights.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            axes = rc.reduction_axes(axis, a.ndim)
            if weights.shape != tuple(a.shape[d] for d in axes):
                raise ValueError(
                    "Shape of weights must be consistent with shape of a along specified axis."
                )
            if len(axes) > 1:
                weights = lax.transpose(weights, tuple(int(i) for i in np.argsort(axes)))
            weights = lax.broadcast_in_dim(weights, a.shape, tuple(sorted(axes)))
        weights_sum = folding.sum(weights, axis, keepdims=keepdims)
        avg = lax.div(folding.sum(lax.mul(a, weights), axis, keepdims=keepdims), weights_sum)
    if not returned:
        return avg
    return avg, broadcast_to(weights_sum, avg.shape)


def _atleast_2d(x):
    return lax.reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x


def _sample_weights(name, weights, n):
    weights = as_array("cov", weights)
    if weights.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if weights.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    return weights


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    """Covariance matrix of the variables in the rows (``rowvar``) or columns of ``m``
    (and ``y``), with frequency (``fweights``) and reliability (``aweights``) weights."""
    given = [v for v in (m, y, fweights, aweights) if v is not None]
    check_arraylike("cov", *given)
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype!r}")
    dtype = None if dtype is None else np.dtype(dtype)
    return _staged_cov(m, y, fweights, aweights, bool(rowvar), bias, ddof, dtype)


@rc.staged(4, 5, 6, 7)
def _staged_cov(m, y, fweights, aweights, rowvar, bias, ddof, dtype):
    if y is not None:
        check_arraylike("cov", m, y)
        m, y = promote_dtypes_inexact(rc.to_array(m), rc.to_array(y))
        # Ranks are matched as jnp's argument promotion does (leading unit axes).
        rank = builtins.max(m.ndim, y.ndim)
        m, y = (lax.reshape(v, (1,) * (rank - v.ndim) + v.shape) for v in (m, y))
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (m,) = promote_args_inexact("cov", m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    x = _atleast_2d(m)
    if not rowvar and m.ndim != 1:
        x = lax.transpose(x, (1, 0))
    if x.shape[0] == 0:
        return rc.full((0, 0), 0, dtypes.default_float_dtype())
    if y is not None:
        y = _atleast_2d(y)
        if not rowvar and y.shape[0] != 1:
            y = lax.transpose(y, (1, 0))
        x = lax.concatenate([x, y], 0)
    variables, samples = x.shape
    if samples == 0:
        return rc.full(() if variables == 1 else (variables, variables), np.nan, x.dtype)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = None
    if fweights is not None:
        fweights = _sample_weights("fweights", fweights, samples)
        if not dtypes.issubdtype(fweights.dtype, np.integer):
            raise TypeError("fweights must be integer.")
        w = lax.abs(fweights)
    if aweights is not None:
        aweights = lax.abs(_sample_weights("aweights", aweights, samples))
        w = aweights if w is None else w * aweights
    if dtype is not None:
        dtype = rc.user_dtype(dtype, "cov")
        x = rc.convert(x, dtype)
        w = None if w is None else rc.convert(w, dtype)
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = rc.take_index(w_sum, 0)
    if w is None:
        dof = samples - ddof
    elif ddof == 0:
        dof = w_sum
    elif aweights is None:
        dof = w_sum - ddof
    else:
        dof = w_sum - ddof * folding.sum(w * aweights) / w_sum
    centered = lax.sub(x, lax.expand_dims(avg, (1,)))
    weighted = centered if w is None else centered * lax.expand_dims(w, (0,))
    products = lax.dot_general(
        centered,
        lax.conj(weighted) if _is_complex(weighted) else weighted,
        (((1,), (1,)), ((), ())),
    )
    result = products / dof
    return lax.reshape(result, ()) if variables == 1 else result


def _is_complex(x):
    return dtypes.issubdtype(x.dtype, np.complexfloating)


def _diagonal(c):
    n = c.shape[0]
    eye = lax.eq(
        lax.broadcasted_iota(np.int32, (n, n), 0), lax.broadcasted_iota(np.int32, (n, n), 1)
    )
    return lax.reduce_sum(rc.promoting_select(eye, c, rc.init_value(c.dtype, 0)), (1,))


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients: :func:`cov` normalized by the standard
    deviations, clipped to [-1, 1]."""
    check_arraylike("corrcoef", x)
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(
            f"corrcoef: dtype must be a subclass of float or complex; got dtype={dtype!r}"
        )
    if y is not None:
        check_arraylike("corrcoef", y)
    return _staged_corrcoef(x, y, bool(rowvar), None if dtype is None else np.dtype(dtype))


@rc.staged(2, 3)
def _staged_corrcoef(x, y, rowvar, dtype):
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return lax.div(c, c)
    stddev = rc.convert(
        lax.sqrt(lax.real(_diagonal(c)) if _is_complex(c) else _diagonal(c)), c.dtype
    )
    c = lax.div(lax.div(c, lax.expand_dims(stddev, (1,))), lax.expand_dims(stddev, (0,)))
    one = np.array(1, np.zeros((), c.dtype).real.dtype)
    if _is_complex(c):
        return lax.complex(lax.clamp(-one, lax.real(c), one), lax.clamp(-one, lax.imag(c), one))
    return lax.clamp(-one, c, one)
