"""Memoised transformations of Jaxprs.

Differentiating or batching a call of a jitted function derives new Jaxprs from the one
it calls (its JVP, its known and unknown parts, its transpose, its batched form). Built
afresh on every call, each would be a new program for ``jit``'s executable cache, so
eager ``grad(jit(f))`` or ``vmap(jit(f))`` would trace and compile again at every step.
:func:`cache_on_jaxpr` keeps the derived Jaxprs: the same Jaxpr with the same flags (and
the same trace context: ``jax_enable_x64``, ...) gives the same derived object, whose
executable is then compiled once.
"""

from __future__ import annotations

import functools
import weakref
from collections import OrderedDict

from lamina.interpreters.core.config import trace_context
from lamina.interpreters.core.tracing import Tracer

__all__ = ["cache_on_jaxpr", "clear_jaxpr_caches", "weak_entry_key"]

_MAX_ENTRIES = 1024
_caches: list[OrderedDict] = []


def _hashable(x):
    return tuple(_hashable(y) for y in x) if isinstance(x, (list, tuple)) else x


def cache_on_jaxpr(fun=None, *, context=None):
    """``fun(closed_jaxpr, *args)``, computed once per (Jaxpr, args, trace context) and
    reused after (the least recently used of more than 1024 results are dropped).
    ``args`` are flags and names: lists are keyed as tuples. A Jaxpr closing over
    tracers is never cached (its results hold them too). ``context()``, when given,
    is part of the key too (state besides the arguments that the result depends on)."""
    if fun is None:
        return functools.partial(cache_on_jaxpr, context=context)
    cache: OrderedDict = OrderedDict()
    _caches.append(cache)

    @functools.wraps(fun)
    def cached(closed_jaxpr, *args, **kwargs):
        if any(isinstance(c, Tracer) for c in closed_jaxpr.consts):
            return fun(closed_jaxpr, *args, **kwargs)
        try:
            key = (closed_jaxpr, _hashable(args), _hashable(sorted(kwargs.items())))
            key = (*key, trace_context(), context() if context else None)
            hash(key)
        except TypeError:  # unhashable params somewhere: no caching
            return fun(closed_jaxpr, *args, **kwargs)
        try:
            cache.move_to_end(key)
            return cache[key]
        except KeyError:
            pass
        result = cache[key] = fun(closed_jaxpr, *args, **kwargs)
        if len(cache) > _MAX_ENTRIES:
            cache.popitem(last=False)
        return result

    return cached


def clear_jaxpr_caches() -> None:
    for cache in _caches:
        cache.clear()


def weak_entry_key(obj, cache: dict, key) -> weakref.ref:
    """A weak reference to ``obj`` (a Jaxpr) for a cache entry ``cache[key]`` that stands
    for it by ``id``: the entry goes when ``obj`` dies, so a dead function's programs
    and executables go with it, and no other object can take the id while the entry
    is there. The entry must not refer to ``obj`` otherwise (that would keep it)."""

    def forget(ref):
        entry = cache.get(key)
        if entry is not None and entry[0] is ref:
            del cache[key]

    return weakref.ref(obj, forget)
