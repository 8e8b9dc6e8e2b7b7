"""dynamic_slice, dynamic_update_slice and their _in_dim helpers: XLA's clamping of
start indices, negative starts, index dtypes, gradients, vmap (batched starts become a
gather or a scatter, as in JAX), JAX 0.10.2's printed Jaxprs and error messages."""

from __future__ import annotations

import numpy as np
import pytest
from shape_helpers import total, vmap_matches_loop

from lamina import lax
from lamina.interpreters import grad, jit, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(2)
f32 = np.float32


# ------------------------------------------------------------------ dynamic_slice


def numpy_dynamic_slice(x, starts, sizes):
    """XLA's semantics: each start clamped into [0, dim - size]."""
    starts = [min(max(s, 0), d - n) for s, d, n in zip(starts, x.shape, sizes, strict=True)]
    return x[tuple(slice(s, s + n) for s, n in zip(starts, sizes, strict=True))]


def wrapped(starts, shape):
    return [s + d if s < 0 else s for s, d in zip(starts, shape, strict=True)]


@pytest.mark.parametrize("starts", [(0, 0), (1, 2), (5, -1), (-1, -6), (2, 3), (-3, 9)])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int8, np.uint32, np.int64])
def test_dynamic_slice_values(starts, index_dtype):
    x = np.arange(20, dtype=f32).reshape(4, 5)
    if np.issubdtype(index_dtype, np.unsignedinteger) and min(starts) < 0:
        return
    want = numpy_dynamic_slice(x, wrapped(starts, x.shape), (2, 3))
    got = lax.dynamic_slice(x, [index_dtype(s) for s in starts], (2, 3))
    np.testing.assert_array_equal(np.asarray(got), want)
    jitted = jit(lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)))
    got = jitted(x, np.asarray(starts[0], index_dtype), np.asarray(starts[1], index_dtype))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_dynamic_slice_negative_indices_not_allowed():
    x = np.arange(12, dtype=f32).reshape(3, 4)
    f = jit(lambda x, i: lax.dynamic_slice(x, (i, 2), (2, 2), allow_negative_indices=False))
    # not wrapped: -1 clamps to 0
    np.testing.assert_array_equal(np.asarray(f(x, -1)), x[0:2, 2:4])
    g = jit(lambda x, i: lax.dynamic_slice(x, (i, i), (2, 2), allow_negative_indices=(True, False)))
    np.testing.assert_array_equal(np.asarray(g(x, -1)), x[1:3, 0:2])
    with pytest.raises(ValueError) as info:
        lax.dynamic_slice(x, (-1, 0), (2, 2), allow_negative_indices=False)
    assert str(info.value) == (
        "Index -1 is out of bounds for dimension 3 if allow_negative_indices=False"
    )


def test_dynamic_slice_index_arrays():
    x = np.arange(12, dtype=f32).reshape(3, 4)
    np.testing.assert_array_equal(
        np.asarray(lax.dynamic_slice(x, np.array([1, -1]), (2, 2))), x[1:3, 2:4]
    )
    f = jit(lambda x, idx: lax.dynamic_slice(x, idx, (2, 2)))
    np.testing.assert_array_equal(np.asarray(f(x, np.array([2, 1], np.int32))), x[1:3, 1:3])


def test_dynamic_slice_jaxprs_match_jax():
    x = np.ones((3, 4), f32)
    assert (
        str(make_jaxpr(lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2)))(x, 1))
        == """\
{ lambda ; a:f32[3,4] b:i32[]. let
    c:bool[] = lt b 0:i32[]
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    e:i32[] = add d 3:i32[]
    f:i32[] = select_n c b e
    g:f32[2,2] = dynamic_slice[slice_sizes=(2, 2)] a f 1:i32[]
  in (g,) }"""
    )
    i16 = np.int16(1)
    assert (
        str(make_jaxpr(lambda x, i: lax.dynamic_slice(x, (i, i), (2, 2)))(x, i16))
        == """\
{ lambda ; a:f32[3,4] b:i16[]. let
    c:bool[] = lt b 0:i16[]
    d:i16[] = add b 3:i16[]
    e:i16[] = select_n c b d
    f:bool[] = lt b 0:i16[]
    g:i16[] = add b 4:i16[]
    h:i16[] = select_n f b g
    i:f32[2,2] = dynamic_slice[slice_sizes=(2, 2)] a e h
  in (i,) }"""
    )
    jaxpr = make_jaxpr(grad(lambda x, i: total(lax.dynamic_slice(x, (i, 1), (2, 2)))))
    assert (
        str(jaxpr(x, 1))
        == """\
{ lambda ; a:f32[3,4] b:i32[]. let
    c:bool[] = lt b 0:i32[]
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    e:i32[] = add d 3:i32[]
    f:i32[] = select_n c b e
    g:f32[2,2] = dynamic_slice[slice_sizes=(2, 2)] a f 1:i32[]
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] g
    h:f32[2,2] = broadcast_in_dim 1.0:f32[]
    i:f32[3,4] = broadcast_in_dim 0.0:f32[]
    j:f32[3,4] = dynamic_update_slice i h f 1:i32[]
  in (j,) }"""
    )


def test_dynamic_slice_grads():
    x = rng.standard_normal((4, 5)).astype(f32)
    for starts in [(1, 2), (3, -1), (-9, 0)]:
        check_grads(
            lambda x, s=starts: lax.dynamic_slice(x, s, (2, 3)), (x,), 2, modes=("fwd", "rev")
        )
    f = jit(lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 3)))
    check_grads(lambda x: f(x, np.int32(1)), (x,), 2, modes=("fwd", "rev"))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_dynamic_slice_vmap_batched_operand(axis):
    xb = np.moveaxis(rng.standard_normal((3, 4, 5)).astype(f32), 0, axis)
    vmap_matches_loop(lambda x: lax.dynamic_slice(x, (1, -2), (2, 2)), (xb,), (axis,))
    vmap_matches_loop(
        lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2)), (xb, np.int32(3)), (axis, None)
    )


def test_dynamic_slice_errors():
    x = np.ones((3, 4), f32)
    cases = [
        (
            lambda: lax.dynamic_slice(x, (1,), (2, 2)),
            ValueError,
            "Length of slice indices must match number of operand dimensions (1 vs (3, 4))",
        ),
        (
            lambda: lax.dynamic_slice(x, (1, 1), (4, 2)),
            TypeError,
            (
                "slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
                "(4, 2) for operand shape (3, 4)."
            ),
        ),
        (
            lambda: lax.dynamic_slice(x, (1, 1), (-1, 2)),
            TypeError,
            "slice slice_sizes must be greater than or equal to zero, got slice_sizes of (-1, 2).",
        ),
        (
            lambda: lax.dynamic_slice(x, (1.0, 1), (1, 2)),
            TypeError,
            (
                "index arguments to dynamic_slice must be integers of the same type, got: "
                "float32, int32"
            ),
        ),
        (
            lambda: lax.dynamic_slice(x, (1, np.int16(1)), (1, 2)),
            TypeError,
            "index arguments to dynamic_slice must be integers of the same type, got: int32, int16",
        ),
    ]
    for f, error, message in cases:
        with pytest.raises(error) as info:
            f()
        assert str(info.value) == message


# ------------------------------------------------------------------ dynamic_update_slice


def numpy_dynamic_update_slice(x, update, starts):
    starts = [min(max(s, 0), d - n) for s, d, n in zip(starts, x.shape, update.shape, strict=True)]
    out = x.copy()
    out[tuple(slice(s, s + n) for s, n in zip(starts, update.shape, strict=True))] = update
    return out


@pytest.mark.parametrize("starts", [(0, 0), (1, 2), (5, -1), (-1, -6)])
def test_dynamic_update_slice_values(starts):
    x = np.arange(20, dtype=f32).reshape(4, 5)
    u = -np.arange(6, dtype=f32).reshape(2, 3)
    want = numpy_dynamic_update_slice(x, u, wrapped(starts, x.shape))
    np.testing.assert_array_equal(np.asarray(lax.dynamic_update_slice(x, u, starts)), want)
    f = jit(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)))
    np.testing.assert_array_equal(np.asarray(f(x, u, *starts)), want)
    ints = lax.dynamic_update_slice(np.zeros(4, np.int8), np.ones(2, np.int8), (np.uint8(3),))
    np.testing.assert_array_equal(np.asarray(ints), [0, 0, 1, 1])


def test_dynamic_update_slice_grads_and_jaxpr():
    x = rng.standard_normal((4, 5)).astype(f32)
    u = rng.standard_normal((2, 3)).astype(f32)
    for starts in [(1, 2), (3, -1)]:
        check_grads(
            lambda x, u, s=starts: lax.dynamic_update_slice(x, u, s),
            (x, u),
            2,
            modes=("fwd", "rev"),
        )
    jaxpr = make_jaxpr(
        grad(lambda x, u, i: total(lax.dynamic_update_slice(x, u, (i, 1))), argnums=(0, 1))
    )
    assert (
        str(jaxpr(np.ones((3, 4), f32), np.ones((2, 2), f32), 1))
        == """\
{ lambda ; a:f32[3,4] b:f32[2,2] c:i32[]. let
    d:bool[] = lt c 0:i32[]
    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
    f:i32[] = add e 3:i32[]
    g:i32[] = select_n d c f
    h:f32[3,4] = dynamic_update_slice a b g 1:i32[]
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] h
    i:f32[3,4] = broadcast_in_dim 1.0:f32[]
    j:f32[2,2] = broadcast_in_dim 0.0:f32[]
    k:f32[3,4] = dynamic_update_slice i j g 1:i32[]
    l:f32[2,2] = dynamic_slice[slice_sizes=(2, 2)] i g 1:i32[]
  in (k, l) }"""
    )


@pytest.mark.parametrize(("xd", "ud"), [(0, 0), (1, None), (None, 2), (2, 1)])
def test_dynamic_update_slice_vmap(xd, ud):
    x = rng.standard_normal((3, 4, 5)).astype(f32)
    u = rng.standard_normal((3, 2, 3)).astype(f32)
    x = x[0] if xd is None else np.moveaxis(x, 0, xd)
    u = u[0] if ud is None else np.moveaxis(u, 0, ud)
    vmap_matches_loop(lambda x, u: lax.dynamic_update_slice(x, u, (1, -1)), (x, u), (xd, ud))


def test_dynamic_update_slice_errors():
    x = np.ones((3, 4), f32)
    cases = [
        (
            lambda: lax.dynamic_update_slice(x, np.ones((2, 2), f32), (5,)),
            ValueError,
            "Length of slice indices must match number of operand dimensions (1 vs (3, 4))",
        ),
        (
            lambda: lax.dynamic_update_slice(x, np.ones(2, f32), (5, 1)),
            TypeError,
            (
                "dynamic_update_slice update must have the same rank as operand, got update shape "
                "(2,) for operand shape (3, 4)."
            ),
        ),
        (
            lambda: lax.dynamic_update_slice(x, np.ones((4, 2), f32), (5, 1)),
            TypeError,
            (
                "dynamic_update_slice update shape must be smaller than operand shape, got update "
                "shape (4, 2) for operand shape (3, 4)."
            ),
        ),
        (
            lambda: lax.dynamic_update_slice(x, np.ones((2, 2), np.int32), (5, 1)),
            TypeError,
            (
                "lax.dynamic_update_slice requires arguments to have the same dtypes, got "
                "float32, int32."
            ),
        ),
    ]
    for f, error, message in cases:
        with pytest.raises(error) as info:
            f()
        assert str(info.value) == message


# ------------------------------------------------------------------ the _in_dim helpers


def test_dynamic_in_dim_helpers():
    x = rng.standard_normal((3, 5)).astype(f32)
    np.testing.assert_array_equal(np.asarray(lax.dynamic_slice_in_dim(x, -2, 2, 1)), x[:, 3:5])
    np.testing.assert_array_equal(np.asarray(lax.dynamic_index_in_dim(x, 1)), x[1:2])
    np.testing.assert_array_equal(np.asarray(lax.dynamic_index_in_dim(x, -1, 1, False)), x[:, 4])
    u = np.zeros((3, 2), f32)
    want = x.copy()
    want[:, 1:3] = 0
    np.testing.assert_array_equal(np.asarray(lax.dynamic_update_slice_in_dim(x, u, 1, 1)), want)
    want = x.copy()
    want[:, 4] = 7
    got = lax.dynamic_update_index_in_dim(x, np.full(3, 7, f32), -1, 1)
    np.testing.assert_array_equal(np.asarray(got), want)
    got = lax.dynamic_update_index_in_dim(x, np.full((3, 1), 7, f32), 4, -1)
    np.testing.assert_array_equal(np.asarray(got), want)
    check_grads(lambda x: lax.dynamic_index_in_dim(x, 2, 1, False), (x,), 2, modes=("fwd", "rev"))


def test_dynamic_index_in_dim_is_a_named_jit_as_in_jax():
    x = np.ones((3, 4), f32)
    assert (
        str(make_jaxpr(lambda x, i: lax.dynamic_index_in_dim(x, i, 1, False))(x, 1))
        == """\
{ lambda ; a:f32[3,4] b:i32[]. let
    c:f32[3] = jit[
      name=dynamic_index_in_dim
      jaxpr={ lambda ; a:f32[3,4] b:i32[]. let
          d:bool[] = lt b 0:i32[]
          e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
          f:i32[] = add e 4:i32[]
          g:i32[] = select_n d b f
          h:f32[3,1] = dynamic_slice[slice_sizes=(3, 1)] a 0:i32[] g
          c:f32[3] = squeeze[dimensions=(1,)] h
        in (c,) }
    ] a b
  in (c,) }"""
    )


# ------------------------------------------------------------------ vmap with batched starts


STARTS = np.array([0, -1, 2, 5, -7], np.int32)


@pytest.mark.parametrize("x_axis", [None, 0, 2])
def test_dynamic_slice_vmap_batched_starts(x_axis):
    x = rng.standard_normal((5, 3, 4)).astype(f32)
    x = x[0] if x_axis is None else np.moveaxis(x, 0, x_axis)
    f = lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2))  # noqa: E731
    vmap_matches_loop(f, (x, STARTS), (x_axis, 0))
    vmap_matches_loop(lambda x, i: lax.dynamic_slice(x, (-2, i), (2, 3)), (x, STARTS), (x_axis, 0))
    if x_axis is not None:
        check_grads(lambda x: vmap(f, (x_axis, 0))(x, STARTS), (x,), 1, modes=("fwd", "rev"))


def test_dynamic_slice_vmap_batched_starts_jaxpr_matches_jax():
    f = vmap(lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2)), (None, 0))
    assert (
        str(make_jaxpr(f)(np.ones((3, 4), f32), STARTS))
        == """\
{ lambda ; a:f32[3,4] b:i32[5]. let
    c:bool[5] = lt b 0:i32[]
    d:i32[5] = add b 3:i32[]
    e:i32[5] = select_n c b d
    f:i32[5,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:i32[5,1] = broadcast_in_dim 1:i32[]
    h:i32[5,2] = concatenate[dimension=1] f g
    i:f32[5,2,2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(), \
start_index_map=(0, 1), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.CLIP
      slice_sizes=(2, 2)
      unique_indices=False
    ] a h
  in (i,) }"""
    )


@pytest.mark.parametrize(("x_axis", "u_axis"), [(0, 0), (None, 1), (2, None), (None, None)])
def test_dynamic_update_slice_vmap_batched_starts(x_axis, u_axis):
    x = rng.standard_normal((5, 3, 4)).astype(f32)
    u = rng.standard_normal((5, 2, 2)).astype(f32)
    x = x[0] if x_axis is None else np.moveaxis(x, 0, x_axis)
    u = u[0] if u_axis is None else np.moveaxis(u, 0, u_axis)
    f = lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1))  # noqa: E731
    vmap_matches_loop(f, (x, u, STARTS), (x_axis, u_axis, 0))
    if x_axis is not None and u_axis is not None:
        g = vmap(f, (x_axis, u_axis, 0))
        check_grads(lambda x, u: g(x, u, STARTS), (x, u), 1, modes=("fwd", "rev"))
