"""vmap with test-local primitives (lax does not exist at this layer): the trace, axes
handling, pytrees, nesting, the axis environment, jit's rule and the errors."""

from __future__ import annotations

import numpy as np
import pytest
import tracing_prims as P

from lamina.interpreters import batching, make_jaxpr
from lamina.interpreters.jit_functions.jit import jit
from lamina.interpreters.transformations.batching import BatchTracer, axis_env, axis_frame, vmap
from lamina.ir import MissingRuleError, Primitive, ShapedArray

# Test-local shape primitives for the helpers (lax registers its own in shape_ops).
transpose_p = Primitive("transpose", registry=None)
transpose_p.def_abstract_eval(
    lambda x, *, permutation: ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype)
)
transpose_p.def_impl(lambda x, *, permutation: np.transpose(np.asarray(x), permutation))

bcast_p = Primitive("broadcast_in_dim", registry=None)
bcast_p.def_abstract_eval(lambda x, *, shape, dims: ShapedArray(shape, x.dtype, x.weak_type))


def _bcast_impl(x, *, shape, dims):
    x = np.asarray(x)
    expanded = np.reshape(
        x, [x.shape[dims.index(i)] if i in dims else 1 for i in range(len(shape))]
    )
    return np.broadcast_to(expanded, shape).copy()


bcast_p.def_impl(_bcast_impl)

# Batching rules for the test-local primitives (numpy broadcasting: like lax, plus ranks).
for _p in (P.add_p, P.mul_p, P.gt_p):
    batching.defbroadcasting(_p)
batching.defvectorized(P.sin_p)
batching.defvectorized(P.neg_p)
batching.defreducer(P.reduce_sum_p)


@pytest.fixture(autouse=True)
def shape_ops():
    saved = dict(batching.shape_ops)
    batching.shape_ops["transpose"] = lambda x, perm: transpose_p.bind(x, permutation=perm)
    batching.shape_ops["broadcast_in_dim"] = lambda x, shape, dims: bcast_p.bind(
        x, shape=tuple(shape), dims=tuple(dims)
    )
    yield
    batching.shape_ops.clear()
    batching.shape_ops.update(saved)


methods = P.methods  # fixture: operators on tracers
rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4)).astype(np.float32)
Y = rng.standard_normal((3, 4)).astype(np.float32)
V = rng.standard_normal((4,)).astype(np.float32)


def loop(f, args, in_axes, out_axis=0):
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes, strict=True) if ax is not None)
    outs = []
    for i in range(size):
        sliced = [
            a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes, strict=True)
        ]
        outs.append(np.asarray(f(*sliced)))
    return np.stack(outs, axis=out_axis)


@pytest.mark.parametrize("in_axes", [(0, 0), (1, 1), (-1, 0), (0, None), (None, 1)])
def test_binary_against_loop(in_axes):
    args = [X if ax == 0 else np.ascontiguousarray(X.T) if ax in (1, -1) else V for ax in in_axes]
    out = vmap(P.add, in_axes)(*args)
    np.testing.assert_allclose(np.asarray(out), loop(P.add, args, in_axes), rtol=1e-6)


def test_unary_and_reduction_keep_batch_dim():
    out = vmap(lambda x: P.reduce_sum(P.sin(x), axes=(0,)), in_axes=1)(X)
    np.testing.assert_allclose(out, np.sin(X).sum(0), rtol=1e-6)


@pytest.mark.parametrize("out_axes", [0, 1, -1])
def test_out_axes(out_axes):
    out = vmap(P.sin, out_axes=out_axes)(X)
    np.testing.assert_allclose(out, loop(P.sin, [X], [0], out_axes), rtol=1e-6)


def test_unbatched_output_is_broadcast_or_kept():
    out = vmap(lambda x: (P.sin(x), np.float32(2.0)), out_axes=(0, None))(X)
    assert np.asarray(out[1]) == 2.0
    b = vmap(lambda x: np.ones((2,), np.float32))(X)
    assert np.shape(b) == (3, 2)


def test_axis_size_without_mapped_inputs():
    out = vmap(lambda x: P.sin(x), in_axes=None, axis_size=2)(V)
    np.testing.assert_allclose(out, np.stack([np.sin(V)] * 2), rtol=1e-6)


def test_pytrees_in_and_out():
    def f(d, t):
        return {"s": P.add(d["a"], t[0]), "p": [P.mul(d["b"], t[1])]}

    d = {"a": X, "b": np.ascontiguousarray(Y.T)}
    t = (V, X)
    out = vmap(f, in_axes=({"a": 0, "b": 1}, (None, 0)))(d, t)
    np.testing.assert_allclose(out["s"], X + V, rtol=1e-6)
    np.testing.assert_allclose(out["p"][0], Y * X, rtol=1e-6)


def test_kwargs_mapped_over_axis_zero():
    out = vmap(lambda x, *, y: P.add(x, y))(X, y=Y)
    np.testing.assert_allclose(out, X + Y, rtol=1e-6)


def test_nested_vmap_outer_product():
    f = vmap(vmap(P.mul, in_axes=(None, 0)), in_axes=(0, None))
    out = f(V, V)
    np.testing.assert_allclose(out, np.outer(V, V), rtol=1e-6)


def test_nested_vmap_closure_over_outer_tracer():
    def outer(x):
        return vmap(lambda y: P.mul(x, y))(X)

    out = vmap(outer)(V)
    np.testing.assert_allclose(out, V[:, None, None] * X[None], rtol=1e-6)


def test_tracer_type_and_aval():
    seen = []

    def f(x):
        seen.append(x)
        return x

    vmap(f, in_axes=1)(X)
    assert isinstance(seen[0], BatchTracer)
    assert seen[0].batch_dim == 1 and seen[0].shape == (3,)


def test_make_jaxpr_of_vmap(methods):
    jaxpr = make_jaxpr(vmap(lambda x, y: x * y + 1.0, in_axes=(0, None)))(X, V)
    assert str(jaxpr) == (
        "{ lambda ; a:f32[3,4] b:f32[4]. let\n"
        "    c:f32[1,4] = broadcast_in_dim[dims=(1,) shape=(1, 4)] b\n"
        "    d:f32[3,4] = mul a c\n"
        "    e:f32[3,4] = add d 1.0:f32[]\n"
        "  in (e,) }"
    )


def test_vmap_of_jit_emits_jit_eqn():
    f = jit(lambda x: P.sin(x))
    text = str(make_jaxpr(vmap(f))(X))
    assert "jit[" in text and "sin a" in text and "a:f32[3,4]" in text


def test_jit_of_vmap_traces():
    text = str(make_jaxpr(jit(vmap(P.sin, in_axes=1)))(X))
    assert "sin" in text


def test_axis_name_in_axis_env():
    frames = []

    def f(x):
        frames.append((axis_frame("i"), axis_env()))
        return x

    vmap(vmap(f, axis_name="j"), axis_name="i")(X)
    (frame, env) = frames[0]
    assert frame.name == "i" and frame.size == 3
    assert [a.name for a in env] == ["i", "j"]
    assert axis_env() == ()
    with pytest.raises(NameError, match="unbound axis name: k"):
        axis_frame("k")


# ---------------------------------------------------------------------- errors


def test_missing_rule_names_primitive():
    with pytest.raises(MissingRuleError, match=r"Batching rule for 'no_rules'.*vmap"):
        vmap(lambda x: P.nothing_p.bind(x))(X)


def test_inconsistent_sizes():
    with pytest.raises(ValueError) as e:
        vmap(lambda a, b: a)(X, np.ones((4, 3), np.float32))
    assert str(e.value) == (
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * one axis had size 3: axis 0 of argument a of type float32[3,4];\n"
        "  * one axis had size 4: axis 0 of argument b of type float32[4,3]"
    )
    with pytest.raises(ValueError) as e:
        vmap(lambda a, b, c: a)(X, X, np.ones((4,), np.float32))
    assert "most axes (2 of them) had size 3, e.g. axis 0 of argument a" in str(e.value)
    with pytest.raises(ValueError, match=r"the `axis_size` argument was 2;"):
        vmap(lambda a: a, axis_size=2)(X)


def test_in_axes_errors():
    with pytest.raises(ValueError, match=r"but is only 2 \(its shape is \(3, 4\)\)"):
        vmap(lambda a: a, in_axes=2)(X)
    with pytest.raises(ValueError, match="rank should be at least 3"):
        vmap(lambda a: a, in_axes=-3)(X)
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        vmap(lambda a: a, in_axes=None)(X)
    with pytest.raises(ValueError, match=r"len\(in_axes\)=2, len\(args\)=1"):
        vmap(lambda a: a, in_axes=(0, 0))(X)
    with pytest.raises(TypeError, match="vmap in_axes must be an int, None, or a tuple"):
        vmap(lambda a: a, in_axes="a")
    with pytest.raises(TypeError, match=r"\(nested\) container with those types as leaves"):
        vmap(lambda a: a, in_axes=(1.5,))
    with pytest.raises(ValueError, match="vmap in_axes specification must be a tree prefix"):
        vmap(lambda a, b: a, in_axes=((0, 0), 0))(X, X)
    with pytest.raises(ValueError, match="got empty"):
        vmap(lambda: 1.0)()
    with pytest.raises(TypeError, match="Expected a callable value, got 3"):
        vmap(3)


def test_out_axes_errors():
    with pytest.raises(ValueError, match=r"at vmap out_axes\[0\], got axis spec None but output"):
        vmap(lambda a: a, out_axes=None)(X)
    with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 2"):
        vmap(lambda a: a, out_axes=3)(X)
    with pytest.raises(TypeError, match="is not a valid JAX type"):
        vmap(lambda a: "s")(X)
