"""Operators on concrete arrays run as one jitted program each (the eager fast path):
same values, dtypes and weak types as the same operators applied under a trace, the
same errors, and the same deferral to other operand types."""

import logging
import operator

import ml_dtypes
import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import compile_count, device_put, jit

BINARY = [
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.mod, operator.pow, operator.lt, operator.le, operator.eq, operator.ne,
    operator.gt, operator.ge,
]  # fmt: skip
BITWISE = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]

RNG = np.random.default_rng(0)


def _array(dtype, shape=(2, 3)):
    values = RNG.uniform(1, 5, size=shape)
    return device_put(values.astype(dtype))


CASES = [
    (np.float32, np.float32),
    (np.float32, np.int32),
    (np.int32, np.int8),
    (ml_dtypes.bfloat16, np.float32),
    (np.float32, 2),
    (np.float32, 0.1),
    (ml_dtypes.bfloat16, 0.1),
    (np.int8, 3),
    (np.int32, 2.5),
    (np.uint8, 7),
    (np.float16, 1.5),
]


def _operand(kind):
    return kind if type(kind) in (int, float) else _array(kind)


def _same(eager, traced):
    assert eager.dtype == traced.dtype
    assert eager.weak_type == traced.weak_type
    assert eager.shape == traced.shape
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(traced))


@pytest.mark.parametrize("left,right", CASES)
def test_binary_operators_match_the_traced_operators(left, right):
    x, y = _array(left), _operand(right)
    for op in BINARY:
        _same(op(x, y), jit(lambda a, b, op=op: op(a, b))(x, y))
        _same(op(y, x), jit(lambda a, b, op=op: op(b, a))(x, y))


@pytest.mark.parametrize("left,right", [(np.int32, np.int32), (np.uint8, 3), (np.bool_, np.bool_)])
def test_bitwise_operators_match_the_traced_operators(left, right):
    x, y = _array(left), _operand(right)
    for op in BITWISE if left != np.bool_ else BITWISE[:3]:
        _same(op(x, y), jit(lambda a, b, op=op: op(a, b))(x, y))


def test_unary_operators_and_broadcasting():
    x = _array(np.float32)
    for op in (operator.neg, operator.abs):
        _same(op(x), jit(op)(x))
    ints = _array(np.int32)
    _same(~ints, jit(operator.invert)(ints))
    assert operator.pos(x) is x
    row = _array(np.float32, (3,))
    np.testing.assert_allclose(np.asarray(x - row), np.asarray(x) - np.asarray(row))
    quotient, remainder = divmod(_array(np.int32), 2)
    assert quotient.dtype == remainder.dtype == np.int32


def test_python_scalars_keep_weak_types_and_values():
    x = device_put(np.arange(4, dtype=np.float32))
    y = x * 0.5 + 1
    assert y.dtype == np.float32 and not y.weak_type
    np.testing.assert_array_equal(np.asarray(y), np.arange(4, dtype=np.float32) * 0.5 + 1)
    weak = lax.add(1.0, 2.0)
    assert (weak * 2).weak_type and float(weak * 2) == 6.0


def test_a_repeated_operator_compiles_once(caplog):
    x = device_put(np.arange(19, dtype=np.float32))  # a shape no other test uses
    before = compile_count()
    with caplog.at_level(logging.DEBUG, logger="lamina.interpreters.backend"):
        outs = [x * 3 for _ in range(4)]
    compiles = [r for r in caplog.records if "Finished XLA compilation" in r.getMessage()]
    assert len(compiles) == 1  # one jitted program, reused by the three later calls
    assert compile_count() == before  # and no one-primitive executable besides it
    np.testing.assert_array_equal(np.asarray(outs[-1]), np.arange(19) * 3)


def test_errors_are_the_traced_operators_errors():
    x = _array(np.float32, (2, 3))
    with pytest.raises(TypeError, match="incompatible shapes"):
        x + _array(np.float32, (2, 4))
    with pytest.raises(TypeError):
        x + "a"
    assert (x == "a") is False
    with pytest.raises(OverflowError):
        x + 2**70


def test_unknown_operands_get_their_own_method():
    class Other:
        def __radd__(self, other):
            return "radd"

    assert _array(np.float32) + Other() == "radd"
