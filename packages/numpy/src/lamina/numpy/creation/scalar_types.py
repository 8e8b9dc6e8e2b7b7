"""Scalar types, dtype queries and constants of ``jax.numpy``.

``jnp.float32`` and its siblings are not NumPy scalar types: calling one makes a lamina
array (``jnp.float32(3)`` is ``Array(3., dtype=float32)``), while comparing, hashing,
``np.dtype(jnp.float32)`` and ``isinstance(np.float32(1), jnp.float32)`` behave as for
the NumPy type they stand for. The abstract types (``number``, ``floating``, ...),
``dtype``, ``iterable``, ``can_cast`` and the constants are NumPy's own, as in JAX.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from lamina.interpreters import Array
from lamina.ir import dtypes
from lamina.numpy.base.arguments import canonicalize_axes, is_arraylike
from lamina.numpy.creation.conversion import asarray

__all__ = [
    "ComplexWarning",
    "bfloat16",
    "bool",
    "bool_",
    "can_cast",
    "cdouble",
    "character",
    "complex64",
    "complex128",
    "complex_",
    "complexfloating",
    "csingle",
    "double",
    "dtype",
    "e",
    "euler_gamma",
    "finfo",
    "flexible",
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
    "float_",
    "floating",
    "generic",
    "iinfo",
    "inexact",
    "inf",
    "int1",
    "int2",
    "int4",
    "int8",
    "int16",
    "int32",
    "int64",
    "int_",
    "integer",
    "iscomplexobj",
    "isdtype",
    "isrealobj",
    "isscalar",
    "issubdtype",
    "iterable",
    "nan",
    "ndarray",
    "ndim",
    "newaxis",
    "number",
    "object_",
    "pi",
    "promote_types",
    "result_type",
    "shape",
    "signedinteger",
    "single",
    "size",
    "uint",
    "uint1",
    "uint2",
    "uint4",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "unsignedinteger",
]

# --------------------------------------------------------------------- NumPy's own names

ComplexWarning = np.exceptions.ComplexWarning
character, complexfloating, flexible = np.character, np.complexfloating, np.flexible
floating, generic, inexact, integer = np.floating, np.generic, np.inexact, np.integer
number, object_ = np.number, np.object_
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger
dtype = np.dtype
iterable = np.iterable
can_cast = np.can_cast
e, euler_gamma, inf, nan, pi = np.e, np.euler_gamma, np.inf, np.nan, np.pi
newaxis = None
finfo = dtypes.finfo
iinfo = dtypes.iinfo
ndarray = Array  # isinstance(x, jnp.ndarray) holds for arrays and tracers


# --------------------------------------------------------------------- scalar types


class _ScalarType(type):
    """The type of ``jnp.float32`` and the other scalar types: a class that makes
    arrays when called and otherwise stands in for its NumPy scalar type."""

    dtype: np.dtype

    def __call__(cls, x):
        return asarray(x, dtype=cls.dtype)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other):
        return not cls == other

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)


def _scalar_type(numpy_type, name: str | None = None) -> _ScalarType:
    dt = np.dtype(numpy_type)
    name = name or dt.name
    return _ScalarType(name, (), {"dtype": dt, "__module__": "lamina.numpy", "__qualname__": name})


# Shadows the builtin in this module: nothing below calls bool().
bool_ = bool = _scalar_type(np.bool_, "bool")
int1, int2, int4 = map(_scalar_type, (dtypes.int1, dtypes.int2, dtypes.int4))
int8, int16, int32, int64 = map(_scalar_type, (np.int8, np.int16, np.int32, np.int64))
uint1, uint2, uint4 = map(_scalar_type, (dtypes.uint1, dtypes.uint2, dtypes.uint4))
uint8, uint16, uint32, uint64 = map(_scalar_type, (np.uint8, np.uint16, np.uint32, np.uint64))
bfloat16 = _scalar_type(dtypes.bfloat16)
float16, float32, float64 = map(_scalar_type, (np.float16, np.float32, np.float64))
complex64, complex128 = map(_scalar_type, (np.complex64, np.complex128))
float4_e2m1fn = _scalar_type(dtypes.float4_e2m1fn)
float6_e2m3fn = _scalar_type(dtypes.float6_e2m3fn)
float6_e3m2fn = _scalar_type(dtypes.float6_e3m2fn)
float8_e3m4 = _scalar_type(dtypes.float8_e3m4)
float8_e4m3 = _scalar_type(dtypes.float8_e4m3)
float8_e4m3b11fnuz = _scalar_type(dtypes.float8_e4m3b11fnuz)
float8_e4m3fn = _scalar_type(dtypes.float8_e4m3fn)
float8_e4m3fnuz = _scalar_type(dtypes.float8_e4m3fnuz)
float8_e5m2 = _scalar_type(dtypes.float8_e5m2)
float8_e5m2fnuz = _scalar_type(dtypes.float8_e5m2fnuz)
float8_e8m0fnu = _scalar_type(dtypes.float8_e8m0fnu)

# The NumPy aliases name 64-bit types (as NumPy's defaults do on 64-bit platforms); with
# x64 off, the arrays they make are canonicalized to 32 bits.
int_, uint, float_, complex_ = int64, uint64, float64, complex128
single, double, csingle, cdouble = float32, float64, complex64, complex128


def _as_numpy_type(x):
    """Our scalar types as their NumPy types; anything else unchanged."""
    return x.dtype.type if isinstance(x, _ScalarType) else x


# --------------------------------------------------------------------- dtype queries


def issubdtype(arg1, arg2) -> bool:
    """Whether ``arg1`` is a subtype of ``arg2`` in NumPy's type hierarchy, which JAX
    extends with bfloat16, the float8 types and int4 (``issubdtype(bfloat16,
    floating)`` is true)."""
    return dtypes.issubdtype(_as_numpy_type(arg1), _as_numpy_type(arg2))


def isdtype(dtype, kind) -> bool:
    """Array API ``isdtype``: whether ``dtype`` is of ``kind`` (a kind name such as
    ``'real floating'``, a dtype, or a tuple of those)."""
    kinds = tuple(map(_as_numpy_type, kind)) if isinstance(kind, tuple) else _as_numpy_type(kind)
    return dtypes.isdtype(_as_numpy_type(dtype), kinds)


def _dtype_of_promotable(x):
    if x is int or x is float or x is complex:
        return x
    x = _as_numpy_type(x)
    return x if isinstance(x, (type, str, np.dtype)) else dtypes.dtype(x)


def promote_types(a, b) -> np.dtype:
    """The dtype ``a`` and ``b`` promote to under JAX's type lattice (not NumPy's):
    ``promote_types('int8', 'uint8')`` is int16, ``promote_types(bfloat16, float16)`` is
    float32. The Python types ``int``, ``float`` and ``complex`` are weak."""
    return dtypes.promote_types(_dtype_of_promotable(a), _dtype_of_promotable(b))


def result_type(*args) -> np.dtype:
    """The dtype of an operation on ``args`` (values, dtypes or scalar types) under
    JAX's promotion rules, weak Python scalars included; canonical for the x64 mode."""
    return dtypes.result_type(*map(_as_numpy_type, args))


# --------------------------------------------------------------------- object queries


def isscalar(element) -> bool:
    """True for scalars and for zero-dimensional arrays (lamina or NumPy), since a
    scalar becomes a zero-dimensional array under ``jit``; False for everything else."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, Array)):
        return element.ndim == 0
    if hasattr(element, "__jax_array__"):
        return np.ndim(element.__jax_array__()) == 0
    return False


def iscomplexobj(x) -> bool:
    """Whether ``x`` has a complex type (its value is not looked at)."""
    if isinstance(x, (complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (int, float, str, np.generic)):
        return False
    x_dtype = getattr(x, "dtype", None)
    if not isinstance(x_dtype, np.dtype):
        x_dtype = asarray(x).dtype
    return issubdtype(x_dtype, np.complexfloating)


def isrealobj(x) -> bool:
    """``not iscomplexobj(x)``."""
    return not iscomplexobj(x)


def _warn_if_not_arraylike(fun_name: str, a) -> None:
    # JAX still accepts lists here but warns that it will stop doing so.
    if not is_arraylike(a):
        warnings.warn(
            f"{fun_name} requires ndarray or scalar arguments, got {type(a)} at position 0. "
            "In a future JAX release this will be an error.",
            DeprecationWarning,
            stacklevel=3,
        )


def _unwrap(a):
    method = getattr(a, "__jax_array__", None)
    return a if method is None else method()


def ndim(a) -> int:
    """The number of dimensions of ``a``."""
    if hasattr(a, "ndim"):
        return a.ndim
    _warn_if_not_arraylike("ndim", a)
    return np.ndim(_unwrap(a))


def shape(a) -> tuple[int, ...]:
    """The shape of ``a``."""
    if hasattr(a, "shape"):
        return tuple(a.shape)
    _warn_if_not_arraylike("shape", a)
    return np.shape(_unwrap(a))


def size(a, axis=None) -> int:
    """The number of elements of ``a``, or along ``axis`` (an int or a sequence)."""
    _warn_if_not_arraylike("size", a)
    if axis is None and hasattr(a, "size"):
        return a.size
    a_shape = shape(a)
    if axis is None:
        return math.prod(a_shape)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis: {axis}")
    return math.prod(a_shape[i] for i in canonicalize_axes(axes, len(a_shape)))
