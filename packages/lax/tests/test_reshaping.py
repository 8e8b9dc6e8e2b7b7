"""rev, pad, concatenate, split, squeeze and expand_dims: values
against NumPy, gradients against numerical derivatives, vmap against a Python loop,
JAX 0.10.2's printed Jaxprs and error messages."""

from __future__ import annotations

import numpy as np
import pytest
from shape_helpers import numpy_pad, total, vmap_matches_loop

from lamina import lax
from lamina.interpreters import grad, jit, make_jaxpr
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(0)
f32 = np.float32


# ------------------------------------------------------------------ rev


@pytest.mark.parametrize("dims", [(), (0,), (1,), (0, 2)])
def test_rev_matches_numpy(dims):
    x = rng.standard_normal((2, 3, 4)).astype(f32)
    np.testing.assert_array_equal(np.asarray(lax.rev(x, dims)), np.flip(x, dims))


def test_rev_of_ints_and_jaxpr():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = lax.rev(x, (1,))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), x[:, ::-1])
    assert str(make_jaxpr(lambda x: lax.rev(x, (0,)))(x.astype(f32))) == (
        "{ lambda ; a:f32[2,3]. let b:f32[2,3] = rev[dimensions=(0,)] a in (b,) }"
    )


def test_rev_grads_and_vmap():
    x = rng.standard_normal((3, 4)).astype(f32)
    check_grads(lambda x: lax.rev(x, (0, 1)), (x,), 2, modes=("fwd", "rev"))
    for axis in range(3):
        xb = rng.standard_normal((3, 4, 5)).astype(f32)
        vmap_matches_loop(lambda x: lax.rev(x, (1,)), (xb,), (axis,))


@pytest.mark.parametrize(
    ("dims", "message"),
    [
        (
            (2,),
            (
                "rev dimensions must all be less than operand ndim, got dimensions (2,) for "
                "operand ndim 2."
            ),
        ),
        ((0, 0), "rev dimensions must be unique, got (0, 0)."),
        ((-1,), "rev dimensions must have every element be nonnegative, got (-1,)."),
    ],
)
def test_rev_errors(dims, message):
    with pytest.raises(TypeError) as info:
        lax.rev(np.ones((3, 4), f32), dims)
    assert str(info.value) == message


# ------------------------------------------------------------------ pad


CONFIGS = [
    ((1, 2, 0), (0, 0, 0)),
    ((0, 0, 1), (2, 1, 2)),
    ((-1, 0, 0), (1, -2, 1)),
    ((-2, -1, 2), (0, 3, 0)),
]


@pytest.mark.parametrize("config", CONFIGS)
def test_pad_matches_reference(config):
    x = rng.standard_normal((3, 4)).astype(f32)
    got = lax.pad(x, f32(-7.0), config)
    np.testing.assert_array_equal(np.asarray(got), numpy_pad(x, -7.0, config))
    np.testing.assert_array_equal(np.asarray(jit(lambda x: lax.pad(x, f32(-7.0), config))(x)),
                                  numpy_pad(x, -7.0, config))  # fmt: skip


def test_pad_dtypes_and_weak_padding_value():
    x = np.arange(3, dtype=np.int32)
    out = lax.pad(x, -1, [(1, 1, 0)])  # a Python int is weakly typed: int32 accepted
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), [-1, 0, 1, 2, -1])
    b = lax.pad(np.array([True, True]), np.array(False), [(0, 1, 1)])
    np.testing.assert_array_equal(np.asarray(b), [True, False, True, False])
    with pytest.raises(
        TypeError,
        match=r"pad operand and padding_value must be same dtype: got float32 and int32\.",
    ):
        lax.pad(np.ones(3, f32), -1, [(1, 1, 0)])


@pytest.mark.parametrize("config", CONFIGS)
def test_pad_grads(config):
    x = rng.standard_normal((3, 4)).astype(f32)
    check_grads(
        lambda x, v: lax.pad(x, v, config), (x, f32(0.5)), 2, modes=("fwd", "rev"), eps=1e-3
    )


def test_pad_grad_jaxpr_matches_jax():
    x = np.ones((3, 4), f32)
    jaxpr = make_jaxpr(
        grad(lambda x, p: total(lax.pad(x, p, [(1, 2, 0), (-1, 0, 1)])), argnums=(0, 1))
    )
    assert (
        str(jaxpr(x, f32(1.0)))
        == """\
{ lambda ; a:f32[3,4] b:f32[]. let
    c:f32[6,6] = pad[padding_config=((1, 2, 0), (-1, 0, 1))] a b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[6,6] = broadcast_in_dim 1.0:f32[]
    e:f32[3,7] = pad[padding_config=((-1, -2, 0), (1, 0, 0))] d 0.0:f32[]
    f:f32[3,4] = slice[limit_indices=(3, 7) start_indices=(0, 0) strides=(1, 2)] e
    g:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
    h:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] f
    i:f32[] = sub g h
  in (f, i) }"""
    )


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_pad_vmap(axis):
    config = [(1, -1, 1), (0, 2, 0)]
    xb = np.moveaxis(rng.standard_normal((2, 3, 4)).astype(f32), 0, axis)
    values = rng.standard_normal(xb.shape[axis]).astype(f32)
    vmap_matches_loop(lambda x, v: lax.pad(x, v, config), (xb, values), (axis, 0))
    vmap_matches_loop(lambda x, v: lax.pad(x, v, config), (xb, f32(3.0)), (axis, None))
    x = rng.standard_normal((3, 4)).astype(f32)
    vmap_matches_loop(lambda x, v: lax.pad(x, v, config), (x, values[:2]), (None, 0))


@pytest.mark.parametrize(
    ("config", "value", "error", "message"),
    [
        (
            [(1, 1, 0)],
            0.0,
            ValueError,
            (
                "length of padding_config must equal the number of axes of operand, got "
                "padding_config ((1, 1, 0),) for operand shape (3, 4)"
            ),
        ),
        (
            [(1, 1, -1), (0, 0, 0)],
            0.0,
            ValueError,
            (
                "interior padding in padding_config must be nonnegative, got padding_config ((1, "
                "1, -1), (0, 0, 0))"
            ),
        ),
        (
            [(-3, -1, 0), (0, 0, 0)],
            0.0,
            ValueError,
            (
                "Dimension size after padding is not at least 0, got result shape (-1, 4), for "
                "padding_config ((-3, -1, 0), (0, 0, 0)) and operand shape (3, 4)"
            ),
        ),
        (
            [(1, 1, 0), (0, 0, 0)],
            np.ones(2, f32),
            ValueError,
            "padding_value must be a scalar; got np.shape(padding_value)=(2,)",
        ),
    ],
)
def test_pad_errors(config, value, error, message):
    with pytest.raises(error) as info:
        lax.pad(np.ones((3, 4), f32), value, config)
    assert str(info.value) == message


# ------------------------------------------------------------------ concatenate, split


def test_concatenate_values_grads_and_jaxpr():
    x = rng.standard_normal((3, 4)).astype(f32)
    y = rng.standard_normal((3, 2)).astype(f32)
    np.testing.assert_array_equal(np.asarray(lax.concatenate([x, y], 1)), np.concatenate([x, y], 1))
    np.testing.assert_array_equal(
        np.asarray(lax.concatenate([x, x, x], 0)), np.concatenate([x] * 3)
    )
    check_grads(lambda x, y: lax.concatenate([x, y, x], 1), (x, y), 2, modes=("fwd", "rev"))
    ints = lax.concatenate([np.arange(2, dtype=np.int8), np.arange(3, dtype=np.int8)], 0)
    assert ints.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(ints), [0, 1, 0, 1, 2])
    jaxpr = make_jaxpr(grad(lambda x: total(lax.concatenate([x, lax.mul(x, f32(2.0))], 1))))
    assert (
        str(jaxpr(x))
        == """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = mul a 2.0:f32[]
    c:f32[3,8] = concatenate[dimension=1] a b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[3,8] = broadcast_in_dim 1.0:f32[]
    e:f32[3,4] f:f32[3,4] = split[axis=1 sizes=(4, 4)] d
    g:f32[3,4] = mul f 2.0:f32[]
    h:f32[3,4] = add_any e g
  in (h,) }"""
    )


@pytest.mark.parametrize(("xd", "yd"), [(0, 0), (1, None), (None, 2), (2, 1)])
def test_concatenate_vmap(xd, yd):
    x = rng.standard_normal((2, 3, 4)).astype(f32)
    y = rng.standard_normal((2, 3, 1)).astype(f32)
    x = x[0] if xd is None else np.moveaxis(x, 0, xd)
    y = y[0] if yd is None else np.moveaxis(y, 0, yd)
    vmap_matches_loop(lambda x, y: lax.concatenate([x, y], 1), (x, y), (xd, yd))


def test_concatenate_errors():
    x = np.ones((3, 4), f32)
    cases = [
        (
            [x, np.ones((3, 3), f32)],
            0,
            TypeError,
            (
                "Cannot concatenate arrays with shapes that differ in dimensions other than the "
                "one being concatenated: concatenating along dimension 0 for shapes (3, 4), (3, "
                "3)."
            ),
        ),
        (
            [x, np.ones(3, f32)],
            0,
            TypeError,
            "Cannot concatenate arrays with different numbers of dimensions: got (3, 4), (3,).",
        ),
        (
            [x, np.ones((3, 4), np.int32)],
            0,
            TypeError,
            (
                "lax.concatenate requires arguments to have the same dtypes, got float32, int32. "
                "(Tip: jnp.concatenate is a similar function that does automatic type promotion "
                "on inputs)."
            ),
        ),
        ([], 0, ValueError, "concatenate requires a non-empty sequences of arrays"),
        (
            [1.0, 2.0],
            0,
            TypeError,
            "concatenate dimension out of bounds: dimension 0 for shapes (), ().",
        ),
    ]
    for operands, dim, error, message in cases:
        with pytest.raises(error) as info:
            lax.concatenate(operands, dim)
        assert str(info.value) == message


def test_split_values_grads_vmap():
    x = rng.standard_normal((5, 4)).astype(f32)
    pieces = lax.split(x, (1, 0, 4), 0)
    for got, want in zip(pieces, np.split(x, [1, 1]), strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)
    pieces = lax.split(x, (3, 1), -1)
    np.testing.assert_array_equal(np.asarray(pieces[1]), x[:, 3:])
    check_grads(lambda x: lax.split(x, (2, 3), 0), (x,), 2, modes=("fwd", "rev"))
    check_grads(lambda x: lax.split(x, (2, 3), 0)[1], (x,), 1, modes=("rev",))
    for axis in range(3):
        xb = rng.standard_normal((2, 5, 4)).astype(f32)
        xb = np.moveaxis(xb, 0, axis)
        vmap_matches_loop(lambda x: lax.split(x, (1, 3), 1)[1], (xb,), (axis,))
    assert (
        str(make_jaxpr(lambda x: lax.split(x, (1, 4), 0))(x))
        == """\
{ lambda ; a:f32[5,4]. let
    b:f32[1,4] c:f32[4,4] = split[axis=0 sizes=(1, 4)] a
  in (b, c) }"""
    )


def test_split_errors():
    x = np.ones((3, 4), f32)
    with pytest.raises(
        ValueError,
        match=r"^Sum of sizes 2 must be equal to dimension 0 of the operand shape \[3, 4\]",
    ):
        lax.split(x, (1, 1), 0)
    with pytest.raises(ValueError, match=r"^axis 2 is out of bounds for array of dimension 2"):
        lax.split(x, (1, 2), 2)
    with pytest.raises(
        ValueError, match=r"^Sizes passed to split must be nonnegative, got \[1, -1, 3\]"
    ):
        lax.split(x, (1, -1, 3), 0)


# ------------------------------------------------------------------ squeeze, expand_dims


def test_squeeze_and_expand_dims():
    x = rng.standard_normal((1, 3, 1, 4)).astype(f32)
    np.testing.assert_array_equal(np.asarray(lax.squeeze(x, (0, -2))), x[0, :, 0])
    np.testing.assert_array_equal(np.asarray(lax.squeeze(x, (2,))), x[:, :, 0])
    y = rng.standard_normal((3, 4)).astype(f32)
    np.testing.assert_array_equal(np.asarray(lax.expand_dims(y, (0, 3))), y[None, :, :, None])
    np.testing.assert_array_equal(np.asarray(lax.expand_dims(y, (-1,))), y[..., None])
    check_grads(lambda x: lax.squeeze(x, (0, 2)), (x,), 2, modes=("fwd", "rev"), eps=1e-3)
    check_grads(lambda y: lax.expand_dims(y, (1,)), (y,), 2, modes=("fwd", "rev"), eps=1e-3)
    for axis in range(5):
        xb = np.moveaxis(rng.standard_normal((2, 1, 3, 1, 4)).astype(f32), 0, axis)
        vmap_matches_loop(lambda x: lax.squeeze(x, (0, 2)), (xb,), (axis,))
    assert (
        str(make_jaxpr(lambda y: lax.expand_dims(y, (0, 3)))(y))
        == """\
{ lambda ; a:f32[3,4]. let
    b:f32[1,3,4,1] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a
  in (b,) }"""
    )


def test_squeeze_and_expand_dims_errors():
    x = np.ones((3, 4), f32)
    cases = [
        (
            lambda: lax.squeeze(x, (0,)),
            (
                "cannot select an axis to squeeze out which has size not equal to one, got "
                "shape=(3, 4) and dimensions=(0,)"
            ),
        ),
        (lambda: lax.squeeze(x, (2,)), "axis 2 is out of bounds for array of dimension 2"),
        (lambda: lax.squeeze(np.ones((1, 3, 1)), (0, 0)), "dimensions are not unique: (0, 0)"),
        (lambda: lax.expand_dims(x, (3,)), "axis 3 is out of bounds for array of dimension 3"),
        (lambda: lax.expand_dims(x, (0, 0)), "repeated axis in lax.expand_dims: (0, 0)"),
    ]
    for f, message in cases:
        with pytest.raises(ValueError) as info:
            f()
        assert str(info.value) == message
