"""The errors a user meets when tracing goes wrong, with JAX 0.10.2's class hierarchy.

Each message says what happened, where in the user's code (the first frame outside
lamina), and what to do about it.
"""

from __future__ import annotations

import sys

from jaxlib._jax import JaxRuntimeError  # the class XLA's runtime failures raise

__all__ = [
    "ConcretizationTypeError",
    "Frame",
    "InconclusiveDimensionOperation",
    "JAXIndexError",
    "JAXTypeError",
    "JaxRuntimeError",
    "KeyReuseError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
    "user_frame",
]

_DOCS = "https://docs.jax.dev/en/latest/errors.html"


class Frame:
    """A source location, with the fields of JAX's traceback frames (for SourceInfo)."""

    __slots__ = ("code", "start_line")
    start_column = 0

    def __init__(self, code, line: int):
        self.code, self.start_line = code, line

    file_name = property(lambda self: self.code.co_filename)
    function_name = property(lambda self: self.code.co_name)

    def __str__(self):
        return f"{self.file_name}:{self.start_line} ({self.function_name})"


def user_frame(skip: int = 1) -> Frame | None:
    """The innermost caller outside the lamina packages (``str()`` gives
    ``file:line (function)``), or None if there is none."""
    frame = sys._getframe(skip)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not module.startswith(("lamina.", "contextlib")):
            return Frame(frame.f_code, frame.f_lineno)
        frame = frame.f_back
    return None


class _LaminaErrorMixin:
    """Adds the link to the documentation of the error class."""

    def _with_link(self, message: str) -> str:
        return f"{message}\nSee {_DOCS}#jax.errors.{type(self).__name__}"


class JAXTypeError(_LaminaErrorMixin, TypeError):
    pass


class JAXIndexError(_LaminaErrorMixin, IndexError):
    pass


def _describe(tracer) -> str:
    return f"traced array with shape {tracer.aval.str_short()}"


def _context(tracer) -> str:
    trace = getattr(tracer, "_trace", None)
    traced = getattr(trace, "debug_info", None)
    where = f"The error occurred at {user_frame()}"
    if traced:
        where += f", while tracing the function {traced}"
    return (
        f"{where}. This value is not known while tracing: it depends on the function's "
        "array arguments, of which only shapes and dtypes are known."
    )


class ConcretizationTypeError(JAXTypeError):
    """A concrete (known) value was needed where only a traced, abstract one exists."""

    def __init__(self, tracer, context: str = ""):
        message = (
            "Abstract tracer value encountered where concrete value is expected: "
            f"{_describe(tracer)}\n" + (f"{context}\n" if context else "") + f"{_context(tracer)}\n"
            "If the value only matters through its shape or dtype, or is a Python "
            "setting, pass it as a static argument (static_argnums / static_argnames)."
        )
        super().__init__(self._with_link(message))


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool(tracer)``: Python control flow on a traced value."""

    def __init__(self, tracer):
        message = (
            f"Attempted boolean conversion of {_describe(tracer)}.\n"
            f"{_context(tracer)}\n"
            "Python `if`, `while`, `and`/`or` need a concrete value. To branch on a traced "
            "value use lax.cond (or lax.switch, lax.while_loop), or select elementwise "
            "with jnp.where; if the value is really a setting, mark the argument static "
            "with static_argnums / static_argnames."
        )
        JAXTypeError.__init__(self, self._with_link(message))


class TracerArrayConversionError(JAXTypeError):
    """``np.asarray(tracer)``: NumPy cannot hold a traced value."""

    def __init__(self, tracer):
        message = (
            f"The numpy.ndarray conversion method __array__() was called on "
            f"{_describe(tracer)}.\n{_context(tracer)}\n"
            "NumPy functions run eagerly on concrete data; use the lamina.numpy "
            "function instead (jnp.sin rather than np.sin), or mark the argument "
            "static with static_argnums if it is not array data."
        )
        super().__init__(self._with_link(message))


class TracerIntegerConversionError(JAXTypeError):
    """``operator.index(tracer)``: a traced value used as a Python index or size."""

    def __init__(self, tracer):
        message = (
            f"The __index__() method was called on {_describe(tracer)}.\n"
            f"{_context(tracer)}\n"
            "Python indexing, range() and sizes need concrete integers. Index arrays "
            "with the array itself (x[i] with a traced i works on lamina arrays), use "
            "lax.dynamic_slice, or mark the argument static with static_argnums."
        )
        super().__init__(self._with_link(message))


class UnexpectedTracerError(JAXTypeError):
    """A tracer was used after the trace that made it had ended (a leaked tracer)."""

    def __init__(self, msg: str):
        super().__init__(self._with_link(msg))


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean mask whose value is not known while tracing was used as an index: the
    result's shape would depend on the mask's value."""

    def __init__(self, tracer):
        message = (
            f"Array boolean indices must be concrete; got {tracer.aval.str_short()}\n"
            "The shape of x[mask] depends on how many entries of the mask are true, which "
            "is not known while tracing. Use jnp.where(mask, x, fill) to keep the shape, "
            "x.at[mask].set(...) only with a concrete mask, or jnp.nonzero(mask, size=...) "
            "to get a fixed number of indices."
        )
        super().__init__(self._with_link(message))


class KeyReuseError(JAXTypeError):
    """A PRNG key was used twice where key-reuse checking is on."""

    def __init__(self, message: str):
        super().__init__(self._with_link(message))


class InconclusiveDimensionOperation(Exception):
    """A comparison or operation on symbolic dimensions whose result depends on the
    values the dimensions take."""
