"""JAX's type promotion table, recorded from JAX 0.10.2 with x64 off and on
(data/promotion_table.json): ``jnp.promote_types`` for every pair of the 15 standard
dtypes and with the weak Python types, ``jnp.result_type`` (and its weak-type flag) for
dtype pairs, dtypes with weak Python scalars and the weak scalars among themselves, and
the dtype and weak type of real arithmetic (``jnp.add`` of zero-size and 0-d arrays,
Python scalars for the weak operands) for a deterministic sample of pairs."""

import contextlib
import json
import pathlib

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import enable_x64, jit
from lamina.ir import dtypes

TABLE = json.loads((pathlib.Path(__file__).parent / "data/promotion_table.json").read_text())
MODES = {"x64_off": contextlib.nullcontext, "x64_on": enable_x64}
WEAK_VALUES = {"int": 1, "float": 1.0, "complex": 1j}
WEAK_TYPES = {"int": int, "float": float, "complex": complex}


def _dtype(name):
    return np.dtype(jnp.bfloat16 if name == "bfloat16" else name)


def _operands(key, weak):
    return [weak[n] if n in weak else _dtype(n) for n in key.split(",")]


@pytest.mark.parametrize("mode", sorted(MODES))
def test_promote_types(mode):
    with MODES[mode]():
        for section, weak in (("promote_types", {}), ("promote_types_python", WEAK_TYPES)):
            for key, expected in TABLE[mode][section].items():
                assert str(jnp.promote_types(*_operands(key, weak))) == expected, key


@pytest.mark.parametrize("mode", sorted(MODES))
def test_result_type_and_weak_flag(mode):
    with MODES[mode]():
        for section in ("result_type_strong", "result_type_weak"):
            for key, (dtype, weak_type) in TABLE[mode][section].items():
                operands = _operands(key, WEAK_VALUES)
                assert str(jnp.result_type(*operands)) == dtype, key
                got = dtypes.result_type(*operands, return_weak_type_flag=True)
                assert (str(got[0]), bool(got[1])) == (dtype, weak_type), key


def _arithmetic_sample(mode, stride):
    """Every ``stride``-th recorded pair: (key, left operand, right operand, shape)."""
    sample = []
    for key in sorted(TABLE[mode]["add"])[::stride]:
        left, right, ndim = key.split(",")
        shape = (0,) if ndim == "1" else ()
        x, y = (
            WEAK_VALUES[n] if n in WEAK_VALUES else jnp.zeros(shape, _dtype(n))
            for n in (left, right)
        )
        both_weak = left in WEAK_VALUES and right in WEAK_VALUES
        sample.append((key, x, y, () if both_weak else shape))
    return sample


def _check_sums(mode, sample, sums):
    for (key, _, _, shape), out in zip(sample, sums, strict=True):
        assert [str(out.dtype), out.weak_type] == TABLE[mode]["add"][key], key
        assert out.shape == shape, key


@pytest.mark.parametrize("mode", sorted(MODES))
def test_addition_gives_the_promoted_dtype_and_weak_type(mode):
    with MODES[mode]():
        # One compiled function for a fifth of the pairs, eager calls for some others.
        sample = _arithmetic_sample(mode, 5)
        _check_sums(mode, sample, jit(lambda: [jnp.add(x, y) for _, x, y, _ in sample])())
        eager = _arithmetic_sample(mode, 29)
        _check_sums(mode, eager, [jnp.add(x, y) for _, x, y, _ in eager])


def test_sample_covers_every_dtype_on_both_sides():
    keys = [key for key, *_ in _arithmetic_sample("x64_off", 5)]
    names = set(WEAK_VALUES) | {k.split(",")[0] for k in TABLE["x64_off"]["add"]}
    assert {k.split(",")[0] for k in keys} == names
    assert {k.split(",")[1] for k in keys} == names
