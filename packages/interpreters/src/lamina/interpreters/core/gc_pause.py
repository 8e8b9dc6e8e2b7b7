"""Python's cyclic garbage collector held off while tracing or lowering a program.

Staging a program allocates tens of thousands of objects that stay alive until it is
done (equations, variables, MLIR values), so the collector's passes over the young
generations find next to nothing and cost about a tenth of a large trace. They wait
until the last trace or lowering running in any thread ends; reference counting frees
everything else as usual meanwhile.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["gc_paused"]


class _Pause:
    """Counts the blocks running in all threads: the first one in turns the collector
    off if it is on, and the last one out turns it back on if the first one did. A
    collector turned off before (by the program) stays off."""

    def __init__(self):
        self._lock = threading.Lock()
        self._depth = 0
        self._ours = False  # whether the outermost block turned the collector off

    def __enter__(self) -> None:
        with self._lock:
            if self._depth == 0:
                self._ours = gc.isenabled()
                if self._ours:
                    gc.disable()
            self._depth += 1

    def __exit__(self, *exc_info) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._ours:
                self._ours = False
                gc.enable()


_pause = _Pause()


def gc_paused() -> _Pause:
    """A context manager that holds the cyclic collector off for its block (see
    :class:`_Pause`); an exception, KeyboardInterrupt included, leaves it as it was."""
    return _pause
