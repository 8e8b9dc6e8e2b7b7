"""conv_general_dilated under differentiation (numerical checks of orders 1 and 2 in
both modes, with strides, dilations, padding and groups; the Jaxprs JAX 0.10.2 prints
for its gradients) and under vmap (against a loop, each operand batched or not, the
batch axis anywhere)."""

import pathlib
import sys

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import enable_x64, grad, jit, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from conv_reference import ref_conv

rng = np.random.default_rng(11)

# (order, lhs shape, rhs shape, strides, padding, lhs_dilation, rhs_dilation, fgc, bgc,
#  layout); second order where the case adds something new (groups), to keep it fast.
AD_CASES = [
    (1, (1, 2, 4, 3), (2, 2, 2, 2), (1, 1), ((0, 0), (1, 0)), None, None, 1, 1, None),
    (2, (1, 4, 5, 3), (4, 2, 3, 2), (2, 1), ((1, 0), (2, 1)), (1, 2), (2, 1), 2, 1, None),
    (2, (4, 2, 3, 3), (4, 2, 2, 2), (1, 2), ((1, -1), (0, 2)), None, (1, 2), 1, 2, None),
    (1, (2, 6, 3), (3, 3, 2), (3,), ((-1, 2),), (2,), None, 1, 1, ("NWC", "WIO", "NWC")),
    (1, (2, 5, 2), (2, 2, 3), (2,), "SAME", None, (2,), 1, 1, ("NWC", "WIO", "NWC")),
]


@pytest.mark.parametrize("case", AD_CASES)
def test_gradients_numerically(case):
    order, ls, rs, strides, pads, ld, rd, fgc, bgc, layout = case
    with enable_x64():
        x, w = rng.standard_normal(ls), rng.standard_normal(rs)

        def f(x, w):
            return lax.conv_general_dilated(
                x, w, strides, pads, ld, rd, layout, feature_group_count=fgc, batch_group_count=bgc
            )

        check_grads(f, (x, w), order=order, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def _loss(f):
    return lambda x, w: lax.reduce_sum(f(x, w), (0, 1, 2, 3))


GROUPED_GRAD = """\
{ lambda ; a:f32[2,4,5,6] b:f32[6,2,3,2]. let
    c:f32[2,6,1,13] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=2
      lhs_dilation=(1, 2)
      out_sharding=None
      padding=((1, 0), (2, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(2, 1)
      window_strides=(2, 1)
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1, 2, 3) out_sharding=None] c
    d:f32[2,6,1,13] = broadcast_in_dim 1.0:f32[]
    e:f32[6,2,3,2] = conv_general_dilated[
      batch_group_count=2
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(1, 0, 2, 3), rhs_spec=(1, 0, 2, 3), out_spec=(1, 0, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 2)
      out_sharding=None
      padding=((1, -1), (2, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(2, 1)
      window_strides=(2, 1)
    ] a d
    f:f32[2,3,2,3,2] = reshape[
      dimensions=None
      new_sizes=(2, 3, 2, 3, 2)
      sharding=None
    ] b
    g:f32[3,4,3,2] = reshape[
      dimensions=(1, 0, 2, 3, 4)
      new_sizes=(3, 4, 3, 2)
      sharding=None
    ] f
    h:f32[3,4,3,2] = rev[dimensions=(2, 3)] g
    i:f32[2,4,5,6] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(1, 0, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=2
      lhs_dilation=(2, 1)
      out_sharding=None
      padding=((3, 5), (-1, 0))
      precision=None
      preferred_element_type=None
      rhs_dilation=(2, 1)
      window_strides=(1, 2)
    ] d h
  in (i, e) }"""  # noqa: E501


def test_grad_jaxpr_with_feature_groups_matches_jax():
    f = lambda x, w: lax.conv_general_dilated(  # noqa: E731
        x,
        w,
        (2, 1),
        [(1, 0), (2, 1)],
        lhs_dilation=(1, 2),
        rhs_dilation=(2, 1),
        feature_group_count=2,
    )
    x, w = np.ones((2, 4, 5, 6), np.float32), np.ones((6, 2, 3, 2), np.float32)
    assert str(make_jaxpr(grad(_loss(f), (0, 1)))(x, w)) == GROUPED_GRAD


def test_grad_jaxpr_with_batch_groups_matches_jax():
    f = lambda x, w: lax.conv_general_dilated(  # noqa: E731
        x, w, (1, 1), [(1, 0), (2, 1)], batch_group_count=2
    )
    jaxpr = str(
        make_jaxpr(grad(_loss(f), (0, 1)))(
            np.ones((4, 3, 5, 6), np.float32), np.ones((6, 3, 3, 2), np.float32)
        )
    )
    # JAX: the kernel's cotangent is a feature-grouped convolution; the input's comes
    # back through the batch groups.
    assert (
        "feature_group_count=2\n      lhs_dilation=(1, 1)\n      out_sharding=None\n"
        "      padding=((1, 0), (2, 1))" in jaxpr
    )
    assert "padding=((1, 2), (-1, 0))" in jaxpr
    assert jaxpr.count("reshape[") == 4 and "rev[dimensions=(2, 3)]" in jaxpr
    assert "k:f32[4,3,5,6] = reshape[\n      dimensions=(1, 0, 2, 3, 4)" in jaxpr


def test_grad_values_against_reference():
    """The input's gradient is the adjoint of the reference convolution: <conv(x), c> =
    <x, grad>, checked at each basis direction of a tiny input."""
    x, w = rng.standard_normal((1, 2, 5)).astype(np.float32), rng.standard_normal((2, 2, 2))
    w = w.astype(np.float32)
    c = rng.standard_normal((1, 2, 5)).astype(np.float32)
    args = ((2,), ((1, 1),), (2,), (2,))

    def loss(x):
        out = lax.conv_general_dilated(x, w, *args, precision="highest")
        return lax.reduce_sum(lax.mul(out, c), (0, 1, 2))

    g = np.asarray(grad(loss)(x))
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1
        want = np.sum(ref_conv(e, w, *args) * c)
        np.testing.assert_allclose(g[i], want, rtol=1e-5, atol=1e-5)


# (lhs shape, rhs shape, fgc, bgc, layout)
VMAP_CASES = [
    ((2, 4, 5, 4), (6, 2, 3, 2), 2, 1, None),
    ((4, 3, 5, 4), (6, 3, 3, 2), 1, 2, None),
    ((2, 3, 5, 4), (4, 3, 3, 2), 1, 1, None),
    ((2, 5, 4, 3), (3, 2, 3, 4), 1, 1, ("NHWC", "HWIO", "NHWC")),
    ((2, 5, 4, 4), (3, 2, 2, 6), 2, 1, ("NHWC", "HWIO", "CHWN")),
]
B = 3


def _take(a, i, axis):
    return a if axis is None else np.take(a, i, axis=axis)


@pytest.mark.parametrize("case", VMAP_CASES)
@pytest.mark.parametrize("in_axes", [(0, None), (None, 3), (2, 4), (4, 1)])
def test_vmap_against_loop(case, in_axes):
    ls, rs, fgc, bgc, layout = case
    x = rng.standard_normal(ls).astype(np.float32)
    w = rng.standard_normal(rs).astype(np.float32)
    ax, aw = in_axes
    if ax is not None:
        x = np.stack([x + i for i in range(B)], axis=ax)
    if aw is not None:
        w = np.stack([w * (i + 1) for i in range(B)], axis=aw)

    def f(x, w):
        return lax.conv_general_dilated(
            x,
            w,
            (2, 1),
            ((1, 0), (1, 1)),
            (1, 2),
            (2, 1),
            layout,
            feature_group_count=fgc,
            batch_group_count=bgc,
            precision="highest",
        )

    got = vmap(f, in_axes)(x, w)
    want = np.stack([np.asarray(f(_take(x, i, ax), _take(w, i, aw))) for i in range(B)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def test_vmap_of_grad():
    x = rng.standard_normal((B, 2, 4, 5, 4)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 2)).astype(np.float32)

    def loss(x, w):
        out = lax.conv_general_dilated(
            x, w, (1, 2), "SAME", feature_group_count=2, precision="highest"
        )
        return lax.reduce_sum(lax.mul(out, out), (0, 1, 2, 3))

    gx, gw = jit(vmap(grad(loss, (0, 1)), (0, None)))(x, w)
    per_example = jit(grad(loss, (0, 1)))
    for i in range(B):
        wx, ww = per_example(x[i], w)
        np.testing.assert_allclose(np.asarray(gx)[i], np.asarray(wx), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(np.asarray(gw)[i], np.asarray(ww), rtol=1e-4, atol=1e-4)
