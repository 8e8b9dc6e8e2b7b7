"""Samplers of indices and selections: ``permutation`` (sorting by fresh random bits),
``choice`` (uniform or weighted, with or without replacement) and ``categorical`` (the
Gumbel-max trick). Each public function checks its arguments as JAX does, then calls
its jitted body, in JAX 0.10.2's order of operations."""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.random.arguments import (
    canonical_axis,
    canonicalize_shape,
    check_shape,
    concrete_index,
    promote_inexact,
    with_out_sharding,
)
from lamina.random.keys import split_keys
from lamina.random.samplers.inverse_cdf import _gumbel
from lamina.random.samplers.uniform import _uniform, randint

__all__ = ["categorical", "choice", "permutation"]


def _arange(n):
    return lax.iota(dtypes.canonicalize_dtype(np.int64), n)


@with_out_sharding
def permutation(key, x, axis=0, independent=False, *, out_sharding=None):
    """A random permutation of ``range(x)`` (integer ``x``) or of ``x`` along ``axis``."""
    key, _ = lax.check_prng_key("permutation", key)
    jnp.check_arraylike("permutation", x)
    ndim = jnp.ndim(x)
    axis = canonical_axis(axis, ndim or 1)
    if not ndim:
        if not dtypes.issubdtype(lax.aval_of(x).dtype, np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        n = concrete_index(x, "argument x of jax.random.permutation()")
        return _shuffle(key, _arange(n), axis)
    x = jnp.asarray(x)
    if independent or ndim == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, _arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis, unique_indices=True)


@partial(jit, static_argnums=(2,))
def _shuffle(key, x, axis):
    """``x`` shuffled along ``axis``: sorted by fresh random 32-bit keys, in as many
    rounds as make ties negligible (three times the bits of the size, as JAX)."""
    size = math.prod(x.shape)
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, subkey = split_keys(key, 2)
        sort_keys = lax.random_bits(subkey, 32, x.shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples from ``a`` (or ``range(a)``), with or without replacement, uniformly or
    with probabilities ``p``."""
    key, _ = lax.check_prng_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    jnp.check_arraylike("choice", a)
    arr = jnp.asarray(a)
    a_shape = arr.shape
    if not a_shape:
        n_inputs = concrete_index(a, "The error occurred in jax.random.choice()")
    else:
        axis = canonical_axis(axis, len(a_shape))
        n_inputs = a_shape[axis]
    shape = tuple(shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return lax.full(shape, 0, arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) "
            "when 'replace=False'"
        )
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if not a_shape else jnp.take(arr, ind, axis)
        else:
            perm = permutation(key, n_inputs if not a_shape else arr, axis)
            result = lax.slice_in_dim(perm, 0, n_draws, axis=axis)
    else:
        jnp.check_arraylike("choice", p)
        p_arr = promote_inexact(p)
        if jnp.shape(p_arr) != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {jnp.shape(p_arr)} and a.shape[axis] is {n_inputs}."
            )
        ind = choice_with_p(key, p_arr, shape, replace, n_inputs, mode or "low")
        result = ind if not a_shape else jnp.take(arr, ind, axis)
    out_shape = shape if not a_shape else (*a_shape[:axis], *shape, *a_shape[axis + 1 :])
    return lax.reshape(result, out_shape)


@partial(jit, static_argnums=(2, 3, 4, 5))
def choice_with_p(key, p, shape, replace, n_inputs, mode):
    """Indices into ``range(n_inputs)`` drawn with probabilities ``p`` (the jitted body
    of ``choice`` given ``p``)."""
    if replace:
        p_cuml = lax.cumsum(p)
        total = lax.slice_in_dim(p_cuml, n_inputs - 1, n_inputs)
        r = lax.reshape(total, ()) * (1 - _uniform(key, 0.0, 1.0, shape, p_cuml.dtype))
        # searchsorted(p_cuml, r), side 'left': how many cumulative sums are below r.
        below = lax.expand_dims(p_cuml, tuple(range(len(shape)))) < lax.expand_dims(
            r, (len(shape),)
        )
        count = lax.reduce_sum(lax.convert_element_type(below, np.int32), (len(shape),))
        return lax.convert_element_type(count, dtypes.canonicalize_dtype(np.int64))
    g = _gumbel(key, (n_inputs,), p.dtype, mode) + lax.log(p)
    k = math.prod(shape)
    return lax.convert_element_type(lax.top_k(g, k)[1], dtypes.canonicalize_dtype(np.int64))


@with_out_sharding
def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None, *, out_sharding=None):
    """Indices drawn along ``axis`` with log-probabilities ``logits`` (Gumbel-max)."""
    key, _ = lax.check_prng_key("categorical", key)
    jnp.check_arraylike("categorical", logits)
    logits = jnp.asarray(logits)
    batch_shape = tuple(np.delete(np.array(logits.shape, dtype=np.int64), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = canonicalize_shape(shape, "categorical")
        check_shape("categorical", shape, batch_shape)
    return _categorical(key, logits, shape, batch_shape, axis, replace, mode or "low")


@partial(jit, static_argnums=(2, 3, 4, 5, 6))
def _categorical(key, logits, shape, batch_shape, axis, replace, mode):
    prefix = shape[: len(shape) - len(batch_shape)]
    ndim = logits.ndim
    if replace:
        axis = axis - ndim if axis >= 0 else axis
        logits_shape = list(shape[len(shape) - len(batch_shape) :])
        logits_shape.insert(axis % ndim, logits.shape[axis])
        noise = _gumbel(key, (*prefix, *logits_shape), logits.dtype, mode)
        x = noise + lax.expand_dims(logits, tuple(range(len(prefix))))
        return lax.argmax(x, axis % x.ndim, dtypes.canonicalize_dtype(np.int64))
    logits = logits + _gumbel(key, logits.shape, logits.dtype, mode)
    k = math.prod(prefix)
    axis = axis % ndim
    if k > logits.shape[axis]:
        raise ValueError(
            f"Number of samples without replacement ({k}) cannot exceed number of "
            f"categories ({logits.shape[axis]})."
        )
    perm = (*(i for i in range(ndim) if i != axis), axis)
    _, indices = lax.top_k(lax.transpose(logits, perm), k)
    dimensions = (indices.ndim - 1, *range(indices.ndim - 1))
    return lax.reshape(indices, tuple(shape), dimensions)
