"""make_jaxpr prints exactly what JAX 0.10.2 prints (texts recorded from jax.make_jaxpr),
and operators follow jax.numpy's promotion and broadcasting."""

import ml_dtypes
import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import device_put, make_jaxpr
from lamina.ir import parse_closed_jaxpr

f32 = np.ones(3, np.float32)
i32 = np.ones(3, np.int32)
m = np.ones((2, 3), np.float32)

CASES = [
    (
        lambda x: x * 2 + 1,
        (f32,),
        """{ lambda ; a:f32[3]. let
    b:f32[3] = mul a 2.0:f32[]
    c:f32[3] = add b 1.0:f32[]
  in (c,) }""",
    ),
    (
        lambda x, y: (
            lax.add(x, y),
            lax.sub(x, y),
            lax.mul(x, y),
            lax.div(x, y),
            lax.neg(x),
            lax.max(x, y),
            lax.min(x, y),
        ),
        (f32, f32),
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = add a b
    d:f32[3] = sub a b
    e:f32[3] = mul a b
    f:f32[3] = div a b
    g:f32[3] = neg a
    h:f32[3] = max a b
    i:f32[3] = min a b
  in (c, d, e, f, g, h, i) }""",
    ),
    (
        lambda x: (lax.sin(x), lax.cos(x), lax.exp(x), lax.log(x), lax.tanh(x), lax.sqrt(x)),
        (f32,),
        """{ lambda ; a:f32[3]. let
    b:f32[3] = sin a
    c:f32[3] = cos a
    d:f32[3] = exp a
    e:f32[3] = log a
    f:f32[3] = tanh a
    g:f32[3] = sqrt a
  in (b, c, d, e, f, g) }""",
    ),
    (
        lambda x, y: (
            lax.eq(x, y),
            lax.ne(x, y),
            lax.lt(x, y),
            lax.le(x, y),
            lax.gt(x, y),
            lax.ge(x, y),
        ),
        (f32, f32),
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:bool[3] = eq a b
    d:bool[3] = ne a b
    e:bool[3] = lt a b
    f:bool[3] = le a b
    g:bool[3] = gt a b
    h:bool[3] = ge a b
  in (c, d, e, f, g, h) }""",
    ),
    (
        lambda p, x, y: lax.select_n(p, x, y),
        (f32 > 0, f32, f32),
        "{ lambda ; a:bool[3] b:f32[3] c:f32[3]. let d:f32[3] = select_n a b c in (d,) }",
    ),
    (
        lambda p, x, y, z: lax.select_n(p, x, y, z),
        (i32, f32, f32, f32),
        """{ lambda ; a:i32[3] b:f32[3] c:f32[3] d:f32[3]. let
    e:f32[3] = select_n a b c d
  in (e,) }""",
    ),
    (
        lambda x: lax.convert_element_type(x, np.int32),
        (f32,),
        """{ lambda ; a:f32[3]. let
    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
  in (b,) }""",
    ),
    (
        lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)),
        (f32,),
        """{ lambda ; a:f32[3]. let
    b:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a
  in (b,) }""",
    ),
    (
        lambda x: lax.broadcast_in_dim(x, (2, 3), (0, 1)),
        (m,),
        "{ lambda ; a:f32[2,3]. let  in (a,) }",
    ),
    (
        lambda x: lax.broadcast_in_dim(x, (2, 3), ()),
        (1.0,),
        "{ lambda ; a:f32[]. let b:f32[2,3] = broadcast_in_dim a in (b,) }",
    ),
    (
        lambda x: lax.reshape(x, (3, 2)),
        (m,),
        """{ lambda ; a:f32[2,3]. let
    b:f32[3,2] = reshape[dimensions=None new_sizes=(3, 2) sharding=None] a
  in (b,) }""",
    ),
    (
        lambda x: lax.reshape(x, (3, 2), (1, 0)),
        (m,),
        """{ lambda ; a:f32[2,3]. let
    b:f32[3,2] = reshape[dimensions=(1, 0) new_sizes=(3, 2) sharding=None] a
  in (b,) }""",
    ),
    (
        lambda x: lax.transpose(x, (1, 0)),
        (m,),
        """{ lambda ; a:f32[2,3]. let
    b:f32[3,2] = transpose[permutation=(1, 0)] a
  in (b,) }""",
    ),
    (
        lambda x: (lax.reduce_sum(x, (1,)), lax.reduce_max(x, (0, 1))),
        (m,),
        """{ lambda ; a:f32[2,3]. let
    b:f32[2] = reduce_sum[axes=(1,) out_sharding=None] a
    c:f32[] = reduce_max[axes=(0, 1)] a
  in (b, c) }""",
    ),
    (
        lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))),
        (m, m.T),
        """{ lambda ; a:f32[2,3] b:f32[3,2]. let
    c:f32[2,2] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
  in (c,) }""",
    ),
    (
        lambda x, y: lax.dot_general(
            x,
            y,
            (((1,), (0,)), ((), ())),
            preferred_element_type=np.float32,
            precision=lax.Precision.HIGHEST,
        ),
        (m, m.T),
        """{ lambda ; a:f32[2,3] b:f32[3,2]. let
    c:f32[2,2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
    ] a b
  in (c,) }""",
    ),
    (
        lambda: lax.iota(np.int32, 5),
        (),
        """{ lambda ; . let
    a:i32[5] = iota[dimension=0 dtype=int32 shape=(5,) sharding=None]\x20
  in (a,) }""",
    ),
    (
        lambda: lax.broadcasted_iota(np.float32, (2, 3), 1),
        (),
        """{ lambda ; . let
    a:f32[2,3] = iota[dimension=1 dtype=float32 shape=(2, 3) sharding=None]\x20
  in (a,) }""",
    ),
    # operators: jax.numpy's promotion and broadcasting
    (
        lambda x: (x @ x, -x, x / 2, 2 - x, 2 / x, x == 1, x != 1, x >= 1),
        (f32,),
        """{ lambda ; a:f32[3]. let
    b:f32[] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] a a
    c:f32[3] = neg a
    d:f32[3] = div a 2.0:f32[]
    e:f32[3] = sub 2.0:f32[] a
    f:f32[3] = div 2.0:f32[] a
    g:bool[3] = eq a 1.0:f32[]
    h:bool[3] = ne a 1.0:f32[]
    i:bool[3] = ge a 1.0:f32[]
  in (b, c, d, e, f, g, h, i) }""",
    ),
    (lambda x: x * 2, (i32,), "{ lambda ; a:i32[3]. let b:i32[3] = mul a 2:i32[] in (b,) }"),
    (
        lambda x: x * 2.0,
        (i32,),
        """{ lambda ; a:i32[3]. let
    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=True] a
    c:f32[3] = mul b 2.0:f32[]
  in (c,) }""",
    ),
    (
        lambda x, y: x + y,
        (np.ones((3, 1), np.int32), np.ones((1, 4), np.float32)),
        """{ lambda ; a:i32[3,1] b:f32[1,4]. let
    c:f32[3,1] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[3,4] = add c b
  in (d,) }""",
    ),
    (
        lambda x, y: x + y,
        (f32, m),
        """{ lambda ; a:f32[3] b:f32[2,3]. let
    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a
    d:f32[2,3] = add c b
  in (d,) }""",
    ),
    (
        lambda x: x + 2,
        (np.ones((3, 1), ml_dtypes.bfloat16),),
        "{ lambda ; a:bf16[3,1]. let b:bf16[3,1] = add a 2.0:bf16[] in (b,) }",
    ),
    (
        lambda x: x + np.float32(2),
        (np.ones((3, 1), ml_dtypes.bfloat16),),
        """{ lambda ; a:bf16[3,1]. let
    b:f32[3,1] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[3,1] = add b 2.0:f32[]
  in (c,) }""",
    ),
    (lambda x: x < 2, (f32,), "{ lambda ; a:f32[3]. let b:bool[3] = lt a 2.0:f32[] in (b,) }"),
]


@pytest.mark.parametrize(("fun", "args", "text"), CASES)
def test_make_jaxpr_prints_like_jax(fun, args, text):
    closed = make_jaxpr(fun)(*args)
    assert str(closed) == text


@pytest.mark.parametrize(("fun", "args", "text"), CASES)
def test_printed_jaxprs_read_back(fun, args, text):
    # Literals read back strongly typed (the text has no weak types), so compare the
    # re-printed text and each equation's params (restored by the completion rules).
    closed = make_jaxpr(fun)(*args)
    parsed = parse_closed_jaxpr(text, consts=closed.consts)
    assert str(parsed) == text
    for got, want in zip(parsed.eqns, closed.eqns, strict=True):
        assert got.primitive is want.primitive
        assert got.params == want.params


def test_operators_run_eagerly():
    x = device_put(np.arange(4, dtype=np.float32))
    y = x * 2 + 1
    np.testing.assert_array_equal(np.asarray(y), np.arange(4) * 2 + 1)
    assert not y.weak_type and y.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(3 - x), 3 - np.arange(4))
    np.testing.assert_array_equal(np.asarray(x < 2), np.arange(4) < 2)
    np.testing.assert_array_equal(np.asarray(x == x), np.ones(4, bool))
    mat = device_put(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(np.asarray(mat @ np.ones(3, np.float32)), [3, 12])
    row = device_put(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(mat + row), np.arange(6).reshape(2, 3) + np.arange(3))
    i = device_put(np.arange(3, dtype=np.int32))
    half = i / 2
    assert half.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(half), np.arange(3) / 2)
    assert (x == "a") is False
