"""slice and the static _in_dim / index_ helpers: values against NumPy, gradients
against numerical derivatives, vmap against a Python loop, JAX 0.10.2's printed Jaxprs
and error messages."""

from __future__ import annotations

import numpy as np
import pytest
from shape_helpers import total, vmap_matches_loop

from lamina import lax
from lamina.interpreters import grad, jit, make_jaxpr
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(1)
f32 = np.float32


# ------------------------------------------------------------------ slice


@pytest.mark.parametrize(
    ("start", "limit", "strides"),
    [
        ((1, 0), (3, 4), None),
        ((0, 1), (3, 4), (2, 2)),
        ((0, 0), (0, 4), None),
        ((2, 1), (3, 4), (1, 3)),
    ],
)
def test_slice_matches_numpy(start, limit, strides):
    x = rng.standard_normal((3, 4)).astype(f32)
    steps = strides or (1, 1)
    want = x[tuple(slice(s, e, st) for s, e, st in zip(start, limit, steps, strict=True))]
    np.testing.assert_array_equal(np.asarray(lax.slice(x, start, limit, strides)), want)
    got = jit(lambda x: lax.slice(x, start, limit, strides))(x)
    np.testing.assert_array_equal(np.asarray(got), want)
    check_grads(lambda x: lax.slice(x, start, limit, strides), (x,), 2, modes=("fwd", "rev"))


def test_slice_jaxprs_match_jax():
    x = np.ones((3, 4), f32)
    assert (
        str(make_jaxpr(lambda x: lax.slice(x, (1, 0), (3, 4)))(x))
        == """\
{ lambda ; a:f32[3,4]. let
    b:f32[2,4] = slice[limit_indices=(3, 4) start_indices=(1, 0) strides=None] a
  in (b,) }"""
    )
    assert (
        str(make_jaxpr(grad(lambda x: total(lax.slice(x, (1, 0), (3, 4), (1, 2)))))(x))
        == """\
{ lambda ; a:f32[3,4]. let
    b:f32[2,2] = slice[limit_indices=(3, 4) start_indices=(1, 0) strides=(1, 2)] a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
    c:f32[2,2] = broadcast_in_dim 1.0:f32[]
    d:f32[3,4] = pad[padding_config=((1, 0, 0), (0, 1, 1))] c 0.0:f32[]
  in (d,) }"""
    )


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_slice_vmap(axis):
    xb = np.moveaxis(rng.standard_normal((2, 5, 4)).astype(f32), 0, axis)
    vmap_matches_loop(lambda x: lax.slice(x, (1, 0), (5, 3), (2, 1)), (xb,), (axis,))
    vmap_matches_loop(lambda x: lax.slice(x, (1, 0), (5, 3)), (xb,), (axis,))


@pytest.mark.parametrize(
    ("start", "limit", "strides", "message"),
    [
        (
            (1, 0),
            (3, 5),
            None,
            (
                "slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
                "(2, 5) for operand shape (3, 4)."
            ),
        ),
        (
            (-1, 0),
            (3, 4),
            None,
            (
                "slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
                "(4, 4) for operand shape (3, 4)."
            ),
        ),
        (
            (2, 0),
            (1, 4),
            None,
            "slice slice_sizes must be greater than or equal to zero, got slice_sizes of (-1, 4).",
        ),
        (
            (0, 0),
            (3, 4),
            (1,),
            (
                "slice strides must have length equal to the number of dimensions of the operand, "
                "got strides (1,) for operand shape (3, 4)."
            ),
        ),
    ],
)
def test_slice_errors(start, limit, strides, message):
    with pytest.raises(TypeError) as info:
        lax.slice(np.ones((3, 4), f32), start, limit, strides)
    assert str(info.value) == message


def test_unstrided_slice_clamps_its_start_as_jax_does():
    x = np.arange(12, dtype=f32).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(lax.slice(x, (-1, 0), (1, 4))), x[:2])
    np.testing.assert_array_equal(np.asarray(lax.slice(x, (2, 0), (4, 4))), x[1:])
    g = grad(lambda x: total(lax.slice(x, (2, 0), (4, 4))))(x)
    np.testing.assert_array_equal(np.asarray(g), np.array([[0] * 4, [1] * 4, [1] * 4], f32))


def test_strided_slice_errors():
    x = np.ones((3, 4), f32)
    cases = [
        (
            (1, 0),
            (3, 5),
            (
                "slice limit_indices must be less than or equal to operand shape, got "
                "limit_indices (3, 5) for operand shape (3, 4)."
            ),
        ),
        (
            (-1, 0),
            (3, 4),
            "slice start_indices must have every element be nonnegative, got (-1, 0).",
        ),
        (
            (2, 0),
            (1, 4),
            (
                "slice limit_indices must be greater than or equal to start_indices, got "
                "start_indices (2, 0) and limit_indices (1, 4)."
            ),
        ),
    ]
    for start, limit, message in cases:
        with pytest.raises(TypeError) as info:
            lax.slice(x, start, limit, (1, 1))
        assert str(info.value) == message
    with pytest.raises(TypeError) as info:
        lax.slice(x, (0, 0), (3, 4), (1, -1))
    assert str(info.value) == "slice strides must have every element be nonnegative, got (1, -1)."


def test_slice_in_dim_and_index_in_dim():
    x = rng.standard_normal((3, 5)).astype(f32)
    np.testing.assert_array_equal(np.asarray(lax.slice_in_dim(x, -3, None, 2, 1)), x[:, -3::2])
    np.testing.assert_array_equal(np.asarray(lax.slice_in_dim(x, None, 2)), x[:2])
    np.testing.assert_array_equal(np.asarray(lax.index_in_dim(x, -1, 1, False)), x[:, -1])
    np.testing.assert_array_equal(np.asarray(lax.index_in_dim(x, 1)), x[1:2])
    with pytest.raises(IndexError, match=r"^index 5 is out of bounds for axis 1 with size 5$"):
        lax.index_in_dim(x, 5, 1, False)
    assert (
        str(make_jaxpr(lambda x: lax.index_in_dim(x, -1, 1, False))(x))
        == """\
{ lambda ; a:f32[3,5]. let
    b:f32[3,1] = slice[limit_indices=(3, 5) start_indices=(0, 4) strides=(1, 1)] a
    c:f32[3] = squeeze[dimensions=(1,)] b
  in (c,) }"""
    )
