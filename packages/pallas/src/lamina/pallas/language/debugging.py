"""Debugging in kernels: ``debug_print``, ``debug_check``, ``delay`` and the flags
``enable_debug_checks`` and ``enable_poison_buffers``."""

from __future__ import annotations

import contextlib

from lamina.interpreters import Tracer
from lamina.lax import debug_callback

__all__ = ["debug_check", "debug_print", "delay", "enable_debug_checks", "enable_poison_buffers"]


def debug_print(fmt: str, *args) -> None:
    """Prints ``fmt.format(*args)`` each time the kernel runs."""

    def callback(*values):
        print(fmt.format(*values))

    debug_callback(callback, *args)


class _Flag:
    """A boolean setting; calling it with a value is a context manager setting it."""

    def __init__(self, name: str, default: bool):
        self.name = name
        self.value = default

    def __bool__(self):
        return self.value

    @contextlib.contextmanager
    def __call__(self, new_val: bool = True):
        old, self.value = self.value, bool(new_val)
        try:
            yield
        finally:
            self.value = old

    def __repr__(self):
        return f"{self.name}={self.value}"


enable_debug_checks = _Flag("jax_pallas_enable_debug_checks", False)
enable_poison_buffers = _Flag("jax_pallas_enable_poison_buffers", False)


def debug_check(condition, message: str) -> None:
    """With ``enable_debug_checks`` on, fails with ``message`` where ``condition`` is
    false."""
    if not enable_debug_checks.value:
        return

    def check(ok):
        if not ok:
            raise AssertionError(message)

    if isinstance(condition, Tracer):
        debug_callback(check, condition)
    else:
        check(condition)


def delay(nanos) -> None:
    """Waits ``nanos`` nanoseconds on a device; nothing to wait for here."""
    del nanos
