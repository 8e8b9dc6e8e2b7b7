"""``logaddexp`` and ``logaddexp2`` of lamina.numpy (the bodies of those ufuncs):
``log(exp(x) + exp(y))`` computed without overflow, for real and complex inputs, with
JAX's custom derivative (finite where an input is +inf)."""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.interpreters import custom_jvp
from lamina.numpy.base.arguments import promote_args_inexact
from lamina.numpy.ufuncs.operands import (
    const_like,
    dtype_of,
    full_like,
    is_complex,
    is_floating,
    jitted,
    select,
)

__all__ = ["logaddexp", "logaddexp2"]


def _wrap_between(x, half_width):
    """``x`` wrapped into ``[-half_width, half_width)``."""
    width = const_like(x, 2 * half_width)
    rem = lax.rem(lax.add(x, const_like(x, half_width)), width)
    rem = select(lax.lt(rem, const_like(x, 0)), lax.add(rem, width), rem)
    return lax.sub(rem, const_like(x, half_width))


def _logaddexp_in(exp_fun, log_scale, wrap):
    """log(exp(x) + exp(y)) in a base given by ``exp_fun`` and ``log_scale`` (the
    factor turning a natural log1p into that base), stable for large inputs."""

    def fun(x, y):
        if not (is_floating(x) or is_complex(x)):
            raise ValueError(
                f"logaddexp requires floating-point or complex inputs; got {dtype_of(x)}"
            )
        amax = lax.max(x, y)
        if is_complex(x):
            delta = lax.sub(lax.add(x, y), lax.mul(amax, const_like(amax, 2)))
            out = lax.add(amax, _scale(lax.log1p(exp_fun(delta)), log_scale))
            return lax.complex(lax.real(out), _wrap_between(lax.imag(out), wrap))
        delta = lax.sub(x, y)
        spread = _scale(lax.log1p(exp_fun(lax.neg(lax.abs(delta)))), log_scale)
        # NaN delta: a NaN input, or infinities of the same sign (whose sum is right).
        return select(lax.ne(delta, delta), lax.add(x, y), lax.add(amax, spread))

    def jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = fun(x, y)
        weight_x = exp_fun(lax.sub(_drop_posinf(x), _drop_posinf(out)))
        weight_y = exp_fun(lax.sub(_drop_posinf(y), _drop_posinf(out)))
        return out, lax.add(lax.mul(tx, weight_x), lax.mul(ty, weight_y))

    wrapped = custom_jvp(fun)
    wrapped.defjvp(jvp)
    return wrapped


def _scale(x, factor):
    return x if factor is None else lax.mul(x, const_like(x, factor))


def _drop_posinf(x):
    """+inf (of the real part) replaced by 0, so that the weights of the derivative of
    logaddexp(inf, y) stay finite."""
    re = lax.real(x) if is_complex(x) else x
    return select(lax.eq(re, const_like(re, np.inf)), full_like(x, 0), x)


_logaddexp_e = _logaddexp_in(lax.exp, None, np.pi)
_logaddexp_2 = _logaddexp_in(lax.exp2, 1 / np.log(2), np.pi / np.log(2))


@jitted
def logaddexp(x1, x2, /):
    """``log(exp(x1) + exp(x2))`` without overflow."""
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    return _logaddexp_e(x1, x2)


@jitted
def logaddexp2(x1, x2, /):
    """``log2(2**x1 + 2**x2)`` without overflow."""
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    return _logaddexp_2(x1, x2)
