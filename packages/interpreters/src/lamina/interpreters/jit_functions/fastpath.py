"""The C++ dispatch fast path of ``jit``.

A jitted function is jaxlib's ``_jax.pjit`` callable (:mod:`..runtime.cpp_pjit`), which runs
the cached executable in C++ for arguments it has seen before and calls back here on
a miss. Calls under a trace (tracer arguments), with
``jax_disable_jit`` or with argument pytrees only lamina's registry knows always miss
and take :mod:`.jit`'s Python path. jaxlib's C++ side also reads a ``post_hook``
config holder, for ``jax_debug_nans``/``jax_debug_infs`` (:mod:`..runtime.float_checks`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from jaxlib import _jax

from lamina.interpreters.core.config import config
from lamina.interpreters.core.tracing import eval_trace, find_current_trace, runs_eagerly
from lamina.interpreters.jaxprs.discharge import has_refs
from lamina.interpreters.runtime.cpp_pjit import (
    CacheKey,
    FastpathData,
    register_extended_class,
    registry,
    shard_arg,
)
from lamina.interpreters.runtime.executables import (
    ArrayImpl,
    Executable,
    _executables,
    call_placement,
)
from lamina.interpreters.runtime.extended import is_extended_value, physical_value
from lamina.interpreters.runtime.float_checks import check_jaxpr_call, checks_on
from lamina.ir import api_boundary, tree_util

# The modules above this one (jit.py, stages.py) hand it their ``JitWrapped`` and
# ``Compiled`` objects; it names them only in words, so that it imports nothing above it.
__all__ = ["clear_cpp_caches", "compiled_function", "fast_function"]

_cpp_caches = {False: _jax.PjitFunctionCache(capacity=8192),
               True: _jax.PjitFunctionCache(capacity=8192)}  # fmt: skip


def clear_cpp_caches() -> None:
    for cache in _cpp_caches.values():
        cache.clear()


def _fastpath(jitted, args, kwargs, leaves, entry, outs):
    """The C++ path's data for this call, or None when it cannot take it."""
    if find_current_trace() is not eval_trace or checks_on() or entry.closed.effects:
        return None
    if has_refs(entry.closed):
        return None
    for x in (*leaves, *outs):
        if is_extended_value(x):
            register_extended_class(type(x))
    dyn_args, dyn_kwargs, _ = jitted._split(args, kwargs)
    cpp_leaves, _ = registry.flatten((dyn_args, dyn_kwargs))
    if len(cpp_leaves) != len(leaves) or any(
        a is not physical_value(b) for a, b in zip(cpp_leaves, leaves, strict=True)
    ):
        return None  # argument pytrees the C++ registry does not know
    out_tree_value = tree_util.tree_unflatten(entry.out_tree, outs)
    cpp_outs, cpp_out_tree = registry.flatten(out_tree_value)
    if len(cpp_outs) != len(outs) or any(type(o) is not ArrayImpl for o in cpp_outs):
        return None
    placement = call_placement(
        leaves, jitted._device, entry.in_shardings, entry.out_shardings, jitted._name,
        closed=entry.closed,
    )  # fmt: skip
    key = (id(entry.closed), entry.donated or (False,) * len(leaves), jitted._keep_unused,
           placement, jitted._compiler_options)  # fmt: skip
    found = _executables.get(key)
    if found is None:
        return None
    return _executable_data(found[1], len(leaves), cpp_outs, cpp_out_tree)


def _executable_data(exe: Executable, n_in: int, cpp_outs, cpp_out_tree) -> FastpathData:
    """How the C++ path runs ``exe`` on ``n_in`` arguments, returning ``cpp_outs``."""
    kept = set(range(n_in) if exe.kept is None else exe.kept)
    compiled = exe.compiled
    if hasattr(compiled, "in_shardings"):  # partitioned over several devices
        in_shardings, out_shardings = list(compiled.in_shardings), compiled.out_shardings
    else:
        in_shardings, out_shardings = (
            [compiled.sharding] * len(kept),
            [compiled.sharding] * len(cpp_outs),
        )
    return FastpathData(
        compiled.executable,
        cpp_out_tree,
        in_shardings,
        out_shardings,
        [o.aval for o in cpp_outs],
        [o._committed for o in cpp_outs],
        [i in kept for i in range(n_in)],
        [None] * len(kept),
        [],
    )


def fast_function(jitted):
    """``jitted`` (a ``JitWrapped``) as jaxlib's C++ jitted function (what ``jit``
    returns)."""

    def cache_miss(*args, **kwargs):
        if config.jax_disable_jit:
            return jitted._fun(*args, **kwargs), None, False
        entry, leaves = jitted._lookup(args, kwargs)
        if not runs_eagerly(leaves) or config.jax_debug_key_reuse:
            return (
                tree_util.tree_unflatten(entry.out_tree, jitted._call_entry(entry, leaves)),
                None,
                False,
            )
        outs = jitted._run(entry, leaves)
        data = _fastpath(jitted, args, kwargs, leaves, entry, outs)
        return tree_util.tree_unflatten(entry.out_tree, outs), data, False

    explicit = bool(
        jitted._donate_argnums or jitted._donate_argnames or jitted._device
        or jitted._in_shardings is not None or jitted._out_shardings is not None
    )  # fmt: skip
    cpp = _jax.pjit(
        jitted._name,
        jitted._fun,
        api_boundary(cache_miss),
        list(jitted._static_argnums),
        list(jitted._static_argnames),
        CacheKey(),
        registry,
        shard_arg,
        _cpp_caches[explicit],
    )
    functools.update_wrapper(cpp, jitted._fun)
    cpp._jitted = jitted
    cpp._check_outputs = functools.partial(_check_outputs, jitted)
    if not hasattr(type(cpp), "trace"):
        _install_methods(type(cpp))
    return cpp


def compiled_function(compiled) -> Callable[..., Any]:
    """What calling ``compiled`` (a ``Compiled``) runs: a C++ ``pjit`` callable running
    its executable for arguments it has seen (its Python call on a miss), else that
    Python call (for static arguments, effects, host callbacks, references or extended
    dtypes)."""
    jitted, exe, closed = compiled._traced._jitted, compiled._executable, compiled._traced.jaxpr
    if (
        jitted._static_argnums or jitted._static_argnames or type(exe) is not Executable
        or closed.effects or has_refs(closed) or getattr(exe.compiled, "host_callbacks", None)
    ):  # fmt: skip
        return compiled._call

    def cache_miss(*args, **kwargs):
        result = compiled._call(*args, **kwargs)
        data = None
        if find_current_trace() is eval_trace and not checks_on():
            cpp_leaves, _ = registry.flatten((args, kwargs))
            leaves = tree_util.tree_leaves((args, kwargs))
            cpp_outs, cpp_out_tree = registry.flatten(result)
            if (
                len(cpp_leaves) == len(leaves)
                and all(a is b for a, b in zip(cpp_leaves, leaves, strict=True))
                and all(type(o) is ArrayImpl for o in cpp_outs)
            ):
                data = _executable_data(exe, len(leaves), cpp_outs, cpp_out_tree)
        return result, data, False

    return _jax.pjit(
        jitted._name, None, api_boundary(cache_miss), [], [], CacheKey(), registry, shard_arg
    )


def _install_methods(cls) -> None:
    """The stages API on jaxlib's C++ jitted-function class, as JAX adds it."""
    cls.trace = api_boundary(lambda self, *a, **k: self._jitted.trace(*a, **k))
    cls.lower = api_boundary(lambda self, *a, **k: self._jitted.lower(*a, **k))
    cls.eval_shape = api_boundary(lambda self, *a, **k: self._jitted.eval_shape(*a, **k))

    def clear_cache(self):
        self._jitted.clear_cache()
        self._clear_cache()

    cls.clear_cache = clear_cache
    cls._cache_size = lambda self: self._jitted._cache_size()


def _check_outputs(jitted, args, kwargs, output) -> None:
    """After a C++ call with ``jax_debug_nans``/``jax_debug_infs`` on."""
    if find_current_trace() is not eval_trace:
        return
    entry, leaves = jitted._lookup(args, kwargs)
    check_jaxpr_call(entry.closed, leaves, tree_util.tree_leaves(output), jitted._name)
