"""Type promotion checked against every pair (and a sample of triples) recorded from
JAX 0.10.2, with x64 on and off and with 'standard' and 'strict' promotion.

data/promotion_tables.txt holds the recordings. Each section is headed
``[<what> x64=<on|off> promotion=<standard|strict>]``:

* ``result_type``: ``jax._src.dtypes.result_type(a, b, return_weak_type_flag=True)``.
  The ``operands:`` line names the columns: a short dtype name is a strongly typed
  dtype; ``name*`` is a weakly typed value of that dtype; ``True``, ``1``, ``1.0``, ``1j``
  are Python scalars. The ``alone:`` row is ``result_type(a)``; every other row is named
  by its ``a``. A result is a short dtype name, ``*`` marking a weak result; ``!`` means
  ``TypePromotionError``; ``?`` means JAX failed with an internal ``KeyError`` (weak
  1/2/4-bit integers; lamina's answer for those is tested below instead).
* ``result_type3``: random triples, ``a b c -> result``.
* ``promote_types``: ``jax.numpy.promote_types(a, b)``; ``int_type`` etc. are the Python
  types, ``None`` is None.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from lamina.ir import dtypes
from lamina.ir.dtypes import (
    TypePromotionError,
    dtype_from_short_name,
    enable_x64,
    numpy_dtype_promotion,
    promote_types,
    promotion,
    result_type,
    short_dtype_name,
)

TABLES = Path(__file__).parent / "data" / "promotion_tables.txt"
MODES = [(x64, mode) for x64 in (False, True) for mode in ("standard", "strict")]


@pytest.fixture(autouse=True)
def _x64_off_standard_promotion():
    """Run every test from x64 off and standard promotion, whatever the environment says."""
    saved = dtypes.x64_enabled(), dtypes.get_numpy_dtype_promotion()
    dtypes.set_x64(False)
    dtypes.set_numpy_dtype_promotion("standard")
    yield
    dtypes.set_x64(saved[0])
    dtypes.set_numpy_dtype_promotion(saved[1])


class Weak:
    """A weakly typed value, as an abstract value or array presents itself."""

    def __init__(self, dt):
        self.dtype = np.dtype(dt)
        self.weak_type = True


def _load_sections() -> dict[tuple[str, bool, str], list[str]]:
    sections: dict[tuple[str, bool, str], list[str]] = {}
    lines: list[str] = []
    for line in TABLES.read_text().splitlines():
        head = re.fullmatch(r"\[(\w+) x64=(on|off) promotion=(\w+)\]", line)
        if head:
            lines = sections.setdefault((head[1], head[2] == "on", head[3]), [])
        elif line and not line.startswith("#"):
            lines.append(line)
    return sections


SECTIONS = _load_sections()

_PYTHON_OPERANDS = {
    "True": True,
    "1": 1,
    "1.0": 1.0,
    "1j": 1j,
    "bool_type": bool,
    "int_type": int,
    "float_type": float,
    "complex_type": complex,
    "None": None,
}


def operand(name: str):
    if name in _PYTHON_OPERANDS:
        return _PYTHON_OPERANDS[name]
    if name.endswith("*"):
        return Weak(dtype_from_short_name(name[:-1]))
    return dtype_from_short_name(name)


def outcome(fn, *args) -> str:
    """The result in the tables' notation."""
    try:
        dt, weak = fn(*args)
    except TypePromotionError:
        return "!"
    return short_dtype_name(dt) + ("*" if weak else "")


def rt(*args):
    return result_type(*args, return_weak_type_flag=True)


def pt(a, b):
    return promote_types(a, b), False


def _grid(lines: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    names = lines[0].removeprefix("operands: ").split()
    rows = {}
    for line in lines[1:]:
        label, _, cells = line.partition(": ")
        rows[label] = cells.split()
        assert len(rows[label]) == len(names), label
    return names, rows


def test_tables_are_complete():
    assert len(SECTIONS) == 12
    for (kind, _, _), lines in SECTIONS.items():
        if kind == "result_type":
            names, rows = _grid(lines)
            assert len(names) == 68 and set(rows) == {"alone", *names}
        elif kind == "promote_types":
            names, rows = _grid(lines)
            assert len(names) == 37 and set(rows) == set(names)
        else:
            assert len(lines) == 150


@pytest.mark.parametrize(("x64", "mode"), MODES)
def test_result_type_pairs_match_jax(x64, mode):
    names, rows = _grid(SECTIONS["result_type", x64, mode])
    mismatches = []
    with enable_x64(x64), numpy_dtype_promotion(mode):
        for a, cells in rows.items():
            for b, want in zip(names, cells, strict=True):
                if want == "?":
                    continue
                args = (operand(b),) if a == "alone" else (operand(a), operand(b))
                got = outcome(rt, *args)
                if got != want:
                    mismatches.append(f"result_type({a}, {b}) = {got}, JAX: {want}")
    assert not mismatches, "\n".join(mismatches[:20])


@pytest.mark.parametrize(("x64", "mode"), MODES)
def test_result_type_triples_match_jax(x64, mode):
    mismatches = []
    with enable_x64(x64), numpy_dtype_promotion(mode):
        for line in SECTIONS["result_type3", x64, mode]:
            names, want = line.split(" -> ")
            if want == "?":
                continue
            got = outcome(rt, *map(operand, names.split()))
            if got != want:
                mismatches.append(f"result_type({names}) = {got}, JAX: {want}")
    assert not mismatches, "\n".join(mismatches[:20])


@pytest.mark.parametrize(("x64", "mode"), MODES)
def test_promote_types_pairs_match_jax(x64, mode):
    names, rows = _grid(SECTIONS["promote_types", x64, mode])
    mismatches = []
    with enable_x64(x64), numpy_dtype_promotion(mode):
        for a, cells in rows.items():
            for b, want in zip(names, cells, strict=True):
                got = outcome(pt, operand(a), operand(b))
                if got != want:
                    mismatches.append(f"promote_types({a}, {b}) = {got}, JAX: {want}")
    assert not mismatches, "\n".join(mismatches[:20])


# A few rows of the tables spelled out, as documentation of what they hold.
@pytest.mark.parametrize(
    ("x64", "args", "expected"),
    [
        (False, ("int8", 1.0), ("float32", True)),
        (True, ("int8", 1.0), ("float64", True)),
        (False, ("int8", 1), ("int8", False)),
        (False, ("uint8", "int8"), ("int16", False)),
        (False, ("uint32", "int8"), ("int32", False)),
        (True, ("uint32", "int8"), ("int64", False)),
        (True, ("uint64", "int64"), ("float64", True)),  # meets at the weak float
        (False, ("bfloat16", "float16"), ("float32", False)),
        (False, ("bfloat16", 1j), ("complex64", False)),
        (False, (True, 1), ("int32", True)),
        (False, (None, "int8"), ("float32", False)),
        (False, (1, 2, 3.0), ("float32", True)),
        (False, (np.float64(1.0), 1), ("float32", False)),  # NumPy scalars are strong
        (True, (int,), ("int64", True)),
        (False, (float, "int8"), ("float32", True)),
        (False, (Weak("int8"), Weak("uint8")), ("int32", True)),
    ],
)
def test_result_type_examples(x64, args, expected):
    with enable_x64(x64):
        dt, weak = result_type(*args, return_weak_type_flag=True)
    assert (dt, weak) == (np.dtype(expected[0]), expected[1])
    with enable_x64(x64):
        assert result_type(*args) == np.dtype(expected[0])


def test_weak_subbyte_integers_take_the_default_integer():
    # JAX 0.10.2 fails here with an internal KeyError; lamina treats them like any other
    # weakly typed integer.
    for x64, int_name, uint_name in ((False, "int32", "uint32"), (True, "int64", "uint64")):
        with enable_x64(x64):
            for name in ("int1", "int2", "int4"):
                assert rt(Weak(name)) == (np.dtype(int_name), True)
                assert rt(Weak(name), Weak(name)) == (np.dtype(int_name), True)
                assert rt(Weak(name), Weak("bool")) == (np.dtype(int_name), True)
                assert rt(Weak(name), "int8") == (np.dtype("int8"), False)
            for name in ("uint1", "uint2", "uint4"):
                assert rt(Weak(name)) == (np.dtype(uint_name), True)


def test_weak_flag_from_aval_attribute():
    class Traced:
        def __init__(self, dt, weak):
            self.dtype = np.dtype(dt)
            self.aval = type("Aval", (), {"weak_type": weak})()

    assert rt(Traced("float32", True), "bfloat16") == (np.dtype("bfloat16"), False)
    assert rt(Traced("float32", False), "bfloat16") == (np.dtype("float32"), False)


def test_result_type_keeps_registered_array_dtypes():
    class Arr:
        def __init__(self, dt):
            self.dtype = np.dtype(dt)

    class KeptArr(Arr):
        pass

    dtypes.register_uncanonicalized_type(KeptArr)
    with enable_x64(False):
        assert result_type(Arr("int64")) == np.dtype("int32")
        assert result_type(KeptArr("int64")) == np.dtype("int64")
        assert result_type(KeptArr("int64"), KeptArr("int64")) == np.dtype("int64")
        # A join is canonicalized, as in JAX.
        assert result_type(KeptArr("int64"), "int8") == np.dtype("int32")


class _Key(dtypes.ExtendedDType):
    type = dtypes.prng_key

    def __init__(self, tag):
        self.name = f"key<{tag}>"

    def __eq__(self, other):
        return isinstance(other, _Key) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


class _KeyArray:
    def __init__(self, tag):
        self.dtype = _Key(tag)


def test_result_type_with_extended_dtypes():
    fry = _KeyArray("fry")
    assert result_type(fry) == _Key("fry")
    assert result_type(fry, _KeyArray("fry"), return_weak_type_flag=True) == (_Key("fry"), False)
    for other in (1.0, "float32", _KeyArray("rbg")):
        with pytest.raises(ValueError, match=r"dtype=key<fry> cannot take part in type"):
            result_type(fry, other)


def test_promote_types_rejects_extended_and_junk():
    with pytest.raises(TypeError):
        promote_types(_Key("fry"), "float32")
    with pytest.raises(TypeError):
        promote_types("not-a-dtype", "float32")
    with pytest.raises(ValueError, match="cannot take part in type promotion"):
        promote_types(dtypes.float0, "float32")


def test_result_type_needs_arguments():
    with pytest.raises(ValueError, match="at least one array or dtype is required"):
        result_type()


def test_type_promotion_error_is_a_value_error():
    assert issubclass(TypePromotionError, ValueError)
    assert dtypes.TypePromotionError is promotion.TypePromotionError


@pytest.mark.parametrize(
    ("a", "b", "pattern"),
    [
        ("float8_e4m3fn", "float16", r"\(float8_e4m3fn, float16\).*8-bit floats never promote"),
        ("float8_e4m3fn", "float8_e5m2", r"8-bit floats.*x\.astype\('float32'\)"),
        ("float6_e2m3fn", "bfloat16", r"6-bit floats never promote"),
        ("float4_e2m1fn", "float32", r"4-bit floats never promote"),
        ("int4", "int8", r"\(int4, int8\).*1-, 2- and 4-bit integers.*astype\('int32'\)"),
        ("uint2", "uint4", r"\(uint2, uint4\).*1-, 2- and 4-bit integers"),
        ("float_type", "int4", r"\(int4, weak float\)"),
        ("complex_type", "float8_e4m3fn", r"\(float8_e4m3fn, weak complex\)"),
    ],
)
def test_promotion_error_messages(a, b, pattern):
    with pytest.raises(TypePromotionError, match=pattern):
        promote_types(_PYTHON_OPERANDS.get(a, a), _PYTHON_OPERANDS.get(b, b))


def test_strict_error_message_says_what_to_do():
    with numpy_dtype_promotion("strict"), pytest.raises(TypePromotionError) as info:
        result_type("int8", "int16")
    message = str(info.value)
    assert "(int8, int16)" in message
    assert "jax_numpy_dtype_promotion='strict'" in message
    assert "astype" in message


def test_least_upper_bound_directly():
    lub = promotion.least_upper_bound
    assert lub(["bool"], x64=True) == "bool"
    assert lub(["int", "uint8"], x64=True) == "uint8"
    assert lub(["int64", "uint64"], x64=True) == "float"
    assert lub(["uint32", "int8"], x64=False) == "int32"
    assert lub(["uint32", "int8"], x64=True) == "int64"
    assert lub(["int", "float"], mode="strict", x64=True) == "float"
    assert set(promotion.lattice_nodes()) >= {"int", "float", "complex", "bfloat16"}
    with pytest.raises(ValueError, match="unknown type promotion mode 'loose'"):
        lub(["int8"], mode="loose", x64=True)
    with pytest.raises(ValueError, match="at least one type"):
        lub([], x64=True)
