"""The gamma function family: ``gammaln``, ``gammasgn``, ``gamma``, ``loggamma``,
``digamma``, ``polygamma`` and ``multigammaln``, on lax's ``lgamma``, ``digamma`` and
``polygamma`` (complex ``gamma``/``loggamma`` through :mod:`.complex_gamma`)."""

from __future__ import annotations

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import ConcretizationTypeError, Tracer, jit
from lamina.ir import dtypes
from lamina.numpy import promote_args_inexact
from lamina.scipy.special.complex_gamma import complex_gamma, complex_loggamma

__all__ = [
    "digamma",
    "gamma",
    "gammaln",
    "gammasgn",
    "loggamma",
    "multigammaln",
    "polygamma",
]


def _is_complex(x) -> bool:
    return dtypes.issubdtype(x.dtype, np.complexfloating)


def gammaln(x):
    """``log|Gamma(x)|`` for real ``x``."""
    (x,) = promote_args_inexact("gammaln", x)
    return lax.lgamma(x)


@jit
def gammasgn(x):
    """The sign of ``Gamma(x)``: nan at the poles (non-positive integers) and for nan,
    ``-1`` where Gamma is negative (and at ``-0.0``), ``+1`` elsewhere."""
    (x,) = promote_args_inexact("gammasgn", x)
    if _is_complex(x):
        raise ValueError("gammasgn does not support complex-valued inputs.")
    kind = x.dtype.type
    floor_x = lax.floor(x)
    negative = x < 0
    pole = (negative & (x == floor_x)) | jnp.isnan(x)
    minus = (negative & (floor_x % 2 != 0)) | ((x == 0) & jnp.signbit(x))
    return jnp.select([pole, minus], [kind(np.nan), kind(-1.0)], kind(1.0))


def loggamma(x):
    """The principal branch of ``log(Gamma(x))``: nan for real ``x <= 0``; for complex
    ``x`` the branch cut lies on the negative real axis, as SciPy's."""
    (x,) = promote_args_inexact("loggamma", x)
    if _is_complex(x):
        return complex_loggamma(x)
    return jnp.where(x > 0, lax.lgamma(x), jnp.nan)


def gamma(x):
    """``Gamma(x)`` for real or complex ``x``: nan at the poles, ``+-inf`` at ``+-0``."""
    (x,) = promote_args_inexact("gamma", x)
    if _is_complex(x):
        return complex_gamma(x)
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def digamma(x):
    """``psi(x)``, the derivative of ``log Gamma(x)``, for real ``x``."""
    (x,) = promote_args_inexact("digamma", x)
    return lax.digamma(x)


def polygamma(n, x):
    """``psi^(n)(x)``, the ``n``-th derivative of digamma; ``n`` must have an integer
    dtype (negative orders give nan)."""
    if not dtypes.issubdtype(lax.dtype(n), np.integer):
        raise ValueError(
            f"Argument `n` to polygamma must be of integer type. Got dtype {lax.dtype(n)}."
        )
    n_arr, x_arr = promote_args_inexact("polygamma", n, x)
    if _is_complex(x_arr):
        raise ValueError("polygamma does not support complex-valued inputs.")
    return lax.polygamma(n_arr, x_arr)


def multigammaln(a, d):
    """``log`` of the multivariate gamma function of dimension ``d`` (a concrete integer):
    ``d (d - 1) / 4 log(pi) + sum_i gammaln(a - i / 2)`` over ``i < d``."""
    if isinstance(d, Tracer):
        raise ConcretizationTypeError(d, "d argument of multigammaln")
    d = int(d)
    a, d_arr = promote_args_inexact("multigammaln", a, d)
    quarter, one, pi = (np.array(v, a.dtype) for v in (0.25, 1.0, np.pi))
    constant = lax.mul(lax.mul(lax.mul(quarter, d_arr), lax.sub(d_arr, one)), lax.log(pi))
    halves = lax.div(jnp.arange(d, dtype=d_arr.dtype), np.array(2.0, a.dtype))
    terms = gammaln(jnp.expand_dims(a, -1) - jnp.expand_dims(halves, tuple(range(a.ndim))))
    return jnp.sum(terms, axis=-1) + constant
