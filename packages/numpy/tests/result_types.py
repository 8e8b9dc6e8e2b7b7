"""Shared by the ufunc and comparison tests: the inputs whose result types were
recorded from JAX 0.10.2, and the check of a function's result dtype and weak type (or
exception) against a recorded code. A code is a dtype key of DTYPES, ``~`` marking a
weak type (``"f32~"``), comma-separated for several results, or an ERRORS key."""

import ml_dtypes
import numpy as np
import pytest

from lamina import interpreters as api

INPUTS = {
    "b": np.array([True, False]),
    "i8": np.array([-3, 5], np.int8),
    "i32": np.array([-7, 9], np.int32),
    "u8": np.array([3, 250], np.uint8),
    "u32": np.array([6, 40], np.uint32),
    "bf16": np.array([-1.5, 2.25], ml_dtypes.bfloat16),
    "f16": np.array([-0.5, 1.75], np.float16),
    "f32": np.array([-2.5, 3.0], np.float32),
    "c64": np.array([1 + 2j, 3 - 1j], np.complex64),
    "F": 0.75,
    "I": 3,
    "B": True,
    "C": 1.5 - 0.5j,
}
PAIRS = (
    "b,b b,F i8,u8 i8,I i32,f16 u8,u32 u32,i8 bf16,f16 f16,F f32,c64 c64,C F,I I,I B,f32 C,b i32,B"
)
DTYPES = {"b": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "u8": np.uint8,
          "u32": np.uint32, "bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32,
          "c64": np.complex64}  # fmt: skip
ERRORS = {"ET": TypeError, "EV": ValueError, "EN": NotImplementedError, "EI": IndexError}


def check_result_types(fun, args, expected):
    if expected in ERRORS:
        with pytest.raises(ERRORS[expected]):
            api.eval_shape(fun, *args)
        return
    out = api.eval_shape(fun, *args)
    outs = out if isinstance(out, tuple) else (out,)
    codes = expected.split(",")
    assert len(outs) == len(codes)
    for o, code in zip(outs, codes, strict=True):
        assert o.dtype == np.dtype(DTYPES[code.rstrip("~")]), (args, o.dtype, code)
        assert o.weak_type == code.endswith("~"), (args, code)


def check_unary(fun, recorded: str):
    """``recorded``: one code per input of INPUTS, space-separated."""
    for value, expected in zip(INPUTS.values(), recorded.split(), strict=True):
        check_result_types(fun, (value,), expected)


def check_binary(fun, recorded: str):
    """``recorded``: one code per pair of PAIRS, space-separated."""
    for pair, expected in zip(PAIRS.split(), recorded.split(), strict=True):
        check_result_types(fun, tuple(INPUTS[k] for k in pair.split(",")), expected)
