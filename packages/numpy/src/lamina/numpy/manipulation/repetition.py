"""``repeat`` and ``tile``: arrays made larger by repeating their elements or the
whole array."""

from __future__ import annotations

from functools import partial

import numpy as np
from lamina import lax
from lamina.interpreters import ConcretizationTypeError, jit
from lamina.ir import auto_axes_call, spec_of, typed_value_aval
from lamina.numpy.base.arguments import canonicalize_axis, check_arraylike, to_array
from lamina.numpy.base.static_values import as_array, concrete_value, is_unknown
from lamina.numpy.manipulation.static import gather_along, scatter_1d, shape_of, take_static

__all__ = ["repeat", "tile"]

_TRACED_REPEATS = (
    "When jit-compiling jnp.repeat, the total number of repeats must be static. To fix "
    "this, either specify a static value for `repeats`, or pass a static value to "
    "`total_repeat_length`."
)


def _repeat_each(x, times: int, axis: int):
    """Every element of ``x`` along ``axis`` ``times`` times in a row: a broadcast
    along a new axis after ``axis``, merged into it."""
    shape = shape_of(x)
    expanded = (*shape[: axis + 1], times, *shape[axis + 1 :])
    dims = tuple(d if d <= axis else d + 1 for d in range(len(shape)))
    wide = lax.broadcast_in_dim(x, expanded, dims)
    return lax.reshape(wide, (*shape[:axis], shape[axis] * times, *shape[axis + 1 :]))


def _fit_length(indices: np.ndarray, length: int, size: int) -> np.ndarray:
    """``indices`` cut or extended (by the last element) to ``length`` entries."""
    if len(indices) >= length or size == 0:
        return indices[:length]
    return np.concatenate([indices, np.full(length - len(indices), size - 1, np.int64)])


def _traced_repeat_indices(repeats, size: int, length: int):
    """For each of the ``length`` output positions, the input element it copies:
    the number of cumulative repeat counts at or below the position (clipped to the
    last element), found with a scatter of ones and a running sum."""
    counts = lax.convert_element_type(repeats, np.int32)
    ends = lax.cumsum(counts, axis=0)
    ones = lax.broadcast_in_dim(np.int32(1), shape_of(ends), ())
    marks = scatter_1d("add", lax.broadcast_in_dim(np.int32(0), (length,), ()), ends, ones)
    indices = lax.cumsum(marks, axis=0)
    return lax.min(indices, lax.convert_element_type(max(size - 1, 0), np.int32))


def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    """Each element of ``a`` (flattened when ``axis`` is None) repeated ``repeats``
    times (a scalar, or one count per element) along ``axis``. Under ``jit`` traced
    ``repeats`` need a static ``total_repeat_length``, the output length (the
    result is cut there, or extended with the last element)."""
    check_arraylike("repeat", a, repeats)
    x = to_array(a)
    if axis is None:
        x = lax.reshape(x, (int(np.prod(shape_of(x), dtype=np.int64)),))
        axis = 0
    axis = canonicalize_axis(axis, len(shape_of(x)))
    if out_sharding is not None:  # as JAX: with the mesh's Explicit axes made Auto
        if hasattr(repeats, "aval"):
            run = auto_axes_call(partial(_repeat, axis=axis, length=total_repeat_length),
                                 out_sharding)  # fmt: skip
            return run(x, repeats)
        run = partial(_repeat, repeats=repeats, axis=axis, length=total_repeat_length)
        return auto_axes_call(run, out_sharding)(x)
    aval = typed_value_aval(x, x.aval)
    if aval.type_sharding is not None and spec_of(aval)[axis] is not None:
        raise ValueError("Please pass sharding to `jnp.repeat` via `out_sharding` parameter.")
    return _repeat(x, repeats, axis=axis, length=total_repeat_length)


def _repeat(x, repeats, *, axis, length):
    total_repeat_length = length
    size = shape_of(x)[axis]
    if is_unknown(repeats):
        if total_repeat_length is None:
            raise ConcretizationTypeError(repeats, _TRACED_REPEATS)
        return _repeat_traced(x, repeats, axis, size, int(total_repeat_length))
    counts = concrete_value(repeats, _TRACED_REPEATS)
    if not np.issubdtype(counts.dtype, np.integer):
        raise TypeError(f"jnp.repeat: repeats must be integers, got dtype {counts.dtype}")
    if np.any(counts < 0):
        raise ValueError(f"jnp.repeat: repeats may not be negative, got {counts.tolist()}")
    counts = counts.reshape(-1) if counts.ndim else counts
    if counts.ndim and counts.size not in (1, size):
        raise ValueError(
            f"jnp.repeat: got {counts.size} repeat counts for an axis of size {size}; give "
            "one count, or one per element along the axis."
        )
    if counts.ndim == 0 or counts.size == 1 or (size and np.all(counts == counts[0])):
        times = int(counts.reshape(-1)[0]) if counts.size else 0
        if total_repeat_length is None or int(total_repeat_length) == size * times:
            return _repeat_each(x, times, axis)
        counts = np.full(size, times, np.int64)
    indices = np.repeat(np.arange(size), counts)
    if total_repeat_length is not None:
        indices = _fit_length(indices, int(total_repeat_length), size)
    if size == 0:
        return _empty_repeat(x, axis, len(indices))
    return take_static(x, indices, axis)


def _empty_repeat(x, axis, length):
    shape = list(shape_of(x))
    shape[axis] = length
    return lax.broadcast_in_dim(lax.convert_element_type(0, lax.dtype(x)), tuple(shape), ())


def _repeat_traced(x, repeats, axis, size, length):
    if size == 0 or length == 0:
        return _empty_repeat(x, axis, length)
    counts = repeats
    if not shape_of(counts) or shape_of(counts) == (1,):
        counts = lax.broadcast_in_dim(lax.reshape(counts, ()), (size,), ())
    if len(shape_of(counts)) > 1:
        counts = lax.reshape(counts, (int(np.prod(shape_of(counts))),))
    if shape_of(counts) != (size,):
        raise ValueError(
            f"jnp.repeat: got {shape_of(counts)[0]} repeat counts for an axis of size {size}"
        )
    if not np.issubdtype(lax.dtype(counts), np.integer):
        raise TypeError(f"jnp.repeat: repeats must be integers, got dtype {lax.dtype(counts)}")
    return gather_along(x, _traced_repeat_indices(counts, size, length), axis, mode="clip")


def tile(A, reps):
    """``A`` repeated ``reps[i]`` times along axis ``i`` (``reps`` and ``A``'s shape are
    aligned at the end, the shorter one padded with ones in front)."""
    x = as_array("tile", A)
    values = concrete_value(reps, "reps argument of jnp.tile")
    reps = (
        tuple(int(r) for r in np.atleast_1d(values).reshape(-1)) if values.ndim else (int(values),)
    )
    if any(r < 0 for r in reps):
        raise ValueError(f"jnp.tile: reps must be non-negative, got {reps}")
    return _tile_compiled(x, reps)


@partial(jit, static_argnums=(1,))
def _tile_compiled(x, reps: tuple[int, ...]):
    """Each axis repeated as a broadcast along a new axis in front of it, then merged
    into it by a reshape."""
    shape = shape_of(x)
    ndim = max(len(shape), len(reps))
    shape = (1,) * (ndim - len(shape)) + shape
    reps = (1,) * (ndim - len(reps)) + reps
    if all(r == 1 for r in reps):
        return lax.reshape(x, shape) if shape != shape_of(x) else x
    if x.aval.type_sharding is not None:  # tile keeps the splits (JAX's error for others)
        return lax.tile(lax.reshape(x, shape) if shape != shape_of(x) else x, reps)
    interleaved = tuple(v for pair in zip(reps, shape, strict=True) for v in pair)
    dims = tuple(range(1, 2 * ndim, 2))
    wide = lax.broadcast_in_dim(lax.reshape(x, shape), interleaved, dims)
    return lax.reshape(wide, tuple(r * s for r, s in zip(reps, shape, strict=True)))
