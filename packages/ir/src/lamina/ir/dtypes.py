"""Element types: the dtypes lamina supports, x64 mode, canonicalization, type promotion,
subtype queries, ``finfo``/``iinfo`` and the short names Jaxprs print.

Everything here follows JAX 0.10.2 (``jax.dtypes`` and ``jax.numpy``'s dtype functions).
The promotion lattice itself lives in :mod:`lamina.ir.promotion`; the functions that
apply it to values (:func:`promote_types`, :func:`result_type`) live here.

Two process-wide settings live here too, for higher layers to flip:

* x64 mode (:func:`x64_enabled`, :func:`set_x64`, :func:`enable_x64`), off unless the
  environment variable ``JAX_ENABLE_X64`` is true. With it off, 64-bit types are
  *canonicalized* to their 32-bit counterparts.
* the promotion mode (:func:`get_numpy_dtype_promotion`, ...), ``"standard"`` unless
  ``JAX_NUMPY_DTYPE_PROMOTION`` says ``"strict"``.

Weak types: a Python ``int``, ``float`` or ``complex`` (and any value whose ``weak_type``
attribute, or ``aval.weak_type``, is true) is *weakly typed*: it takes the dtype of
whatever strongly typed value it meets instead of widening it.
"""

from __future__ import annotations

import abc
import contextlib
import contextvars
import functools
import os
import warnings
from collections.abc import Iterator
from typing import Any

import ml_dtypes
import numpy as np

from lamina.ir.promotion import (
    PROMOTION_MODES,
    TypePromotionError,
    least_upper_bound,
)

__all__ = [
    "ALL_DTYPES",
    "BOOL_DTYPES",
    "COMPLEX_DTYPES",
    "CUSTOM_FLOAT_DTYPES",
    "FLOAT4_DTYPES",
    "FLOAT6_DTYPES",
    "FLOAT8_DTYPES",
    "FLOAT_DTYPES",
    "INT_DTYPES",
    "PROMOTION_MODES",
    "SIGNED_DTYPES",
    "SUBBYTE_INT_DTYPES",
    "UNSIGNED_DTYPES",
    "DType",
    "DTypeLike",
    "ExtendedDType",
    "TypePromotionError",
    "bfloat16",
    "bool_",
    "canonicalize_dtype",
    "check_and_canonicalize_user_dtype",
    "check_valid_dtype",
    "coerce_to_array",
    "complex64",
    "complex128",
    "default_complex_dtype",
    "default_float_dtype",
    "default_int_dtype",
    "default_uint_dtype",
    "dtype",
    "dtype_from_short_name",
    "enable_x64",
    "extended",
    "finfo",
    "float0",
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float16",
    "float32",
    "float64",
    "get_numpy_dtype_promotion",
    "iinfo",
    "int1",
    "int2",
    "int4",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_python_scalar",
    "is_weakly_typed",
    "isdtype",
    "issubdtype",
    "itemsize_bits",
    "numpy_dtype_promotion",
    "prng_key",
    "promote_types",
    "python_scalar_types",
    "register_extended_dtype",
    "register_uncanonicalized_type",
    "register_weak_scalar_type",
    "result_type",
    "safe_to_cast",
    "scalar_type_of",
    "scalar_type_to_dtype",
    "set_numpy_dtype_promotion",
    "set_x64",
    "short_dtype_name",
    "supports_inf",
    "to_complex_dtype",
    "to_floating_dtype",
    "to_inexact_dtype",
    "to_numeric_dtype",
    "uint1",
    "uint2",
    "uint4",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "x64_enabled",
]

# ---------------------------------------------------------------------------------------
# Scalar types and dtype groups
# ---------------------------------------------------------------------------------------

DType = np.dtype
DTypeLike = Any  # a dtype, a scalar type, a dtype name, or an ExtendedDType

bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128

# Types NumPy lacks, from ml_dtypes.
int1, int2, int4 = ml_dtypes.int1, ml_dtypes.int2, ml_dtypes.int4
uint1, uint2, uint4 = ml_dtypes.uint1, ml_dtypes.uint2, ml_dtypes.uint4
bfloat16 = ml_dtypes.bfloat16
float4_e2m1fn = ml_dtypes.float4_e2m1fn
float6_e2m3fn = ml_dtypes.float6_e2m3fn
float6_e3m2fn = ml_dtypes.float6_e3m2fn
float8_e3m4 = ml_dtypes.float8_e3m4
float8_e4m3 = ml_dtypes.float8_e4m3
float8_e8m0fnu = ml_dtypes.float8_e8m0fnu
float8_e4m3b11fnuz = ml_dtypes.float8_e4m3b11fnuz
float8_e4m3fn = ml_dtypes.float8_e4m3fn
float8_e4m3fnuz = ml_dtypes.float8_e4m3fnuz
float8_e5m2 = ml_dtypes.float8_e5m2
float8_e5m2fnuz = ml_dtypes.float8_e5m2fnuz

# The tangent type of integer and boolean values: a vector space with one point.
float0 = np.dtype([("float0", np.void, 0)])


def _dtypes(*types: Any) -> tuple[np.dtype, ...]:
    return tuple(np.dtype(t) for t in types)


BOOL_DTYPES = _dtypes(bool_)
UNSIGNED_DTYPES = _dtypes(uint1, uint2, uint4, uint8, uint16, uint32, uint64)
SIGNED_DTYPES = _dtypes(int1, int2, int4, int8, int16, int32, int64)
INT_DTYPES = UNSIGNED_DTYPES + SIGNED_DTYPES
SUBBYTE_INT_DTYPES = _dtypes(uint1, uint2, uint4, int1, int2, int4)
FLOAT4_DTYPES = _dtypes(float4_e2m1fn)
FLOAT6_DTYPES = _dtypes(float6_e2m3fn, float6_e3m2fn)
FLOAT8_DTYPES = _dtypes(
    float8_e3m4,
    float8_e4m3,
    float8_e8m0fnu,
    float8_e4m3b11fnuz,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
)
# Floats whose scalar types sit outside NumPy's np.floating hierarchy.
CUSTOM_FLOAT_DTYPES = (*FLOAT4_DTYPES, *FLOAT6_DTYPES, *FLOAT8_DTYPES, np.dtype(bfloat16))
FLOAT_DTYPES = (*CUSTOM_FLOAT_DTYPES, *_dtypes(float16, float32, float64))
COMPLEX_DTYPES = _dtypes(complex64, complex128)
# Every dtype an array may have (besides float0 and extended dtypes), in JAX's order.
ALL_DTYPES = BOOL_DTYPES + INT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES

# One letter per dtype: b(ool), i (signed), u(nsigned), f(loating), c(omplex).
_CATEGORY: dict[np.dtype, str] = {
    **dict.fromkeys(BOOL_DTYPES, "b"),
    **dict.fromkeys(SIGNED_DTYPES, "i"),
    **dict.fromkeys(UNSIGNED_DTYPES, "u"),
    **dict.fromkeys(FLOAT_DTYPES, "f"),
    **dict.fromkeys(COMPLEX_DTYPES, "c"),
}
_VALID_DTYPES = frozenset([*ALL_DTYPES, float0, np.dtypes.StringDType()])
_DTYPES_64 = _dtypes(int64, uint64, float64, complex128)
_DTYPES_32 = _dtypes(int32, uint32, float32, complex64)
_TO_32_BIT = dict(zip(_DTYPES_64, _DTYPES_32, strict=True))


def _category(dt: Any) -> str:
    """'b', 'i', 'u', 'f' or 'c' for a supported dtype, '' for anything else."""
    return _CATEGORY.get(dt, "") if isinstance(dt, np.dtype) else ""


# ---------------------------------------------------------------------------------------
# Settings: x64 mode and the promotion mode
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


def _check_promotion_mode(mode: Any) -> str:
    if mode not in PROMOTION_MODES:
        raise ValueError(
            f"jax_numpy_dtype_promotion must be one of {PROMOTION_MODES}, got {mode!r}"
        )
    return str(mode)


_x64_global = _bool_from_env("JAX_ENABLE_X64", False)
_x64_local: contextvars.ContextVar[bool | None] = contextvars.ContextVar("lamina_x64", default=None)
_promotion_global = _check_promotion_mode(
    os.environ.get("JAX_NUMPY_DTYPE_PROMOTION", "standard").lower()
)
_promotion_local: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "lamina_numpy_dtype_promotion", default=None
)


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


def get_numpy_dtype_promotion() -> str:
    """The promotion mode in force: ``"standard"`` or ``"strict"``."""
    local = _promotion_local.get()
    return _promotion_global if local is None else local


def set_numpy_dtype_promotion(mode: str) -> None:
    """Set the promotion mode for the whole process: ``"standard"`` or ``"strict"``."""
    global _promotion_global
    _promotion_global = _check_promotion_mode(mode)


@contextlib.contextmanager
def numpy_dtype_promotion(mode: str) -> Iterator[None]:
    """Within the block (in this thread or task only), the promotion mode is ``mode``."""
    token = _promotion_local.set(_check_promotion_mode(mode))
    try:
        yield
    finally:
        _promotion_local.reset(token)


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
# Extended dtypes
# ---------------------------------------------------------------------------------------


class extended(np.generic):
    """The scalar-type category of every extended dtype: ``issubdtype(dt, extended)``.

    Never instantiated; it exists so that extended dtypes fit ``issubdtype``.
    """


class prng_key(extended):
    """The scalar-type category of PRNG key dtypes (``key<fry>`` and friends)."""


class ExtendedDType(abc.ABC):
    """Base class of element types NumPy does not know, such as PRNG keys.

    A subclass provides ``type`` (a subclass of :class:`extended`, e.g. :class:`prng_key`)
    and ``name`` (what Jaxprs print, e.g. ``"key<fry>"``), and should be hashable and
    compare equal to its equals. Higher layers attach whatever rules they need.
    """

    name: str

    @property
    @abc.abstractmethod
    def type(self) -> type:
        """The scalar type: a subclass of :class:`extended`."""

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return self.name


_extended_by_name: dict[str, ExtendedDType] = {}


def register_extended_dtype(dt: ExtendedDType) -> ExtendedDType:
    """Make :func:`dtype_from_short_name` recognise ``dt`` by its name; returns ``dt``."""
    if not isinstance(dt, ExtendedDType):
        raise TypeError(f"register_extended_dtype expects an ExtendedDType, got {dt!r}")
    _extended_by_name[str(dt)] = dt
    return dt


def _is_extended(x: Any) -> bool:
    return isinstance(x, ExtendedDType) or (isinstance(x, type) and issubclass(x, extended))


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
        return canonicalize_dtype(dt)
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
    gives a ``UserWarning`` and its 32-bit counterpart.
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
        warnings.warn(
            f"Explicitly requested dtype {dt}{where} is not available with x64 mode off, "
            f"so {canonical} is used instead. To get {dt}, set the jax_enable_x64 option "
            "or the JAX_ENABLE_X64 environment variable.",
            UserWarning,
            stacklevel=2,
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


# ---------------------------------------------------------------------------------------
# Type promotion
# ---------------------------------------------------------------------------------------


# Lattice node of each strong dtype (looked up because np.dtype.name is slow).
_NODE_NAMES: dict[np.dtype, str] = {dt: dt.name for dt in ALL_DTYPES}


def _node_name(dt: Any) -> str:
    if isinstance(dt, np.dtype):
        name = _NODE_NAMES.get(dt)
        if name is not None:
            return name
        return "float0" if dt == float0 else dt.name
    return str(dt)


_DTYPE_OF_NODE = {name: dt for dt, name in _NODE_NAMES.items()}
_WEAK_NODE_OF_CATEGORY = {"i": "int", "u": "int", "f": "float", "c": "complex"}
_CATEGORY_OF_WEAK_NODE = {"int": "i", "float": "f", "complex": "c"}


def _weak_node(dt: np.dtype) -> str:
    """The node of a weakly typed value: its kind's weak node (weak bool stays bool)."""
    return _WEAK_NODE_OF_CATEGORY.get(_category(dt)) or _node_name(dt)


def _operand(x: Any) -> tuple[Any, bool]:
    """(canonical dtype, weak?) of one argument of result_type."""
    if x is None:
        return default_float_dtype(), False
    weak = x is int or x is float or x is complex or is_weakly_typed(x)
    return dtype(x, canonicalize=True), weak


@functools.lru_cache(maxsize=1024)
def _join(nodes: frozenset[str], mode: str, x64: bool, weak: bool) -> tuple[np.dtype, bool]:
    """(canonical dtype, weak?) of the join of ``nodes``; ``weak`` forces a weak answer."""
    joined = least_upper_bound(nodes, mode=mode, x64=x64)
    defaults = _DEFAULTS_64 if x64 else _DEFAULTS_32
    if joined in _CATEGORY_OF_WEAK_NODE:
        return defaults[_CATEGORY_OF_WEAK_NODE[joined]], True
    dt = _DTYPE_OF_NODE[joined]
    return (dt if x64 else _TO_32_BIT.get(dt, dt)), weak


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The dtype JAX gives the result of an operation on ``args``.

    ``args`` may be values (arrays, Python or NumPy scalars, objects with ``.dtype`` and
    optionally ``.weak_type``), dtypes, scalar types or dtype names; ``None`` means the
    default float dtype. A weakly typed result gets the default dtype of its kind. With
    ``return_weak_type_flag=True``, returns ``(dtype, weak_type)``.
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    dts, weaks = zip(*(_operand(arg) for arg in args), strict=True)
    first = dts[0]
    if len(args) == 1:
        out, weak = first, weaks[0]
    elif all(type(d) is type(first) and d == first for d in dts) and not all(weaks):
        out, weak = first, False
    else:
        mode = get_numpy_dtype_promotion()
        all_weak = all(weaks) and mode == "standard"
        if all_weak:
            # Join the strong counterparts, then make the answer weak.
            nodes = frozenset(_node_name(d) for d in dts)
        else:
            pairs = zip(dts, weaks, strict=True)
            nodes = frozenset(_weak_node(d) if w else _node_name(d) for d, w in pairs)
        out, weak = _join(nodes, mode, x64_enabled(), all_weak)
    category = _category(out)
    weak = weak and category in ("i", "u", "f", "c")
    if weak:
        # A weak result takes the default dtype of its kind.
        out = _default_dtype(category)
    return (out, weak) if return_weak_type_flag else out


def promote_types(a: Any, b: Any) -> np.dtype:
    """``jnp.promote_types``: the dtype two dtypes promote to, not canonicalized.

    The Python types ``int``, ``float`` and ``complex`` are weak (``promote_types('uint8',
    int)`` is uint8); on their own they give int64, float64 and complex128.
    """
    nodes = {_promote_types_node(a), _promote_types_node(b)}
    joined = least_upper_bound(nodes, mode=get_numpy_dtype_promotion(), x64=x64_enabled())
    return np.dtype({"int": int64, "float": float64, "complex": complex128}.get(joined, joined))


def _promote_types_node(x: Any) -> str:
    for weak_type in _WEAK_TYPES:
        if x is weak_type:
            return weak_type.__name__
    return _node_name(np.dtype(x))


def safe_to_cast(input_dtype_or_value: Any, output_dtype_or_value: Any) -> bool:
    """Whether promoting the input with the output's dtype gives the output's dtype.

    Raises ``TypePromotionError`` if the two do not promote at all.
    """
    in_dtype = dtype(input_dtype_or_value, canonicalize=True)
    out_dtype = dtype(output_dtype_or_value, canonicalize=True)
    if in_dtype == out_dtype:
        return True
    return result_type(input_dtype_or_value, out_dtype) == out_dtype


# ---------------------------------------------------------------------------------------
# Subtypes, kinds, finfo / iinfo and conversions between kinds
# ---------------------------------------------------------------------------------------

_FLOAT_PARENTS = frozenset({np.floating, np.inexact, np.number, np.generic})
_SIGNED_PARENTS = frozenset({np.signedinteger, np.integer, np.number, np.generic})
_UNSIGNED_PARENTS = frozenset({np.unsignedinteger, np.integer, np.number, np.generic})
# ml_dtypes' scalar types are not subclasses of np.floating etc.; these are their parents.
_CUSTOM_PARENTS: dict[type, frozenset[type]] = {
    **{dt.type: _FLOAT_PARENTS for dt in CUSTOM_FLOAT_DTYPES},
    **{dt.type: _SIGNED_PARENTS for dt in SUBBYTE_INT_DTYPES if _category(dt) == "i"},
    **{dt.type: _UNSIGNED_PARENTS for dt in SUBBYTE_INT_DTYPES if _category(dt) == "u"},
}


def _scalar_type(x: Any) -> Any:
    """The scalar type of a dtype-like, or the ExtendedDType itself."""
    if isinstance(x, ExtendedDType):
        return x
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    return np.dtype(x).type


def issubdtype(a: Any, b: Any) -> bool:
    """``np.issubdtype`` that also knows ml_dtypes types (bfloat16 is a np.floating, int4
    a np.signedinteger, ...) and extended dtypes (``issubdtype(key, extended)``)."""
    a, b = _scalar_type(a), _scalar_type(b)
    try:
        return _issubdtype_cached(a, b)
    except TypeError:  # an unhashable extended dtype
        return _issubdtype(a, b)


def _issubdtype(a: Any, b: Any) -> bool:
    if isinstance(b, type) and issubclass(b, extended):
        a_type = a.type if isinstance(a, ExtendedDType) else a
        return issubclass(a_type, b)
    if isinstance(b, ExtendedDType):
        return isinstance(a, ExtendedDType) and a == b
    if isinstance(a, ExtendedDType):
        a = a.type
    if a in _CUSTOM_PARENTS:
        return b is a or b in _CUSTOM_PARENTS[a]
    return bool(np.issubdtype(a, b))


_issubdtype_cached = functools.lru_cache(maxsize=1024)(_issubdtype)

_KINDS: dict[str, frozenset[np.dtype]] = {
    "bool": frozenset(BOOL_DTYPES),
    "signed integer": frozenset(SIGNED_DTYPES),
    "unsigned integer": frozenset(UNSIGNED_DTYPES),
    "integral": frozenset(INT_DTYPES),
    "real floating": frozenset(FLOAT_DTYPES),
    "complex floating": frozenset(COMPLEX_DTYPES),
    "numeric": frozenset(INT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES),
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """``jnp.isdtype`` (array API): whether ``dtype`` is of ``kind``, a kind name
    (``'bool'``, ``'signed integer'``, ``'unsigned integer'``, ``'integral'``,
    ``'real floating'``, ``'complex floating'``, ``'numeric'``), a dtype, or a tuple of
    those. Extended dtypes only match themselves."""
    the_dtype = dtype if isinstance(dtype, ExtendedDType) else np.dtype(dtype)
    matches: set[Any] = set()
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str) and k in _KINDS:
            matches |= _KINDS[k]
        elif isinstance(k, ExtendedDType):
            matches.add(k)
        else:
            try:
                matches.add(np.dtype(k))
            except TypeError as err:
                if isinstance(k, str):
                    raise ValueError(
                        f"Unrecognized kind={k!r}: expected one of {list(_KINDS)} or a dtype name."
                    ) from err
                raise TypeError(
                    f"Expected kind to be a dtype, a kind name or a tuple of those; got {k!r}"
                ) from err
    return any(type(m) is type(the_dtype) and m == the_dtype for m in matches)


# JAX uses ml_dtypes' finfo and iinfo as they are: they know every ml_dtypes type.
finfo = ml_dtypes.finfo
iinfo = ml_dtypes.iinfo


def itemsize_bits(dtype: Any) -> int:
    """Bits per element (4 for int4, 6 for float6_e2m3fn, 8 for bool)."""
    if dtype is None:
        raise ValueError("itemsize_bits needs a dtype, got None.")
    category = "" if _is_extended(dtype) else _category(np.dtype(dtype))
    if category == "b":
        return 8
    if category in ("i", "u"):
        return int(iinfo(dtype).bits)
    if category == "f":
        return int(finfo(dtype).bits)
    if category == "c":
        return 2 * int(finfo(dtype).bits)
    raise ValueError(f"itemsize_bits: {dtype} is not a boolean or numeric dtype.")


_NO_INF = frozenset(_dtypes(float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2fnuz))


def supports_inf(dtype: Any) -> bool:
    """Whether the dtype is inexact and can hold infinity, as JAX 0.10.2 decides it
    (JAX answers True for float4/float6/float8_e8m0fnu, which cannot)."""
    dt = np.dtype(dtype)
    return dt not in _NO_INF and issubdtype(dt, np.inexact)


def to_numeric_dtype(dtype: Any) -> np.dtype:
    """bool becomes int32; any other dtype is returned unchanged."""
    dt = np.dtype(dtype)
    return np.dtype(int32) if dt == np.dtype(bool) else dt


def to_inexact_dtype(dtype: Any) -> np.dtype:
    """bool and integers up to 32 bits become float32, (u)int64 becomes float64; inexact
    dtypes are returned unchanged. Not canonicalized."""
    dt = np.dtype(dtype)
    category = _category(dt)
    if category in ("b", "i", "u"):
        wide = dt in (np.dtype(int64), np.dtype(uint64))
        return np.dtype(float64) if wide else np.dtype(float32)
    return dt


def to_floating_dtype(dtype: Any) -> np.dtype:
    """Like :func:`to_inexact_dtype`, but complex dtypes give their real part's dtype."""
    return np.dtype(finfo(to_inexact_dtype(dtype)).dtype)


def to_complex_dtype(dtype: Any) -> np.dtype:
    """complex128 for float64/complex128 (and (u)int64), complex64 for everything else."""
    wide = to_inexact_dtype(dtype) in (np.dtype(float64), np.dtype(complex128))
    return np.dtype(complex128) if wide else np.dtype(complex64)


# ---------------------------------------------------------------------------------------
# Short names, as Jaxprs print them: f32, bf16, i4, u8, c64, f8_e4m3fn, bool, key<fry>
# ---------------------------------------------------------------------------------------


def _abbreviate(name: str) -> str:
    for long, short in (("complex", "c"), ("float", "f"), ("uint", "u"), ("int", "i")):
        name = name.replace(long, short)
    return name


_SHORT_NAMES: dict[np.dtype, str] = {dt: _abbreviate(dt.name) for dt in ALL_DTYPES}
_FROM_SHORT_NAME: dict[str, np.dtype] = {
    **{short: dt for dt, short in _SHORT_NAMES.items()},
    "float0": float0,
}


def short_dtype_name(dtype: Any) -> str:
    """The dtype's name as a Jaxpr prints it: ``f32``, ``bf16``, ``i4`` (int4), ``u8``,
    ``c64``, ``f8_e4m3fn``, ``bool``, ``float0``; an extended dtype prints its name."""
    if isinstance(dtype, ExtendedDType):
        return str(dtype)
    dt = np.dtype(dtype)
    if dt == float0:
        return "float0"
    return _SHORT_NAMES.get(dt) or _abbreviate(dt.name)


def dtype_from_short_name(name: str) -> np.dtype | ExtendedDType:
    """The inverse of :func:`short_dtype_name`: ``'f32'`` gives float32, ``'i4'`` int4.

    Extended dtypes are found by name once registered with
    :func:`register_extended_dtype`. Raises ``ValueError`` for an unknown name.
    """
    found = _FROM_SHORT_NAME.get(name)
    if found is None:
        found = _extended_by_name.get(name)
    if found is None:
        raise ValueError(
            f"unknown short dtype name {name!r}; expected one of "
            f"{sorted(_FROM_SHORT_NAME)} or a registered extended dtype name."
        )
    return found
