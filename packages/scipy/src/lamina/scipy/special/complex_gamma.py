"""``Gamma`` and ``log Gamma`` of complex arguments, by the Lanczos approximation
(g = 7, nine coefficients, GSL's ``lanczos_7_c``) with the reflection formula left of
``Re z = 1/2``; ``complex_loggamma`` moves the argument right by whole steps instead, so
its single branch cut lies on the negative real axis, as SciPy's ``loggamma``'s."""

from __future__ import annotations

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import jit

__all__ = ["complex_gamma", "complex_loggamma"]

_G = 7.0
_COEFFICIENTS = np.array(
    [
        0.99999999999980993,
        676.5203681218851,
        -1259.1392167224028,
        771.32342877765313,
        -176.61502916214059,
        12.507343278686905,
        -0.13857109526572012,
        9.9843695780195716e-6,
        1.5056327351493116e-7,
    ]
)


def _lanczos_loggamma(z):
    """``log Gamma(z)`` for ``Re z >= 1/2``."""
    w = z - 1.0
    coefficients = jnp.asarray(_COEFFICIENTS, dtype=z.dtype)
    offsets = jnp.arange(1, len(_COEFFICIENTS), dtype=z.dtype)
    series = coefficients[0] + jnp.sum(coefficients[1:] / (w[..., None] + offsets), axis=-1)
    t = w + (_G + 0.5)
    return 0.5 * np.log(2 * np.pi) + (w + 0.5) * jnp.log(t) - t + jnp.log(series)


def _loggamma_reflected(z):
    """``log Gamma(z)`` anywhere off the poles: Lanczos right of ``Re z = 1/2``, the
    reflection ``Gamma(z) Gamma(1 - z) = pi / sin(pi z)`` left of it. Each branch sees a
    harmless argument where the other is taken, so neither leaks nan into derivatives."""
    left = jnp.real(z) < 0.5
    right_value = _lanczos_loggamma(jnp.where(left, 1.0 - z, z))
    z_left = jnp.where(left, z, jnp.full_like(z, 0.5))
    reflected = np.log(np.pi) - jnp.log(jnp.sin(np.pi * z_left)) - right_value
    return jnp.where(left, reflected, right_value)


def _poles_and_nans(z):
    """Where ``Gamma`` has a pole (a non-positive real integer) or ``z`` is nan, and
    ``z`` with those entries replaced by 1."""
    real = jnp.real(z)
    bad = ((jnp.imag(z) == 0) & (real == jnp.floor(real)) & (real <= 0)) | jnp.isnan(z)
    return bad, jnp.where(bad, jnp.ones_like(z), z)


def complex_gamma(z):
    """``Gamma(z)`` for complex ``z``; ``nan+nanj`` at the poles and for nan input."""
    bad, z_safe = _poles_and_nans(z)
    nan = jnp.array(complex(np.nan, np.nan), dtype=z.dtype)
    return jnp.where(bad, nan, jnp.exp(_loggamma_reflected(z_safe)))


@jit
def complex_loggamma(z):
    """The principal branch of ``log Gamma(z)`` for complex ``z``: ``z`` is moved right
    by ``n`` whole steps and ``log z + ... + log(z + n - 1)`` subtracted."""
    bad, z_safe = _poles_and_nans(z)
    steps = jnp.maximum(0, jnp.ceil(0.5 - jnp.real(z_safe)).astype(int))

    def more(state):
        k, _ = state
        return jnp.any(k < steps)

    def step(state):
        k, logs = state
        active = k < steps
        term = jnp.log(jnp.where(active, z_safe + k, jnp.ones_like(z_safe)))
        return k + 1, logs + jnp.where(active, term, jnp.zeros_like(logs))

    _, logs = lax.while_loop(more, step, (0, jnp.zeros_like(z_safe)))
    value = _loggamma_reflected(z_safe + steps) - logs
    nan = jnp.array(complex(np.nan, np.nan), dtype=z.dtype)
    return jnp.where(bad, nan, value)
