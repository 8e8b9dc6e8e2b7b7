"""Traces, tracers and ``bind``: the machinery every transformation is built on.

The design is JAX's "stackless" one. One trace is *current* (a context variable; at the
bottom it is :data:`eval_trace`, which runs primitives). ``Primitive.bind`` hands the
primitive, its arguments and params to the current trace's ``process_primitive``. A
trace treats any argument that is not one of its own tracers as a constant of its
level: a Python number, an array, or a tracer of an enclosing trace. A transformation
that needs its parent to do the work (JVP asks its parent to compute the primal, say)
keeps the parent trace and makes it current with :func:`set_current_trace` while it
binds. So traces nest in any order, to any depth, with no global stack.

A trace is *valid* from its creation until its transformation ends; a tracer of an
invalid trace that turns up later has leaked (stored in a global, say), and using it
raises :class:`~lamina.interpreters.core.errors.UnexpectedTracerError`.

Tracers behave like arrays. Their operators (``+``, ``[]``, ...) and methods
(``.sum()``, ...) are looked up in :data:`array_methods`, which the ``lax``/``numpy``
layers fill: ``array_methods["__add__"] = lambda x, y: ...``.

:func:`shaped_abstractify` gives the abstract value of anything a trace may be handed:
a tracer's ``aval``, or the shape, canonical dtype and weak type of a concrete value.

With ``jax_debug_key_reuse`` on, the eval trace runs impl rules through the key-reuse
checker, which installs itself with :func:`set_key_reuse_hook`.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from lamina.interpreters.core.config import debug_key_reuse
from lamina.interpreters.core.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from lamina.ir import (
    AbstractRef,
    AbstractToken,
    ShapedArray,
    dtypes,
    impl_rules,
    set_bind_handler,
    typed_value_aval,
)

__all__ = [
    "EvalTrace",
    "Trace",
    "Tracer",
    "array_methods",
    "bind",
    "ensure_compile_time_eval",
    "eval_trace",
    "find_current_trace",
    "ref_methods",
    "runs_eagerly",
    "set_current_trace",
    "set_key_reuse_hook",
    "shaped_abstractify",
    "take_current_trace",
    "typeof",
]


class Trace:
    """One running transformation. Subclasses implement ``process_primitive`` and, as
    they need them, the hooks for call-like primitives with their own rules."""

    def __init__(self):
        self._valid = True

    def is_valid(self) -> bool:
        return self._valid

    def invalidate(self) -> None:
        """Called when the transformation ends: its tracers are now leaked if used."""
        self._valid = False

    @property
    def main(self) -> Trace:
        """What identifies the transformation (JAX's older name, which equinox still
        compares tracers' traces by): the trace itself."""
        return self

    def process_primitive(self, primitive, args, params):
        raise NotImplementedError(f"{type(self).__name__} cannot process primitives")

    def process_tangent_side(self, fn, args):
        """Runs ``fn(*args)``, tangent work that a JVP rule wants kept with the tangents
        even where its inputs are all known (the making of a tangent reference).
        Partial evaluation stages it; other traces just run it."""
        return fn(*args)

    def _unsupported(self, what: str):
        return NotImplementedError(f"{type(self).__name__} does not support {what} yet")

    def process_custom_jvp_call(self, primitive, fun, jvp, tracers, *, symbolic_zeros):
        raise self._unsupported("custom_jvp functions")

    def process_custom_vjp_call(self, primitive, fun, fwd, bwd, tracers, out_trees):
        raise self._unsupported("custom_vjp functions")

    def process_map(self, primitive, fun, tracers, params):
        raise self._unsupported("mapped calls")

    def __repr__(self):
        return f"{type(self).__name__}()"


class EvalTrace(Trace):
    """The bottom trace: primitives run (eagerly, through their impl rules)."""

    def invalidate(self) -> None:  # the eval trace never ends
        pass

    def process_primitive(self, primitive, args, params):
        for x in args:
            if isinstance(x, Tracer):
                return _bind_traced(primitive, args, params, x)
        rule = impl_rules[primitive]
        if _key_reuse_maybe_on and _key_reuse_hook is not None and _debug_key_reuse.value:
            rule = _checked_rule(primitive, rule)
        # Impl rules may bind primitives themselves; those run eagerly too. Entering the
        # context costs microseconds, so the common case (already current) skips it.
        if _current_trace.get() is self:
            return rule(*args, **params)
        with set_current_trace(self):
            return rule(*args, **params)


class _NoTrace(Trace):
    """Current inside :func:`take_current_trace`: binding there is a bug in lamina."""

    def process_primitive(self, primitive, args, params):
        raise RuntimeError(
            f"primitive '{primitive.name}' was bound inside take_current_trace(); "
            "set a trace current first"
        )


# hook(primitive, rule, args, params): the key-reuse checker's run of an impl rule.
_key_reuse_hook = None
_debug_key_reuse = debug_key_reuse

# Whether jax_debug_key_reuse may be on in some thread (its process-wide value, or an
# override in force): eager binds test this plain global before reading the option.
_key_reuse_maybe_on = False
_key_reuse_overrides = 0
_key_reuse_lock = threading.Lock()


def _follow_key_reuse_global(value) -> None:
    global _key_reuse_maybe_on
    with _key_reuse_lock:
        _key_reuse_maybe_on = bool(value) or _key_reuse_overrides > 0


@contextlib.contextmanager
def _follow_key_reuse_override(value) -> Iterator[None]:
    global _key_reuse_maybe_on, _key_reuse_overrides
    with _key_reuse_lock:
        _key_reuse_overrides += 1
        _key_reuse_maybe_on = True
    try:
        yield
    finally:
        with _key_reuse_lock:
            _key_reuse_overrides -= 1
            _key_reuse_maybe_on = bool(debug_key_reuse.get_global()) or _key_reuse_overrides > 0


debug_key_reuse.on_global = _follow_key_reuse_global
debug_key_reuse.local_context = _follow_key_reuse_override
_follow_key_reuse_global(debug_key_reuse.get_global())  # from the environment


def set_key_reuse_hook(hook) -> None:
    global _key_reuse_hook
    _key_reuse_hook = hook


def _checked_rule(primitive, rule):
    def checked(*args, **params):
        return _key_reuse_hook(primitive, rule, args, params)

    return checked


eval_trace = EvalTrace()
_no_trace = _NoTrace()
_current_trace: contextvars.ContextVar[Trace] = contextvars.ContextVar(
    "lamina_current_trace", default=eval_trace
)


# Inside ensure_compile_time_eval: the trace that was current on entry, which takes the
# primitives whose operands include its tracers (the others run eagerly).
_compile_time_parent: contextvars.ContextVar[Trace | None] = contextvars.ContextVar(
    "lamina_compile_time_parent", default=None
)


def _bind_traced(primitive, args, params, tracer: Tracer):
    """The eval trace met a tracer: under ensure_compile_time_eval the trace of entry
    takes the primitive; otherwise the tracer has leaked."""
    parent = _compile_time_parent.get()
    if parent is None or not parent.is_valid():
        raise leaked_tracer_error(tracer)
    with set_current_trace(parent):
        return parent.process_primitive(primitive, args, params)


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Within the block, operations on concrete values run eagerly even while tracing
    (under jit their results are concrete Arrays); operations on traced values are
    still traced."""
    parent = _current_trace.get()
    if parent is eval_trace:  # at top level, or nested: keep the outer block's parent
        parent = _compile_time_parent.get()
    parent_token = _compile_time_parent.set(parent)
    token = _current_trace.set(eval_trace)
    try:
        yield
    finally:
        _current_trace.reset(token)
        _compile_time_parent.reset(parent_token)


def runs_eagerly(leaves) -> bool:
    """Whether a call on ``leaves`` runs compiled now: the eval trace is current and no
    argument is traced (under ensure_compile_time_eval a tracer may reach here)."""
    return find_current_trace() is eval_trace and not any(isinstance(x, Tracer) for x in leaves)


# The trace that primitives bind to now: the context variable's own getter, a C call
# (every primitive bind and every eager operator asks).
find_current_trace: Callable[[], Trace] = _current_trace.get


@contextlib.contextmanager
def set_current_trace(trace: Trace) -> Iterator[Trace]:
    """Within the block (in this thread or task), primitives bind to ``trace``."""
    token = _current_trace.set(trace)
    try:
        yield trace
    finally:
        _current_trace.reset(token)


@contextlib.contextmanager
def take_current_trace() -> Iterator[Trace]:
    """Yields the current trace, with no trace current inside the block: the caller
    decides which trace its own binds go to."""
    trace = _current_trace.get()
    token = _current_trace.set(_no_trace)
    try:
        yield trace
    finally:
        _current_trace.reset(token)


def bind(primitive, args, params):
    """The bind handler of ``lamina.ir``: ``primitive.bind(*args, **params)`` lands here."""
    trace = _current_trace.get()
    if trace is eval_trace:  # EvalTrace.process_primitive, inlined for eager ops
        for x in args:
            if isinstance(x, Tracer):
                return _bind_traced(primitive, args, params, x)
        if _key_reuse_maybe_on and _key_reuse_hook is not None and _debug_key_reuse.value:
            return _key_reuse_hook(primitive, impl_rules[primitive], args, params)
        return impl_rules[primitive](*args, **params)
    return trace.process_primitive(primitive, args, params)


set_bind_handler(bind)


def leaked_tracer_error(tracer: Tracer) -> UnexpectedTracerError:
    created = getattr(tracer, "_line", None)
    where = f" The leaked value was created at {created}." if created else ""
    return UnexpectedTracerError(
        f"Encountered an unexpected tracer: a value of type {tracer.aval.str_short()} wrapped in a "
        f"{type(tracer).__name__} was used after the transformation that made it "
        f"({type(tracer._trace).__name__}) had ended.{where}\n"
        "Transformed functions must return their results rather than store them in "
        "globals, closures or object attributes; return the value instead, or pass "
        "it in as an argument of the transformed function."
    )


# --------------------------------------------------------------------------- tracers

# Operator and method implementations for tracers, filled by the lax/numpy layers.
array_methods: dict[str, Any] = {}
# Those of mutable array references (``Ref``s and tracers of type ``AbstractRef``),
# filled by lax: ``__getitem__``, ``__setitem__``, ``addupdate``.
ref_methods: dict[str, Any] = {}

_OPERATORS = [
    "__neg__",
    "__pos__",
    "__abs__",
    "__invert__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "__mul__",
    "__rmul__",
    "__truediv__",
    "__rtruediv__",
    "__floordiv__",
    "__rfloordiv__",
    "__mod__",
    "__rmod__",
    "__divmod__",
    "__rdivmod__",
    "__pow__",
    "__rpow__",
    "__matmul__",
    "__rmatmul__",
    "__and__",
    "__rand__",
    "__or__",
    "__ror__",
    "__xor__",
    "__rxor__",
    "__lshift__",
    "__rlshift__",
    "__rshift__",
    "__rrshift__",
    "__getitem__",
    "__setitem__",
    "__round__",
    "__contains__",
    "__copy__",
    "__deepcopy__",
    "__array_namespace__",
]


def _missing_method(name: str) -> TypeError:
    return TypeError(
        f"arrays being traced have no '{name}' yet: the array layers (lamina.lax, "
        "lamina.numpy) install it in lamina.interpreters.tracing.array_methods; "
        "import lamina (or lamina.numpy) first"
    )


def _ref_method(ref, name: str):
    """The method ``name`` of a reference, bound to it."""
    impl = ref_methods.get(name)
    if impl is None:
        op = name.strip("_")
        raise TypeError(f"mutable array references of type {ref.aval} do not support '{op}'")
    return impl.__get__(ref, type(ref))


def _dtype_method(tracer, name: str):
    """The method ``name`` an extended dtype (PRNG keys) gives its arrays, or None; the
    fallback when the array layers installed none of that name."""
    methods = getattr(getattr(tracer.aval, "dtype", None), "array_methods", None)
    return None if methods is None else methods.get(name)


def _forward(name: str):
    def method(self, *args, **kwargs):
        if type(self.aval) is AbstractRef:
            return _ref_method(self, name)(*args, **kwargs)
        impl = array_methods.get(name)
        if impl is None:
            impl = _dtype_method(self, name)
            if impl is None:
                raise _missing_method(name)
        return impl(self, *args, **kwargs)

    method.__name__ = name
    return method


class Tracer:
    """A value being traced by ``_trace``. Subclasses define ``aval``."""

    __slots__ = ("__weakref__", "_line", "_trace")
    __array_priority__ = 1000  # NumPy defers binary operators to ours

    def __init__(self, trace: Trace):
        self._trace = trace

    aval: Any = property(lambda self: self._not_implemented("aval"))

    def _not_implemented(self, what):
        raise NotImplementedError(f"{type(self).__name__} does not define {what}")

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def _is_traced_array(self) -> bool:  # jaxlib's isinstance(t, Array) hook
        return type(self.aval) is not AbstractRef

    def to_concrete_value(self):
        """The value, where the trace knows it (a JVP of concrete values, say); else None."""
        return None

    def _concrete(self, error):
        value = self.to_concrete_value()
        if value is None:
            raise error
        return value

    def __bool__(self):
        return bool(self._concrete(TracerBoolConversionError(self)))

    def _scalar_conversion(self, kind):
        hint = (
            f"The problem arose with the `{kind.__name__}` function. To change the dtype "
            f"of a traced value use `x.astype({kind.__name__})` or "
            f"`jnp.array(x, {kind.__name__})`."
        )
        return kind(self._concrete(ConcretizationTypeError(self, hint)))

    def __int__(self):
        return self._scalar_conversion(int)

    def __float__(self):
        return self._scalar_conversion(float)

    def __complex__(self):
        return self._scalar_conversion(complex)

    def __index__(self):
        import operator

        return operator.index(self._concrete(TracerIntegerConversionError(self)))

    def __array__(self, dtype=None, copy=None):
        import numpy as np

        return np.asarray(self._concrete(TracerArrayConversionError(self)), dtype=dtype)

    def __hash__(self):
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        unstack = array_methods.get("_unstack")
        if unstack is not None:
            return iter(unstack(self))
        return (self[i] for i in range(self.shape[0]))

    def __getattr__(self, name):
        # Only called for names not found normally: array methods from the table.
        if type(self.aval) is AbstractRef and not name.startswith("__"):
            if name in ref_methods:
                return _ref_method(self, name)
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        impl = array_methods.get(name)
        if impl is None and not name.startswith("__"):
            impl = _dtype_method(self, name)
        if impl is None or name.startswith("__"):
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        if isinstance(impl, property):
            return impl.fget(self)
        return impl.__get__(self, type(self))

    def __repr__(self):
        return f"{type(self).__name__}({self.aval})"

    for _name in _OPERATORS:
        locals()[_name] = _forward(_name)
    del _name


def typeof(x) -> ShapedArray:
    """The abstract value of ``x`` (``jax.typeof``): a ShapedArray of its shape, dtype
    and weak type; a tracer's own abstract value."""
    try:
        return shaped_abstractify(x)
    except TypeError:
        raise TypeError(f"Argument '{x}' of type '{type(x)}' is not a valid JAX type") from None


# JAX 0.10.2 converts an object's ``__jax_array__`` only where a value is explicitly made
# an array (``jnp.asarray``, the array operators), never while abstracting an argument.
JAX_ARRAY_ABSTRACTIFY = (
    "Triggering __jax_array__() during abstractification is no longer supported. To avoid "
    "this error, either explicitly convert your object using jax.numpy.array(), or "
    "register your object as a pytree."
)


def shaped_abstractify(x) -> ShapedArray:
    """The abstract value of an argument: its shape, canonical dtype and weak type."""
    if isinstance(x, Tracer):
        return x.aval
    aval = getattr(x, "aval", None)
    if type(aval) is ShapedArray:
        return typed_value_aval(x, aval)  # laid out over an explicit mesh: in the type
    if isinstance(aval, AbstractToken | AbstractRef):
        return aval
    if dtypes.is_python_scalar(x):
        return ShapedArray((), dtypes.dtype(x), weak_type=dtypes.is_weakly_typed(x))
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))
    if hasattr(x, "__jax_array__"):
        raise ValueError(JAX_ARRAY_ABSTRACTIFY)
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is not None and dtype is not None:
        return ShapedArray(shape, dtypes.canonicalize_dtype(dtype), getattr(x, "weak_type", False))
    raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX type")
