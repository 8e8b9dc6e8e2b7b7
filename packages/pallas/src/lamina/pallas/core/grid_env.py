"""The grid a kernel body is traced in: ``program_id`` and ``num_programs``.

A kernel is traced once for all of its grid's points, with the grid indices as inputs
of its Jaxpr; while it is traced, ``program_id(axis)`` is that input and
``num_programs(axis)`` the grid's size along ``axis``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading

__all__ = ["GridEnv", "current_grid", "grid_env", "num_programs", "program_id"]


@dataclasses.dataclass(frozen=True)
class GridEnv:
    """The grid indices (traced int32 scalars) and sizes of the kernel being traced."""

    indices: tuple
    sizes: tuple


_state = threading.local()


def current_grid() -> GridEnv | None:
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def grid_env(indices, sizes):
    stack = _state.__dict__.setdefault("stack", [])
    stack.append(GridEnv(tuple(indices), tuple(sizes)))
    try:
        yield
    finally:
        stack.pop()


def _axis(axis: int, what: str) -> GridEnv:
    env = current_grid()
    if env is None:
        raise AssertionError(f"`{what}` can only be used inside a Pallas kernel")
    if not isinstance(axis, int) or not -len(env.sizes) <= axis < len(env.sizes):
        raise ValueError(f"Axis {axis} is out of bounds for grid {env.sizes}")
    return env


def program_id(axis: int):
    """The index of this kernel instance along grid axis ``axis`` (an int32 scalar)."""
    return _axis(axis, "program_id").indices[axis]


def num_programs(axis: int):
    """The size of the grid along ``axis``."""
    return _axis(axis, "num_programs").sizes[axis]
