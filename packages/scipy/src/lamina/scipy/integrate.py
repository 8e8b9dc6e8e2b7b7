"""JAX's `jax.scipy.integrate`: `trapezoid`."""

from __future__ import annotations

import lamina.numpy as jnp
from lamina.interpreters import jit

__all__ = ["trapezoid"]


def _trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at sample points
    ``x`` or spacing ``dx`` (as scipy.integrate.trapezoid)."""
    return jnp.trapezoid(y, x, dx, axis)


trapezoid = jit(_trapezoid, static_argnames=("axis",))
