"""What every callback primitive shares: the user's function called on flat arguments,
its arguments brought to the host CPU, and checks of the declared result types."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from lamina.interpreters import device_put, local_devices
from lamina.ir import ShapedArray, dtypes, tree_util

__all__ = ["FlatCallback", "call_on_host", "host_results", "result_avals_of"]

logger = logging.getLogger("lamina.lax.callbacks")


@dataclass(frozen=True)
class FlatCallback:
    """``callback_func`` called with flat arguments, returning flat results; equal for
    the same function and argument structure (so equal equations compile once)."""

    callback_func: Callable[..., Any]
    in_tree: Any  # the treedef of (args, kwargs)

    def __call__(self, *flat_args):
        args, kwargs = tree_util.tree_unflatten(self.in_tree, flat_args)
        return tree_util.tree_leaves(self.callback_func(*args, **kwargs))

    def __repr__(self):  # as JAX prints it in a Jaxpr
        return f"_FlatCallback(callback_func={self.callback_func!r}, in_tree={self.in_tree!r})"


def _cpu_device(what: str):
    try:
        return local_devices(backend="cpu")[0]
    except RuntimeError as e:
        raise RuntimeError(
            f"{what} failed to find a local CPU device to place the inputs on. Make sure "
            '"cpu" is listed in --jax_platforms or the JAX_PLATFORMS environment variable.'
        ) from e


def call_on_host(what: str, callback: Callable, args) -> Any:
    """``callback(*args)`` with ``args`` made arrays on the host CPU; an exception is
    logged (``"<what> failed"``) and raised again."""
    device = _cpu_device(what)
    args = [device_put(a, device) for a in args]
    try:
        return callback(*args)
    except BaseException:
        logger.exception("%s failed", what)
        raise


def host_results(what: str, callback: Callable, args) -> tuple:
    """The results of ``callback`` on ``args`` (see :func:`call_on_host`) as NumPy arrays."""
    return tuple(np.asarray(r) for r in call_on_host(what, callback, args))


def _checked_aval(shape_dtype) -> ShapedArray:
    dtype = np.dtype(shape_dtype.dtype)
    if dtypes.canonicalize_dtype(dtype) != dtype:
        raise ValueError(
            "result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is disabled"
        )
    return ShapedArray(tuple(shape_dtype.shape), dtype)


def result_avals_of(result_shape_dtypes) -> tuple[list[ShapedArray], Any]:
    """The flat abstract values and treedef of ``result_shape_dtypes`` (leaves with
    ``shape`` and ``dtype``), checked as JAX checks them."""
    leaves, tree = tree_util.tree_flatten(result_shape_dtypes)
    return [_checked_aval(x) for x in leaves], tree
