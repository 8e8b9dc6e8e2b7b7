"""Window functions for signal processing: ``bartlett``, ``blackman``, ``hamming``,
``hanning`` and ``kaiser``, with NumPy's
formulas evaluated in the default float dtype. ``M`` must be concrete."""

from __future__ import annotations

from functools import partial

import numpy as np
from lamina import lax
from lamina.interpreters import custom_jvp, jit, jvp
from lamina.ir import dtypes
from lamina.numpy.base.arguments import check_arraylike, to_array
from lamina.numpy.base.static_values import concrete

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _window_length(M, fun_name: str) -> int:
    size = int(concrete(M, f"M argument of jnp.{fun_name}"))
    if size < 0:
        raise TypeError(
            f"broadcast_in_dim shape must have every element be nonnegative, got ({size},)."
        )
    return size


def _ones(M: int):
    return lax.full((M,), 1, dtypes.default_float_dtype())


def bartlett(M):
    """The triangular (Bartlett) window of ``M`` points."""
    return _window("bartlett", M)


@partial(jit, static_argnames=("name", "M"))
def _compiled_window(name, M):
    n = lax.iota(dtypes.default_float_dtype(), M)
    if name == "bartlett":
        return 1 - abs(2 * n + 1 - M) / (M - 1)
    if name == "blackman":
        return (
            0.42 - 0.5 * lax.cos(2 * np.pi * n / (M - 1)) + 0.08 * lax.cos(4 * np.pi * n / (M - 1))
        )
    if name == "hamming":
        return 0.54 - 0.46 * lax.cos(2 * np.pi * n / (M - 1))
    return 0.5 * (1 - lax.cos(2 * np.pi * n / (M - 1)))  # hanning


def _window(name: str, M):
    M = _window_length(M, name)
    return _ones(M) if M <= 1 else _compiled_window(name, M)


def blackman(M):
    """The Blackman window of ``M`` points."""
    return _window("blackman", M)


def hamming(M):
    """The Hamming window of ``M`` points."""
    return _window("hamming", M)


def hanning(M):
    """The Hann window of ``M`` points."""
    return _window("hanning", M)


def _bessel_i0(x):
    x = to_array(x)
    if not dtypes.issubdtype(x.dtype, np.inexact):
        x = lax.convert_element_type(x, dtypes.to_inexact_dtype(x.dtype))
    return _i0(x)


def _i0_formula(x):
    # i0(x) = exp(|x|) * i0e(|x|); i0e is the exponentially scaled form lax provides.
    magnitude = lax.abs(x)
    return lax.exp(magnitude) * lax.bessel_i0e(magnitude)


@custom_jvp
def _i0_with_jvp(x):
    return _i0_formula(x)


@_i0_with_jvp.defjvp
def _i0_jvp(primals, tangents):
    # i0 is even and smooth: its derivative at 0 is 0, where the formula's |x| would
    # give 0 * inf = nan in higher derivatives.
    (x,), (t,) = primals, tangents
    out, t_out = jvp(_i0_formula, (x,), (t,))
    return out, lax.select(x == 0, lax.full_like(t_out, 0), t_out)


_i0 = jit(_i0_with_jvp)  # one computation, as in JAX, so that the rounding matches


def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape parameter ``beta`` (may be traced)."""
    M = _window_length(M, "kaiser")
    check_arraylike("kaiser", beta)
    if M <= 1:
        return _ones(M)
    return _kaiser(M, to_array(beta))


@partial(jit, static_argnames=("M",))
def _kaiser(M, beta):
    n = lax.iota(dtypes.default_float_dtype(), M)
    alpha = 0.5 * (M - 1)
    return _bessel_i0(beta * lax.sqrt(1 - ((n - alpha) / alpha) ** 2)) / _bessel_i0(beta)
