"""shard_map's varying manual axes (``check_vma=True``, the default): the types of a
body's values, the ``pvary`` casts, gradients of replicated inputs summed over devices,
and the out_specs check, against JAX 0.10.2 (recorded from JAX 0.10.2)."""

import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import devices, grad, jit, make_jaxpr
from lamina.ir import ShapedArray
from lamina.sharding import Mesh, P, shard_map

MESH = Mesh(np.array(devices()), ("x",))
MESH2 = Mesh(np.array(devices()).reshape(4, 2), ("x", "y"))
W = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
X = np.arange(48, dtype=np.float32).reshape(16, 3) / 10


def loss(w, x):
    y = lax.tanh(lax.dot_general(x, w, (((1,), (0,)), ((), ()))))
    return lax.reduce_sum(y * y, (0, 1))


def step(w, x):
    return grad(loss)(w, x)


# recorded from JAX 0.10.2: the data-parallel gradient (summed over the 8 devices)
GRAD = np.array(
    [
        [1.8474075, 1.1349516, 0.7537508, 0.52722543],
        [2.1281552, 1.361114, 0.943776, 0.69171286],
        [2.4089031, 1.5872762, 1.1338012, 0.8562002],
    ],
    np.float32,
)


def test_replicated_parameter_gradient_is_summed_over_devices():
    f = shard_map(step, mesh=MESH, in_specs=(P(), P("x")), out_specs=P())
    out = np.asarray(f(W, X))
    np.testing.assert_allclose(out, GRAD, rtol=1e-5)
    np.testing.assert_allclose(out, np.asarray(grad(loss)(W, X)), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jit(f)(W, X)), GRAD, rtol=1e-5)


def test_without_check_vma_each_device_keeps_its_own_gradient():
    # recorded from JAX 0.10.2: device 0's gradient of its own two rows
    f = shard_map(step, mesh=MESH, in_specs=(P(), P("x")), out_specs=P(), check_vma=False)
    want = [
        [0.22613904, 0.23072976, 0.2227399, 0.20604144],
        [0.33945593, 0.35053584, 0.34455678, 0.3266573],
        [0.45277283, 0.47034192, 0.46637362, 0.44727314],
    ]
    np.testing.assert_allclose(np.asarray(f(W, X)), want, rtol=1e-5)


def test_gradient_through_shard_map():
    body = shard_map(lambda w, x: lax.broadcast_in_dim(loss(w, x), (1,), ()), mesh=MESH,
                     in_specs=(P(), P("x")), out_specs=P("x"))  # fmt: skip
    out = grad(lambda w: lax.reduce_sum(body(w, X), (0,)))(W)
    np.testing.assert_allclose(np.asarray(out), GRAD, rtol=1e-5)


def test_psum_of_an_invariant_value_counts_each_device():
    f = shard_map(lambda a: lax.psum(a, "x"), mesh=MESH, in_specs=P(), out_specs=P())
    np.testing.assert_array_equal(np.asarray(f(np.arange(3, dtype=np.float32))), [0, 8, 16])


def test_aval_prints_its_varying_axes():
    assert str(ShapedArray((2, 3), np.float32, vma={"x"})) == "float32[2,3]{V:x}"
    assert ShapedArray((2,), np.float32, vma={"x"}) != ShapedArray((2,), np.float32)


def test_jaxpr_of_an_implicit_pvary():
    f = shard_map(lambda a, b: a * b, mesh=MESH2, in_specs=(P(), P(("x", "y"))),
                  out_specs=P(("x", "y")))  # fmt: skip
    text = str(make_jaxpr(f)(np.ones(2, np.float32), np.ones(16, np.float32)))
    assert text == (
        "{ lambda ; a:f32[2] b:f32[16]. let\n"
        "    c:f32[16] = shard_map[\n"
        "      check_vma=True\n"
        "      in_specs=(P(), P(('x', 'y'),))\n"
        "      jaxpr={ lambda ; d:f32[2] e:f32[2]{V:(x,y)}. let\n"
        "          f:f32[2]{V:(x,y)} = pvary[axes=('x', 'y')] d\n"
        "          g:f32[2]{V:(x,y)} = mul f e\n"
        "        in (g,) }\n"
        "      mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto))\n"
        "      newly_manual_axes=frozenset({'x', 'y'})\n"
        "      out_specs=(P(('x', 'y'),),)\n"
        "    ] a b\n"
        "  in (c,) }"
    )


def test_jaxpr_of_collectives():
    def body(a, b):
        sums = lax.psum(a, "x"), lax.psum(b, "y")
        return *sums, lax.broadcast_in_dim(lax.axis_index("y"), (1,), ())

    f = shard_map(body, mesh=MESH2, in_specs=(P(), P("x")), out_specs=(P(), P("x"), P("y")))
    text = str(make_jaxpr(f)(np.ones(2, np.float32), np.ones(8, np.float32)))
    body = text[text.index("jaxpr={") : text.index("in (i, k, m) }")]
    assert body == (
        "jaxpr={ lambda ; f:f32[2] g:f32[2]{V:x}. let\n"
        "          h:f32[2]{V:x} = pvary[axes=('x',)] f\n"
        "          i:f32[2] = psum_invariant[axes=('x',)] h\n"
        "          j:f32[2]{V:(x,y)} = pvary[axes=('y',)] g\n"
        "          k:f32[2]{V:x} = psum_invariant[axes=('y',)] j\n"
        "          l:i32[]{V:y} = axis_index[axis_name=y] \n"
        "          m:i32[1]{V:y} = broadcast_in_dim l\n"
        "        "
    )


def test_jaxpr_of_the_data_parallel_gradient():
    f = shard_map(step, mesh=MESH, in_specs=(P(), P("x")), out_specs=P())
    text = str(make_jaxpr(f)(W, X))
    body = text[: text.index("} in")]
    assert body == (
        "let jaxpr = { lambda ; a:f32[3,4] b:f32[2,3]{V:x}. let\n"
        "    c:f32[3,4]{V:x} = pvary[axes=('x',)] a\n"
        "    d:f32[2,4]{V:x} = dot_general[dimension_numbers=(([1], [0]), ([], []))] b c\n"
        "    e:f32[2,4]{V:x} = tanh d\n"
        "    f:f32[]{V:x} = pvary[axes=('x',)] 1.0:f32[]\n"
        "    g:f32[2,4]{V:x} = sub f e\n"
        "    h:f32[2,4]{V:x} = mul e e\n"
        "    i:f32[]{V:x} = reduce_sum[axes=(0, 1) out_sharding=None] h\n"
        "    j:f32[]{V:x} = pvary[axes=('x',)] 1.0:f32[]\n"
        "    k:f32[2,4]{V:x} = broadcast_in_dim j\n"
        "    l:f32[2,4]{V:x} = mul e k\n"
        "    m:f32[2,4]{V:x} = mul k e\n"
        "    n:f32[2,4]{V:x} = add_any l m\n"
        "    o:f32[2,4]{V:x} = mul n g\n"
        "    p:f32[2,4]{V:x} = mul o e\n"
        "    q:f32[2,4]{V:x} = add_any o p\n"
        "    r:f32[4,3]{V:x} = dot_general[dimension_numbers=(([0], [0]), ([], []))] q b\n"
        "    s:f32[3,4]{V:x} = transpose[permutation=(1, 0)] r\n"
        "    t:f32[3,4] = psum_invariant[axes=('x',)] s\n"
        "  in (t,) "
    )


def test_varying_output_with_a_replicated_out_spec():
    f = jit(shard_map(lambda a, b: a * b, mesh=MESH2, in_specs=(P(), P("x")), out_specs=P()))
    with pytest.raises(ValueError) as e:
        f(np.ones(2, np.float32), np.ones(8, np.float32))
    assert str(e.value) == (
        "shard_map applied to the function '<lambda>' was given out_specs which require "
        "replication which can't be statically inferred given the mesh:\n\nThe mesh given "
        "has shape (4, 2) with corresponding axis names ('x', 'y').\n\nout_specs is P() "
        "which implies that the corresponding output value is only varying across mesh "
        "axes {} and not {x}, but it was inferred to be possibly varying over {x}\n\n"
        "Check if these output values are meant to be replicated over those mesh axes. If "
        "not, consider revising the corresponding out_specs entries. If so, consider "
        "disabling the check by passing the check_vma=False argument to `jax.shard_map`."
    )


def test_all_gather_of_an_invariant_value_varies():
    # JAX 0.10.2 casts the operand to vary over the axis: the result is not replicated
    f = shard_map(lambda a: lax.all_gather(a, "x"), mesh=MESH2, in_specs=P(), out_specs=P())
    with pytest.raises(ValueError, match=r"possibly varying over \{x\}"):
        f(np.ones(2, np.float32))


def test_loop_carry_that_becomes_varying():
    xs = np.arange(16, dtype=np.float32)
    f = shard_map(lambda x: lax.fori_loop(0, 3, lambda i, c: c + x, np.zeros(2, np.float32)),
                  mesh=MESH, in_specs=P("x"), out_specs=P("x"))  # fmt: skip
    with pytest.raises(TypeError) as e:
        f(xs)
    assert str(e.value) == (
        "scan body function carry input and carry output must have equal types, but they "
        "differ:\n\nThe input carry component loop_carry[1] has type float32[2] but the "
        "corresponding output carry component has type float32[2]{V:x}, so the manual axis "
        "types do not match.\n\nThis might be fixed by applying `jax.lax.pcast(..., ('x',), "
        "to='varying')`, to the initial carry value corresponding to the input carry "
        "component loop_carry[1].\nSee https://docs.jax.dev/en/latest/notebooks/"
        "shard_map.html#scan-vma for more information.\n\nRevise the function so that all "
        "output types match the corresponding input types."
    )
    g = shard_map(lambda x: lax.fori_loop(0, 3, lambda i, c: c + x, lax.pcast(
        np.zeros(2, np.float32), "x", to="varying")), mesh=MESH, in_specs=P("x"),
        out_specs=P("x"))  # fmt: skip
    np.testing.assert_array_equal(np.asarray(g(xs)), 3 * xs)


def test_cond_branches_that_vary_differently():
    def body(w, x):
        pred = lax.gt(lax.reduce_max(w, (0,)), np.float32(0))
        return lax.cond(pred, lambda a, b: a * b, lambda a, b: a, w, x)

    f = shard_map(body, mesh=MESH, in_specs=(P(), P("x")), out_specs=P("x"))
    with pytest.raises(TypeError, match=r"(?s)so the manual axis types do not match\.\n\n"
                       r"This might be fixed by applying `jax\.lax\.pcast\(\.\.\., \(\), "
                       r"to='varying'\)` to the output of true_fun\."):  # fmt: skip
        f(np.ones(2, np.float32), np.ones(16, np.float32))


def test_gradient_through_loops_with_varying_carries():
    def body(w, x):
        def loss(w):
            c0 = lax.pcast(np.zeros(2, np.float32), "x", to="varying")
            c = lax.fori_loop(0, 3, lambda i, c: lax.sin(c * w + x), c0)
            s = lax.scan(lambda c, xi: (c * w + xi, c), c0, lax.reshape(x, (2, 1)))[0]
            return lax.reduce_sum(c + s, (0,))

        return grad(loss)(w)

    f = shard_map(body, mesh=MESH, in_specs=(P(), P("x")), out_specs=P())
    out = f(np.arange(2, dtype=np.float32) + 0.5, np.arange(16, dtype=np.float32) / 10)
    # recorded from JAX 0.10.2
    np.testing.assert_allclose(np.asarray(out), [7.101693630218506, 5.759651184082031], rtol=1e-5)
