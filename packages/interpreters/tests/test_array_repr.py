"""Printed forms of arrays, against strings recorded from JAX 0.10.2 (same inputs,
``jax.device_put``, x64 off)."""

import ml_dtypes
import numpy as np
import pytest

import lamina.interpreters as li
from lamina.interpreters.runtime.transfer import device_put_value

REPRS = [
    (
        "f32 vector",
        lambda: np.array([1.0, 2.0], np.float32),
        "Array([1., 2.], dtype=float32)",
        "[1. 2.]",
    ),
    (
        "weak float scalar",
        lambda: 1.0,
        "Array(1., dtype=float32, weak_type=True)",
        "1.0",
    ),
    (
        "weak int scalar",
        lambda: 3,
        "Array(3, dtype=int32, weak_type=True)",
        "3",
    ),
    (
        "python bool",
        lambda: True,
        "Array(True, dtype=bool)",
        "True",
    ),
    (
        "weak complex",
        lambda: 1 + 2j,
        "Array(1.+2.j, dtype=complex64, weak_type=True)",
        "(1+2j)",
    ),
    (
        "f64 array canonicalized",
        lambda: np.array([1.5, 2.5]),
        "Array([1.5, 2.5], dtype=float32)",
        "[1.5 2.5]",
    ),
    (
        "int64 array canonicalized",
        lambda: np.arange(5),
        "Array([0, 1, 2, 3, 4], dtype=int32)",
        "[0 1 2 3 4]",
    ),
    (
        "numpy f32 scalar",
        lambda: np.float32(2.5),
        "Array(2.5, dtype=float32)",
        "2.5",
    ),
    (
        "numpy int64 scalar",
        lambda: np.int64(7),
        "Array(7, dtype=int32)",
        "7",
    ),
    (
        "bfloat16",
        lambda: np.array([1, 2.5, 3], ml_dtypes.bfloat16),
        "Array([1, 2.5, 3], dtype=bfloat16)",
        "[1 2.5 3]",
    ),
    (
        "float16",
        lambda: np.array([1, 2.5], np.float16),
        "Array([1. , 2.5], dtype=float16)",
        "[1.  2.5]",
    ),
    (
        "bool array",
        lambda: np.array([True, False]),
        "Array([ True, False], dtype=bool)",
        "[ True False]",
    ),
    (
        "int8",
        lambda: np.array([1, -2], np.int8),
        "Array([ 1, -2], dtype=int8)",
        "[ 1 -2]",
    ),
    (
        "uint8",
        lambda: np.array([1, 2], np.uint8),
        "Array([1, 2], dtype=uint8)",
        "[1 2]",
    ),
    (
        "uint64 canonicalized",
        lambda: np.array([1, 2], np.uint64),
        "Array([1, 2], dtype=uint32)",
        "[1 2]",
    ),
    (
        "complex64",
        lambda: np.array([1 + 2j, 3 - 4j], np.complex64),
        "Array([1.+2.j, 3.-4.j], dtype=complex64)",
        "[1.+2.j 3.-4.j]",
    ),
    (
        "int4",
        lambda: np.array([1, -2, 7], ml_dtypes.int4),
        "Array([1, -2, 7], dtype=int4)",
        "[1 -2 7]",
    ),
    (
        "uint4",
        lambda: np.array([1, 2, 15], ml_dtypes.uint4),
        "Array([1, 2, 15], dtype=uint4)",
        "[1 2 15]",
    ),
    (
        "float8_e4m3fn",
        lambda: np.array([1, 2.5], ml_dtypes.float8_e4m3fn),
        "Array([1, 2.5], dtype=float8_e4m3fn)",
        "[1 2.5]",
    ),
    (
        "empty vector",
        lambda: np.zeros((0,), np.float32),
        "Array([], shape=(0,), dtype=float32)",
        "[]",
    ),
    (
        "empty matrix",
        lambda: np.zeros((2, 0), np.int32),
        "Array([], shape=(2, 0), dtype=int32)",
        "[]",
    ),
    (
        "matrix",
        lambda: np.arange(12, dtype=np.float32).reshape(3, 4),
        "Array([[ 0.,  1.,  2.,  3.],\n"
        "       [ 4.,  5.,  6.,  7.],\n"
        "       [ 8.,  9., 10., 11.]], dtype=float32)",
        "[[ 0.  1.  2.  3.]\n [ 4.  5.  6.  7.]\n [ 8.  9. 10. 11.]]",
    ),
    (
        "summarized",
        lambda: np.arange(2000, dtype=np.float32),
        "Array([0.000e+00, 1.000e+00, 2.000e+00, ..., 1.997e+03, 1.998e+03,\n"
        "       1.999e+03], dtype=float32)",
        "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]",
    ),
    (
        "3-d",
        lambda: np.arange(24, dtype=np.int32).reshape(2, 3, 4),
        "Array([[[ 0,  1,  2,  3],\n"
        "        [ 4,  5,  6,  7],\n"
        "        [ 8,  9, 10, 11]],\n"
        "\n"
        "       [[12, 13, 14, 15],\n"
        "        [16, 17, 18, 19],\n"
        "        [20, 21, 22, 23]]], dtype=int32)",
        "[[[ 0  1  2  3]\n"
        "  [ 4  5  6  7]\n"
        "  [ 8  9 10 11]]\n"
        "\n"
        " [[12 13 14 15]\n"
        "  [16 17 18 19]\n"
        "  [20 21 22 23]]]",
    ),
    (
        "long line",
        lambda: np.linspace(0, 1, 11, dtype=np.float32),
        "Array([0. , 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1. ], dtype=float32)",
        "[0.  0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1. ]",
    ),
    (
        "wrapped",
        lambda: np.arange(30, dtype=np.float32) * 1000.5,
        "Array([    0. ,  1000.5,  2001. ,  3001.5,  4002. ,  5002.5,  6003. ,\n"
        "        7003.5,  8004. ,  9004.5, 10005. , 11005.5, 12006. , 13006.5,\n"
        "       14007. , 15007.5, 16008. , 17008.5, 18009. , 19009.5, 20010. ,\n"
        "       21010.5, 22011. , 23011.5, 24012. , 25012.5, 26013. , 27013.5,\n"
        "       28014. , 29014.5], dtype=float32)",
        "[    0.   1000.5  2001.   3001.5  4002.   5002.5  6003.   7003.5  8004.\n"
        "  9004.5 10005.  11005.5 12006.  13006.5 14007.  15007.5 16008.  17008.5\n"
        " 18009.  19009.5 20010.  21010.5 22011.  23011.5 24012.  25012.5 26013.\n"
        " 27013.5 28014.  29014.5]",
    ),
    (
        "nan and inf",
        lambda: np.array([np.nan, np.inf, -np.inf], np.float32),
        "Array([ nan,  inf, -inf], dtype=float32)",
        "[ nan  inf -inf]",
    ),
    (
        "bool scalar",
        lambda: np.bool_(True),
        "Array(True, dtype=bool)",
        "True",
    ),
]


@pytest.mark.parametrize(("value", "expected_repr", "expected_str"),
                         [c[1:] for c in REPRS], ids=[c[0] for c in REPRS])  # fmt: skip
def test_repr_and_str_match_jax(value, expected_repr, expected_str):
    x = li.device_put(value())
    assert repr(x) == expected_repr
    assert str(x) == expected_str


# Weakly typed vectors (JAX: lax.broadcast(1.5, (n,))). When the dtype text does not fit
# on the last line, JAX puts six spaces (not a new line) before it.
WEAK_VECTORS = [
    (3, 1.0, "Array([1., 1., 1.], dtype=float32, weak_type=True)"),
    (
        12,
        1.5,
        "Array([1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5],"
        "      dtype=float32, weak_type=True)",
    ),
    (
        14,
        1.5,
        "Array([1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5,\n"
        "       1.5], dtype=float32, weak_type=True)",
    ),
]


@pytest.mark.parametrize(("n", "fill", "expected"), WEAK_VECTORS)
def test_weak_vector_repr_matches_jax(n, fill, expected):
    x = device_put_value(np.full(n, fill, np.float32), weak_type=True)
    assert repr(x) == expected


def test_format_uses_the_value():
    assert f"{li.device_put(np.float32(2.5)):.3f}" == "2.500"
    assert f"{li.device_put(np.array([1.0, 2.0], np.float32))}" == "[1. 2.]"
    with pytest.raises(TypeError, match="unsupported format string"):
        format(li.device_put(np.array([1.0, 2.0], np.float32)), ".2f")


def test_repr_follows_numpy_print_options():
    x = li.device_put(np.array([1.0, 2.0, 3.0], np.float32))
    with np.printoptions(precision=2, linewidth=20):
        assert repr(x) == "Array([1., 2., 3.],      dtype=float32)"
