"""`lamina.core`: the core types of JAX's public ``jax.core`` module, as lamina's.

``ShapedArray`` and ``AbstractValue`` are lamina's abstract values (jaxlib's C++ side
reads ``jax.core.ShapedArray`` when a module of that name exists), ``Trace`` and
``Tracer`` its tracing classes, ``eval_jaxpr`` its Jaxpr evaluator. The names JAX
0.10.2 still serves here with a ``DeprecationWarning`` work the same way (pointing at
``lamina.extend.core`` and ``lamina.errors``); those it removed raise the
``AttributeError`` JAX raises.
"""

from __future__ import annotations

import contextlib
import operator
import warnings
from typing import Any, Union

from lamina import errors as _errors
from lamina.extend import core as _extend_core
from lamina.interpreters import (
    ConcretizationTypeError,
    Trace,
    Tracer,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    ensure_compile_time_eval,
    eval_jaxpr,
    set_current_trace,
)
from lamina.interpreters import tracing as _tracing
from lamina.ir import AbstractValue, Literal, ShapedArray, Var, abstract_token

__all__ = [
    "AbstractValue",
    "Atom",
    "ParamDict",
    "ShapedArray",
    "Trace",
    "Tracer",
    "Value",
    "ensure_compile_time_eval",
    "eval_context",
    "eval_jaxpr",
    "max_dim",
    "min_dim",
]

Atom = Union[Var, Literal]  # noqa: UP007 (a typing.Union, as JAX's)
ParamDict = dict[str, Any]
Value = Any


@contextlib.contextmanager
def eval_context():
    """Within the block every operation runs eagerly (no trace is current)."""
    with set_current_trace(_tracing.eval_trace):
        yield


def max_dim(d1: int, d2: int) -> int:
    """The larger of two dimension sizes."""
    return max(operator.index(d1), operator.index(d2))


def min_dim(d1: int, d2: int) -> int:
    """The smaller of two dimension sizes."""
    return min(operator.index(d1), operator.index(d2))


# ------------------------------------------------- what JAX 0.10.2 deprecated or removed


def _is_concrete(x) -> bool:
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


def _is_constant_dim(d) -> bool:
    try:
        operator.index(d)
    except TypeError:
        return False
    return True


def _concretization_function_error(fun, suggest_astype: bool = False):
    """A method raising the error that converting a tracer with ``fun`` raises."""
    name = getattr(fun, "__name__", fun)
    context = f"The problem arose with the `{name}` function. "
    if suggest_astype:
        context += (
            "If trying to convert the data type of a value, try using "
            f"`x.astype({name})` or `jnp.array(x, {name})` instead."
        )

    def error(self, arg):
        if fun is bool:
            raise TracerBoolConversionError(arg)
        if fun in (hex, oct, operator.index):
            raise TracerIntegerConversionError(arg)
        raise ConcretizationTypeError(arg, context)

    return error


def _aval_mapping_handlers():
    core = _extend_core
    return {
        ShapedArray: (
            core.mapped_aval,
            lambda size, axis, mesh_axis, aval: core.unmapped_aval(size, axis, aval),
        ),
        type(abstract_token): (
            lambda size, axis, aval: aval,
            lambda size, axis, mesh_axis, aval: aval,
        ),
    }


_TO_EXTEND = [
    "CallPrimitive",
    "DebugInfo",
    "DropVar",
    "Effect",
    "Effects",
    "check_jaxpr",
    "concrete_or_error",
    "find_top_trace",
    "gensym",
    "get_opaque_trace_state",
    "jaxprs_in_params",
    "new_jaxpr_eqn",
    "no_effects",
    "primal_dtype_to_tangent_dtype",
    "valid_jaxtype",
]
_NO_REPLACEMENT = [
    "nonempty_axis_env_DO_NOT_USE",
    "unsafe_am_i_under_a_jit_DO_NOT_USE",
    "unsafe_am_i_under_a_vmap_DO_NOT_USE",
    "unsafe_get_axis_names_DO_NOT_USE",
]

# Deprecated names: (message, value maker).
_DEPRECATED: dict[str, tuple[str, Any]] = {
    **{
        name: (
            f"jax.core.{name} is deprecated. Use jax.extend.core.{name}.",
            lambda name=name: getattr(_extend_core, name),
        )
        for name in _TO_EXTEND
    },
    **{
        name: (
            f"jax.core.{name} is deprecated. Use jax.errors.{name}.",
            lambda name=name: getattr(_errors, name),
        )
        for name in ("InconclusiveDimensionOperation", "JaxprTypeError")
    },
    **{
        name: (f"jax.core.{name} is deprecated.", lambda name=name: getattr(_extend_core, name))
        for name in _NO_REPLACEMENT
    },
    **{
        name: (f"jax.core.{name} is deprecated.", make)
        for name, make in {
            "OutputType": lambda: tuple[AbstractValue, ...],
            "abstract_token": lambda: abstract_token,
            "aval_mapping_handlers": _aval_mapping_handlers,
            "call": lambda: _extend_core.primitives.call_p.bind,
            "concretization_function_error": lambda: _concretization_function_error,
            "is_concrete": lambda: _is_concrete,
            "is_constant_dim": lambda: _is_constant_dim,
            "is_constant_shape": lambda: lambda s: all(map(_is_constant_dim, s)),
            "literalable_types": lambda: set(_extend_core.array_types),
            "no_axis_name": lambda: _NO_AXIS_NAME,
        }.items()
    },
}
_NO_AXIS_NAME = object()

# JAX internals that JAX 0.10.2 still serves (deprecated) and lamina has no counterpart of.
_JAX_INTERNALS = (
    "JaxprPpContext",
    "JaxprPpSettings",
    "custom_typechecks",
    "pytype_aval_mappings",
    "trace_ctx",
)

_REMOVED = {
    "get_aval": "jax.core.get_aval was deprecated in JAX v0.8.2 and removed in JAX v0.10.0; "
    "use jax.typeof instead.",
    "traverse_jaxpr_params": "jax.core.traverse_jaxpr_params was deprecated in JAX v0.8.2 and "
    "removed in JAX v0.10.0.",
    **{
        name: f"jax.core.{name} was deprecated in JAX v0.8.2 and removed in JAX v0.10.0. "
        f"Use jax.extend.core.{name}."
        for name in (
            "mapped_aval",
            "unmapped_aval",
            "set_current_trace",
            "take_current_trace",
            "TraceTag",
            "call_impl",
            "subjaxprs",
            "AbstractToken",
        )
    },
}


def __getattr__(name: str):
    if name in _DEPRECATED:
        message, make = _DEPRECATED[name]
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return make()
    if name in _REMOVED:
        raise AttributeError(_REMOVED[name])
    if name in _JAX_INTERNALS:
        raise AttributeError(
            f"jax.core.{name} is a deprecated JAX internal that lamina does not have."
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
