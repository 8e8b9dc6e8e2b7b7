"""The dtypes lamina supports, grouped by kind, and what can be asked about a dtype's kind.

Here are the scalar types (NumPy's and ml_dtypes'), the dtype groups (``INT_DTYPES``,
``FLOAT8_DTYPES``, ...), extended dtypes (PRNG keys and the like), subtype queries
(:func:`issubdtype`, :func:`isdtype`), ``finfo``/``iinfo``, conversions between kinds
(``to_*_dtype``) and the short names Jaxprs print (``f32``, ``bf16``, ``key<fry>``).

It depends on nothing else in lamina. Import these names from :mod:`lamina.ir.dtypes`,
which re-exports them.
"""

from __future__ import annotations

import abc
import functools
import re
from typing import Any, ClassVar

import ml_dtypes
import numpy as np

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

    # How one element is stored on the device: an array of this shape and NumPy dtype
    # (``key<fry>`` is ``uint32[2]``). Lowering and execution see only that physical
    # data, with these dimensions appended to every array's shape. A dtype written the
    # JAX way gives them by its ``_rules.physical_element_aval(dtype)``.
    @property
    def physical_element_shape(self) -> tuple[int, ...]:
        rules = getattr(self, "_rules", None)
        return tuple(rules.physical_element_aval(self).shape) if rules is not None else ()

    @property
    def physical_element_dtype(self) -> np.dtype | None:
        rules = getattr(self, "_rules", None)
        return rules.physical_element_aval(self).dtype if rules is not None else None

    # Methods and properties of traced arrays of this dtype, by name, for those the
    # array layers do not install for every tracer.
    array_methods: ClassVar[dict[str, Any]] = {}

    def wrap_physical(self, data):
        """The array of this dtype whose physical data is ``data`` (a concrete array of
        shape ``(*shape, *physical_element_shape)``); higher layers define it."""
        raise NotImplementedError(f"{self.name} arrays cannot be made from physical data")

    @property
    @abc.abstractmethod
    def type(self) -> type:
        """The scalar type: a subclass of :class:`extended`."""

    def __str__(self) -> str:
        return repr(self)  # a dataclass subclass prints its fields, as in JAX

    def __repr__(self) -> str:
        return self.name


_extended_by_name: dict[str, ExtendedDType] = {}
# The key dtypes of JAX 0.10.2's PRNG implementations (threefry, philox, rbg).
_KEY_NAME = re.compile(r"key<(?:fry|fry4|phx2|phx4|rbg|urbg)>", re.ASCII)


class PrintedKeyDType(ExtendedDType):
    """A PRNG key dtype known only by its printed name (``key<fry>``): what Jaxpr text
    names when the layer defining the key's implementation is not loaded. Equal to
    another of the same name."""

    def __init__(self, name: str):
        self.name = name

    @property
    def type(self) -> type:
        return prng_key

    def __eq__(self, other):
        return type(other) is PrintedKeyDType and other.name == self.name

    def __hash__(self):
        return hash((PrintedKeyDType, self.name))


def register_extended_dtype(dt: ExtendedDType) -> ExtendedDType:
    """Make :func:`dtype_from_short_name` recognise ``dt`` by its name; returns ``dt``."""
    if not isinstance(dt, ExtendedDType):
        raise TypeError(f"register_extended_dtype expects an ExtendedDType, got {dt!r}")
    _extended_by_name[str(dt)] = dt
    return dt


def _is_extended(x: Any) -> bool:
    return isinstance(x, ExtendedDType) or (isinstance(x, type) and issubclass(x, extended))


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
    if found is None and _KEY_NAME.fullmatch(name):
        found = PrintedKeyDType(name)
    if found is None:
        raise ValueError(
            f"unknown short dtype name {name!r}; expected one of "
            f"{sorted(_FROM_SHORT_NAME)} or a registered extended dtype name."
        )
    return found
