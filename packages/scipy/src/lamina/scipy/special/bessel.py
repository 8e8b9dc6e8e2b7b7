"""Bessel functions of the first kind of integer order, ``bessel_jn``, by Miller's
backward recurrence normalized with ``J_0 + 2 (J_2 + J_4 + ...) = 1`` (Zhang and Jin,
Computation of Special Functions, 1996)."""

import operator

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.ir import dtypes

__all__ = ["bessel_jn"]


def _backward_recurrence(z, v: int, n_iter: int):
    """J_0 .. J_v at ``z``, stacked on a new leading axis."""
    tiny = lax.full_like(z, 1e-16)
    zero = lax.full_like(z, 0.0)

    def step(carry, k):
        f_next2, f_next, total = carry
        f = 2.0 * (k + 1.0) * f_next / z - f_next2
        total = lax.select(
            jnp.broadcast_to(lax.rem(k, lax.full_like(k, 2.0)) == 0, z.shape),
            total + 2.0 * f,
            total,
        )
        return (f_next, f, total), f

    ks = lax.iota(z.dtype, n_iter + 1)
    (_, _, total), values = lax.scan(step, (zero, tiny, zero), ks, reverse=True)
    return values[: v + 1] / (total - values[0])


@jit(static_argnames=("v", "n_iter"))
def bessel_jn(z, *, v, n_iter=50):
    """J_0(z) .. J_v(z) for real z, as an array of shape ``(v + 1, *z.shape)``.

    ``v`` and ``n_iter`` (the recurrence's starting order) are static; in float32 the
    recurrence overflows for small ``|z|`` (nan), as JAX's does.
    """
    (z,) = jnp.promote_args_inexact("bessel_jn", jnp.asarray(z))
    if dtypes.issubdtype(z.dtype, np.complexfloating):
        raise TypeError(
            f"rem does not accept dtype {z.dtype} at position 0. Accepted dtypes at position 0 are "
            "subtypes of integer, floating."
        )
    return _backward_recurrence(z, operator.index(v), int(n_iter))
