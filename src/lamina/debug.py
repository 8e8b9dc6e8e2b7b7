"""`lamina.debug`: printing, callbacks and breakpoints inside programs (`jax.debug`)."""

import threading as _threading

import lamina.numpy as _numpy  # noqa: F401  (array operators on the arrays callbacks get)
from lamina import _debugger
from lamina.interpreters import Array as _Array
from lamina.lax import DebugEffect, OrderedDebugEffect
from lamina.lax import debug_callback as callback
from lamina.lax import debug_log as log
from lamina.lax import debug_print as print
from lamina.lax import pure_callback as _pure_callback
from lamina.lax import stop_gradient as _stop_gradient
from lamina.sharding import visualize_array_sharding, visualize_sharding

__all__ = [
    "DebugEffect",
    "OrderedDebugEffect",
    "breakpoint",
    "callback",
    "inspect_array_sharding",
    "log",
    "print",
    "visualize_array_sharding",
    "visualize_sharding",
]


def breakpoint(
    *, backend=None, filter_frames=True, num_frames=None, ordered=False, token=None, **kwargs
):
    """Stop the program here and open a debugger (``p x``, ``u``/``d``, ``l``, ``w``,
    ``c`` to continue) on the caller's frames, with the values local variables have
    when the program runs. With ``token`` (a pytree of arrays) it runs once ``token``
    is computed and returns it, to be used later in the program."""
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    frames = _debugger.frames_of_caller(1, filter_frames, num_frames)

    def run(*frames):
        thread_id = None
        if _threading.current_thread() is not _threading.main_thread():
            thread_id = _threading.get_ident()
        debugger = _debugger.get_debugger(backend)
        with _debugger.debug_lock:
            debugger(list(frames), thread_id, **kwargs)

    if token is None:
        callback(run, *frames, ordered=ordered)
        return None

    def run_with_token(x, *frames):
        run(*frames)
        return x

    token, frames = _stop_gradient((token, frames))
    return _pure_callback(run_with_token, token, token, *frames)


def inspect_array_sharding(value, *, callback):
    """Call ``callback`` with the sharding of ``value`` (an array; inside ``jit`` this
    needs the sharding layer)."""
    if not isinstance(value, _Array) or not hasattr(value, "sharding"):
        raise NotImplementedError(
            "inspect_array_sharding inside a traced function is not built yet (issue 17)"
        )
    callback(value.sharding)
