"""``jax_check_tracer_leaks``: after a transformation ends, find its tracers that are
still alive (stored in a global list, an attribute, a closure) and raise, naming each
leaked tracer and what holds it."""

from __future__ import annotations

import gc
import types
from collections.abc import Iterable
from typing import Any

from lamina.interpreters.core.config import check_tracer_leaks
from lamina.interpreters.core.tracing import Trace, Tracer

__all__ = ["check_for_leaks"]


def check_for_leaks(trace: Trace, expected: Iterable[Any] = (), during: str = "") -> None:
    """With ``jax_check_tracer_leaks`` on, raise if a tracer of ``trace`` (which has
    ended) is still referenced, apart from the ``expected`` ones (its results, say).
    ``during`` describes what was being traced, for the message."""
    if not check_tracer_leaks.value:
        return
    gc.collect()
    allowed = {id(x) for x in expected}
    leaked = [
        r
        for r in gc.get_referrers(trace)
        if isinstance(r, Tracer) and r._trace is trace and id(r) not in allowed
    ]
    if leaked:
        lines = [f"Leaked trace {type(trace).__name__}. Leaked tracer(s):", ""]
        for tracer in leaked:
            lines.append(repr(tracer))
            if during:
                lines.append(f"The error occurred while tracing the function {during}. ")
            holders = gc.get_referrers(tracer)
            lines += [_holder_line(tracer, r) for r in holders
                      if r is not leaked and not isinstance(r, types.FrameType)]  # fmt: skip
            lines.append("")
        raise Exception("\n".join(lines))


def _holder_line(tracer: Tracer, holder: Any) -> str:
    where = ""
    if isinstance(holder, list):
        where = "".join(f"[{i}]" for i, x in enumerate(holder) if x is tracer)
    return (
        f"<{type(tracer).__name__} {id(tracer)}> is referred to by "
        f"<{type(holder).__name__} {id(holder)}>{where}"
    )
