"""``jit``: trace a function once per input signature, compile it once, run it on device.

A call flattens the arguments (minus the static ones) into leaves and builds the
*signature*: the leaves' tree structure, their abstract values (shape, dtype, weak
type), the static arguments' values and the config options jit keys on
(:func:`~lamina.interpreters.core.config.trace_context`, x64 mode among them). Each new
signature is traced to a ``ClosedJaxpr`` (once; the same object is reused, so staged
calls share it and print as one ``let``), and then:

* inside another trace (``make_jaxpr``, an outer ``jit``, a transformation) the call
  becomes one ``jit`` equation of that trace (``jit_p``);
* otherwise it runs the Jaxpr's compiled executable (compiled once per Jaxpr and
  device, see :func:`..runtime.executables.compiled_call`), asynchronously.

Steady-state eager calls then go through jaxlib's C++ dispatch (:mod:`.fastpath`) when
the arguments allow, else through the lean Python path here.
"""

from __future__ import annotations

import functools
import time
import weakref

from jaxlib._profiler import TraceMe

from lamina.interpreters.core.config import config, trace_context
from lamina.interpreters.core.monitoring import JAXPR_TRACE_EVENT, compile_step
from lamina.interpreters.core.tracing import (
    Tracer,
    runs_eagerly,
)
from lamina.interpreters.jaxprs import tokens
from lamina.interpreters.jaxprs.calls import call_jaxpr, eval_jaxpr, unspecified_for_none
from lamina.interpreters.jaxprs.jaxpr_cache import clear_jaxpr_caches
from lamina.interpreters.jaxprs.key_reuse import check_jitted_call, check_key_reuse_jaxpr
from lamina.interpreters.jaxprs.staging import describe_function, trace_to_jaxpr
from lamina.interpreters.jit_functions.cache_miss import explain_cache_miss
from lamina.interpreters.jit_functions.fastpath import clear_cpp_caches, fast_function
from lamina.interpreters.jit_functions.jit_args import (
    _abstractify,
    _argnums_and_names,
    _bad_argument,
    _hash_static,
    check_ref_aliasing,
    leaf_names,
)
from lamina.interpreters.jit_functions.jit_shardings import (
    check_shardings,
    check_type_devices,
    flat_shardings,
)
from lamina.interpreters.jit_functions.stages import Traced
from lamina.interpreters.runtime import backend, dispatch, execute
from lamina.interpreters.runtime.executables import (
    _executables,
    _inner,
    _log_level,
    _miss_lock,
    compiled_call,
    logger,
)
from lamina.interpreters.runtime.partitioning import check_fits
from lamina.ir import (
    AbstractRef,
    context_mesh,
    tree_util,
    type_placements,
)

__all__ = ["clear_caches", "compiled_call", "jit"]


class TraceEntry:
    """What tracing one signature gave: the Jaxpr and how to call it."""

    __slots__ = ("closed", "donated", "in_shardings", "in_tree", "out_shardings", "out_tree",
                 "result_names", "typed_unplaced")  # fmt: skip

    def __init__(self, closed, in_tree, out_tree, donated, result_names,
                 in_shardings=None, out_shardings=None):  # fmt: skip
        self.closed = closed
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.donated = donated
        self.result_names = result_names
        self.in_shardings = in_shardings  # flat, None where unspecified; None: all
        self.out_shardings = out_shardings
        # results typed over a mesh with no placement for them: the devices the call
        # runs on are checked against the mesh when it is lowered or run
        self.typed_unplaced = out_shardings is None and any(
            getattr(a, "type_sharding", None) is not None for a in closed.out_avals
        )


_all_jitted: list = []  # weak references to every jitted function, for clear_caches
# The trace caches of every function jitted (as in JAX, one function jitted twice with
# the same options shares its traces): function -> {options: {key: TraceEntry}}.
_shared_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _trace_cache(fun, options: tuple) -> dict:
    """The trace cache of ``fun`` jitted with ``options`` (a fresh one when ``fun`` or
    the options cannot be keys)."""
    try:
        by_options = _shared_caches.get(fun)
        if by_options is None:
            by_options = _shared_caches[fun] = {}
        return by_options.setdefault(options, {})
    except TypeError:  # not weakly referenceable, or unhashable options
        return {}


def _function_name(fun) -> str:
    """``fun``'s name; a ``functools.partial`` (a ``Partial`` too) is named for the
    function it wraps, as in JAX."""
    while not hasattr(fun, "__name__") and isinstance(fun, functools.partial):
        fun = fun.func
    return getattr(fun, "__name__", type(fun).__name__)


class JitWrapped:
    """The function ``jit`` returns: call it, or stage it with ``trace``/``lower``."""

    def __init__(self, fun, *, static_argnums, static_argnames, donate_argnums,
                 donate_argnames, keep_unused, device, backend_name, inline,
                 compiler_options, in_shardings=None, out_shardings=None):  # fmt: skip
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._name = _function_name(fun)
        self._dispatch_span = f"dispatch: jit({self._name})"  # in a profiler trace
        self._debug = describe_function(fun)
        self._static_argnums, self._static_argnames = _argnums_and_names(
            fun, static_argnums, static_argnames
        )
        self._donate_argnums, self._donate_argnames = _argnums_and_names(
            fun, donate_argnums, donate_argnames, "donate"
        )
        self._has_static = bool(self._static_argnums or self._static_argnames)
        self._keep_unused = bool(keep_unused)
        self._inline = bool(inline)
        if device is None and backend_name is not None:
            device = backend.get_backend(backend_name).local_devices()[0]
        self._device = device
        # XLA options for the executables, as ((name, value), ...): they key those too
        self._compiler_options = tuple((compiler_options or {}).items())
        self._in_shardings = in_shardings  # pytree prefixes, or None when unspecified
        self._out_shardings = out_shardings
        options = (
            self._static_argnums, self._static_argnames, self._donate_argnums,
            self._donate_argnames, self._keep_unused, self._inline, device,
            self._compiler_options, in_shardings, out_shardings,
        )  # fmt: skip
        self._cache: dict[tuple, TraceEntry] = _trace_cache(fun, options)
        _all_jitted.append(weakref.ref(self))

    def __repr__(self):
        return f"<PjitFunction of {self._fun!r}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    # --- signatures

    def _split(self, args, kwargs):
        """(dynamic args, dynamic kwargs, static key)."""
        if not self._has_static:
            return args, kwargs, ()
        n = len(args)
        nums = sorted({i % n for i in self._static_argnums if -n <= i < n})
        statics = tuple(args[i] for i in nums)
        static_kw = tuple((k, kwargs[k]) for k in sorted(kwargs) if k in self._static_argnames)
        for v in statics:
            _hash_static(v)
        for _, v in static_kw:
            _hash_static(v)
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        return dyn_args, dyn_kwargs, (tuple(nums), statics, static_kw)

    def _lookup(self, args, kwargs) -> tuple[TraceEntry, list]:
        dyn_args, dyn_kwargs, static_key = self._split(args, kwargs)
        leaves, treedef = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        try:
            avals = tuple([_abstractify(x) for x in leaves])
        except TypeError:
            raise _bad_argument(
                self._fun, args, kwargs, self._static_argnums, self._static_argnames
            ) from None
        if self._takes_refs(avals):
            check_ref_aliasing(self._fun, self._debug, leaves, dyn_args, dyn_kwargs)
        key = (treedef, avals, static_key, trace_context())
        entry = self._cache.get(key)
        if entry is None:
            with _miss_lock:
                entry = self._cache.get(key)
                if entry is None:
                    if config.jax_explain_cache_misses:
                        explain_cache_miss(logger, self._fun, self._name, key, list(self._cache))
                    entry = self._trace(args, kwargs, dyn_args, dyn_kwargs, treedef, avals)
                    if not any(isinstance(c, Tracer) for c in entry.closed.consts):
                        self._cache[key] = entry  # closures over tracers are never reused
        return entry, leaves

    @staticmethod
    def _takes_refs(avals) -> bool:
        return any(type(a) is AbstractRef for a in avals)

    def _trace(self, args, kwargs, dyn_args, dyn_kwargs, treedef, avals) -> TraceEntry:
        if config.jax_no_tracing:
            raise RuntimeError(
                f"re-tracing function {self._debug} for `jit`, but 'no_tracing' is set"
            )
        n = len(args)
        static_nums = {i % n for i in self._static_argnums if -n <= i < n}
        out_info = {}

        def flat_fun(*flat):
            d_args, d_kwargs = tree_util.tree_unflatten(treedef, flat)
            it = iter(d_args)
            full = [args[i] if i in static_nums else next(it) for i in range(n)]
            full_kwargs = {**kwargs, **d_kwargs}
            out = self._fun(*full, **full_kwargs)
            with_paths, out_info["tree"] = tree_util.tree_flatten_with_path(out)
            out_info["paths"] = [p for p, _ in with_paths]
            return [x for _, x in with_paths]

        start = time.perf_counter()
        arg_names = None
        if any(type(a) is AbstractRef for a in avals):
            arg_names = leaf_names(self._fun, dyn_args, dyn_kwargs)
        with compile_step(JAXPR_TRACE_EVENT, self._name):
            closed, _ = trace_to_jaxpr(flat_fun, avals, self._debug, arg_names=arg_names)
        if config.jax_debug_key_reuse:
            check_key_reuse_jaxpr(closed)
        logger.log(
            _log_level(),
            "Finished tracing + transforming %s for pjit in %.9f sec",
            self._name,
            time.perf_counter() - start,
        )
        donated = self._donated(args, dyn_kwargs, static_nums)
        names = ["result" + tree_util.keystr(p) for p in out_info["paths"]]
        ins, outs = self._flat_shardings(dyn_args, dyn_kwargs, out_info["tree"], closed)
        return TraceEntry(closed, treedef, out_info["tree"], donated, names, ins, outs)

    def _flat_shardings(self, dyn_args, dyn_kwargs, out_tree, closed):
        """The shardings of the flat arguments and results (None: none given)."""
        ins = outs = None
        if self._in_shardings is not None:
            if dyn_kwargs:
                raise ValueError("pjit does not support kwargs when in_shardings is specified.")
            ins = flat_shardings("in_shardings", self._in_shardings, dyn_args)
        if self._out_shardings is not None:
            shape = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
            outs = flat_shardings("out_shardings", self._out_shardings, shape)
            paths = [p for p, _ in tree_util.tree_flatten_with_path(shape)[0]]
            for s, aval, path in zip(outs, closed.out_avals, paths, strict=True):
                if s is not None:
                    where = f"pjit outputs with pytree key path result{tree_util.keystr(path)}"
                    check_fits(s, aval.shape, where)
        else:  # results typed over the explicit mesh in force come out laid out so
            outs = type_placements(closed.out_avals)
        return ins, outs

    def _donated(self, args, dyn_kwargs, static_nums) -> tuple[bool, ...]:
        if not (self._donate_argnums or self._donate_argnames):
            return ()
        n = len(args)
        nums = {i % n for i in self._donate_argnums if -n <= i < n}
        flags = []
        for i, a in enumerate(args):
            if i not in static_nums:
                flags += [i in nums] * len(tree_util.tree_leaves(a))
        for k in sorted(dyn_kwargs):
            flags += [k in self._donate_argnames] * len(tree_util.tree_leaves(dyn_kwargs[k]))
        return tuple(flags)

    # --- calling

    def __call__(self, *args, **kwargs):
        if config.jax_disable_jit:
            return self._fun(*args, **kwargs)
        entry, leaves = self._lookup(args, kwargs)
        return tree_util.tree_unflatten(entry.out_tree, self._call_entry(entry, leaves))

    def _run(self, entry, leaves) -> list:
        if entry.typed_unplaced:
            check_type_devices(entry.closed.out_avals, leaves)
        if TraceMe.is_enabled():
            with TraceMe(self._dispatch_span):
                return self._execute(entry, leaves)
        return self._execute(entry, leaves)

    def _execute(self, entry, leaves) -> list:
        return compiled_call(
            entry.closed,
            leaves,
            name=self._name,
            donated_invars=entry.donated,
            keep_unused=self._keep_unused,
            device=self._device,
            result_names=entry.result_names,
            in_shardings=entry.in_shardings,
            out_shardings=entry.out_shardings,
            arg_names=lambda: self._leaf_names(entry, leaves),
            compiler_options=self._compiler_options,
        )

    def _leaf_names(self, entry, leaves) -> list[str]:
        """A name per flat argument (``a``, ``b['w']``), for error messages."""
        dyn_args, dyn_kwargs = tree_util.tree_unflatten(entry.in_tree, leaves)
        return leaf_names(self._fun, dyn_args, dyn_kwargs)

    def _call_entry(self, entry, leaves) -> list:
        """The flat outputs: run, or staged into the current trace."""
        if runs_eagerly(leaves):
            if config.jax_debug_key_reuse:
                return check_jitted_call(entry.closed, leaves, lambda: self._run(entry, leaves))
            return self._run(entry, leaves)
        if self._inline:
            return eval_jaxpr(entry.closed.jaxpr, entry.closed.consts, *leaves)
        shardings = {}
        if entry.in_shardings is not None:
            shardings["in_shardings"] = unspecified_for_none(entry.in_shardings)
        if entry.out_shardings is not None and self._out_shardings is not None:
            shardings["out_shardings"] = unspecified_for_none(entry.out_shardings)
        mesh = context_mesh()
        if mesh is not None:  # the mesh in force, as JAX records it
            shardings["ctx_mesh"] = mesh
        return call_jaxpr(
            entry.closed,
            *leaves,
            name=self._name,
            donated_invars=entry.donated or (False,) * len(leaves),
            keep_unused=self._keep_unused,
            compiler_options_kvs=self._compiler_options,
            **shardings,
        )

    # --- stages and caches

    def trace(self, *args, **kwargs):
        entry, leaves = self._lookup(args, kwargs)
        return Traced(self, entry, leaves)

    def lower(self, *args, **kwargs):
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        return self.trace(*args, **kwargs).out_info

    def _cache_size(self) -> int:
        return len(self._cache)

    def clear_cache(self) -> None:
        self._cache.clear()


def jit(
    fun=None,
    in_shardings=None,
    out_shardings=None,
    static_argnums=None,
    static_argnames=None,
    donate_argnums=None,
    donate_argnames=None,
    keep_unused: bool = False,
    device=None,
    backend=None,
    inline: bool = False,
    compiler_options=None,
):
    """Compile ``fun`` with XLA: traced once per input signature, compiled once, cached.

    Arguments at ``static_argnums`` / ``static_argnames`` are passed to ``fun`` as they
    are (they must be hashable; a new value means a new trace); ``donate_argnums`` /
    ``donate_argnames`` hand their buffers over to the computation (deleted after the
    call where a result can reuse them). ``in_shardings`` / ``out_shardings`` (pytree
    prefixes of the positional arguments / the result, of ``Sharding`` s or None) lay
    the call out over several devices, partitioned by XLA. Without ``fun``, returns a
    decorator.
    """
    if fun is None:
        return lambda f: jit(
            f, in_shardings, out_shardings, static_argnums, static_argnames, donate_argnums,
            donate_argnames, keep_unused, device, backend, inline, compiler_options,
        )  # fmt: skip
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    in_shardings = check_shardings("in_shardings", in_shardings)
    out_shardings = check_shardings("out_shardings", out_shardings)
    if device is not None and backend is not None:
        raise ValueError(
            "can't specify both a device and a backend for jit, got "
            f"device={device} and backend={backend}"
        )
    jitted = JitWrapped(
        fun,
        static_argnums=static_argnums,
        static_argnames=static_argnames,
        donate_argnums=donate_argnums,
        donate_argnames=donate_argnames,
        keep_unused=keep_unused,
        device=device,
        backend_name=backend,
        inline=inline,
        compiler_options=compiler_options,
        in_shardings=in_shardings,
        out_shardings=out_shardings,
    )
    return fast_function(jitted)


def clear_caches() -> None:
    """Forget every trace and executable (of every jitted function and eager op)."""
    for ref in _all_jitted:
        jitted = ref()
        if jitted is not None:
            jitted.clear_cache()
    _all_jitted[:] = [r for r in _all_jitted if r() is not None]
    _executables.clear()
    _inner.clear()
    clear_jaxpr_caches()
    tokens.clear_cache()
    execute.clear_cache()
    clear_cpp_caches()
    dispatch.clear_dispatch_cache()
