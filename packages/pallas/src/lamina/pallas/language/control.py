"""Control flow and scoped buffers in kernels: ``when``, ``loop``, ``run_scoped``,
``with_scoped``, ``run_state``."""

from __future__ import annotations

from lamina.interpreters import Tracer
from lamina.ir import ShapedArray, dtypes, tree_util
from lamina.lax import cond, empty_ref, fori_loop, free_ref, freeze, new_ref
from lamina.pallas.language.arithmetic import cdiv

__all__ = ["loop", "run_scoped", "run_state", "when", "with_scoped"]


def when(condition, /):
    """Decorates a function of no arguments, running it where ``condition`` holds."""

    def decorator(f):
        if not isinstance(condition, Tracer):
            if condition:
                f()
            return None
        cond(condition, lambda: (f(), None)[1], lambda: None)
        return None

    return decorator


def loop(lower, upper, *, init_carry=None, step=1, unroll=None):
    """Decorates ``body(i)`` (or ``body(i, carry) -> carry`` with ``init_carry``),
    running it for ``i`` from ``lower`` to ``upper`` by ``step``; returns the carry."""

    def decorator(body):
        def run(k, carry):
            i = lower + k * step if step != 1 else lower + k
            if init_carry is None:
                body(i)
                return carry
            return body(i, carry)

        return fori_loop(0, cdiv(upper - lower, step), run, init_carry, unroll=unroll)

    return decorator


def _ref_type(t) -> ShapedArray:
    inner = getattr(t, "inner_aval", None)
    if isinstance(inner, ShapedArray):
        return inner
    return ShapedArray(tuple(t.shape), dtypes.canonicalize_dtype(t.dtype))


def _is_type(t) -> bool:
    return hasattr(t, "shape") and hasattr(t, "dtype")


def run_scoped(f, *types, collective_axes=(), **kw_types):
    """Calls ``f`` with a new reference per type in ``types`` (and ``kw_types``),
    alive only during the call; returns ``f``'s result."""
    if collective_axes:
        raise NotImplementedError("run_scoped with collective_axes needs a multi-core mesh")
    leaves, tree = tree_util.tree_flatten((types, kw_types), is_leaf=_is_type)
    refs = [empty_ref(_ref_type(t)) for t in leaves]
    args, kwargs = tree_util.tree_unflatten(tree, refs)
    out = f(*args, **kwargs)
    for r in refs:
        free_ref(r)
    return out


def with_scoped(*types, collective_axes=(), **kw_types):
    """``run_scoped`` as a decorator."""

    def decorator(f):
        return run_scoped(f, *types, collective_axes=collective_axes, **kw_types)

    return decorator


def run_state(f):
    """``f`` taking references, as a function taking their initial values and
    returning their final values."""

    def wrapped(args):
        leaves, tree = tree_util.tree_flatten(args)
        refs = [new_ref(x) for x in leaves]
        f(tree_util.tree_unflatten(tree, refs))
        return tree_util.tree_unflatten(tree, [freeze(r) for r in refs])

    return wrapped
