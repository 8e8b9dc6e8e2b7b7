"""``jit``: trace a function once per input signature, compile it once, run it on device.

A call flattens the arguments (minus the static ones) into leaves and builds the
*signature*: the leaves' tree structure, their abstract values (shape, dtype, weak
type), the static arguments' values and the config options jit keys on
(:func:`~lamina.interpreters.config.trace_context`, x64 mode among them). Each new
signature is traced to a ``ClosedJaxpr`` (once; the same object is reused, so staged
calls share it and print as one ``let``), and then:

* inside another trace (``make_jaxpr``, an outer ``jit``, a transformation) the call
  becomes one ``jit`` equation of that trace (``jit_p``);
* otherwise it runs the Jaxpr's compiled executable (compiled once per Jaxpr and
  device, see :func:`compiled_call`), asynchronously.

Steady-state eager calls then go through jaxlib's C++ dispatch (:mod:`.fastpath`) when
the arguments allow, else through the lean Python path here.
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import xla_client

from lamina.interpreters import backend
from lamina.interpreters.calls import call_jaxpr, eval_jaxpr, jit_p
from lamina.interpreters.config import config, trace_context
from lamina.interpreters.execute import CompiledModule
from lamina.interpreters.lowering import lower_jaxpr
from lamina.interpreters.staging import describe_function, shaped_abstractify, trace_to_jaxpr
from lamina.interpreters.tracing import Tracer, eval_trace, find_current_trace
from lamina.ir import tree_util
from lamina.ir.core import ClosedJaxpr, Literal

__all__ = ["clear_caches", "compiled_call", "jit"]

logger = logging.getLogger(__name__)
ArrayImpl = xla_client.ArrayImpl

# One lock for every cache miss (tracing, lowering, compiling); re-entrant because
# tracing one jitted function may call another.
_miss_lock = threading.RLock()


def module_name(name: str) -> str:
    """``jit_<name>`` made a valid MLIR symbol, as JAX names its modules."""
    return "jit_" + re.sub(r"[^\w.-]", "_", name.replace(">", ""))


def _log_level() -> int:
    return logging.WARNING if config.jax_log_compiles else logging.DEBUG


# --------------------------------------------------------------------- executables


def lower(closed: ClosedJaxpr, name: str, donated, keep_unused: bool, **names):
    """``closed`` as a StableHLO module named ``jit_<name>`` (a ``LoweredModule``)."""
    start = time.perf_counter()
    lowered = lower_jaxpr(
        closed,
        module_name=module_name(name),
        keep_unused=keep_unused,
        donated_args=donated,
        **names,
    )
    logger.log(
        _log_level(),
        "Finished jaxpr to MLIR module conversion jit(%s) in %.9f sec",
        name,
        time.perf_counter() - start,
    )
    return lowered


class Executable:
    """A lowered module compiled for one device: ``run(flat_args)`` returns the outputs
    (``flat_args`` holds every input of the Jaxpr; the unused ones are dropped here)."""

    __slots__ = ("compiled", "in_avals", "kept", "lowered", "name", "text")

    def __init__(self, lowered, n_in: int, device, name: str):
        self.name = name
        self.lowered = lowered
        self.text = lowered.as_text()
        kept = tuple(lowered.kept_var_idx)
        self.kept = None if kept == tuple(range(n_in)) else kept  # None: every input is used
        self.in_avals = lowered.in_avals
        self.compiled = CompiledModule(
            self.text, device, name=f"jit({name})", out_avals=lowered.out_avals
        )

    def run(self, args: Sequence[Any]) -> list:
        if self.kept is not None:
            args = [args[i] for i in self.kept]
        return self.compiled(*args)


_executables: dict[tuple, tuple[ClosedJaxpr, Executable]] = {}


def _device_of(args: Sequence[Any], device=None):
    """Where a call runs: the ``device=`` of the jit, else that of the first committed
    argument, else the default device."""
    if device is not None:
        return device
    for a in args:
        if type(a) is ArrayImpl and a._committed:
            return a._sharding._device
    return backend.default_device()


def compiled_call(
    closed: ClosedJaxpr,
    args: Sequence[Any],
    *,
    name: str = "jaxpr",
    donated_invars: Sequence[bool] = (),
    keep_unused: bool = False,
    device=None,
    arg_names=None,
    result_names=None,
) -> list:
    """Run ``closed`` on ``args`` (flat) as one compiled executable, compiled once per
    (Jaxpr object, donation, keep_unused, device)."""
    device = _device_of(args, device)
    donated = tuple(donated_invars) or (False,) * len(args)
    key = (id(closed), donated, keep_unused, device)
    entry = _executables.get(key)
    if entry is None:
        with _miss_lock:
            entry = _executables.get(key)
            if entry is None:
                _log_compile(name, closed.in_avals)
                names = {}
                if arg_names is not None and len(arg_names) == len(closed.in_avals):
                    names["arg_names"] = arg_names
                if result_names is not None and len(result_names) == len(closed.out_avals):
                    names["result_names"] = result_names
                lowered = lower(closed, name, donated, keep_unused, **names)
                exe = Executable(lowered, len(closed.in_avals), device, name)
                entry = _executables[key] = (closed, exe)  # keeps closed alive: ids stay unique
    outs = entry[1].run(args)
    if config.jax_debug_nans:
        check_nans(closed, args, outs, name)
    return outs


def _log_compile(name: str, in_avals) -> None:
    logger.log(
        _log_level(),
        "Compiling jit(%s) with global shapes and types %s. Argument mapping: %s.",
        name,
        "(" + "".join(f"{a!r}, " for a in in_avals).rstrip(" ") + ")",
        "(" + "UnspecifiedValue, " * len(in_avals) + ")",
    )


def check_nans(closed: ClosedJaxpr, args, outs, name: str) -> None:
    """With ``jax_debug_nans``: if a float output holds a NaN, re-run the Jaxpr one
    primitive at a time to find which made it, and raise ``FloatingPointError``."""
    if not any(_has_nan(o) for o in outs):
        return
    jaxpr = closed.jaxpr
    env = dict(zip(jaxpr.constvars, closed.consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))

    def read(atom):
        return atom.val if isinstance(atom, Literal) else env[atom]

    try:
        for eqn in jaxpr.eqns:
            vals = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
            vals = vals if eqn.primitive.multiple_results else [vals]
            if any(_has_nan(v) for v in vals):
                raise FloatingPointError(f"invalid value (nan) encountered in {eqn.primitive.name}")
            env.update(zip(eqn.outvars, vals, strict=True))
    except FloatingPointError:
        raise
    except Exception:  # a primitive with no eager impl: name the function instead
        pass
    raise FloatingPointError(f"invalid value (nan) encountered in jit({name})")


def _has_nan(x) -> bool:
    dtype = getattr(x, "dtype", None)
    if dtype is None or not np.issubdtype(dtype, np.inexact):
        return False
    return bool(np.isnan(np.asarray(x)).any())


def _jit_impl(*args, jaxpr, name, donated_invars, keep_unused, **_):
    return compiled_call(
        jaxpr, args, name=name, donated_invars=donated_invars, keep_unused=keep_unused
    )


jit_p.def_impl(_jit_impl)


# --------------------------------------------------------------------- argument handling


def _argnums_and_names(fun, argnums, argnames):
    """Normalize (static or donate) argnums/argnames to tuples, each inferred from the
    other through ``fun``'s signature as JAX does."""
    if isinstance(argnums, int):
        argnums = (argnums,)
    if isinstance(argnames, str):
        argnames = (argnames,)
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return tuple(argnums or ()), tuple(argnames or ())
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if argnums is None and argnames is None:
        return (), ()
    if argnames is None:
        argnames = tuple(positional[i] for i in argnums if -len(positional) <= i < len(positional))
    elif argnums is None:
        argnums = tuple(positional.index(n) for n in argnames if n in positional)
    return tuple(argnums), tuple(argnames)


def _hash_static(value) -> None:
    try:
        hash(value)
    except TypeError as err:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while "
            f"trying to hash an object of type {type(value)}, {value}. The error was:\n"
            f"{type(err).__name__}: {err}"
        ) from None


def _bad_argument(fun, args, kwargs, static_argnums, static_argnames) -> TypeError:
    """The error for a dynamic argument leaf that is not an array, naming its path."""
    try:
        signature = inspect.signature(fun)
        bound = signature.bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        signature, bound = None, None
    named = []
    if bound is None:
        named += [(i, f"args[{i}]", a) for i, a in enumerate(args)]
        named += [(k, f"kwargs['{k}']", v) for k, v in kwargs.items()]
    else:
        positional = {n: i for i, n in enumerate(signature.parameters)}
        for name, value in bound.items():
            kind = signature.parameters[name].kind
            if kind == inspect.Parameter.VAR_POSITIONAL:
                start = positional[name]
                named += [(start + i, f"{name}[{i}]", v) for i, v in enumerate(value)]
            elif kind == inspect.Parameter.VAR_KEYWORD:
                named += [(k, f"{name}['{k}']", v) for k, v in value.items()]
            else:
                named.append((positional[name], name, value))
    nargs = len(args)
    static = {i % nargs for i in static_argnums if nargs} | set(static_argnames)
    for key, prefix, value in named:
        if key in static or (
            isinstance(key, int) and bound is not None and _name_of(signature, key) in static
        ):
            continue
        for path, leaf in tree_util.tree_flatten_with_path(value)[0]:
            try:
                shaped_abstractify(leaf)
            except TypeError:
                return TypeError(
                    f"Error interpreting argument to {fun} as an abstract array. The "
                    f"problematic value is of type {type(leaf)} and was passed to the "
                    f"function at path {prefix}{tree_util.keystr(path)}.\n"
                    "This typically means that a jit-wrapped function was called with a "
                    "non-array argument, and this argument was not marked as static using "
                    "the static_argnums or static_argnames parameters of jax.jit."
                )
    return TypeError(f"Error interpreting an argument to {fun} as an abstract array.")


def _name_of(signature, index):
    names = list(signature.parameters)
    return names[index] if 0 <= index < len(names) else None


def _abstractify(x):
    if type(x) is ArrayImpl:
        return x.aval
    return shaped_abstractify(x)


# --------------------------------------------------------------------- jit


class TraceEntry:
    """What tracing one signature gave: the Jaxpr and how to call it."""

    __slots__ = ("closed", "donated", "in_tree", "out_tree", "result_names")

    def __init__(self, closed, in_tree, out_tree, donated, result_names):
        self.closed = closed
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.donated = donated
        self.result_names = result_names


_all_jitted: list = []  # weak references to every jitted function, for clear_caches


class JitWrapped:
    """The function ``jit`` returns: call it, or stage it with ``trace``/``lower``."""

    def __init__(self, fun, *, static_argnums, static_argnames, donate_argnums,
                 donate_argnames, keep_unused, device, backend_name, inline,
                 compiler_options):  # fmt: skip
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._name = getattr(fun, "__name__", type(fun).__name__)
        self._debug = describe_function(fun)
        self._static_argnums, self._static_argnames = _argnums_and_names(
            fun, static_argnums, static_argnames
        )
        self._donate_argnums, self._donate_argnames = _argnums_and_names(
            fun, donate_argnums, donate_argnames
        )
        self._has_static = bool(self._static_argnums or self._static_argnames)
        self._keep_unused = bool(keep_unused)
        self._inline = bool(inline)
        if device is None and backend_name is not None:
            device = backend.get_backend(backend_name).local_devices()[0]
        self._device = device
        self._compiler_options = compiler_options
        self._cache: dict[tuple, TraceEntry] = {}
        import weakref

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
        key = (treedef, avals, static_key, trace_context())
        entry = self._cache.get(key)
        if entry is None:
            with _miss_lock:
                entry = self._cache.get(key)
                if entry is None:
                    entry = self._trace(args, kwargs, dyn_args, dyn_kwargs, treedef, avals)
                    if not any(isinstance(c, Tracer) for c in entry.closed.consts):
                        self._cache[key] = entry  # closures over tracers are never reused
        return entry, leaves

    def _trace(self, args, kwargs, dyn_args, dyn_kwargs, treedef, avals) -> TraceEntry:
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
        closed, _ = trace_to_jaxpr(flat_fun, avals, self._debug)
        logger.log(
            _log_level(),
            "Finished tracing + transforming %s for pjit in %.9f sec",
            self._name,
            time.perf_counter() - start,
        )
        donated = self._donated(args, dyn_kwargs, static_nums)
        names = ["result" + tree_util.keystr(p) for p in out_info["paths"]]
        return TraceEntry(closed, treedef, out_info["tree"], donated, names)

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
        return compiled_call(
            entry.closed,
            leaves,
            name=self._name,
            donated_invars=entry.donated,
            keep_unused=self._keep_unused,
            device=self._device,
            result_names=entry.result_names,
        )

    def _call_entry(self, entry, leaves) -> list:
        """The flat outputs: run, or staged into the current trace."""
        if find_current_trace() is eval_trace:
            return self._run(entry, leaves)
        if self._inline:
            return eval_jaxpr(entry.closed.jaxpr, entry.closed.consts, *leaves)
        return call_jaxpr(
            entry.closed,
            *leaves,
            name=self._name,
            donated_invars=entry.donated or (False,) * len(leaves),
            keep_unused=self._keep_unused,
        )

    # --- stages and caches

    def trace(self, *args, **kwargs):
        from lamina.interpreters.stages import Traced

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
    call where a result can reuse them). Without ``fun``, returns a decorator.
    """
    if fun is None:
        return lambda f: jit(
            f, in_shardings, out_shardings, static_argnums, static_argnames, donate_argnums,
            donate_argnames, keep_unused, device, backend, inline, compiler_options,
        )  # fmt: skip
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    for what, value in (("in_shardings", in_shardings), ("out_shardings", out_shardings)):
        if value is not None:
            raise NotImplementedError(f"jit: {what} is not supported yet (lamina-sharding)")
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
    )
    from lamina.interpreters.fastpath import fast_function

    return fast_function(jitted)


def clear_caches() -> None:
    """Forget every trace and executable (of every jitted function and eager op)."""
    from lamina.interpreters import execute

    for ref in _all_jitted:
        jitted = ref()
        if jitted is not None:
            jitted.clear_cache()
    _all_jitted[:] = [r for r in _all_jitted if r() is not None]
    _executables.clear()
    execute.clear_cache()
    from lamina.interpreters.fastpath import clear_cpp_caches

    clear_cpp_caches()
    try:
        from lamina.interpreters import dispatch
    except ImportError:  # pragma: no cover
        return
    dispatch.clear_dispatch_cache()
