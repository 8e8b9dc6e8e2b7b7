"""Python's cyclic garbage collector held off while tracing or lowering a program.

Staging a program allocates tens of thousands of objects that stay alive until it is
done (equations, variables, MLIR values), so the collector's passes over the young
generations find next to nothing and cost about a tenth of a large trace. They wait
until the outermost trace or lowering ends; reference counting frees everything else
as usual meanwhile.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["gc_paused"]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block (nothing to do if it is disabled
    already: an outer block, or the program, turned it off)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
