"""Every lax primitive under vmap against a Python loop over the examples, with the
batch dimension at each position and some operands unbatched; jit compositions; the
Jaxprs JAX 0.10.2 prints for vmapped functions (its ``np.int64(1)`` params shown as 1)."""

from __future__ import annotations

import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import jit, make_jaxpr, vmap

B = 3
rng = np.random.default_rng(0)
f32 = np.float32


def data(shape, dtype=f32, positive=False):
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 3, shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    return np.abs(x) + 0.5 if positive else x


def batched(x, axis):
    """B examples of ``x``'s shape, stacked along ``axis``."""
    return np.stack([x * 0 + data(np.shape(x), np.asarray(x).dtype) for _ in range(B)], axis=axis)


def loop(f, args, in_axes, out_axis=0):
    outs = []
    for i in range(B):
        sliced = [
            a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes, strict=True)
        ]
        outs.append(np.asarray(f(*sliced)))
    return np.stack(outs, axis=out_axis)


def check(f, examples, in_axes, out_axes=0):
    args = [
        x if ax is None else batched(x, ax if ax >= 0 else np.ndim(x) + 1 + ax)
        for x, ax in zip(examples, in_axes, strict=True)
    ]
    out = vmap(f, in_axes=tuple(in_axes), out_axes=out_axes)(*args)
    expected = loop(f, args, in_axes, out_axes)
    assert np.asarray(out).dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-6, atol=1e-6)


S = (2, 4)
CASES = {
    "neg": (lax.neg, [data(S)]),
    "sin": (lax.sin, [data(S)]),
    "cos": (lax.cos, [data(S)]),
    "exp": (lax.exp, [data(S)]),
    "log": (lax.log, [data(S, positive=True)]),
    "tanh": (lax.tanh, [data(S)]),
    "sqrt": (lax.sqrt, [data(S, positive=True)]),
    "add": (lax.add, [data(S), data(S)]),
    "sub": (lax.sub, [data(S), data(S)]),
    "mul": (lax.mul, [data(S), data(S)]),
    "div": (lax.div, [data(S), data(S, positive=True)]),
    "max": (lax.max, [data(S), data(S)]),
    "min": (lax.min, [data(S), data(S)]),
    "eq": (lax.eq, [data(S, np.int32), data(S, np.int32)]),
    "ne": (lax.ne, [data(S, np.int32), data(S, np.int32)]),
    "lt": (lax.lt, [data(S), data(S)]),
    "le": (lax.le, [data(S), data(S)]),
    "gt": (lax.gt, [data(S), data(S)]),
    "ge": (lax.ge, [data(S), data(S)]),
    "add_scalar_operand": (lax.add, [data(S), data(())]),
    "mul_size_one": (lax.mul, [data((2, 1)), data(S)]),
    "select_n": (lax.select_n, [data(S, np.bool_), data(S), data(S)]),
    "select_n_scalar_which": (lax.select_n, [data((), np.bool_), data(S), data(S)]),
    "select_n_int_which": (lax.select_n, [data(S, np.int32), data(S), data(S), data(S)]),
    "convert_element_type": (lambda x: lax.convert_element_type(x, np.int32), [data(S)]),
    "broadcast_in_dim": (lambda x: lax.broadcast_in_dim(x, (2, 5, 4), (0, 2)), [data(S)]),
    "broadcast_in_dim_size_one": (
        lambda x: lax.broadcast_in_dim(x, (2, 4), (0, 1)),
        [data((2, 1))],
    ),
    "reshape": (lambda x: lax.reshape(x, (8,)), [data(S)]),
    "reshape_dimensions": (lambda x: lax.reshape(x, (4, 2), (1, 0)), [data(S)]),
    "transpose": (lambda x: lax.transpose(x, (2, 0, 1)), [data((2, 3, 4))]),
    "iota": (lambda x: lax.add(x, lax.iota(f32, 4)), [data((4,))]),
    "reduce_sum": (lambda x: lax.reduce_sum(x, (0, 2)), [data((2, 3, 4))]),
    "reduce_max": (lambda x: lax.reduce_max(x, (1,)), [data((2, 3, 4))]),
    "dot": (lax.dot, [data((2, 3)), data((3, 4))]),
    "dot_general_batch": (
        lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
        [data((5, 2, 3)), data((5, 3, 4))],
    ),
    "dot_general_vec": (
        lambda a, b: lax.dot_general(a, b, (((0,), (0,)), ((), ()))),
        [data(3), data(3)],
    ),
}


def axes_for(n, ax):
    """``ax`` for every operand; then each operand but one unbatched in turn."""
    return [(ax,) * n] + (
        [tuple(None if j == i else ax for j in range(n)) for i in range(n)] if n > 1 else []
    )


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("ax", [0, 1, -1])
def test_primitive_against_loop(name, ax):
    f, examples = CASES[name]
    for in_axes in axes_for(len(examples), ax):
        # an operand of rank 0 has only axis 0 to batch along
        in_axes = [
            a if a is None or np.ndim(x) + 1 > abs(a) - (a < 0) else 0
            for x, a in zip(examples, in_axes, strict=True)
        ]
        check(f, examples, in_axes)


@pytest.mark.parametrize("out_axes", [0, 1, -1])
def test_out_axes(out_axes):
    check(lambda x, y: lax.mul(lax.sin(x), y), [data(S), data(S)], [1, 0], out_axes)


def test_nested_vmap_matches_double_loop():
    a, b = data((3, 2, 4)), data((5, 4))
    f = vmap(vmap(lambda x, y: lax.dot(x, y), in_axes=(None, 0)), in_axes=(0, None))
    out = f(a, b)
    expected = np.stack([np.stack([a[i] @ b[j] for j in range(5)]) for i in range(3)])
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5)


def test_nested_vmap_inner_axis_one():
    x = data((3, 4, 5))
    out = vmap(vmap(lax.sin, in_axes=1), in_axes=2)(x)
    np.testing.assert_allclose(np.asarray(out), np.sin(x).transpose(2, 1, 0), rtol=1e-6)


def test_pytree_arguments_and_results():
    params = {"w": data((4, 2)), "b": data((2,))}
    xs = data((B, 4))

    def f(p, x):
        y = lax.add(lax.dot(x, p["w"]), p["b"])
        return {"y": y, "sum": (lax.reduce_sum(y, (0,)),)}

    out = vmap(f, in_axes=(None, 0))(params, xs)
    expected = xs @ params["w"] + params["b"]
    np.testing.assert_allclose(np.asarray(out["y"]), expected, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(out["sum"][0]), expected.sum(1), rtol=1e-5)


def test_vmap_of_jit_and_jit_of_vmap():
    x, w = data((B, 4)), data((4, 2))
    f = jit(lambda x, w: lax.tanh(lax.dot(x, w)))
    expected = np.tanh(x @ w)
    np.testing.assert_allclose(np.asarray(vmap(f, in_axes=(0, None))(x, w)), expected, rtol=1e-5)
    g = jit(vmap(lambda x, w: lax.tanh(lax.dot(x, w)), in_axes=(0, None)))
    np.testing.assert_allclose(np.asarray(g(x, w)), expected, rtol=1e-5)
    # batch dim 1 into a jit: the batched jit keeps it and vmap moves it at the end
    np.testing.assert_allclose(
        np.asarray(vmap(f, in_axes=(1, None))(np.ascontiguousarray(x.T), w)), expected, rtol=1e-5
    )


def test_jit_of_vmap_of_jit_with_closure():
    y = data((4,))
    f = jit(vmap(jit(lambda x: lax.mul(x, y))))
    x = data((B, 4))
    np.testing.assert_allclose(np.asarray(f(x)), x * y, rtol=1e-6)


# Recorded from JAX 0.10.2 (make_jaxpr of the same functions).
a43, b3, s4 = np.ones((4, 3), f32), np.ones((3,), f32), np.ones((4,), f32)
JAXPRS = [
    (
        lambda x, y: lax.add(x, y),
        (0, None),
        (a43, b3),
        """{ lambda ; a:f32[4,3] b:f32[3]. let
    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    d:f32[4,3] = add a c
  in (d,) }""",
    ),
    (
        lax.mul,
        (1, 0),
        (np.ones((3, 4), f32), a43),
        """{ lambda ; a:f32[3,4] b:f32[4,3]. let
    c:f32[4,3] = transpose[permutation=(1, 0)] a
    d:f32[4,3] = mul c b
  in (d,) }""",
    ),
    (
        lax.mul,
        0,
        (s4, a43),
        """{ lambda ; a:f32[4] b:f32[4,3]. let
    c:f32[4,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a
    d:f32[4,3] = mul c b
  in (d,) }""",
    ),
    (
        lambda x: lax.reduce_sum(x, (0,)),
        1,
        (a43,),
        """{ lambda ; a:f32[4,3]. let
    b:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a
  in (b,) }""",
    ),
    (
        lambda x, w: lax.dot(w, x),
        (0, None),
        (a43, np.ones((5, 3), f32)),
        """{ lambda ; a:f32[4,3] b:f32[5,3]. let
    c:f32[5,4] = dot_general[dimension_numbers=(([1], [1]), ([], []))] b a
    d:f32[4,5] = transpose[permutation=(1, 0)] c
  in (d,) }""",
    ),
    (
        jit(lambda x: lax.add(lax.exp(x), 1.0)),
        0,
        (a43,),
        """{ lambda ; a:f32[4,3]. let
    b:f32[4,3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[4,3]. let
          c:f32[4,3] = exp a
          b:f32[4,3] = add c 1.0:f32[]
        in (b,) }
    ] a
  in (b,) }""",
    ),
    (
        lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)),
        0,
        (a43,),
        """{ lambda ; a:f32[4,3]. let
    b:f32[4,2,3] = broadcast_in_dim[broadcast_dimensions=(0, 2)] a
  in (b,) }""",
    ),
    (
        lambda x: lax.select_n(lax.gt(x, 0.0), x, lax.neg(x)),
        0,
        (a43,),
        """{ lambda ; a:f32[4,3]. let
    b:bool[4,3] = gt a 0.0:f32[]
    c:f32[4,3] = neg a
    d:f32[4,3] = select_n b a c
  in (d,) }""",
    ),
]


@pytest.mark.parametrize("i", range(len(JAXPRS)))
def test_jaxpr_of_vmap_prints_like_jax(i):
    f, in_axes, args, text = JAXPRS[i]
    assert str(make_jaxpr(vmap(f, in_axes=in_axes))(*args)) == text


def test_out_axes_one_is_a_transpose():
    text = str(make_jaxpr(vmap(lambda x: x, out_axes=1))(a43))
    assert text == (
        "{ lambda ; a:f32[4,3]. let\n    b:f32[3,4] = transpose[permutation=(1, 0)] a\n  in (b,) }"
    )


def test_inconsistent_sizes_message():
    with pytest.raises(ValueError) as e:
        vmap(lax.add)(np.ones((2, 3), f32), np.ones((3, 3), f32))
    assert str(e.value) == (
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * one axis had size 2: axis 0 of argument x of type float32[2,3];\n"
        "  * one axis had size 3: axis 0 of argument y of type float32[3,3]"
    )
