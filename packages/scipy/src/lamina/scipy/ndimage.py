"""JAX's `jax.scipy.ndimage`: `map_coordinates`, spline interpolation of order 0
(nearest) or 1 (linear) at arbitrary coordinates, with SciPy's boundary modes."""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Sequence

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.ir import dtypes

__all__ = ["map_coordinates"]


def _mirror(index, size: int):
    """Reflection about the end points (the edge samples are not repeated)."""
    period = size - 1
    return jnp.abs((index + period) % (2 * period) - period)


def _reflect(index, size: int):
    """Reflection about the half-sample edges (the edge samples are repeated)."""
    return jnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round(x):
    """Round half away from zero (integers stay as they are)."""
    return x if dtypes.issubdtype(x.dtype, np.integer) else lax.round(x)


def _nearest(coordinate):
    return [(_round(coordinate).astype(np.int32), coordinate.dtype.type(1))]


def _linear(coordinate):
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input, coordinates: Sequence, order: int, mode: str = "constant",
                    cval=0.0):  # fmt: skip
    """``input`` interpolated at ``coordinates`` (one array per dimension of ``input``),
    as scipy.ndimage.map_coordinates with order 0 or 1."""
    input = jnp.asarray(input)
    coordinates = [jnp.asarray(c) for c in coordinates]
    cval = jnp.asarray(cval, input.dtype)
    if len(coordinates) != input.ndim:
        raise ValueError(
            "coordinates must be a sequence of length input.ndim, but "
            f"{len(coordinates)} != {input.ndim}"
        )
    fix_index = _INDEX_FIXERS.get(mode)
    if fix_index is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_INDEX_FIXERS)}."
        )
    if order == 0:
        nodes_of = _nearest
    elif order == 1:
        nodes_of = _linear
    else:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")

    per_axis = []
    for coordinate, size in zip(coordinates, input.shape, strict=True):
        nodes = []
        for index, weight in nodes_of(coordinate):
            inside = (index >= 0) & (index < size) if mode == "constant" else None
            nodes.append((fix_index(index, size), inside, weight))
        per_axis.append(nodes)

    terms = []
    for corner in itertools.product(*per_axis):
        indices = tuple(index for index, _, _ in corner)
        value = input[indices]
        insides = [inside for _, inside, _ in corner if inside is not None]
        if insides:
            value = jnp.where(functools.reduce(operator.and_, insides), value, cval)
        weight = functools.reduce(operator.mul, [w for _, _, w in corner])
        terms.append(weight * value)
    result = functools.reduce(operator.add, terms)
    if dtypes.issubdtype(input.dtype, np.integer):
        result = _round(result)
    return result.astype(input.dtype)
