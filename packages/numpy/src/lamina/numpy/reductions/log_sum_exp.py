"""``logsumexp``, ``log(sum(b * exp(a)))`` over axes computed stably: the one function
that is both ``jax.nn.logsumexp`` and ``jax.scipy.special.logsumexp`` (exported by
lamina.numpy outside ``jax.numpy``'s surface for those layers), with JAX 0.10.2's
handling of weights, masks, signs and infinite inputs."""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.ir import dtypes
from lamina.numpy.base.arguments import canonicalize_axes, promote_args_inexact
from lamina.numpy.reductions import folding
from lamina.numpy.reductions import rules as rc

__all__ = ["logsumexp"]


def _reduced_dims(ndim: int, axis) -> tuple[int, ...]:
    """The axes a reduction over ``axis`` (None: all of them) folds."""
    if axis is None:
        return tuple(range(ndim))
    return canonicalize_axes(axis, ndim)


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False, where=None):
    """``log(sum(b * exp(a)))`` over ``axis``, computed stably by shifting with the
    (gradient-free) maximum. With ``return_sign`` the pair ``(log|s|, sign(s))``; without
    it, a negative weighted sum gives nan."""
    if where is not None:
        a = rc.promoting_select(where, a, 0)
    if b is not None:
        a_arr, b_arr = promote_args_inexact("logsumexp", a, b)
        a_arr = rc.promoting_select(lax.ne(b_arr, lax.full_like(b_arr, 0)), a_arr, -np.inf)
    else:
        (a_arr,) = promote_args_inexact("logsumexp", a)
        b_arr = a_arr
    is_complex = dtypes.issubdtype(a_arr.dtype, np.complexfloating)
    dims = _reduced_dims(a_arr.ndim, axis)
    a_real = lax.real(a_arr) if is_complex else a_arr
    amax = folding.max(a_real, axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    # An infinite (or all-masked) maximum would turn the shift into inf - inf = nan.
    amax = lax.stop_gradient(lax.select(lax.is_finite(amax), amax, lax.full_like(amax, 0)))
    amax_kept = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a_arr, amax_kept.astype(a_arr.dtype)))
    if b is not None:
        exp_a = lax.mul(exp_a, b_arr)
    sumexp = folding.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    if return_sign or not is_complex:
        sumexp = lax.abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    if return_sign:
        return out, sign
    if b is not None and not dtypes.issubdtype(out.dtype, np.complexfloating):
        negative = lax.lt(sign, lax.full_like(sign, 0))
        out = lax.select(negative, lax.full_like(out, np.nan), out)
    return out
