"""``cur_qdd``: the quasi-dynamic data of a value, as the current trace sees it.

Quasi-dynamic data is per-value state that a trace tracks beside the type (JAX keeps it
for its mutable hi-level types). lamina has no type carrying it, so under ``jit`` a
value's is None; transformations ask about the value they wrap, and a concrete array
has none to give (``AttributeError``, as in JAX).
"""

from __future__ import annotations

from lamina.interpreters import BatchTracer, JVPTracer, Tracer

__all__ = ["cur_qdd"]


def cur_qdd(x):
    """The quasi-dynamic data of ``x``: None for a staged value; for a transformed
    value, that of the value it wraps; a concrete value must define ``cur_qdd``."""
    while isinstance(x, (JVPTracer, BatchTracer)):
        x = x.primal if isinstance(x, JVPTracer) else x.val
    if isinstance(x, Tracer):
        return None
    return x.cur_qdd()
