"""SciPy's ``softmax`` and ``log_softmax``: the functions of ``jax.nn`` (which
lamina.numpy holds) over all axes by default, with a keyword-only ``axis`` and no
``where``."""

from __future__ import annotations

import lamina.numpy as jnp

__all__ = ["log_softmax", "softmax"]


def softmax(x, /, *, axis=None):
    """``exp(x) / sum(exp(x))`` over ``axis`` (None: all axes); any ``+inf`` gives nan."""
    return jnp.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """``x - logsumexp(x)`` over ``axis`` (None: all axes); any ``+inf`` gives nan."""
    return jnp.log_softmax(x, axis=axis)
