"""Control flow over a mesh with Explicit axes: branch outputs and loop carries keep
their splits and must agree in them; scan slices and stacks typed values. Jaxprs,
types and errors recorded from JAX 0.10.2; values checked against NumPy."""

import re

import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import device_put, grad, jit, make_jaxpr, typeof
from lamina.sharding import NamedSharding, reshard, set_mesh
from lamina.sharding import PartitionSpec as P

X = np.arange(32, dtype=np.float32).reshape(8, 4)


def put(mesh, value, spec):
    return device_put(value, NamedSharding(mesh, spec))


def total(a):
    return lax.reduce_sum(a, tuple(range(a.ndim)))


def test_cond_and_switch_keep_the_splits(mesh):
    x = put(mesh, X, P("x", None))
    c = lambda a: lax.cond(total(a) > 0, lambda b: b * 2, lambda b: b + 1, a)  # noqa: E731
    f = jit(c)
    with set_mesh(mesh):
        # recorded from JAX 0.10.2
        assert str(make_jaxpr(c)(x)) == (
            "{ lambda ; a:f32[8@x,4]. let\n"
            "    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a\n"
            "    c:bool[] = gt b 0.0:f32[]\n"
            "    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c\n"
            "    e:f32[8@x,4] = cond[\n"
            "      branches=(\n"
            "        { lambda ; f:f32[8@x,4]. let g:f32[8@x,4] = add f 1.0:f32[] in (g,) }\n"
            "        { lambda ; h:f32[8@x,4]. let i:f32[8@x,4] = mul h 2.0:f32[] in (i,) }\n"
            "      )\n"
            "    ] d a\n"
            "  in (e,) }"
        )
        r = f(x)
        assert str(typeof(r)) == "float32[8@x,4]" and r.sharding.spec == P("x", None)
        np.testing.assert_array_equal(np.asarray(r), X * 2)
        sw = lambda a, i: lax.switch(i, [lambda b: b * 2, lambda b: b + 1, lax.neg], a)  # noqa: E731
        s = jit(sw)
        text = str(make_jaxpr(sw)(x, 1))
        assert "e:f32[8@x,4] = cond[" in text and "k:f32[8@x,4] = neg j" in text
        np.testing.assert_array_equal(np.asarray(s(x, 2)), -X)
        # recorded from JAX 0.10.2: the gradient is typed as the operand
        g = grad(lambda a: lax.cond(True, lambda b: total(b * 2), total, a))(x)
        assert str(typeof(g)) == "float32[8@x,4]"
        np.testing.assert_array_equal(np.asarray(g), np.full_like(X, 2))


def test_branches_that_split_differently_raise(mesh):
    x = put(mesh, X, P("x", None))
    with set_mesh(mesh):
        # recorded from JAX 0.10.2
        msg = (
            "The output of true_fun has type float32[8@x,4] but the corresponding output of "
            "false_fun has type float32[8,4@y].\n\nRevise true_fun and/or false_fun so that "
            "all output types match."
        )
        with pytest.raises(TypeError, match=re.escape(msg)):
            make_jaxpr(
                lambda a, p: lax.cond(p, lambda b: b * 2, lambda b: reshard(b, P(None, "y")), a)
            )(x, True)
        msg = "switch branches must have equal output types but they differ.\n\nbranch 0 is "
        with pytest.raises(TypeError, match=re.escape(msg)) as info:
            make_jaxpr(
                lambda a, i: lax.switch(i, [lambda b: b * 2, lambda b: reshard(b, P()), lax.neg], a)
            )(x, 1)
        assert str(info.value).endswith(
            "The output of branch 0 has type float32[8@x,4] but the corresponding output of "
            "branch1 has type float32[8,4].\n\nRevise branch 0 and/or branch1 so that all "
            "output types match."
        )


def test_loops_keep_the_splits(mesh):
    x = put(mesh, X, P("x", None))
    with set_mesh(mesh):
        w = jit(
            lambda a: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, a))
        )
        # recorded from JAX 0.10.2
        text = str(make_jaxpr(w)(x))
        assert "body_jaxpr={ lambda ; d:i32[] e:f32[8@x,4]. let" in text
        r = w(x)[1]
        assert str(typeof(r)) == "float32[8@x,4]" and r.sharding.spec == P("x", None)
        np.testing.assert_array_equal(np.asarray(r), X * 8)
        f = make_jaxpr(lambda a, n: lax.fori_loop(0, n, lambda i, c: c * 2, a))(x, 3)
        assert "_:i32[] _:i32[] c:f32[8@x,4] = while[" in str(f)
        g = grad(lambda a: total(lax.fori_loop(0, 3, lambda i, c: lax.sin(c), a)))(x)
        assert str(typeof(g)) == "float32[8@x,4]"
        # recorded from JAX 0.10.2
        msg = (
            "while_loop body function carry input and carry output must have equal types, but "
            "they differ:\n\nThe input carry component c[1] has type float32[8@x,4] but the "
            "corresponding output carry component has type float32[8,4@y].\n\nRevise the "
            "function so that all output types match the corresponding input types."
        )
        with pytest.raises(TypeError, match=re.escape(msg)):
            make_jaxpr(
                lambda a: lax.while_loop(
                    lambda c: c[0] < 3, lambda c: (c[0] + 1, reshard(c[1], P(None, "y"))), (0, a)
                )
            )(x)


def test_scan_slices_and_stacks_typed_values(mesh):
    c0 = put(mesh, np.zeros(4, np.float32), P("y"))
    xs = put(mesh, X, P(None, "y"))
    with set_mesh(mesh):
        sc = lambda c, xs: lax.scan(lambda c, r: (c + r, c * 2), c, xs)  # noqa: E731
        f = jit(sc)
        # recorded from JAX 0.10.2
        text = str(make_jaxpr(sc)(c0, xs))
        assert "c:f32[4@y] d:f32[8,4@y] = scan[" in text
        assert "jaxpr={ lambda ; e:f32[4@y] f:f32[4@y]. let" in text
        carry, ys = f(c0, xs)
        assert str(typeof(carry)) == "float32[4@y]" and str(typeof(ys)) == "float32[8,4@y]"
        assert ys.sharding.spec == P(None, "y")
        np.testing.assert_array_equal(np.asarray(carry), X.sum(0))
        np.testing.assert_array_equal(
            np.asarray(ys), 2 * np.concatenate([[0 * X[0]], X.cumsum(0)[:-1]])
        )
        m = make_jaxpr(lambda xs: lax.map(lambda r: r * 2, xs))(xs)
        assert "b:f32[8,4@y] = scan[" in str(m) and "{ lambda ; c:f32[4@y]." in str(m)

        # recorded from JAX 0.10.2: the gradients are typed as the carry and the xs
        def body(c, xs):
            return total(lax.scan(lambda c, r: (c * r, None), c, xs)[0])

        assert str(typeof(grad(body)(c0, xs))) == "float32[4@y]"
        assert str(typeof(grad(body, argnums=1)(c0, xs))) == "float32[8,4@y]"


def test_scan_errors(mesh):
    c0 = put(mesh, np.zeros(4, np.float32), P("y"))
    with set_mesh(mesh):
        # recorded from JAX 0.10.2
        msg = (
            "scan body function carry input and carry output must have equal types, but they "
            "differ:\n\nThe input carry c has type float32[4@y] but the corresponding output "
            "carry component has type float32[4].\n\nRevise the function"
        )
        with pytest.raises(TypeError, match=re.escape(msg)):
            make_jaxpr(lambda c, xs: lax.scan(lambda c, r: (reshard(c, P()), c), c, xs))(c0, X)
        with pytest.raises(
            ValueError,
            match=re.escape("0th dimension of all xs should be replicated. Got P('x', None)"),
        ):
            make_jaxpr(lambda xs: lax.scan(lambda c, r: (c + r, r), np.zeros(4, np.float32), xs))(
                put(mesh, X, P("x", None))
            )


def test_map_in_batches_reshards_the_blocks(mesh):
    xs = put(mesh, np.arange(40, dtype=np.float32).reshape(10, 4), P(None, "y"))
    f = lambda xs: lax.map(lambda r: r * 2, xs, batch_size=4)  # noqa: E731
    with set_mesh(mesh):
        text = str(make_jaxpr(f)(xs))
        # recorded from JAX 0.10.2
        for line in [
            "b:f32[10,4] = reshard a",
            "c:f32[8,4] = slice[limit_indices=(8, 4) start_indices=(0, 0) strides=None] b",
            "d:f32[2,4,4] = reshape[dimensions=None new_sizes=(2, 4, 4) sharding=None] c",
            "e:f32[2,4,4@y] = reshard d",
            "f:f32[10,4] = reshard a",
            "g:f32[2,4] = slice[limit_indices=(10, 4) start_indices=(8, 0) strides=None] f",
            "h:f32[2,4@y] = reshard g",
            "i:f32[2,4,4@y] = scan[",
            "l:f32[2,4@y] = mul h 2.0:f32[]",
            "m:f32[8,4@y] = reshape[dimensions=None new_sizes=(8, 4) sharding=None] i",
        ]:
            assert line in text, (line, text)
        r = jit(f)(xs)
    np.testing.assert_array_equal(np.asarray(r), np.asarray(xs) * 2)
