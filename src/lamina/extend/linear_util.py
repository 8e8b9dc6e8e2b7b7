"""`lamina.extend.linear_util`: functions wrapped together with transformations to apply
to them (`jax.extend.linear_util`).

A :class:`WrappedFun` holds a function ``f`` and a stack of transformations. Each
transformation is a function ``gen(inner, *static_args, *args, **kwargs)`` that calls
``inner`` (the function below it in the stack) and returns the answer;
``call_wrapped(*args)`` runs the outermost one. A transformation may also hand back an
auxiliary value, kept in a :class:`Store` and read (once the function has run) through
the thunk that :func:`transformation_with_aux2` returns. Wrapped functions compare equal
when they wrap the same function with the same transformations and params, so they can
key a memo table (:func:`cache`).
"""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

from lamina.interpreters import trace_context

__all__ = [
    "Callable",
    "StoreException",
    "WrappedFun",
    "cache",
    "merge_linear_aux",
    "transformation",
    "transformation2",
    "transformation_with_aux",
    "transformation_with_aux2",
    "wrap_init",
]


class DebugInfo(NamedTuple):
    """What error messages say about a traced function: what traced it (``"jit"``),
    ``"name at file:line"``, the flat argument names and the flat result paths (None
    where unknown)."""

    traced_for: str
    func_src_info: str
    arg_names: tuple[str, ...] | None
    result_paths: Any

    @property
    def func_name(self) -> str:
        return self.func_src_info.split(" ")[0]

    def replace_func_name(self, name: str) -> DebugInfo:
        _, *rest = self.func_src_info.split(" ")
        return self._replace(func_src_info=" ".join([name, *rest]))

    def source_match(self):
        """The match of ``func_src_info`` against ``name at file:line``."""
        return re.fullmatch(r"(\S+)(?: at (.+):(\d+))?", self.func_src_info)

    @property
    def func_filename(self) -> str | None:
        match = self.source_match()
        return match.group(2) if match else None

    @property
    def func_lineno(self) -> int | None:
        match = self.source_match()
        return int(match.group(3)) if match and match.group(3) else None

    def resolve_result_paths(self) -> DebugInfo:
        if callable(self.result_paths):
            return self._replace(result_paths=tuple(self.result_paths()))
        return self

    def safe_arg_names(self, expected_count: int) -> tuple[str, ...]:
        if self.arg_names is None:
            return ("",) * expected_count
        assert len(self.arg_names) == expected_count, (expected_count, self)
        return self.arg_names

    def safe_result_paths(self, expected_count: int) -> tuple[str, ...]:
        if self.result_paths is None:
            return ("",) * expected_count
        assert len(self.result_paths) == expected_count, (expected_count, self)
        return self.result_paths

    def with_unknown_names(self) -> DebugInfo:
        return self._replace(arg_names=None, result_paths=None)


class StoreException(Exception):
    """Reading an empty store, or writing a full one."""


_EMPTY = object()


class Store:
    """Holds one value, written once."""

    __slots__ = ("_val",)

    def __init__(self):
        self._val = _EMPTY

    def store(self, val) -> None:
        if self._val is not _EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    def reset(self) -> None:
        self._val = _EMPTY

    @property
    def val(self):
        if self._val is _EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __bool__(self) -> bool:
        return self._val is not _EMPTY


class EqualStore(Store):
    """A :class:`Store` that may be written again with an equal value."""

    __slots__ = ()

    def store(self, val) -> None:
        if self._val is _EMPTY:
            self._val = val
            return
        try:
            same = bool(self._val == val)
        except Exception:
            same = False
        if not same:
            raise StoreException("Store occupied with not-equal value")


def _name(f) -> str:
    return getattr(f, "__name__", type(f).__name__)


class WrappedFun:
    """``f`` with ``transforms`` (pairs ``(gen, static_args)``, outermost first) to apply
    and ``params`` (sorted ``(name, value)`` pairs) passed to ``f`` as keywords."""

    __slots__ = ("debug_info", "f", "f_transformed", "in_type", "params", "stores", "transforms")

    def __init__(self, f, f_transformed, transforms, stores, params, in_type, debug_info):
        self.f = f
        self.f_transformed = f_transformed
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.in_type = in_type
        self.debug_info = debug_info

    @property
    def __name__(self) -> str:
        return _name(self.f)

    def wrap(self, gen, gen_static_args, out_store) -> WrappedFun:
        """This function with the transformation ``gen`` added on top (with the store
        its auxiliary output goes to, or None)."""
        extra = () if out_store is None else (out_store,)
        transformed = functools.partial(gen, self.f_transformed, *extra, *gen_static_args)
        return WrappedFun(
            self.f,
            transformed,
            ((gen, gen_static_args), *self.transforms),
            (out_store, *self.stores),
            self.params,
            None,
            self.debug_info,
        )

    def populate_stores(self, stores) -> None:
        """Fill this function's stores from ``stores`` (those of an earlier run)."""
        for mine, theirs in zip(self.stores, stores, strict=True):
            if mine is not None:
                mine.store(theirs.val)

    def call_wrapped(self, *args, **kwargs):
        """Run the function through all its transformations."""
        return self.f_transformed(*args, **kwargs)

    def replace_debug_info(self, debug_info) -> WrappedFun:
        return WrappedFun(self.f, self.f_transformed, self.transforms, self.stores,
                          self.params, self.in_type, debug_info)  # fmt: skip

    def __repr__(self):
        stack = "".join(
            f"{i}   : {_name(gen)}   {args}\n" for i, (gen, args) in enumerate(self.transforms)
        )
        return f"Wrapped function:\n{stack}Core: {_name(self.f)}\n"

    def _key(self):
        return (self.f, self.transforms, self.params, self.in_type, self.debug_info)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, WrappedFun) and self._key() == other._key()


def _curried(transform):
    """``transform(gen, fun, *args)`` also usable as ``transform(gen)(fun, *args)``."""

    @functools.wraps(transform)
    def curried(gen, *rest, **kwargs):
        if not rest:
            return functools.partial(transform, gen, **kwargs)
        return transform(gen, *rest, **kwargs)

    return curried


@_curried
def transformation2(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """``fun`` with ``gen(inner, *gen_static_args, *args, **kwargs)`` applied on top."""
    return fun.wrap(gen, gen_static_args, None)


@_curried
def transformation_with_aux2(
    gen, fun: WrappedFun, *gen_static_args, use_eq_store: bool = False, unk_names: bool = False
) -> tuple[WrappedFun, Callable[[], Any]]:
    """``fun`` with ``gen(inner, store, *gen_static_args, *args, **kwargs)`` applied on
    top, and a thunk reading what ``gen`` put in ``store`` (once the function ran)."""
    store = EqualStore() if use_eq_store else Store()
    wrapped = fun.wrap(gen, gen_static_args, store)
    if unk_names and wrapped.debug_info is not None:
        wrapped = wrapped.replace_debug_info(wrapped.debug_info.with_unknown_names())
    return wrapped, lambda: store.val


def _run_generator(gen_inst, inner):
    """Drive an old-style transformation: it yields ``(args, kwargs)`` for ``inner``,
    is sent the answer, and yields its own."""
    args, kwargs = next(gen_inst)
    return gen_inst.send(inner(*args, **kwargs))


@_curried
def transformation(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """Like :func:`transformation2`, for a generator ``gen(*gen_static_args, *args)``
    that yields the inner call's ``(args, kwargs)`` and then its answer."""

    def step(inner, *args, **kwargs):
        return _run_generator(gen(*args, **kwargs), inner)

    step.__name__ = _name(gen)
    return transformation2(step, fun, *gen_static_args)


@_curried
def transformation_with_aux(gen, fun: WrappedFun, *gen_static_args):
    """Like :func:`transformation`, for a generator whose last yield is ``(answer,
    aux)``; returns the wrapped function and a thunk reading ``aux``."""

    def step(inner, store, *args, **kwargs):
        answer, aux = _run_generator(gen(*args, **kwargs), inner)
        store.store(aux)
        return answer

    step.__name__ = _name(gen)
    return transformation_with_aux2(step, fun, *gen_static_args)


def wrap_init(f: Callable, params=None, *, debug_info: DebugInfo | None = None) -> WrappedFun:
    """``f`` as a :class:`WrappedFun` with no transformations; ``params`` (a dict) are
    passed to it as keyword arguments."""
    params = {} if params is None else dict(params)
    if debug_info is None:
        debug_info = DebugInfo("missing_debug_info", "<missing_debug_info>", None, None)
    debug_info = debug_info._replace(result_paths=None)
    return WrappedFun(
        f, functools.partial(f, **params), (), (), tuple(sorted(params.items())), None, debug_info
    )


def cache(call: Callable, *, explain: Callable | None = None) -> Callable:
    """Memoize ``call(fun, *args)`` on ``fun``'s function, transformations and params,
    the (hashable) ``args`` and the configuration that traces depend on (x64 mode, ...).
    A hit fills ``fun``'s stores with what the first run stored."""
    tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def memoized(fun: WrappedFun, *args):
        table = tables.setdefault(fun.f, {})
        key = (fun.transforms, fun.params, fun.in_type, args, trace_context())
        hit = table.get(key)
        if hit is not None:
            answer, stores = hit
            fun.populate_stores(stores)
            return answer
        answer = call(fun, *args)
        table[key] = (answer, fun.stores)
        return answer

    memoized.cache_clear = tables.clear
    memoized.evict_function = lambda f: tables.pop(f, None)
    return memoized


def merge_linear_aux(aux1: Callable, aux2: Callable):
    """Read whichever of two auxiliary thunks was filled: ``(True, aux1())`` or
    ``(False, aux2())``; :class:`StoreException` if neither or both were."""
    try:
        first = aux1()
    except StoreException:
        try:
            return False, aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
    try:
        aux2()
    except StoreException:
        return True, first
    raise StoreException("both stores occupied")
