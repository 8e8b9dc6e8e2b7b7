"""JAX's `jax.scipy.interpolate`: `RegularGridInterpolator`, linear or nearest
interpolation on a rectilinear grid; a pytree (grid, values and fill value are its
leaves)."""

from __future__ import annotations

import itertools

import numpy as np

import lamina.numpy as jnp
from lamina.ir.tree_util import register_pytree_node
from lamina.numpy import check_arraylike, promote_dtypes_inexact

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _points_array(xi, ndim: int):
    """The query points as one array whose last axis holds the coordinates."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        parts = jnp.broadcast_arrays(*xi)
        return jnp.stack([p.astype(float) for p in parts], axis=-1)
    check_arraylike("_ndim_coords_from_arrays", xi)
    xi = jnp.asarray(xi)
    return xi.reshape(-1, ndim) if xi.ndim == 1 else xi


class RegularGridInterpolator:
    """Interpolate ``values`` given on the grid ``points`` (one sorted 1-D array per
    dimension), as scipy.interpolate.RegularGridInterpolator; points outside the grid
    take ``fill_value`` (or are extrapolated when it is None)."""

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=np.nan):  # fmt: skip
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        if len(points) > values.ndim:
            raise ValueError(
                f"there are {len(points)} point arrays, but values has {values.ndim} dimensions"
            )
        (values,) = promote_dtypes_inexact(values)
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = jnp.asarray(fill_value)
            if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError(
                    "fill_value must be either 'None' or of a type compatible with values"
                )
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _points_array(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(
                f"the requested sample points xi have dimension {xi.shape[1]}, but this "
                f"RegularGridInterpolator has dimension {ndim}"
            )
        shape = xi.shape
        xi = xi.reshape(-1, shape[-1])
        indices, fractions, outside = self._cells(xi.T)
        if method == "linear":
            result = self._linear(indices, fractions)
        else:
            pairs = zip(indices, fractions, strict=True)
            result = self.values[tuple(jnp.where(f <= 0.5, i, i + 1) for i, f in pairs)]
        if self.fill_value is not None:
            outside = outside.reshape(outside.shape + (1,) * (result.ndim - 1))
            result = jnp.where(outside, self.fill_value, result)
        return result.reshape(shape[:-1] + self.values.shape[ndim:])

    def _cells(self, xi):
        """Per dimension: the lower grid index of each point's cell and its fractional
        position there; and which points lie outside the grid."""
        indices, fractions = [], []
        outside = jnp.zeros(xi.shape[1], dtype=bool)
        for x, g in zip(xi, self.grid, strict=True):
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.size - 2)
            indices.append(i)
            fractions.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = outside | (x < g[0]) | (x > g[-1])
        return indices, fractions, outside

    def _linear(self, indices, fractions):
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        result = jnp.asarray(0.0)
        for corner in itertools.product(*[(i, i + 1) for i in indices]):
            weight = jnp.asarray(1.0)
            for c, i, f in zip(corner, indices, fractions, strict=True):
                weight = weight * jnp.where(c == i, 1 - f, f)
            result = result + self.values[corner] * weight[trailing]
        return result


register_pytree_node(
    RegularGridInterpolator,
    lambda r: ((r.grid, r.values, r.fill_value), (r.method, r.bounds_error)),
    lambda aux, children: RegularGridInterpolator(*children[:2], *aux, *children[2:]),
)
