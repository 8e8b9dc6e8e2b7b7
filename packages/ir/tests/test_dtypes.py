"""lamina.ir.dtypes: supported dtypes, x64 mode, canonicalization, dtype(), weak types,
issubdtype/isdtype, finfo/iinfo, short names, extended dtypes.

Expected values marked "recorded" were printed by JAX 0.10.2.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import warnings

import ml_dtypes
import numpy as np
import pytest

from lamina.ir import dtypes
from lamina.ir.dtypes import (
    ExtendedDType,
    canonicalize_dtype,
    dtype_from_short_name,
    enable_x64,
    issubdtype,
    short_dtype_name,
)

# Recorded: every dtype JAX 0.10.2 supports, in its order, with its Jaxpr short name.
SHORT_NAMES = {
    "bool": "bool",
    "uint1": "u1",
    "uint2": "u2",
    "uint4": "u4",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "int1": "i1",
    "int2": "i2",
    "int4": "i4",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "float4_e2m1fn": "f4_e2m1fn",
    "float6_e2m3fn": "f6_e2m3fn",
    "float6_e3m2fn": "f6_e3m2fn",
    "float8_e3m4": "f8_e3m4",
    "float8_e4m3": "f8_e4m3",
    "float8_e8m0fnu": "f8_e8m0fnu",
    "float8_e4m3b11fnuz": "f8_e4m3b11fnuz",
    "float8_e4m3fn": "f8_e4m3fn",
    "float8_e4m3fnuz": "f8_e4m3fnuz",
    "float8_e5m2": "f8_e5m2",
    "float8_e5m2fnuz": "f8_e5m2fnuz",
    "bfloat16": "bf16",
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "complex64": "c64",
    "complex128": "c128",
}
ALL = [np.dtype(name) for name in SHORT_NAMES]


@pytest.fixture(autouse=True)
def _x64_off_standard_promotion():
    """Run every test from x64 off and standard promotion, whatever the environment says."""
    saved = dtypes.x64_enabled(), dtypes.get_numpy_dtype_promotion()
    dtypes.set_x64(False)
    dtypes.set_numpy_dtype_promotion("standard")
    yield
    dtypes.set_x64(saved[0])
    dtypes.set_numpy_dtype_promotion(saved[1])


class Key(ExtendedDType):
    """A stand-in for the PRNG key dtypes the random layer defines."""

    type = dtypes.prng_key

    def __init__(self, tag):
        self.name = f"key<{tag}>"

    def __eq__(self, other):
        return isinstance(other, Key) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


# --- the dtypes themselves -------------------------------------------------------------


def test_all_dtypes_in_jax_order():
    assert list(dtypes.ALL_DTYPES) == ALL
    assert len(set(dtypes.ALL_DTYPES)) == 32


def test_scalar_type_names():
    for dt in ALL:
        scalar_type = getattr(dtypes, dt.name if dt.name != "bool" else "bool_")
        assert np.dtype(scalar_type) == dt
        assert issubclass(scalar_type, np.generic)
    assert dtypes.bfloat16 is ml_dtypes.bfloat16
    assert dtypes.int4 is ml_dtypes.int4
    assert dtypes.float8_e4m3fn is ml_dtypes.float8_e4m3fn


def test_dtype_groups():
    names = lambda group: [dt.name for dt in group]  # noqa: E731
    assert names(dtypes.SUBBYTE_INT_DTYPES) == ["uint1", "uint2", "uint4", "int1", "int2", "int4"]
    assert names(dtypes.FLOAT8_DTYPES) == [n for n in SHORT_NAMES if n.startswith("float8")]
    assert names(dtypes.COMPLEX_DTYPES) == ["complex64", "complex128"]
    assert set(dtypes.INT_DTYPES) == set(dtypes.SIGNED_DTYPES) | set(dtypes.UNSIGNED_DTYPES)
    assert names(dtypes.CUSTOM_FLOAT_DTYPES)[-1] == "bfloat16"
    assert len(dtypes.FLOAT_DTYPES) == 15


def test_float0():
    assert dtypes.float0 == np.dtype([("float0", np.void, 0)])
    assert dtypes.float0.itemsize == 0


def test_all_names_exist():
    for name in dtypes.__all__:
        assert hasattr(dtypes, name), name


# --- x64 mode and the promotion mode ---------------------------------------------------


def test_enable_x64_nests_and_restores():
    assert dtypes.x64_enabled() is False
    with enable_x64():
        assert dtypes.x64_enabled() is True
        with enable_x64(False):
            assert dtypes.x64_enabled() is False
        assert dtypes.x64_enabled() is True
    assert dtypes.x64_enabled() is False


def test_set_x64():
    try:
        dtypes.set_x64(True)
        assert dtypes.x64_enabled()
        assert dtypes.default_int_dtype() == np.int64
        with enable_x64(False):
            assert not dtypes.x64_enabled()
    finally:
        dtypes.set_x64(False)
    assert not dtypes.x64_enabled()


def test_enable_x64_is_local_to_the_thread():
    seen = []
    with enable_x64():
        thread = threading.Thread(target=lambda: seen.append(dtypes.x64_enabled()))
        thread.start()
        thread.join()
    assert seen == [False]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        *[("1", True), ("true", True), ("Yes", True), ("on", True), ("t", True), ("y", True)],
        *[("0", False), ("false", False), ("NO", False), ("off", False), ("f", False)],
    ],
)
def test_x64_environment_variable(monkeypatch, value, expected):
    monkeypatch.setenv("JAX_ENABLE_X64", value)
    assert dtypes._bool_from_env("JAX_ENABLE_X64", False) is expected


def test_environment_variables_set_the_defaults():
    code = (
        "from lamina.ir import dtypes; "
        "print(dtypes.x64_enabled(), dtypes.get_numpy_dtype_promotion(), dtypes.dtype(1.0))"
    )
    env = {**os.environ, "JAX_ENABLE_X64": "True", "JAX_NUMPY_DTYPE_PROMOTION": "strict"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["True", "strict", "float64"], out.stderr


def test_x64_environment_variable_bad_value(monkeypatch):
    monkeypatch.setenv("JAX_ENABLE_X64", "maybe")
    with pytest.raises(ValueError, match=r"JAX_ENABLE_X64='maybe' is not a truth value"):
        dtypes._bool_from_env("JAX_ENABLE_X64", False)
    monkeypatch.delenv("JAX_ENABLE_X64")
    assert dtypes._bool_from_env("JAX_ENABLE_X64", False) is False


def test_promotion_mode_settings():
    assert dtypes.get_numpy_dtype_promotion() == "standard"
    with dtypes.numpy_dtype_promotion("strict"):
        assert dtypes.get_numpy_dtype_promotion() == "strict"
    assert dtypes.get_numpy_dtype_promotion() == "standard"
    try:
        dtypes.set_numpy_dtype_promotion("strict")
        assert dtypes.get_numpy_dtype_promotion() == "strict"
    finally:
        dtypes.set_numpy_dtype_promotion("standard")
    for bad in ("loose", None):
        with pytest.raises(ValueError, match=r"must be one of \('standard', 'strict'\)"):
            dtypes.set_numpy_dtype_promotion(bad)
        with (
            pytest.raises(ValueError, match="must be one of"),
            dtypes.numpy_dtype_promotion(bad),
        ):
            pass


def test_default_dtypes():
    assert dtypes.default_int_dtype() == np.int32
    assert dtypes.default_uint_dtype() == np.uint32
    assert dtypes.default_float_dtype() == np.float32
    assert dtypes.default_complex_dtype() == np.complex64
    with enable_x64():
        assert dtypes.default_int_dtype() == np.int64
        assert dtypes.default_uint_dtype() == np.uint64
        assert dtypes.default_float_dtype() == np.float64
        assert dtypes.default_complex_dtype() == np.complex128


# --- canonicalize_dtype and dtype() ----------------------------------------------------


@pytest.mark.parametrize("dt", ALL, ids=str)
def test_canonicalize_dtype(dt):
    narrowed = {"int64": "int32", "uint64": "uint32", "float64": "float32"}
    narrowed["complex128"] = "complex64"
    assert canonicalize_dtype(dt) == np.dtype(narrowed.get(dt.name, dt.name))
    assert canonicalize_dtype(dt.type) == canonicalize_dtype(dt)
    with enable_x64():
        assert canonicalize_dtype(dt) == dt


def test_canonicalize_python_types_and_none():
    # Recorded.
    assert canonicalize_dtype(int) == np.int32
    assert canonicalize_dtype(float) == np.float32
    assert canonicalize_dtype(complex) == np.complex64
    assert canonicalize_dtype(bool) == np.bool_
    assert canonicalize_dtype(None) == np.float32
    with enable_x64():
        assert canonicalize_dtype(int) == np.int64
        assert canonicalize_dtype(None) == np.float64


def test_canonicalize_bad_input():
    with pytest.raises(TypeError, match="dtype 'bf16' not understood"):
        canonicalize_dtype("bf16")
    with pytest.raises(TypeError, match="not understood"):
        canonicalize_dtype(3)


def test_canonicalize_extended():
    key = Key("fry")
    with pytest.raises(ValueError, match=r"extended dtype key<fry>; pass allow_extended_dtype"):
        canonicalize_dtype(key)
    assert canonicalize_dtype(key, allow_extended_dtype=True) is key


@pytest.mark.parametrize("x64", [False, True])
def test_dtype_of_python_scalars_follows_x64(x64):
    # Recorded: Python scalars and their types give the current defaults.
    i, f, c = ("int64", "float64", "complex128") if x64 else ("int32", "float32", "complex64")
    with enable_x64(x64):
        for x, expected in [(3, i), (int, i), (2**40, i), (3.0, f), (float, f), (3j, c)]:
            assert dtypes.dtype(x) == np.dtype(expected)
            assert dtypes.dtype(x, canonicalize=True) == np.dtype(expected)
        assert dtypes.dtype(True) == np.bool_
        assert dtypes.dtype(bool) == np.bool_


@pytest.mark.parametrize(
    ("x", "exact", "canonical_x32"),
    [
        (np.int64, "int64", "int32"),
        ("float64", "float64", "float32"),
        (np.dtype("complex128"), "complex128", "complex64"),
        (np.uint64(3), "uint64", "uint32"),
        (np.array(1.0), "float64", "float32"),
        (np.array(1, "int16"), "int16", "int16"),
        ("bfloat16", "bfloat16", "bfloat16"),
        ("f4", "float32", "float32"),
        ("float8_e4m3fn", "float8_e4m3fn", "float8_e4m3fn"),
        (ml_dtypes.int4, "int4", "int4"),
        (np.bool_(True), "bool", "bool"),
        (np.int8(1), "int8", "int8"),
    ],
)
def test_dtype_of_numpy_things(x, exact, canonical_x32):
    # The canonical column is recorded from jax._src.dtypes.dtype.
    assert dtypes.dtype(x) == np.dtype(exact)
    assert dtypes.dtype(x, canonicalize=True) == np.dtype(canonical_x32)
    with enable_x64():
        assert dtypes.dtype(x, canonicalize=True) == np.dtype(exact)


def test_dtype_of_objects_with_dtype_attribute():
    class Aval:
        dtype = np.dtype("float64")

    class KeyArray:
        dtype = Key("fry")

    assert dtypes.dtype(Aval()) == np.float64
    assert dtypes.dtype(Aval(), canonicalize=True) == np.float32
    assert dtypes.dtype(KeyArray()) == Key("fry")
    assert dtypes.dtype(Key("fry")) == Key("fry")
    assert dtypes.dtype(dtypes.float0) == dtypes.float0


def test_dtype_errors():
    with pytest.raises(ValueError, match="Invalid argument to dtype: None"):
        dtypes.dtype(None)
    with pytest.raises(TypeError, match=r"Cannot determine dtype of \[1, 2\]"):
        dtypes.dtype([1, 2])
    with pytest.raises(TypeError, match="Cannot determine dtype of <object"):
        dtypes.dtype(object())
    with pytest.raises(TypeError, match="data type 'bf16' not understood"):
        dtypes.dtype("bf16")
    with pytest.raises(TypeError, match=r"dtype <U0, which is not a valid JAX array type"):
        dtypes.dtype("U")
    with pytest.raises(TypeError, match="dtype object, which is not a valid JAX array type"):
        dtypes.dtype(np.array([None]))


def test_uncanonicalized_types_keep_their_dtype():
    class MadeWithX64:
        def __init__(self):
            self.dtype = np.dtype("int64")

    dtypes.register_uncanonicalized_type(MadeWithX64)
    assert dtypes.dtype(MadeWithX64(), canonicalize=True) == np.int64


def test_check_and_canonicalize_user_dtype():
    check = dtypes.check_and_canonicalize_user_dtype
    assert check(float) == np.float32
    assert check("int8") == np.int8
    assert check(Key("fry")) == Key("fry")
    with pytest.warns(UserWarning, match=r"dtype int64 requested in zeros is not available.*int32"):
        assert check("int64", "zeros") == np.int32
    with enable_x64(), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check("int64") == np.int64
    with pytest.raises(ValueError, match="dtype must be specified"):
        check(None)
    with pytest.raises(ValueError, match=r"pass its dtype instead \(dtype=arr.dtype\)"):
        check(np.zeros(3))
    with pytest.raises(TypeError, match="got dtype U in zeros"):
        check("U", "zeros")


def test_check_valid_dtype():
    for dt in [*ALL, dtypes.float0, Key("fry")]:
        dtypes.check_valid_dtype(dt)
    with pytest.raises(TypeError, match="Dtype object is not a valid JAX array type"):
        dtypes.check_valid_dtype(np.dtype(object))


# --- weak types and Python scalars -----------------------------------------------------


def test_is_weakly_typed():
    class Aval:
        def __init__(self, weak):
            self.weak_type = weak

    class Tracer:
        def __init__(self, weak):
            self.aval = Aval(weak)

    for x in (1, 1.0, 1j, Aval(True), Tracer(True)):
        assert dtypes.is_weakly_typed(x), x
    for x in (True, np.int32(1), np.float64(1.0), np.array(1), Aval(False), Tracer(False), int):
        assert not dtypes.is_weakly_typed(x), x


def test_is_python_scalar():
    for x in (True, 1, 1.0, 1j):
        assert dtypes.is_python_scalar(x)
    for x in (np.float64(1.0), np.int32(1), np.array(1), "1", None, int):
        assert not dtypes.is_python_scalar(x)
    assert dtypes.python_scalar_types == {bool, int, float, complex}


def test_registered_weak_scalar_type():
    class Dim:  # like a symbolic dimension size
        pass

    dtypes.register_weak_scalar_type(Dim)
    assert dtypes.is_python_scalar(Dim())
    assert dtypes.is_weakly_typed(Dim())
    assert dtypes.dtype(Dim()) == np.int32
    assert dtypes.result_type(Dim(), "int8") == np.int8
    with pytest.raises(ValueError, match="like must be int, float or complex"):
        dtypes.register_weak_scalar_type(Dim, like=str)


def test_scalar_type_of():
    # Recorded.
    expected = {"b": bool, "i": int, "u": int, "f": float, "c": complex}
    for dt in ALL:
        kind = "f" if dt in dtypes.CUSTOM_FLOAT_DTYPES else dt.kind
        kind = {"V": "i" if dt.name.startswith("int") else "u"}.get(kind, kind)
        assert dtypes.scalar_type_of(np.zeros((), dt)) is expected[kind], dt
    assert dtypes.scalar_type_of(3) is int
    assert dtypes.scalar_type_of(np.float64(1)) is float
    with pytest.raises(TypeError, match="Invalid scalar value"):
        dtypes.scalar_type_of(dtypes.float0)


def test_scalar_type_to_dtype_and_coerce():
    # Recorded.
    assert dtypes.scalar_type_to_dtype(int) == np.int32
    assert dtypes.scalar_type_to_dtype(float, 1e300) == np.float32
    assert dtypes.scalar_type_to_dtype(int, -(2**31)) == np.int32
    with pytest.raises(OverflowError, match="Python int 1099511627776 too large to convert"):
        dtypes.scalar_type_to_dtype(int, 2**40)
    with enable_x64():
        assert dtypes.scalar_type_to_dtype(int, 2**40) == np.int64
    assert dtypes.coerce_to_array(3).dtype == np.int32
    assert dtypes.coerce_to_array(3.0).dtype == np.float32
    assert dtypes.coerce_to_array(3, "int8").dtype == np.int8
    assert dtypes.coerce_to_array(np.float64(3.0)).dtype == np.float64
    with pytest.raises(OverflowError):
        dtypes.coerce_to_array(2**40)


def test_safe_to_cast():
    # Recorded.
    assert dtypes.safe_to_cast("int16", "float32")
    assert dtypes.safe_to_cast(1, "int8")
    assert not dtypes.safe_to_cast("float32", "int16")
    assert not dtypes.safe_to_cast("int8", "uint8")
    assert dtypes.safe_to_cast("float32", "complex64")
    assert not dtypes.safe_to_cast("complex64", "float32")
    with pytest.raises(dtypes.TypePromotionError):
        dtypes.safe_to_cast("int4", "int8")


# --- issubdtype and isdtype ------------------------------------------------------------

CATEGORIES = {
    "generic": np.generic,
    "number": np.number,
    "integer": np.integer,
    "signedinteger": np.signedinteger,
    "unsignedinteger": np.unsignedinteger,
    "inexact": np.inexact,
    "floating": np.floating,
    "complexfloating": np.complexfloating,
    "bool_": np.bool_,
    "extended": dtypes.extended,
    "prng_key": dtypes.prng_key,
    "int": int,
    "float": float,
    "complex": complex,
    "bool": bool,
}
_UNSIGNED = {"generic", "number", "integer", "unsignedinteger"}
_SIGNED = {"generic", "number", "integer", "signedinteger"}
_FLOATING = {"generic", "number", "inexact", "floating"}
_COMPLEX = {"generic", "number", "inexact", "complexfloating"}
# Recorded: the categories each dtype (or type) is a subdtype of.
SUBDTYPE_OF = {
    "bool": {"generic", "bool_", "bool"},
    **dict.fromkeys(["uint1", "uint2", "uint4", "uint8", "uint16", "uint32", "uint64"], _UNSIGNED),
    **dict.fromkeys(["int1", "int2", "int4", "int8", "int16", "int32"], _SIGNED),
    "int64": _SIGNED | {"int"},
    **dict.fromkeys([n for n in SHORT_NAMES if "float" in n and n != "float64"], _FLOATING),
    "float64": _FLOATING | {"float"},
    "complex64": _COMPLEX,
    "complex128": _COMPLEX | {"complex"},
}


@pytest.mark.parametrize("name", list(SHORT_NAMES))
def test_issubdtype_grid(name):
    for form in (np.dtype(name), np.dtype(name).type, name):
        got = {cat for cat, parent in CATEGORIES.items() if issubdtype(form, parent)}
        assert got == SUBDTYPE_OF[name], form


def test_issubdtype_between_dtypes_is_identity():
    # Recorded: no dtype is a subdtype of a different one.
    for a in ALL:
        for b in ALL:
            assert issubdtype(a, b) == (a == b), (a, b)


def test_issubdtype_other_inputs():
    # Recorded.
    row = lambda x: {c for c, p in CATEGORIES.items() if issubdtype(x, p)}  # noqa: E731
    assert row(int) == SUBDTYPE_OF["int64"]
    assert row(float) == SUBDTYPE_OF["float64"]
    assert row(complex) == SUBDTYPE_OF["complex128"]
    assert row(bool) == SUBDTYPE_OF["bool"]
    assert row(dtypes.float0) == {"generic"}
    assert row(Key("fry")) == {"generic", "extended", "prng_key"}
    assert issubdtype(None, np.floating)
    assert issubdtype("float64", None)


def test_issubdtype_extended():
    fry, rbg = Key("fry"), Key("rbg")
    assert issubdtype(fry, dtypes.extended)
    assert issubdtype(fry, dtypes.prng_key)
    assert issubdtype(dtypes.prng_key, dtypes.extended)
    assert issubdtype(fry, fry)
    assert issubdtype(fry, Key("fry"))
    assert not issubdtype(fry, rbg)
    assert not issubdtype(fry, np.float32)
    assert not issubdtype(np.float32, fry)
    assert not issubdtype("float32", dtypes.extended)


def test_issubdtype_unhashable_extended_dtype():
    class Loose(ExtendedDType):
        type = dtypes.extended
        name = "loose"
        __hash__ = None

    assert issubdtype(Loose(), dtypes.extended)
    assert not issubdtype(Loose(), dtypes.prng_key)


_INTEGRAL = {"integral", "numeric"}
# Recorded: jnp.isdtype(dtype, kind) over the named kinds.
ISDTYPE = {
    "bool": {"bool"},
    **{n: {"unsigned integer"} | _INTEGRAL for n in SHORT_NAMES if n.startswith("uint")},
    **{n: {"signed integer"} | _INTEGRAL for n in SHORT_NAMES if n.startswith("int")},
    **{n: {"real floating", "numeric"} for n in SHORT_NAMES if "float" in n},
    "complex64": {"complex floating", "numeric"},
    "complex128": {"complex floating", "numeric"},
}
KINDS = [
    "bool",
    "signed integer",
    "unsigned integer",
    "integral",
    "real floating",
    "complex floating",
    "numeric",
]


@pytest.mark.parametrize("name", list(SHORT_NAMES))
def test_isdtype_grid(name):
    assert {k for k in KINDS if dtypes.isdtype(name, k)} == ISDTYPE[name]
    assert dtypes.isdtype(name, name)
    assert dtypes.isdtype(name, tuple(KINDS))
    assert not dtypes.isdtype(name, "bool" if name != "bool" else "int8")


def test_isdtype_dtypes_and_tuples():
    # Recorded.
    assert dtypes.isdtype("int8", ("bool", np.int8))
    assert dtypes.isdtype("float32", np.float32)
    assert not dtypes.isdtype("float32", float)
    assert dtypes.isdtype("int64", int)
    assert not dtypes.isdtype("int8", ("bool", "real floating"))
    assert dtypes.isdtype(Key("fry"), Key("fry"))
    assert not dtypes.isdtype(Key("fry"), "numeric")


def test_isdtype_errors():
    # Recorded (types; the messages are lamina's).
    with pytest.raises(ValueError, match=r"Unrecognized kind='foo': expected one of \['bool'"):
        dtypes.isdtype("int8", "foo")
    with pytest.raises(ValueError, match="Unrecognized kind='foo'"):
        dtypes.isdtype("int8", ("int8", "foo"))
    with pytest.raises(TypeError, match="Expected kind to be a dtype, a kind name or a tuple"):
        dtypes.isdtype("int8", 3)


# --- finfo, iinfo, item sizes and kind conversions -------------------------------------


def test_finfo_iinfo_are_ml_dtypes():
    assert dtypes.finfo is ml_dtypes.finfo
    assert dtypes.iinfo is ml_dtypes.iinfo


@pytest.mark.parametrize(
    ("name", "bits", "eps", "max_", "smallest_normal", "nmant", "nexp"),
    [  # Recorded from jax.dtypes.finfo.
        ("bfloat16", 16, 2**-7, 3.3895313892515355e38, 2**-126, 7, 8),
        ("float8_e4m3fn", 8, 0.125, 448.0, 2**-6, 3, 4),
        ("float8_e5m2", 8, 0.25, 57344.0, 2**-14, 2, 5),
        ("float8_e4m3b11fnuz", 8, 0.125, 30.0, 2**-10, 3, 4),
        ("float8_e8m0fnu", 8, 1.0, 2.0**127, 2**-127, 0, 8),
        ("float4_e2m1fn", 4, 0.5, 6.0, 1.0, 1, 2),
        ("float6_e2m3fn", 6, 0.125, 7.5, 1.0, 3, 2),
        ("float16", 16, 2**-10, 65504.0, 2**-14, 10, 5),
    ],
)
def test_finfo_values(name, bits, eps, max_, smallest_normal, nmant, nexp):
    info = dtypes.finfo(name)
    assert info.bits == bits
    assert float(info.eps) == eps
    assert float(info.max) == max_
    assert float(info.smallest_normal) == smallest_normal
    assert (info.nmant, info.nexp) == (nmant, nexp)
    assert info.dtype == np.dtype(name)


def test_finfo_matches_numpy_for_numpy_floats():
    for name in ("float16", "float32", "float64", "complex64", "complex128"):
        ours, numpys = dtypes.finfo(name), np.finfo(name)
        assert (ours.bits, ours.eps, ours.max, ours.tiny) == (
            numpys.bits,
            numpys.eps,
            numpys.max,
            numpys.tiny,
        )


@pytest.mark.parametrize(
    ("name", "bits", "lo", "hi"),
    [  # Recorded from jax.dtypes.iinfo.
        ("int1", 1, -1, 0),
        ("int2", 2, -2, 1),
        ("int4", 4, -8, 7),
        ("uint1", 1, 0, 1),
        ("uint2", 2, 0, 3),
        ("uint4", 4, 0, 15),
        ("int8", 8, -128, 127),
        ("uint64", 64, 0, 2**64 - 1),
    ],
)
def test_iinfo_values(name, bits, lo, hi):
    info = dtypes.iinfo(name)
    assert (info.bits, int(info.min), int(info.max)) == (bits, lo, hi)


def test_itemsize_bits():
    expected = {"bool": 8, "complex64": 64, "complex128": 128}
    for dt in ALL:
        digits = "".join(ch for ch in dt.name.split("_")[0] if ch.isdigit())
        assert dtypes.itemsize_bits(dt) == expected.get(dt.name, int(digits or 0)), dt
    with pytest.raises(ValueError, match="itemsize_bits needs a dtype, got None"):
        dtypes.itemsize_bits(None)
    for bad in (dtypes.float0, Key("fry")):
        with pytest.raises(ValueError, match="is not a boolean or numeric dtype"):
            dtypes.itemsize_bits(bad)


def test_supports_inf():
    # Recorded, including JAX's answer True for float4/float6/float8_e8m0fnu.
    no_inf = {"float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz"}
    for dt in ALL:
        inexact = dt in dtypes.FLOAT_DTYPES or dt in dtypes.COMPLEX_DTYPES
        assert dtypes.supports_inf(dt) == (inexact and dt.name not in no_inf), dt


@pytest.mark.parametrize("dt", ALL, ids=str)
def test_kind_conversions(dt):
    # Recorded (lamina also sends int1/int2/uint1/uint2 to float32, where JAX leaves them).
    name = dt.name
    if dt in dtypes.FLOAT_DTYPES or dt in dtypes.COMPLEX_DTYPES:
        inexact = name
    else:
        inexact = "float64" if name in ("int64", "uint64") else "float32"
    assert dtypes.to_inexact_dtype(dt) == np.dtype(inexact)
    real = {"complex64": "float32", "complex128": "float64"}.get(inexact, inexact)
    assert dtypes.to_floating_dtype(dt) == np.dtype(real)
    wide = inexact in ("float64", "complex128")
    assert dtypes.to_complex_dtype(dt) == np.dtype("complex128" if wide else "complex64")
    assert dtypes.to_numeric_dtype(dt) == np.dtype("int32" if name == "bool" else name)


# --- short names -----------------------------------------------------------------------


@pytest.mark.parametrize(("name", "short"), list(SHORT_NAMES.items()))
def test_short_names_round_trip(name, short):
    dt = np.dtype(name)
    assert short_dtype_name(dt) == short
    assert short_dtype_name(dt.type) == short
    assert dtype_from_short_name(short) == dt


def test_short_names_of_float0_and_extended():
    # Recorded: Jaxprs print float0 as "float0" and key types by name.
    assert short_dtype_name(dtypes.float0) == "float0"
    assert dtype_from_short_name("float0") == dtypes.float0
    assert short_dtype_name(Key("fry")) == "key<fry>"
    with pytest.raises(ValueError, match="unknown short dtype name 'key<shiny>'"):
        dtype_from_short_name("key<shiny>")
    shiny = dtypes.register_extended_dtype(Key("shiny"))
    assert dtype_from_short_name("key<shiny>") is shiny
    with pytest.raises(TypeError, match="expects an ExtendedDType"):
        dtypes.register_extended_dtype("key<fry>")


@pytest.mark.parametrize("name", ["float32", "int", "f", "i32x", "", "bfloat16", "int4"])
def test_dtype_from_short_name_rejects_long_and_unknown_names(name):
    with pytest.raises(ValueError, match=f"unknown short dtype name {name!r}; expected one of"):
        dtype_from_short_name(name)


# --- extended dtypes -------------------------------------------------------------------


def test_extended_dtype_base():
    key = Key("fry")
    assert str(key) == repr(key) == "key<fry>"
    assert isinstance(key, ExtendedDType)
    assert issubclass(dtypes.prng_key, dtypes.extended)
    assert issubclass(dtypes.extended, np.generic)

    class NoType(ExtendedDType):
        name = "broken"

    with pytest.raises(TypeError, match="abstract"):
        NoType()
