"""``x log y`` with ``0 log 0 = 0`` (``xlogy``, ``xlog1py``) and the entropy functions
built on it: ``entr``, ``rel_entr`` and ``kl_div``. ``xlogy`` and ``xlog1py`` have
custom derivatives, finite at ``x = 0``."""

from __future__ import annotations

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import custom_jvp
from lamina.ir import dtypes
from lamina.numpy import promote_args_inexact

__all__ = ["entr", "kl_div", "rel_entr", "xlog1py", "xlogy"]


def _kept(x, y):
    """Where ``x log(y)`` is taken as computed: ``x != 0``, or ``y`` is nan (SciPy
    propagates nan in ``y`` even where ``x`` is 0); elsewhere the result is 0."""
    return (x != 0.0) | jnp.isnan(y)


@custom_jvp
def xlogy(x, y):
    """``x * log(y)``, 0 where ``x == 0`` (``xlogy(0, 0) == 0``)."""
    x, y = promote_args_inexact("xlogy", x, y)
    return jnp.where(_kept(x, y), lax.mul(x, lax.log(y)), jnp.zeros_like(x))


@xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = xlogy(x, y)
    return out, (x_dot * lax.log(y) + y_dot * x / y).astype(out.dtype)


@custom_jvp
def xlog1py(x, y):
    """``x * log1p(y)``, 0 where ``x == 0`` (``xlog1py(0, -1) == 0``)."""
    x, y = promote_args_inexact("xlog1py", x, y)
    return jnp.where(_kept(x, y), lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


@xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = xlog1py(x, y)
    return out, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(out.dtype)


@custom_jvp
def _xlogx(x):
    return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


def _check_real(name: str, x) -> None:
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"{name} does not support complex-valued inputs.")


def entr(x):
    """``-x log x`` for ``x > 0``, 0 at 0, ``-inf`` for ``x < 0``."""
    (x,) = promote_args_inexact("entr", x)
    _check_real("entr", x)
    return lax.select(x < 0, lax.full_like(x, -np.inf), lax.neg(_xlogx(x)))


def rel_entr(p, q):
    """``p log(p / q)`` for ``p, q > 0``; 0 where ``p == 0 <= q``; ``inf`` otherwise."""
    p, q = promote_args_inexact("rel_entr", p, q)
    _check_real("rel_entr", p)
    zero = lax.full_like(p, 0)
    both_positive = (p > zero) & (q > zero)
    p_zero = (p == zero) & (q >= zero)
    safe_p = jnp.where(both_positive, p, 1)
    safe_q = jnp.where(both_positive, q, 1)
    value = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return jnp.where(both_positive, value, jnp.where(p_zero, zero, np.inf))


def kl_div(p, q):
    """``rel_entr(p, q) - p + q``, the Kullback-Leibler divergence term."""
    p, q = promote_args_inexact("kl_div", p, q)
    _check_real("kl_div", p)
    return rel_entr(p, q) - p + q
