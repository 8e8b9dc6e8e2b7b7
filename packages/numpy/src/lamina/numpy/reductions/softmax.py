"""``softmax`` and ``log_softmax`` along axes: the functions of ``jax.nn`` that
``jax.scipy.special``'s call too (exported by lamina.numpy outside ``jax.numpy``'s
surface for those layers), with JAX 0.10.2's masks (``where``), infinite inputs and,
for ``softmax``, the ``jax_softmax_custom_jvp`` option."""

from __future__ import annotations

import functools

import numpy as np
from lamina import lax
from lamina.interpreters import config, custom_jvp, jit
from lamina.numpy.base.arguments import check_arraylike, promote_args_inexact, to_array
from lamina.numpy.reductions import folding
from lamina.numpy.reductions import rules as rc

__all__ = ["log_softmax", "softmax"]


def _exp(x):
    """``exp`` of ``x``, integers taken as the default float type (as ``jnp.exp``)."""
    return lax.exp(promote_args_inexact("exp", x)[0])


def _static_axis(axis):
    """``axis`` in a hashable form, for ``jit``'s static arguments."""
    return tuple(axis) if isinstance(axis, list) else axis


@functools.partial(jit, static_argnames=("axis",))
def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x, axis)``; entries outside ``where`` are ``-inf``. Jitted with a
    static ``axis`` (a hashable int, tuple or None), as JAX's is."""
    check_arraylike("log_softmax", x)
    x_max = folding.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else rc.promoting_select(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    sum_exp = folding.sum(_exp(shifted), axis, where=where, keepdims=True)
    result = shifted - lax.log(sum_exp)
    return result if where is None else rc.promoting_select(where, result, -np.inf)


def _softmax_formula(x, axis, where, initial, differentiate_shift: bool):
    x_max = folding.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = to_array(x) if where is None else rc.promoting_select(where, x, initial)
    shift = x_max if differentiate_shift else lax.stop_gradient(x_max)
    unnormalized = _exp(x_safe - shift)
    result = unnormalized / folding.sum(unnormalized, axis, where=where, keepdims=True)
    return result if where is None else rc.promoting_select(where, result, 0)


# Named ``_softmax`` because the name shows in Jaxprs (``custom_jvp_call[name=_softmax``).
@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _softmax(x, axis=-1, where=None, initial=-np.inf):
    return _softmax_formula(x, axis, where, initial, differentiate_shift=True)


@_softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
    (x, where, initial), (x_dot, _, _) = primals, tangents
    y = _softmax(x, axis, where, initial)
    return y, y * (x_dot - folding.sum(y * x_dot, axis, where=where, keepdims=True))


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x), axis)``; entries outside ``where`` are 0.

    As in JAX, not jitted, and differentiated through its formula (with the shift by
    the maximum held constant) unless the ``jax_softmax_custom_jvp`` option is on; then
    by the custom rule ``y * (x_dot - sum(y * x_dot))``."""
    check_arraylike("softmax", x)
    axis = _static_axis(axis)
    if config.jax_softmax_custom_jvp:
        return _softmax(x, axis, where)
    return _softmax_formula(x, axis, where, -np.inf, differentiate_shift=False)
