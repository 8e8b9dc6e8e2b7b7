"""Rules adding the automatic checks: NaNs generated, division by zero, indices out of
bounds. Each binds its primitive, then records a failure where the result shows one.
"""

from __future__ import annotations

import numpy as np

import lamina.numpy as jnp
from lamina import lax
from lamina.experimental.checkify.error_value import assert_func
from lamina.experimental.checkify.failures import (
    DivisionByZeroError,
    NaNError,
    OOBError,
)
from lamina.experimental.checkify.interpreter import error_checks
from lamina.interpreters import errors as interpreter_errors
from lamina.ir import dtypes

__all__ = ["NAN_PRIMITIVES"]


def _where() -> str | None:
    """Where the checked code was called from, kept with the failure."""
    frame = interpreter_errors.user_frame(3)
    return None if frame is None else str(frame)


def _any_nan(x):
    if not dtypes.issubdtype(x.dtype, np.inexact):
        return np.bool_(False)
    return jnp.any(jnp.isnan(x))


def check_nans(primitive, error, enabled_errors, out):
    if NaNError not in enabled_errors:
        return error
    outs = out if primitive.multiple_results else [out]
    flags = [_any_nan(x) for x in outs]
    any_nan = flags[0] if len(flags) == 1 else jnp.any(jnp.stack([jnp.asarray(f) for f in flags]))
    return assert_func(error, any_nan, NaNError(_where(), primitive.name))


def _nan_rule(primitive):
    def rule(error, enabled_errors, *args, **params):
        out = primitive.bind(*args, **params)
        return check_nans(primitive, error, enabled_errors, out), out

    return rule


# The primitives that can make a NaN from inputs without one.
NAN_PRIMITIVES = [
    lax.acos_p,
    lax.acosh_p,
    lax.add_p,
    lax.asin_p,
    lax.asinh_p,
    lax.atan2_p,
    lax.atan_p,
    lax.atanh_p,
    lax.bessel_i0e_p,
    lax.bessel_i1e_p,
    lax.cbrt_p,
    lax.conv_general_dilated_p,
    lax.cos_p,
    lax.cosh_p,
    lax.cumlogsumexp_p,
    lax.cummax_p,
    lax.cummin_p,
    lax.cumprod_p,
    lax.cumsum_p,
    lax.digamma_p,
    lax.dot_general_p,
    lax.erf_inv_p,
    lax.erf_p,
    lax.erfc_p,
    lax.exp_p,
    lax.expm1_p,
    lax.fft_p,
    lax.igamma_grad_a_p,
    lax.igamma_p,
    lax.igammac_p,
    lax.integer_pow_p,
    lax.lgamma_p,
    lax.linear_solve_p,
    lax.log1p_p,
    lax.log_p,
    lax.logistic_p,
    lax.mul_p,
    lax.pad_p,
    lax.pow_p,
    lax.psum_p,
    lax.reduce_p,
    lax.reduce_prod_p,
    lax.reduce_sum_p,
    lax.reduce_window_p,
    lax.reduce_window_sum_p,
    lax.regularized_incomplete_beta_p,
    lax.rem_p,
    lax.rng_uniform_p,
    lax.rsqrt_p,
    lax.sin_p,
    lax.sinh_p,
    lax.sqrt_p,
    lax.sub_p,
    lax.tan_p,
    lax.tanh_p,
]
for _p in NAN_PRIMITIVES:
    error_checks[_p] = _nan_rule(_p)


def _div_rule(error, enabled_errors, x, y):
    if DivisionByZeroError in enabled_errors:
        error = assert_func(error, jnp.any(jnp.equal(y, 0)), DivisionByZeroError(_where()))
    out = lax.div_p.bind(x, y)
    return check_nans(lax.div_p, error, enabled_errors, out), out


error_checks[lax.div_p] = _div_rule


def oob_payload(oob_mask, indices, dims_map, operand_shape):
    """(index, axis, axis size) of the first out-of-bounds index, as int32."""
    flat = jnp.argmin(jnp.logical_not(oob_mask).ravel())
    position = jnp.unravel_index(flat, indices.shape)[-1]
    axis = jnp.asarray(np.array(dims_map, np.int32))[position]
    size = jnp.asarray(np.array(operand_shape, np.int32))[axis]
    index = jnp.ravel(indices)[flat]
    return jnp.stack([index.astype(np.int32), axis, size])


def _index_check(error, indices, too_big, dims_map, operand_shape, name):
    """Records an OOBError where ``indices`` (index vectors on the last axis) are
    negative or above ``too_big`` (the largest valid start, per vector entry)."""
    if indices.size == 0:
        return error
    bound = np.minimum(np.asarray(too_big, np.int64), np.iinfo(indices.dtype).max)
    bound = jnp.asarray(bound.astype(indices.dtype))
    mask = jnp.logical_or(indices < 0, indices > bound)
    payload = oob_payload(mask, indices, dims_map, operand_shape)
    failure = OOBError(_where(), name, tuple(operand_shape), payload)
    return assert_func(error, jnp.any(mask), failure)


def _start_vector(starts):
    dtype = np.result_type(*[np.dtype(s.dtype) for s in starts])
    return jnp.stack([jnp.asarray(s).astype(dtype) for s in starts])


def _dynamic_slice_rule(error, enabled_errors, operand, *starts, **params):
    out = lax.dynamic_slice_p.bind(operand, *starts, **params)
    if OOBError not in enabled_errors or not starts:
        return error, out
    shape = np.shape(operand)
    too_big = np.array(shape) - np.array(params["slice_sizes"])
    ndim = len(shape)
    return _index_check(
        error, _start_vector(starts), too_big, range(ndim), shape, "dynamic_slice"
    ), out


def _dynamic_update_slice_rule(error, enabled_errors, operand, update, *starts, **params):
    out = lax.dynamic_update_slice_p.bind(operand, update, *starts, **params)
    if OOBError not in enabled_errors or not starts:
        return error, out
    shape = np.shape(operand)
    too_big = np.array(shape) - np.array(np.shape(update))
    indices = _start_vector(starts)
    error = _index_check(error, indices, too_big, range(len(shape)), shape, "dynamic_update_slice")
    return error, out


def _gather_rule(error, enabled_errors, operand, indices, **params):
    out = lax.gather_p.bind(operand, indices, **params)
    if OOBError not in enabled_errors:
        return error, out
    index_map = params["dimension_numbers"].start_index_map
    shape = np.shape(operand)
    sizes = np.array(params["slice_sizes"])
    too_big = np.array([shape[d] - sizes[d] for d in index_map])
    return _index_check(error, indices, too_big, index_map, shape, "gather"), out


def _scatter_rule(primitive):
    def rule(error, enabled_errors, operand, indices, updates, **params):
        out = primitive.bind(operand, indices, updates, **params)
        if OOBError not in enabled_errors:
            return error, out
        dnums = params["dimension_numbers"]
        shape = np.shape(operand)
        window = iter(dnums.update_window_dims)
        sizes = [
            1 if d in dnums.inserted_window_dims or d in dnums.operand_batching_dims
            else np.shape(updates)[next(window)]
            for d in range(len(shape))
        ]  # fmt: skip
        index_map = dnums.scatter_dims_to_operand_dims
        too_big = np.array([shape[d] - sizes[d] for d in index_map])
        error = _index_check(error, indices, too_big, index_map, shape, primitive.name)
        return check_nans(primitive, error, enabled_errors, out), out

    return rule


error_checks[lax.dynamic_slice_p] = _dynamic_slice_rule
error_checks[lax.dynamic_update_slice_p] = _dynamic_update_slice_rule
error_checks[lax.gather_p] = _gather_rule
for _p in (lax.scatter_p, lax.scatter_add_p, lax.scatter_sub_p, lax.scatter_mul_p,
           lax.scatter_min_p, lax.scatter_max_p):  # fmt: skip
    error_checks[_p] = _scatter_rule(_p)
