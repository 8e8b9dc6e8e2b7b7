"""``jax_debug_nans`` and ``jax_debug_infs``: results checked for NaNs and infinities.

With either option on, every eagerly run primitive has its results checked and raises
``FloatingPointError("invalid value (nan) encountered in <primitive>")`` (``inf`` for
infinities); a ``jit`` call whose results hold one re-runs its Jaxpr one equation at a
time to name the primitive that made it. With both off nothing is checked: the check
is jaxlib's C++ ``post_hook`` (called after a cached C++ call, set only while an option
is on) plus a test of that hook on the Python paths.

``debug_nans`` and ``debug_infs`` are the thread-local context managers of the top
level (``with jax.debug_nans(True): ...``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
from jaxlib import _jax

from lamina.interpreters.core.config import config, debug_infs, debug_nans
from lamina.ir import ClosedJaxpr, Literal

__all__ = [
    "check_jaxpr_call",
    "check_values",
    "checks_on",
]

# jaxlib calls post_hook(fun, args, kwargs, output) after every call its C++ fast path
# serves; ``fun`` carries the check to run as ``fun._check_outputs(args, kwargs, output)``.
post_hook = _jax.config.Config("post_hook", None, include_in_jit_key=False)
_jax.jax_jit.set_post_hook_state(post_hook)


def _run_check(fun, args, kwargs, output) -> None:
    check = getattr(fun, "_check_outputs", None)
    if check is not None:
        check(args, kwargs, output)


def checks_on() -> bool:
    """Whether ``jax_debug_nans`` or ``jax_debug_infs`` is on (in this thread)."""
    return post_hook.value is not None


def _special_kind(values) -> str | None:
    """'nan' or 'inf' if a float value holds one that an option on asks to catch."""
    nans, infs = config.jax_debug_nans, config.jax_debug_infs
    for x in values:
        dtype = getattr(x, "dtype", None)
        if dtype is None or not np.issubdtype(dtype, np.inexact):
            continue
        data = np.asarray(x)
        if nans and np.isnan(data).any():
            return "nan"
        if infs and np.isinf(data).any():
            return "inf"
    return None


def check_values(name: str, values) -> None:
    """Raise ``FloatingPointError`` naming ``name`` if ``values`` hold a NaN (an
    infinity) while ``jax_debug_nans`` (``jax_debug_infs``) is on."""
    kind = _special_kind(values)
    if kind is not None:
        raise FloatingPointError(f"invalid value ({kind}) encountered in {name}")


def check_jaxpr_call(closed: ClosedJaxpr, args, outs, name: str) -> None:
    """After a compiled call of ``closed`` (named ``name``): if its results hold a
    special value, re-run it one primitive at a time, each checked, so the error names
    the primitive that made it."""
    kind = _special_kind(outs)
    if kind is None:
        return
    print(
        "Invalid nan value encountered in the output of a jax.jit function. "
        "Calling the de-optimized version."
    )
    jaxpr = closed.jaxpr
    env = dict(zip(jaxpr.constvars, closed.consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))

    def read(atom):
        return atom.val if isinstance(atom, Literal) else env[atom]

    try:
        for eqn in jaxpr.eqns:
            vals = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
            vals = vals if eqn.primitive.multiple_results else [vals]
            check_values(eqn.primitive.name, vals)
            env.update(zip(eqn.outvars, vals, strict=True))
    except FloatingPointError as e:
        raise e from None
    except Exception:  # a primitive with no eager impl: the message below says why
        pass
    raise FloatingPointError(
        f"{(f'jit({name})', kind)}. Because jax_config.debug_nans.value and/or "
        "config.jax_debug_infs is set, the de-optimized function (i.e., the function as "
        "if the `jit` decorator were removed) was called in an attempt to get a more "
        "precise error message. However, the de-optimized function did not produce "
        "invalid values during its execution. This behavior can result from `jit` "
        "optimizations causing the invalid value to be produced. It may also arise from "
        "having nan/inf literals as inputs or outputs, like "
        "`jax.jit(lambda ...: jax.numpy.nan)(...)`. \n\nIt may be possible to avoid the "
        "invalid value by removing the `jit` decorator, at the cost of losing "
        "optimizations. \n\nIf you see this error, consider opening a bug report at "
        "https://github.com/jax-ml/jax."
    ) from None


def _set_global_hook(nans: bool, infs: bool) -> None:
    post_hook.set_global(_run_check if nans or infs else None)


def _follow_global(_value) -> None:
    _set_global_hook(debug_nans.get_global(), debug_infs.get_global())


@contextlib.contextmanager
def _follow_local(on: bool, other) -> Iterator[None]:
    """While ``jax.debug_nans``/``debug_infs`` overrides an option in this thread, the
    C++ hook is set in this thread when either option is on."""
    previous = post_hook.swap_local(_run_check if on or other.value else None)
    try:
        yield
    finally:
        post_hook.set_local(previous)


debug_nans.on_global = debug_infs.on_global = _follow_global
debug_nans.local_context = lambda on: _follow_local(on, debug_infs)
debug_infs.local_context = lambda on: _follow_local(on, debug_nans)
_follow_global(None)  # values from the environment
