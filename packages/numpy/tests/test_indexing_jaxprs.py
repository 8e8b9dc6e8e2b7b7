"""Jaxprs of integer-and-slice indexing recorded from JAX 0.10.2: an in-bounds static
integer reads with ``slice``; one out of bounds (or a 0-d array index) makes JAX read
every start at run time with one ``dynamic_slice``, out-of-bounds reads clamped; other
modes and updates take ``gather`` / ``scatter`` with the integer as given."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import jit, make_jaxpr

# (expression on x, shape of x = arange(...) as float32, value, Jaxpr)
# recorded from JAX 0.10.2
CASES = [
    (
        "x[5]",
        (3,),
        2.0,
        """\
{ lambda ; a:f32[3]. let
    b:bool[] = lt 5:i32[] 0:i32[]
    c:i32[] = add 5:i32[] 3:i32[]
    d:i32[] = select_n b 5:i32[] c
    e:f32[1] = dynamic_slice[slice_sizes=(1,)] a d
    f:f32[] = squeeze[dimensions=(0,)] e
  in (f,) }""",
    ),
    (
        "x[-5]",
        (3,),
        0.0,
        """\
{ lambda ; a:f32[3]. let
    b:bool[] = lt -5:i32[] 0:i32[]
    c:i32[] = add -5:i32[] 3:i32[]
    d:i32[] = select_n b -5:i32[] c
    e:f32[1] = dynamic_slice[slice_sizes=(1,)] a d
    f:f32[] = squeeze[dimensions=(0,)] e
  in (f,) }""",
    ),
    (
        "x[3]",
        (3,),
        2.0,
        """\
{ lambda ; a:f32[3]. let
    b:bool[] = lt 3:i32[] 0:i32[]
    c:i32[] = add 3:i32[] 3:i32[]
    d:i32[] = select_n b 3:i32[] c
    e:f32[1] = dynamic_slice[slice_sizes=(1,)] a d
    f:f32[] = squeeze[dimensions=(0,)] e
  in (f,) }""",
    ),
    (
        "x[np.int8(-5)]",
        (3,),
        0.0,
        """\
{ lambda ; a:f32[3]. let
    b:bool[] = lt -5:i8[] 0:i8[]
    c:i8[] = add -5:i8[] 3:i8[]
    d:i8[] = select_n b -5:i8[] c
    e:f32[1] = dynamic_slice[slice_sizes=(1,)] a d
    f:f32[] = squeeze[dimensions=(0,)] e
  in (f,) }""",
    ),
    (
        "x[np.uint32(5)]",
        (3,),
        2.0,
        """\
{ lambda ; a:f32[3]. let
    b:f32[1] = dynamic_slice[slice_sizes=(1,)] a 5:u32[]
    c:f32[] = squeeze[dimensions=(0,)] b
  in (c,) }""",
    ),
    (
        "x[5, 1:]",
        (3, 4),
        [9.0, 10.0, 11.0],
        """\
{ lambda ; a:f32[3,4]. let
    b:bool[] = lt 5:i32[] 0:i32[]
    c:i32[] = add 5:i32[] 3:i32[]
    d:i32[] = select_n b 5:i32[] c
    e:bool[] = lt 1:i32[] 0:i32[]
    f:i32[] = add 1:i32[] 4:i32[]
    g:i32[] = select_n e 1:i32[] f
    h:f32[1,3] = dynamic_slice[slice_sizes=(1, 3)] a d g
    i:f32[3] = squeeze[dimensions=(0,)] h
  in (i,) }""",
    ),
    (
        "x[1, 7]",
        (3, 4),
        7.0,
        """\
{ lambda ; a:f32[3,4]. let
    b:bool[] = lt 1:i32[] 0:i32[]
    c:i32[] = add 1:i32[] 3:i32[]
    d:i32[] = select_n b 1:i32[] c
    e:bool[] = lt 7:i32[] 0:i32[]
    f:i32[] = add 7:i32[] 4:i32[]
    g:i32[] = select_n e 7:i32[] f
    h:f32[1,1] = dynamic_slice[slice_sizes=(1, 1)] a d g
    i:f32[] = squeeze[dimensions=(0, 1)] h
  in (i,) }""",
    ),
    (
        "x[None, 5]",
        (3, 4),
        [[8.0, 9.0, 10.0, 11.0]],
        """\
{ lambda ; a:f32[3,4]. let
    b:bool[] = lt 5:i32[] 0:i32[]
    c:i32[] = add 5:i32[] 3:i32[]
    d:i32[] = select_n b 5:i32[] c
    e:bool[] = lt 0:i32[] 0:i32[]
    f:i32[] = add 0:i32[] 4:i32[]
    g:i32[] = select_n e 0:i32[] f
    h:f32[1,4] = dynamic_slice[slice_sizes=(1, 4)] a d g
    i:f32[4] = squeeze[dimensions=(0,)] h
    j:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] i
  in (j,) }""",
    ),
    (
        "x[..., 9]",
        (3, 4),
        [3.0, 7.0, 11.0],
        """\
{ lambda ; a:f32[3,4]. let
    b:bool[] = lt 0:i32[] 0:i32[]
    c:i32[] = add 0:i32[] 3:i32[]
    d:i32[] = select_n b 0:i32[] c
    e:bool[] = lt 9:i32[] 0:i32[]
    f:i32[] = add 9:i32[] 4:i32[]
    g:i32[] = select_n e 9:i32[] f
    h:f32[3,1] = dynamic_slice[slice_sizes=(3, 1)] a d g
    i:f32[3] = squeeze[dimensions=(1,)] h
  in (i,) }""",
    ),
    (
        "x[5, ::-1]",
        (3, 4),
        [11.0, 10.0, 9.0, 8.0],
        """\
{ lambda ; a:f32[3,4]. let
    b:bool[] = lt 5:i32[] 0:i32[]
    c:i32[] = add 5:i32[] 3:i32[]
    d:i32[] = select_n b 5:i32[] c
    e:bool[] = lt 0:i32[] 0:i32[]
    f:i32[] = add 0:i32[] 4:i32[]
    g:i32[] = select_n e 0:i32[] f
    h:f32[1,4] = dynamic_slice[slice_sizes=(1, 4)] a d g
    i:f32[1,4] = rev[dimensions=(1,)] h
    j:f32[4] = squeeze[dimensions=(0,)] i
  in (j,) }""",
    ),
    (
        "x[5, None, 1:3]",
        (3, 4),
        [[9.0, 10.0]],
        """\
{ lambda ; a:f32[3,4]. let
    b:bool[] = lt 5:i32[] 0:i32[]
    c:i32[] = add 5:i32[] 3:i32[]
    d:i32[] = select_n b 5:i32[] c
    e:bool[] = lt 1:i32[] 0:i32[]
    f:i32[] = add 1:i32[] 4:i32[]
    g:i32[] = select_n e 1:i32[] f
    h:f32[1,2] = dynamic_slice[slice_sizes=(1, 2)] a d g
    i:f32[2] = squeeze[dimensions=(0,)] h
    j:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] i
  in (j,) }""",
    ),
    (
        "x[-3, ..., 1]",
        (2, 3, 4),
        [1.0, 5.0, 9.0],
        """\
{ lambda ; a:f32[2,3,4]. let
    b:bool[] = lt -3:i32[] 0:i32[]
    c:i32[] = add -3:i32[] 2:i32[]
    d:i32[] = select_n b -3:i32[] c
    e:bool[] = lt 0:i32[] 0:i32[]
    f:i32[] = add 0:i32[] 3:i32[]
    g:i32[] = select_n e 0:i32[] f
    h:bool[] = lt 1:i32[] 0:i32[]
    i:i32[] = add 1:i32[] 4:i32[]
    j:i32[] = select_n h 1:i32[] i
    k:f32[1,3,1] = dynamic_slice[slice_sizes=(1, 3, 1)] a d g j
    l:f32[3] = squeeze[dimensions=(0, 2)] k
  in (l,) }""",
    ),
    (
        "x[1, None, 2]",
        (3, 4),
        [6.0],
        """\
{ lambda ; a:f32[3,4]. let
    b:f32[1,1] = slice[limit_indices=(2, 3) start_indices=(1, 2) strides=None] a
    c:f32[] = squeeze[dimensions=(0, 1)] b
    d:f32[1] = broadcast_in_dim c
  in (d,) }""",
    ),
    (
        "x[1, ::-1, None]",
        (3, 4),
        [[7.0], [6.0], [5.0], [4.0]],
        """\
{ lambda ; a:f32[3,4]. let
    b:f32[1,4] = slice[limit_indices=(2, 4) start_indices=(1, 0) strides=None] a
    c:f32[1,4] = rev[dimensions=(1,)] b
    d:f32[4] = squeeze[dimensions=(0,)] c
    e:f32[4,1] = broadcast_in_dim[broadcast_dimensions=(0,)] d
  in (e,) }""",
    ),
    (
        "x[np.array(1)]",
        (3,),
        1.0,
        """\
{ lambda ; a:f32[3]. let
    b:bool[] = lt 1:i32[] 0:i32[]
    c:i32[] = add 1:i32[] 3:i32[]
    d:i32[] = select_n b 1:i32[] c
    e:f32[1] = dynamic_slice[slice_sizes=(1,)] a d
    f:f32[] = squeeze[dimensions=(0,)] e
  in (f,) }""",
    ),
    (
        "x.at[5, 1:].get()",
        (3, 4),
        [9.0, 10.0, 11.0],
        """\
{ lambda ; a:f32[3,4]. let
    b:bool[] = lt 5:i32[] 0:i32[]
    c:i32[] = add 5:i32[] 3:i32[]
    d:i32[] = select_n b 5:i32[] c
    e:bool[] = lt 1:i32[] 0:i32[]
    f:i32[] = add 1:i32[] 4:i32[]
    g:i32[] = select_n e 1:i32[] f
    h:f32[1,3] = dynamic_slice[slice_sizes=(1, 3)] a d g
    i:f32[3] = squeeze[dimensions=(0,)] h
  in (i,) }""",
    ),
    (
        "x.at[5].get(mode='clip')",
        (3,),
        2.0,
        """\
{ lambda ; a:f32[3]. let
    b:f32[1] = slice[limit_indices=(3,) start_indices=(2,) strides=None] a
    c:f32[] = squeeze[dimensions=(0,)] b
  in (c,) }""",
    ),
    (
        "x.at[-1].get(wrap_negative_indices=False)",
        (3,),
        0.0,
        """\
{ lambda ; a:f32[3]. let
    b:f32[1] = dynamic_slice[slice_sizes=(1,)] a -1:i32[]
    c:f32[] = squeeze[dimensions=(0,)] b
  in (c,) }""",
    ),
    (
        "x.at[5].get(mode='fill', fill_value=-1)",
        (3,),
        -1.0,
        """\
{ lambda ; a:f32[3]. let
    b:i32[1] = broadcast_in_dim 5:i32[]
    c:f32[] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=-1
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      slice_sizes=(1,)
      unique_indices=True
    ] a b
  in (c,) }""",  # noqa: E501
    ),
    (
        "x.at[5].set(9.0)",
        (3,),
        [0.0, 1.0, 2.0],
        """\
{ lambda ; a:f32[3]. let
    b:i32[1] = broadcast_in_dim 5:i32[]
    c:f32[3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] a b 9.0:f32[]
  in (c,) }""",  # noqa: E501
    ),
    (
        "x.at[-5].set(9.0)",
        (3,),
        [0.0, 1.0, 2.0],
        """\
{ lambda ; a:f32[3]. let
    b:i32[1] = broadcast_in_dim -2:i32[]
    c:f32[3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] a b 9.0:f32[]
  in (c,) }""",  # noqa: E501
    ),
    (
        "x.at[5, 1:].set(9.0)",
        (3, 4),
        [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]],
        """\
{ lambda ; a:f32[3,4]. let
    b:i32[1] = broadcast_in_dim 5:i32[]
    c:i32[1] = broadcast_in_dim 1:i32[]
    d:i32[2] = concatenate[dimension=0] b c
    e:f32[3] = broadcast_in_dim 9.0:f32[]
    f:f32[3,4] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0, 1), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] a d e
  in (f,) }""",  # noqa: E501
    ),
]


@pytest.mark.parametrize(("expr", "shape", "value", "jaxpr"), CASES, ids=[c[0] for c in CASES])
def test_jaxpr_and_value_match_jax(expr, shape, value, jaxpr):
    x = jnp.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    f = eval("lambda x: " + expr)
    assert str(make_jaxpr(f)(x)) == jaxpr
    np.testing.assert_array_equal(np.asarray(f(x)), value)
    np.testing.assert_array_equal(np.asarray(jit(f)(x)), value)


def test_python_int_index_too_large_for_int32():
    # recorded from JAX 0.10.2
    with pytest.raises(
        OverflowError, match="Python int 1099511627776 too large to convert to int32"
    ):
        jnp.arange(3.0)[2**40]
