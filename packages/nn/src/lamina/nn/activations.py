"""Elementwise activation functions of ``jax.nn`` (relu and its relatives, sigmoids,
softplus, gelu, glu, ...), each defined as JAX 0.10.2 defines it so that values,
dtypes and derivatives agree. Most are compiled with ``jit``, as in JAX; ``relu``,
``relu6`` and ``log1mexp`` carry JAX's custom JVP rules."""

from __future__ import annotations

import functools

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import custom_jvp, jit
from lamina.numpy import check_arraylike, promote_args_inexact, to_array

__all__ = [
    "celu",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "mish",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "swish",
    "tanh",
]

# SELU's fixed point constants (Klambauer et al., 2017).
_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805


def _arraylike(fun_name: str, x):
    check_arraylike(fun_name, x)
    return to_array(x)


@jit
def identity(x):
    """``x`` itself, as an array."""
    return _arraylike("identity", x)


@custom_jvp
@jit
def relu(x):
    """Rectified linear unit ``max(x, 0)``; its derivative at 0 is taken to be 0."""
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


@custom_jvp
@jit
def relu6(x):
    """``min(max(x, 0), 6)``; the derivative is 0 at both kinks."""
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


@jit
def squareplus(x, b=4):
    """``(x + sqrt(x**2 + b)) / 2``, a smooth algebraic relu."""
    check_arraylike("squareplus", x, b)
    x, b = to_array(x), to_array(b)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


@jit
def softplus(x):
    """``log(1 + exp(x))``, computed without overflow."""
    return jnp.logaddexp(x, 0)


@jit
def sparse_plus(x):
    """0 below -1, ``x`` above 1 and ``(x + 1)**2 / 4`` between."""
    x = _arraylike("sparse_plus", x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@jit
def soft_sign(x):
    """``x / (|x| + 1)``."""
    x = _arraylike("soft_sign", x)
    return x / (jnp.abs(x) + 1)


@jit
def sigmoid(x):
    """The logistic function ``1 / (1 + exp(-x))``."""
    return lax.logistic(x)


@jit
def sparse_sigmoid(x):
    """``clip((x + 1) / 2, 0, 1)``, the derivative of ``sparse_plus``."""
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@jit
def silu(x):
    """``x * sigmoid(x)`` (also called swish)."""
    x = _arraylike("silu", x)
    return x * sigmoid(x)


swish = silu


@jit
def mish(x):
    """``x * tanh(softplus(x))``."""
    x = _arraylike("mish", x)
    return x * jnp.tanh(softplus(x))


@jit
def log_sigmoid(x):
    """``log(sigmoid(x))`` as ``-softplus(-x)``, finite for large negative ``x``."""
    x = _arraylike("log_sigmoid", x)
    return -softplus(-x)


@jit
def elu(x, alpha=1.0):
    """``x`` for positive ``x``, ``alpha * (exp(x) - 1)`` otherwise."""
    x = _arraylike("elu", x)
    # The exponential sees only non-positive values so that its gradient stays finite.
    negative_part = jnp.where(x > 0, 0.0, x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(negative_part))


@jit
def leaky_relu(x, negative_slope=1e-2):
    """``x`` where ``x >= 0``, ``negative_slope * x`` elsewhere."""
    x = _arraylike("leaky_relu", x)
    return jnp.where(x >= 0, x, negative_slope * x)


@jit
def hard_tanh(x):
    """``x`` clipped to ``[-1, 1]``."""
    x = _arraylike("hard_tanh", x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@jit
def celu(x, alpha=1.0):
    """Continuously differentiable elu: ``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


@jit
def selu(x):
    """Scaled elu with the self-normalising constants of Klambauer et al."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x, approximate: bool = True):
    """Gaussian error linear unit: ``x * Phi(x)``, or its tanh approximation when
    ``approximate`` is true (the default, as in JAX)."""
    [x] = promote_args_inexact("gelu", x)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x.dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * x**3)))
        return x * cdf
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    return jnp.array(0.5 * x * lax.erfc(-x * sqrt_half), dtype=x.dtype)


@functools.partial(jit, static_argnames=("axis",))
def glu(x, axis: int = -1):
    """Gated linear unit: the first half of ``x`` along ``axis`` times the sigmoid of the
    second half."""
    x = _arraylike("glu", x)
    if x.shape[axis] % 2 != 0:
        raise AssertionError("axis size must be divisible by 2")
    first, second = jnp.split(x, 2, axis)
    return first * sigmoid(second)


@custom_jvp
@jit
def log1mexp(x):
    """``log(1 - exp(-x))`` for positive ``x``, switching formulas at ``log 2`` to stay
    accurate near 0 and for large ``x`` (Maechler, 2012)."""
    x = _arraylike("log1mexp", x)
    return jnp.where(x < jnp.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


@jit
def hard_sigmoid(x):
    """``relu6(x + 3) / 6``."""
    return relu6(x + 3.0) / 6.0


@jit
def hard_silu(x):
    """``x * hard_sigmoid(x)`` (also called hard swish)."""
    x = _arraylike("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def tanh(x, /):
    """Hyperbolic tangent (``jax.numpy.tanh``)."""
    return jnp.tanh(x)
