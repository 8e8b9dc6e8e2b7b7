"""stack, unstack, tile and the functions that make or widen arrays (full, full_like,
broadcast, collapse, ...), and every shape operation across dtypes: values against NumPy,
gradients against numerical derivatives, vmap against a Python loop, JAX 0.10.2's
printed Jaxprs and error messages."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from shape_helpers import numpy_pad, total, vmap_matches_loop

from lamina import lax
from lamina.interpreters import grad, make_jaxpr
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(0)
f32 = np.float32


# ------------------------------------------------------------------ stack, unstack, tile


def test_stack_and_unstack():
    x, y = (rng.standard_normal((3, 4)).astype(f32) for _ in range(2))
    for axis in (0, 1, 2, -1):
        np.testing.assert_array_equal(np.asarray(lax.stack([x, y], axis)), np.stack([x, y], axis))
        pieces = lax.unstack(np.stack([x, y, x], axis), axis)
        assert isinstance(pieces, tuple) and len(pieces) == 3
        np.testing.assert_array_equal(np.asarray(pieces[1]), y)
    check_grads(lambda x, y: lax.stack([x, y, x], 1), (x, y), 2, modes=("fwd", "rev"))
    check_grads(lambda x: lax.unstack(x, 1)[2], (x,), 2, modes=("fwd", "rev"))
    check_grads(lambda x: lax.unstack(x, 0), (x,), 1, modes=("fwd", "rev"))
    weak = lax.stack([1.0, 2.0], 0)
    assert weak.aval.weak_type and weak.dtype == f32
    with pytest.raises(
        ValueError, match=r"^All input arrays must have the same shape\. Got \(3, 4\), \(3, 3\)\."
    ):
        lax.stack([x, np.ones((3, 3), f32)], 0)
    with pytest.raises(ValueError, match=r"^axis 3 is out of bounds for array of dimension 3"):
        lax.stack([x], 3)
    with pytest.raises(ValueError, match=r"^axis 2 is out of bounds for array of dimension 2"):
        lax.unstack(x, 2)


@pytest.mark.parametrize(("xd", "yd"), [(0, 0), (2, None), (None, 1)])
def test_stack_unstack_vmap(xd, yd):
    x = rng.standard_normal((2, 3, 4)).astype(f32)
    y = rng.standard_normal((2, 3, 4)).astype(f32)
    x = x[0] if xd is None else np.moveaxis(x, 0, xd)
    y = y[0] if yd is None else np.moveaxis(y, 0, yd)
    vmap_matches_loop(lambda x, y: lax.stack([x, y], 1), (x, y), (xd, yd))
    if xd is not None:
        vmap_matches_loop(lambda x: lax.stack(lax.unstack(x, 1)[::-1], 0), (x,), (xd,))


def test_tile():
    x = rng.standard_normal((3, 4)).astype(f32)
    np.testing.assert_array_equal(np.asarray(lax.tile(x, (2, 3))), np.tile(x, (2, 3)))
    np.testing.assert_array_equal(np.asarray(lax.tile(x, (0, 1))), np.tile(x, (0, 1)))
    check_grads(lambda x: lax.tile(x, (2, 3)), (x,), 2, modes=("fwd", "rev"))
    for axis in range(3):
        xb = np.moveaxis(rng.standard_normal((2, 3, 4)).astype(f32), 0, axis)
        vmap_matches_loop(lambda x: lax.tile(x, (1, 2)), (xb,), (axis,))
    assert (
        str(make_jaxpr(grad(lambda x: total(lax.tile(x, (2, 1)))))(x))
        == """\
{ lambda ; a:f32[3,4]. let
    b:f32[6,4] = tile[reps=(2, 1)] a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
    c:f32[6,4] = broadcast_in_dim 1.0:f32[]
    d:f32[2,3,1,4] = reshape[
      dimensions=None
      new_sizes=(2, 3, 1, 4)
      sharding=None
    ] c
    e:f32[3,4] = reduce_sum[axes=(0, 2) out_sharding=None] d
  in (e,) }"""
    )
    with pytest.raises(
        TypeError,
        match=r"^reps length must be equal to the ndim of x, got len\(reps\)=1 and x\.ndim=2\.",
    ):
        lax.tile(x, (2,))


# ------------------------------------------------------------------ full, broadcast, collapse


def test_full_and_full_like_dtypes_and_weak_types():
    x = np.ones((3, 4), f32)
    cases = [
        (lax.full((2,), 1), np.int32, True, [1, 1]),
        (lax.full((2,), 1, np.float16), np.float16, False, [1, 1]),
        (lax.full((), np.float16(2.5)), np.float16, False, 2.5),
        (lax.full_like(x, 1), np.float32, False, np.ones((3, 4))),
        (lax.full_like(1.0, 1), np.float32, True, 1.0),
        (lax.full_like(np.ones(3, np.int64), 7), np.int32, False, [7, 7, 7]),
        (lax.full_like(x, 1, shape=(2,)), np.float32, False, [1, 1]),
        (lax.full_like(x, 3.7, np.int8), np.int8, False, np.full((3, 4), 3)),
        (lax.full_like(np.arange(2), True, np.bool_), np.bool_, False, [True, True]),
    ]
    for got, dtype, weak, want in cases:
        assert got.dtype == dtype
        assert got.aval.weak_type is weak
        np.testing.assert_array_equal(np.asarray(got), want)
    assert (
        str(make_jaxpr(lambda x, f: lax.full_like(x, f))(x, 2))
        == """\
{ lambda ; a:f32[3,4] b:i32[]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[3,4] = broadcast_in_dim c
  in (d,) }"""
    )
    assert str(make_jaxpr(lambda: lax.full((2, 3), 1.0))()) == (
        "{ lambda ; . let a:f32[2,3] = broadcast_in_dim 1.0:f32[] in (a,) }"
    )
    with pytest.raises(
        TypeError,
        match=r"^full must be called with scalar fill_value, got fill_value\.shape \(2,\)\.",
    ):
        lax.full((2,), np.ones(2))
    with pytest.raises(
        TypeError,
        match=r"^broadcast_in_dim shape must have every element be nonnegative, got \(-2,\)\.",
    ):
        lax.full((-2,), 1.0)


def test_full_grads_through_fill_value():
    g = grad(lambda v: total(lax.full((2, 3), v)))(f32(1.5))
    assert float(g) == 6.0
    g = grad(lambda v: total(lax.full_like(np.ones(4, f32), v)))(f32(1.5))
    assert float(g) == 4.0


def test_broadcast_functions_and_collapse():
    x = rng.standard_normal((3, 4)).astype(f32)
    np.testing.assert_array_equal(np.asarray(lax.broadcast(x, (2,))), np.broadcast_to(x, (2, 3, 4)))
    out = lax.broadcast_to_rank(x, 4)
    assert out.shape == (1, 1, 3, 4)
    assert lax.broadcast_to_rank(x, 1).shape == (3, 4)
    weak = lax.broadcast_to_rank(2.0, 1)
    assert weak.shape == (1,) and weak.aval.weak_type
    assert lax.broadcast_shapes((3, 1), (4,)) == (3, 4)
    assert lax.broadcast_shapes((2, 1, 5), (1, 4, 1), (5,)) == (2, 4, 5)
    with pytest.raises(
        ValueError, match=r"^Incompatible shapes for broadcasting: shapes=\[\(3, 2\), \(4,\)\]"
    ):
        lax.broadcast_shapes((3, 2), (4,))
    np.testing.assert_array_equal(
        np.asarray(lax.broadcast_like(x[0], x)), np.broadcast_to(x[0], x.shape)
    )
    with pytest.raises(
        ValueError,
        match=r"^Cannot broadcast to shape with fewer dimensions: arr_shape=\(3, 4\) shape=\(4,\)",
    ):
        lax.broadcast_like(x, x[0])
    y = np.arange(24, dtype=f32).reshape(2, 3, 4)
    assert lax.collapse(y, 1).shape == (2, 12)
    assert lax.collapse(y, 0, 2).shape == (6, 4)
    assert lax.collapse(y, -2, -1).shape == (2, 3, 4)
    np.testing.assert_array_equal(np.asarray(lax.collapse(y, 0)), y.ravel())
    with pytest.raises(
        ValueError, match=r"^Invalid dimension range passed to collapse: \(2, 3, 4\)\[2:1\]"
    ):
        lax.collapse(y, 2, 1)
    with pytest.raises(
        TypeError,
        match=r"^broadcast_in_dim shape must have every element be nonnegative, got \(-1, 3, 4\)",
    ):
        lax.broadcast(x, (-1,))


# ------------------------------------------------------------------ dtypes


DTYPES = [np.bool_, np.int8, np.uint16, np.int32, np.float16, "bfloat16", np.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_shape_op_keeps_its_dtype(dtype):

    dtype = np.dtype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    x = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    fill = np.ones((), dtype)
    cases = [
        (lax.rev(x, (1,)), x[:, ::-1]),
        (lax.pad(x, fill, [(1, 0, 1), (0, -1, 0)]), numpy_pad(x, fill, [(1, 0, 1), (0, -1, 0)])),
        (lax.concatenate([x, x], 1), np.concatenate([x, x], 1)),
        (lax.split(x, (1, 2), 0)[1], x[1:]),
        (lax.squeeze(x[None], (0,)), x),
        (lax.stack([x, x], 2), np.stack([x, x], 2)),
        (lax.unstack(x, 1)[3], x[:, 3]),
        (lax.tile(x, (1, 2)), np.tile(x, (1, 2))),
        (lax.full((2,), fill), np.full(2, fill)),
        (lax.slice(x, (0, 1), (3, 4), (2, 2)), x[0:3:2, 1:4:2]),
        (lax.dynamic_slice(x, (1, 2), (2, 2)), x[1:3, 2:4]),
        (
            lax.dynamic_update_slice(x, x[:1, :2], (2, 2)),
            np.block([[x[:2]], [x[2:, :2], x[:1, :2]]]),
        ),
    ]
    for got, want in cases:
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), want)
