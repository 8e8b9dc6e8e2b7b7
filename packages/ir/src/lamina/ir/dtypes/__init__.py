"""Element types: the dtypes lamina supports, x64 mode, canonicalization, type promotion,
subtype queries, ``finfo``/``iinfo`` and the short names Jaxprs print.

Everything here follows JAX 0.10.2 (``jax.dtypes`` and ``jax.numpy``'s dtype functions).
Import from this package; its modules hold the parts:

* :mod:`lamina.ir.dtypes.kinds`: the scalar types and dtype groups, extended dtypes,
  ``issubdtype``/``isdtype``, ``finfo``/``iinfo``, the ``to_*_dtype`` conversions and
  short names;
* :mod:`lamina.ir.dtypes.canonicalization`: x64 mode, default dtypes, weak types,
  :func:`dtype` and :func:`canonicalize_dtype`;
* :mod:`lamina.ir.dtypes.promotion`: the promotion lattice over dtype names.

This module itself holds the promotion mode and the functions that apply the lattice to
values: :func:`result_type`, :func:`promote_types`, :func:`safe_to_cast`, and exports
everything public from the modules above.

Two process-wide settings are there for higher layers to flip:

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

import contextlib
import contextvars
import functools
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from lamina.ir.dtypes.canonicalization import (
    _DEFAULTS_32,
    _DEFAULTS_64,
    _WEAK_TYPES,
    _bool_from_env,  # noqa: F401  (tests read it here)
    _default_dtype,
    canonicalize_dtype,
    check_and_canonicalize_user_dtype,
    check_valid_dtype,
    coerce_to_array,
    default_complex_dtype,
    default_float_dtype,
    default_int_dtype,
    default_uint_dtype,
    dtype,
    enable_x64,
    explicit_dtype,
    explicit_x64_mode,
    get_explicit_x64_mode,
    is_python_scalar,
    is_weakly_typed,
    python_scalar_types,
    register_uncanonicalized_type,
    register_weak_scalar_type,
    scalar_type_of,
    scalar_type_to_dtype,
    set_explicit_x64_mode,
    set_x64,
    x64_enabled,
)
from lamina.ir.dtypes.kinds import (
    _TO_32_BIT,
    ALL_DTYPES,
    BOOL_DTYPES,
    COMPLEX_DTYPES,
    CUSTOM_FLOAT_DTYPES,
    FLOAT4_DTYPES,
    FLOAT6_DTYPES,
    FLOAT8_DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    SIGNED_DTYPES,
    SUBBYTE_INT_DTYPES,
    UNSIGNED_DTYPES,
    DType,
    DTypeLike,
    ExtendedDType,
    _category,
    bfloat16,
    bool_,
    complex64,
    complex128,
    dtype_from_short_name,
    extended,
    finfo,
    float0,
    float4_e2m1fn,
    float6_e2m3fn,
    float6_e3m2fn,
    float8_e3m4,
    float8_e4m3,
    float8_e4m3b11fnuz,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    float16,
    float32,
    float64,
    iinfo,
    int1,
    int2,
    int4,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    issubdtype,
    itemsize_bits,
    prng_key,
    register_extended_dtype,
    short_dtype_name,
    supports_inf,
    to_complex_dtype,
    to_floating_dtype,
    to_inexact_dtype,
    to_numeric_dtype,
    uint1,
    uint2,
    uint4,
    uint8,
    uint16,
    uint32,
    uint64,
)
from lamina.ir.dtypes.primal_tangent import (  # noqa: F401  (for lamina.experimental)
    PrimalTangentDType,
    primal_tangent_dtype,
)
from lamina.ir.dtypes.promotion import (
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
    "explicit_dtype",
    "explicit_x64_mode",
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
    "get_explicit_x64_mode",
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
    "set_explicit_x64_mode",
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
# The promotion mode
# ---------------------------------------------------------------------------------------


def _check_promotion_mode(mode: Any) -> str:
    if mode not in PROMOTION_MODES:
        raise ValueError(
            f"jax_numpy_dtype_promotion must be one of {PROMOTION_MODES}, got {mode!r}"
        )
    return str(mode)


_promotion_global = _check_promotion_mode(
    os.environ.get("JAX_NUMPY_DTYPE_PROMOTION", "standard").lower()
)
_promotion_local: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "lamina_numpy_dtype_promotion", default=None
)


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
def _join(
    nodes: frozenset[str], mode: str, x64: bool, weak: bool, keep_64: bool = False
) -> tuple[np.dtype, bool]:
    """(canonical dtype, weak?) of the join of ``nodes``; ``weak`` forces a weak answer.
    ``keep_64`` (explicit 64-bit dtypes allowed) keeps a 64-bit join with x64 off."""
    joined = least_upper_bound(nodes, mode=mode, x64=x64)
    defaults = _DEFAULTS_64 if x64 else _DEFAULTS_32
    if joined in _CATEGORY_OF_WEAK_NODE:
        return defaults[_CATEGORY_OF_WEAK_NODE[joined]], True
    dt = _DTYPE_OF_NODE[joined]
    return (dt if x64 or keep_64 else _TO_32_BIT.get(dt, dt)), weak


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
        x64 = x64_enabled()
        keep_64 = not x64 and get_explicit_x64_mode() == "allow"
        out, weak = _join(nodes, mode, x64, all_weak, keep_64)
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
