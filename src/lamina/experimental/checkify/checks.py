"""The checks a user writes: ``check``, ``debug_check`` and ``check_error``."""

from __future__ import annotations

import numpy as np

import lamina.numpy as jnp
from lamina.experimental.checkify.check_primitive import bind_check
from lamina.experimental.checkify.error_value import Error, assert_func, init_error
from lamina.experimental.checkify.failures import FailedCheckError
from lamina.interpreters import Array
from lamina.interpreters import errors as interpreter_errors
from lamina.ir.tree_util import tree_leaves

__all__ = ["check", "check_error", "debug_check"]


def _is_scalar_pred(pred) -> bool:
    return isinstance(pred, bool) or (
        isinstance(pred, Array) and pred.shape == () and pred.dtype == np.dtype(bool)
    )


def _check(pred, msg, debug, *fmt_args, **fmt_kwargs) -> None:
    if not _is_scalar_pred(pred):
        name = "debug_check" if debug else "check"
        raise TypeError(f"{name} takes a scalar pred as argument, got {pred}")
    for arg in tree_leaves((fmt_args, fmt_kwargs)):
        if not isinstance(arg, (Array, np.ndarray)):
            raise TypeError(
                "Formatting arguments to checkify.check need to be PyTrees of arrays, but "
                f"got {arg!r} of type {type(arg)}."
            )
    frame = interpreter_errors.user_frame(3)
    failure = FailedCheckError(None if frame is None else str(frame), msg, *fmt_args, **fmt_kwargs)
    bind_check(assert_func(init_error, jnp.logical_not(pred), failure), debug=debug)


def check(pred, msg: str, *fmt_args, debug: bool = False, **fmt_kwargs) -> None:
    """Fails with ``msg`` (formatted with the arguments, which may be traced arrays)
    where the scalar ``pred`` is false. Raises at once outside transformations; staged
    code must be transformed by ``checkify``, which returns the failure as an ``Error``.
    With ``debug=True`` the check is dropped unless ``checkify`` transforms it."""
    _check(pred, msg, debug, *fmt_args, **fmt_kwargs)


def debug_check(pred, msg: str, *fmt_args, **fmt_kwargs) -> None:
    """A ``check`` that only runs under ``checkify`` (a no-op otherwise)."""
    _check(pred, msg, True, *fmt_args, **fmt_kwargs)


def check_error(error: Error) -> None:
    """Raises ``JaxRuntimeError`` if ``error`` holds a failure: the inverse of
    ``checkify``, which turns this check back into an error value."""
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got type {type(error)} instead.")
    bind_check(error, debug=False)
