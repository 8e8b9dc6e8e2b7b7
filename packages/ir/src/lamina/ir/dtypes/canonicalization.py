"""x64 mode, default dtypes, weak types and :func:`dtype`: what dtype a value has, and the
*canonical* dtype lamina computes in.

x64 mode (:func:`x64_enabled`, :func:`set_x64`, :func:`enable_x64`) is a process-wide
setting for higher layers to flip, off unless the environment variable
``JAX_ENABLE_X64`` is true. With it off, 64-bit types are *canonicalized* to their
32-bit counterparts, and Python scalars default to 32-bit dtypes.

Weak types: a Python ``int``, ``float`` or ``complex`` (and any value whose ``weak_type``
attribute, or ``aval.weak_type``, is true) is *weakly typed*: it takes the dtype of
whatever strongly typed value it meets instead of widening it.

Import these names from :mod:`lamina.ir.dtypes`, which re-exports them.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from lamina.ir.dtypes.kinds import (
    _DTYPES_32,
    _DTYPES_64,
    _TO_32_BIT,
    _VALID_DTYPES,
    ExtendedDType,
    _category,
    _is_extended,
)

# ---------------------------------------------------------------------------------------
# x64 mode and default dtypes
# ---------------------------------------------------------------------------------------

_TRUE_STRINGS = ("y", "yes", "t", "true", "on", "1")
_FALSE_STRINGS = ("n", "no", "f", "false", "off", "0")


def _bool_from_env(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    if value.lower() in _TRUE_STRINGS:
        return True
    if value.lower() in _FALSE_STRINGS:
        return False
    raise ValueError(
        f"environment variable {name}={value!r} is not a truth value; "
        f"use one of {_TRUE_STRINGS} or {_FALSE_STRINGS}"
    )


_x64_global = _bool_from_env("JAX_ENABLE_X64", False)
_x64_local: contextvars.ContextVar[bool | None] = contextvars.ContextVar("lamina_x64", default=None)


def x64_enabled() -> bool:
    """Whether 64-bit types are enabled (``jax_enable_x64``)."""
    local = _x64_local.get()
    return _x64_global if local is None else local


def set_x64(enabled: bool) -> None:
    """Turn x64 mode on or off for the whole process (an :func:`enable_x64` block in
    progress keeps its own value until it ends)."""
    global _x64_global
    _x64_global = bool(enabled)


@contextlib.contextmanager
def enable_x64(enabled: bool = True) -> Iterator[None]:
    """Within the block (in this thread or task only), x64 mode is ``enabled``."""
    token = _x64_local.set(bool(enabled))
    try:
        yield
    finally:
        _x64_local.reset(token)


# What an explicitly requested 64-bit dtype does with x64 off (jax_explicit_x64_dtypes):
# "warn" (warn and use the 32-bit type), "error" (raise) or "allow" (use it).
EXPLICIT_X64_MODES = ("warn", "error", "allow")
_explicit_x64_global = "warn"
_explicit_x64_local: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "lamina_explicit_x64", default=None
)


def _check_explicit_x64_mode(mode: str) -> str:
    if mode not in EXPLICIT_X64_MODES:
        raise ValueError(
            f"jax_explicit_x64_dtypes must be one of {EXPLICIT_X64_MODES}, got {mode!r}"
        )
    return mode


def get_explicit_x64_mode() -> str:
    """What an explicit 64-bit dtype does with x64 off: "warn", "error" or "allow"."""
    local = _explicit_x64_local.get()
    return _explicit_x64_global if local is None else local


def set_explicit_x64_mode(mode: str) -> None:
    """Set :func:`get_explicit_x64_mode` for the whole process."""
    global _explicit_x64_global
    _explicit_x64_global = _check_explicit_x64_mode(mode)


@contextlib.contextmanager
def explicit_x64_mode(mode: str) -> Iterator[None]:
    """Within the block (in this thread or task only), the explicit-x64 mode is ``mode``."""
    token = _explicit_x64_local.set(_check_explicit_x64_mode(mode))
    try:
        yield
    finally:
        _explicit_x64_local.reset(token)


# Default dtype of each category ("i": default int, ...), with x64 on and off.
_DEFAULTS_64 = {"b": np.dtype(bool), **dict(zip("iufc", _DTYPES_64, strict=True))}
_DEFAULTS_32 = {"b": np.dtype(bool), **dict(zip("iufc", _DTYPES_32, strict=True))}


def _default_dtype(category: str) -> np.dtype:
    return (_DEFAULTS_64 if x64_enabled() else _DEFAULTS_32)[category]


def default_int_dtype() -> np.dtype:
    """int64 with x64 on, else int32: the dtype of a Python ``int``."""
    return _default_dtype("i")


def default_uint_dtype() -> np.dtype:
    """uint64 with x64 on, else uint32."""
    return _default_dtype("u")


def default_float_dtype() -> np.dtype:
    """float64 with x64 on, else float32: the dtype of a Python ``float``."""
    return _default_dtype("f")


def default_complex_dtype() -> np.dtype:
    """complex128 with x64 on, else complex64: the dtype of a Python ``complex``."""
    return _default_dtype("c")


# ---------------------------------------------------------------------------------------
# Python scalars, weak types and dtype()
# ---------------------------------------------------------------------------------------

python_scalar_types = frozenset({bool, int, float, complex})
_PYTHON_CATEGORY: dict[type, str] = {bool: "b", int: "i", float: "f", complex: "c"}
_WEAK_TYPES = (int, float, complex)
# Other types whose instances act as Python scalars: type -> the Python type they act as.
_weak_scalar_types: dict[type, type] = {}
# Array types whose dtype is kept as is even when dtype(x, canonicalize=True) is asked.
_uncanonicalized_types: tuple[type, ...] = ()


def register_weak_scalar_type(typ: type, like: type = int) -> None:
    """Treat instances of ``typ`` as weakly typed Python scalars of type ``like``
    (``int``, ``float`` or ``complex``), e.g. symbolic dimension sizes."""
    if like not in _WEAK_TYPES:
        raise ValueError(f"like must be int, float or complex, got {like!r}")
    _weak_scalar_types[typ] = like


def register_uncanonicalized_type(typ: type) -> None:
    """Values of type ``typ`` (arrays that already exist) keep their dtype under
    ``dtype(x, canonicalize=True)``: an int64 array made with x64 on stays int64."""
    global _uncanonicalized_types
    _uncanonicalized_types = (*_uncanonicalized_types, typ)


def is_python_scalar(x: Any) -> bool:
    """Whether ``x`` is a Python bool, int, float or complex (not a NumPy scalar), or an
    instance of a type registered with :func:`register_weak_scalar_type`."""
    return type(x) in _PYTHON_CATEGORY or type(x) in _weak_scalar_types


def is_weakly_typed(x: Any) -> bool:
    """Whether ``x`` is weakly typed: a Python int/float/complex, an instance of a
    registered weak scalar type, or a value whose ``weak_type`` (or ``aval.weak_type``)
    is true. Python bools are not weak."""
    if type(x) in _WEAK_TYPES or type(x) in _weak_scalar_types:
        return True
    weak = getattr(x, "weak_type", None)
    if weak is None:
        weak = getattr(getattr(x, "aval", None), "weak_type", None)
    return bool(weak)


def _python_type_of(x: Any) -> type | None:
    """The Python scalar type that ``x`` (a type or a value) stands for, if any."""
    if isinstance(x, type):
        return x if x in _PYTHON_CATEGORY else _weak_scalar_types.get(x)
    typ = type(x)
    return typ if typ in _PYTHON_CATEGORY else _weak_scalar_types.get(typ)


def _unsupported(x: Any, dt: np.dtype) -> TypeError:
    return TypeError(
        f"Value {x!r} has dtype {dt}, which is not a valid JAX array type: arrays hold "
        "booleans and numbers only. Convert the value to a numeric dtype first."
    )


def check_valid_dtype(dt: Any) -> None:
    """Raise ``TypeError`` unless ``dt`` is a dtype an array may have."""
    if not isinstance(dt, ExtendedDType) and dt not in _VALID_DTYPES:
        raise TypeError(
            f"Dtype {dt} is not a valid JAX array type: only boolean and numeric dtypes "
            "(and float0 and extended dtypes) are supported."
        )


def dtype(x: Any, canonicalize: bool = False) -> np.dtype | ExtendedDType:
    """The dtype of a value, scalar type, dtype or dtype name.

    Python scalars and their types (``3``, ``float``) give the default dtype of the current
    x64 mode. Anything else gives its exact dtype, unless ``canonicalize`` is true, when
    64-bit types become 32-bit ones with x64 off (except for values of types registered
    with :func:`register_uncanonicalized_type`). Extended dtypes pass through.

    (JAX 0.10.2's ``jax._src.dtypes.dtype(x)`` always canonicalizes: it is
    ``dtype(x, canonicalize=True)`` here.)
    """
    # The common cases first: Python scalars, dtypes, values with a NumPy dtype.
    if type(x) in _PYTHON_CATEGORY:
        return _default_dtype(_PYTHON_CATEGORY[type(x)])
    if isinstance(x, np.dtype):
        dt = x
    else:
        attr = getattr(x, "dtype", None)
        if isinstance(attr, np.dtype) and not isinstance(x, type):
            dt = attr
        else:
            dt = _dtype_slow_path(x, attr)
            if isinstance(dt, ExtendedDType):
                return dt
    if dt not in _VALID_DTYPES:
        raise _unsupported(x, dt)
    if canonicalize and not isinstance(x, _uncanonicalized_types):
        canonical = canonicalize_dtype(dt)
        # A dtype named explicitly: kept when explicit 64-bit dtypes are allowed.
        explicit = canonical is not dt and isinstance(x, (np.dtype, type, str))
        if explicit and get_explicit_x64_mode() == "allow":
            return dt
        return canonical
    return dt


def _dtype_slow_path(x: Any, attr: Any) -> Any:
    if x is None:
        raise ValueError(
            "Invalid argument to dtype: None. Pass a dtype, a scalar type, a dtype name or a value."
        )
    if isinstance(x, ExtendedDType):
        return x
    python_type = _python_type_of(x)
    if python_type is not None:
        return _default_dtype(_PYTHON_CATEGORY[python_type])
    if isinstance(x, (type, str)):
        try:
            return np.dtype(x)
        except TypeError as err:
            raise TypeError(f"data type {x!r} not understood") from err
    if isinstance(attr, ExtendedDType):
        return attr
    if attr is None:
        raise TypeError(f"Cannot determine dtype of {x!r}: pass an array, a scalar or a dtype.")
    return np.dtype(attr)


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> np.dtype | ExtendedDType:
    """The dtype lamina computes in for ``dtype``: with x64 off, int64, uint64, float64
    and complex128 become int32, uint32, float32 and complex64. Python types give their
    default dtype; ``None`` gives the default float. Extended dtypes pass through only
    when ``allow_extended_dtype`` is true."""
    if isinstance(dtype, np.dtype):
        dt = dtype
    elif _is_extended(dtype):
        if not allow_extended_dtype:
            raise ValueError(
                f"canonicalize_dtype got the extended dtype {dtype}; pass "
                "allow_extended_dtype=True if extended dtypes are expected here."
            )
        return dtype
    else:
        try:
            dt = np.dtype(dtype)
        except TypeError as err:
            raise TypeError(f"dtype {dtype!r} not understood") from err
    if x64_enabled():
        return dt
    return _TO_32_BIT.get(dt, dt)


def check_and_canonicalize_user_dtype(dtype: Any, fun_name: str | None = None) -> Any:
    """Validate a ``dtype=`` argument a user passed and return its canonical form.

    Python scalar types give their default dtype. With x64 off, an explicit 64-bit dtype
    gives a ``UserWarning`` and its 32-bit counterpart (or, as the explicit-x64 mode
    says, a ``ValueError`` or the 64-bit dtype itself).
    """
    where = f" in {fun_name}" if fun_name else ""
    if dtype is None:
        raise ValueError(f"dtype must be specified{where}.")
    if not isinstance(dtype, (type, str, np.dtype, ExtendedDType)) and hasattr(dtype, "shape"):
        raise ValueError(
            f"An array was passed as a dtype argument{where}; pass its dtype instead "
            "(dtype=arr.dtype)."
        )
    if _is_extended(dtype):
        return dtype
    python_type = _python_type_of(dtype) if isinstance(dtype, type) else None
    if python_type is not None:
        return _default_dtype(_PYTHON_CATEGORY[python_type])
    dt = np.dtype(dtype)
    if dt not in _VALID_DTYPES:
        raise TypeError(
            f"JAX only supports boolean, numeric and string dtypes, got dtype {dtype}{where}."
        )
    canonical = canonicalize_dtype(dt)
    if canonical != dt:
        return explicit_dtype(dt, fun_name)
    return canonical


def explicit_dtype(dt: np.dtype, fun_name: str | None = None) -> np.dtype:
    """An explicitly requested dtype ``dt`` as the explicit-x64 mode has it with x64 off:
    ``dt`` itself ("allow"), its 32-bit counterpart with a ``UserWarning`` ("warn"), or
    a ``ValueError`` ("error"). The messages are JAX 0.10.2's."""
    canonical = canonicalize_dtype(dt)
    if canonical == dt:
        return dt
    mode = get_explicit_x64_mode()
    if mode == "allow":
        return dt
    where = f" requested in {fun_name}" if fun_name else ""
    gotchas = "See https://github.com/jax-ml/jax#current-gotchas for more."
    if mode == "error":
        raise ValueError(
            f"Explicitly requested dtype {dt}{where} is not available. To enable more "
            "dtypes, set the jax_enable_x64 or allow_explicit_x64_dtypes configuration "
            f"options.{gotchas}"
        )
    warnings.warn(
        f"Explicitly requested dtype {dt}{where} is not available, and will be truncated "
        f"to dtype {canonical}. To enable more dtypes, set the jax_enable_x64 "
        f"configuration option or the JAX_ENABLE_X64 shell environment variable. {gotchas}",
        UserWarning,
        stacklevel=3,
    )
    return canonical


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (bool, int, float or complex) matching ``x``'s dtype."""
    category = _category(dtype(x, canonicalize=True))
    typ = {"b": bool, "i": int, "u": int, "f": float, "c": complex}.get(category)
    if typ is not None:
        return typ
    raise TypeError(f"Invalid scalar value {x!r}: it has no Python scalar type.")


def scalar_type_to_dtype(typ: type, value: Any = None) -> np.dtype:
    """The default dtype of Python scalar type ``typ``; with a ``value`` for ``int``,
    raises ``OverflowError`` if the value does not fit in it."""
    dt = _default_dtype(_PYTHON_CATEGORY[typ])
    if typ is int and value is not None:
        info = np.iinfo(dt)
        if not info.min <= value <= info.max:
            raise OverflowError(
                f"Python int {value} too large to convert to {dt}; "
                "pass an explicit dtype or enable x64 mode."
            )
    return dt


def coerce_to_array(x: Any, dtype: Any = None) -> np.ndarray:
    """``np.asarray(x, dtype)``, but a Python scalar without ``dtype`` gets lamina's
    default dtype (int32 with x64 off) rather than NumPy's."""
    if dtype is None and type(x) in _PYTHON_CATEGORY:
        dtype = scalar_type_to_dtype(type(x), x)
    return np.asarray(x, dtype)
