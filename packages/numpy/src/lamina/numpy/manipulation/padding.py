"""``pad`` (``jax.numpy.pad``): arrays padded in every NumPy mode, and with a
callable mode. This module reads the arguments (pad widths and the modes' options in
every NumPy form); the modes themselves are in :mod:`.padding_modes`."""

from __future__ import annotations

from functools import partial

import numpy as np
from lamina.interpreters import jit
from lamina.numpy.base.arguments import is_arraylike
from lamina.numpy.base.static_values import as_array, concrete_value
from lamina.numpy.manipulation import padding_modes as modes
from lamina.numpy.manipulation.static import shape_of

__all__ = ["pad"]

_MODE_OPTIONS = {
    "constant": ("constant_values",),
    "edge": (),
    "empty": (),
    "linear_ramp": ("end_values",),
    "maximum": ("stat_length",),
    "mean": ("stat_length",),
    "median": ("stat_length",),
    "minimum": ("stat_length",),
    "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
    "wrap": (),
}


def _pairs(values, ndim: int, name: str) -> tuple[tuple, ...]:
    """``values`` (a scalar, ``(v,)``, ``(before, after)``, ``((before, after),)`` or one
    pair per axis) as one ``(before, after)`` pair per axis; the values must be known
    while tracing."""
    try:
        table = concrete_value(values, f"{name} argument of jnp.pad")
    except ValueError:
        raise TypeError(f"`{name}` entries must be the same shape: {values}") from None
    if table.dtype == object:
        raise TypeError(f"`{name}` entries must be the same shape: {values}")
    if table.shape == (ndim, 2):
        return tuple((row[0], row[1]) for row in table.tolist())
    if table.shape in ((1, 2), (2,)):
        pair = tuple(table.reshape(2).tolist())
        return (pair,) * ndim
    if table.shape in ((1,), ()):
        value = table.reshape(()).item()
        return ((value, value),) * ndim
    raise ValueError(
        f"jnp.pad: {name} with nd={ndim} has unsupported shape {table.shape}. Valid shapes "
        f"are ({ndim}, 2), (1, 2), (2,), (1,), or ()."
    )


def _widths(pad_width, ndim: int) -> tuple[tuple[int, int], ...]:
    pairs = _pairs(pad_width, ndim, "pad_width")
    if not all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) for pair in pairs for v in pair
    ):
        raise TypeError("`pad_width` must be of integral type.")
    if any(v < 0 for pair in pairs for v in pair):
        raise ValueError(f"index can't contain negative values: pad_width={pad_width}")
    return tuple((int(a), int(b)) for a, b in pairs)


def pad(array, pad_width, mode="constant", **kwargs):
    """``array`` padded by ``pad_width`` (before, after) elements along each axis.

    ``mode`` is ``'constant'`` (``constant_values``, default 0, may be traced),
    ``'empty'`` (zeros), ``'edge'``, ``'wrap'``, ``'linear_ramp'`` (``end_values``),
    ``'maximum'``, ``'minimum'``, ``'mean'``, ``'median'`` (over ``stat_length``
    edge elements, default all), ``'reflect'`` and ``'symmetric'`` (``reflect_type``
    ``'even'`` or ``'odd'``), or a callable ``f(row, (before, after), axis, kwargs)``
    returning each zero-padded 1-D row filled in (NumPy's protocol, applied with
    ``vmap``). Pad widths and the mode options other than ``constant_values`` must be
    known while tracing.
    """
    x = as_array("pad", array)
    ndim = len(shape_of(x))
    widths = _widths(pad_width, ndim)
    if callable(mode):
        return modes.pad_with_function(x, widths, mode, kwargs)
    if mode not in _MODE_OPTIONS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - set(_MODE_OPTIONS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if ndim == 0:
        return x
    options = {"reflect_type": "even", **kwargs}
    constant_values = options.pop("constant_values", 0)
    if not is_arraylike(constant_values):
        constant_values = np.asarray(constant_values)
    if mode == "linear_ramp":
        options["end_values"] = _pairs(options.get("end_values", 0), ndim, "end_values")
    if options.get("stat_length") is not None:
        options["stat_length"] = _pairs(options["stat_length"], ndim, "stat_length")
    if options["reflect_type"] not in ("even", "odd"):
        raise ValueError(f"reflect_type must be 'even' or 'odd', got {options['reflect_type']!r}")
    return _pad_compiled(x, constant_values, widths, mode, tuple(sorted(options.items())))


@partial(jit, static_argnums=(2, 3, 4))
def _pad_compiled(x, constant_values, widths, mode, options):
    """The string modes, compiled as one computation per array type, widths and
    options (as JAX does), instead of one dispatch per slice and concatenation."""
    options = dict(options)
    if mode in ("constant", "empty"):
        return modes.pad_constant(x, widths, constant_values)
    if mode == "edge":
        return modes.pad_edge(x, widths)
    if mode == "wrap":
        return modes.pad_wrap(x, widths)
    if mode in ("reflect", "symmetric"):
        return modes.pad_reflect(x, widths, mode, options["reflect_type"])
    if mode == "linear_ramp":
        return modes.pad_linear_ramp(x, widths, options["end_values"])
    return modes.pad_statistic(x, widths, mode, options.get("stat_length"))
