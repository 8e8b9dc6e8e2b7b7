"""Reverse-mode differentiation (``grad``, ``vjp``, ``linearize``) of functions that
make, write and freeze mutable array references: values against NumPy, Jaxprs and
errors recorded from JAX 0.10.2."""

import textwrap

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp

X = np.array([1.0, 2.0, 3.0], np.float32)


def scale_in_ref(x):
    r = jax.new_ref(x)
    r[...] = r[...] * 2.0
    return jnp.sum(jax.freeze(r) ** 2)


def write_slices(x):
    r = jax.new_ref(jnp.zeros(3))
    r[0] = x[1] * 3.0
    r[1:] = jnp.sin(x[:2])
    return jnp.sum(r[...] * x)


def accumulate(x):
    r = jax.new_ref(x)
    r.addupdate(x**2)
    return jnp.sum(jax.freeze(r))


def empty_then_write(x):
    r = jax.empty_ref(jax.ShapeDtypeStruct((3,), jnp.float32))
    r[...] = x * x
    return jnp.sum(r[...])


def swap_one(x):
    r = jax.new_ref(x)
    old = jax.ref.swap(r, 1, 5.0 * x[0])
    return jnp.sum(r[...]) + old * x[2]


def ref_in_scan_body(x):
    def body(c, xi):
        r = jax.new_ref(c)
        r[...] = r[...] * xi
        return jax.freeze(r), None

    c, _ = jax.lax.scan(body, 1.0, x)
    return c


x0, x1, x2 = (float(v) for v in X)
EXPECTED = [
    (scale_in_ref, 8 * X),
    (write_slices, [3 * x1 + np.cos(x0) * x1, 3 * x0 + np.sin(x0) + np.cos(x1) * x2, np.sin(x1)]),
    (accumulate, 1 + 2 * X),
    (empty_then_write, 2 * X),
    (swap_one, [6.0, x2, 1.0 + x1]),
    (ref_in_scan_body, [x1 * x2, x0 * x2, x0 * x1]),
]


@pytest.mark.parametrize("f, expected", EXPECTED, ids=[f.__name__ for f, _ in EXPECTED])
def test_grad_values_against_numpy(f, expected):
    x = jnp.asarray(X)
    # Recorded from JAX 0.10.2: these gradients (eager grad of empty_ref fails in JAX too).
    ways = [jax.jit(jax.grad(f)), jax.grad(jax.jit(f))]
    if f is not empty_then_write:
        ways.append(jax.grad(f))
    for g in ways:
        np.testing.assert_allclose(g(x), expected, rtol=1e-6)


def test_grad_against_finite_differences():
    x, eps = X.astype(np.float64), 1e-3
    for f in (scale_in_ref, write_slices, accumulate, swap_one):
        g = np.asarray(jax.grad(f)(jnp.asarray(X)))
        for i in range(3):
            e = np.zeros(3)
            e[i] = eps
            up, down = f(jnp.asarray(x + e, jnp.float32)), f(jnp.asarray(x - e, jnp.float32))
            fd = (float(up) - float(down)) / (2 * eps)
            np.testing.assert_allclose(g[i], fd, rtol=2e-2, atol=2e-2)


def test_eager_grad_of_empty_ref_fails_as_in_jax():
    # Recorded from JAX 0.10.2: an empty_ref exists only inside a trace.
    with pytest.raises(
        NotImplementedError, match="Evaluation rule for 'empty_ref' not implemented"
    ):
        jax.grad(empty_then_write)(jnp.asarray(X))


def test_linearize_and_vjp():
    x, t = jnp.asarray(X), jnp.ones(3)
    # Recorded from JAX 0.10.2: linearize(f, x) then f_jvp(ones).
    for f, y, ty in [(scale_in_ref, 56.0, 48.0), (write_slices, 10.410834, 10.582932),
                     (accumulate, 20.0, 15.0), (swap_one, 15.0, 12.0)]:  # fmt: skip
        out, f_jvp = jax.linearize(f, x)
        np.testing.assert_allclose([out, f_jvp(t)], [y, ty], rtol=1e-6)
    out, f_vjp = jax.vjp(scale_in_ref, x)
    np.testing.assert_allclose(f_vjp(jnp.float32(0.5))[0], 4 * X)


def jaxpr_text(text: str) -> str:
    return textwrap.dedent(text).strip()


def lines(jaxpr) -> list[str]:
    # A primitive without operands prints with a trailing space, kept out of the source.
    return [line.rstrip() for line in str(jaxpr).splitlines()]


def test_jaxprs_of_grad():
    x = jnp.asarray(X)
    # Recorded from JAX 0.10.2: make_jaxpr(grad(f))(x).
    assert lines(jax.make_jaxpr(jax.grad(scale_in_ref))(x)) == lines(
        jaxpr_text("""
        { lambda ; a:f32[3]. let
            b:Ref{f32[3]} = new_ref[kind=None memory_space=None] a
            c:f32[3] <- b[...]
            d:f32[3] = mul c 2.0:f32[]
            b[...] <- d
            e:f32[3] = freeze b
            f:f32[3] = integer_pow[y=2] e
            g:f32[3] = mul 2.0:f32[] e
            _:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
            h:f32[3] = broadcast_in_dim 1.0:f32[]
            i:f32[3] = mul h g
            j:Ref{f32[3]} = new_ref[kind=None memory_space=None] i
            k:f32[3] = broadcast_in_dim 0.0:f32[]
            l:f32[3], j[...] <- j[...], k
            m:f32[3] = mul l 2.0:f32[]
            j[...] += m
            n:f32[3] = freeze j
          in (n,) }""")
    )
    assert lines(jax.make_jaxpr(jax.grad(accumulate))(x)) == lines(
        jaxpr_text("""
        { lambda ; a:f32[3]. let
            b:Ref{f32[3]} = new_ref[kind=None memory_space=None] a
            c:f32[3] = integer_pow[y=2] a
            d:f32[3] = mul 2.0:f32[] a
            b[...] += c
            e:f32[3] = freeze b
            _:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
            f:f32[3] = broadcast_in_dim 1.0:f32[]
            g:Ref{f32[3]} = new_ref[kind=None memory_space=None] f
            h:f32[3] <- g[...]
            i:f32[3] = mul h d
            j:f32[3] = freeze g
            k:f32[3] = add_any i j
          in (k,) }""")
    )
    assert lines(jax.make_jaxpr(jax.grad(empty_then_write))(x)) == lines(
        jaxpr_text("""
        { lambda ; a:f32[3]. let
            b:Ref{f32[3]} = empty_ref[memory_space=None ty=float32[3]]
            c:f32[3] = mul a a
            b[...] <- c
            d:f32[3] <- b[...]
            _:f32[] = reduce_sum[axes=(0,) out_sharding=None] d
            e:f32[3] = broadcast_in_dim 1.0:f32[]
            f:Ref{f32[3]} = new_ref[kind=None memory_space=None] e
            g:f32[3] = broadcast_in_dim 0.0:f32[]
            h:f32[3], f[...] <- f[...], g
            i:f32[3] = mul a h
            j:f32[3] = mul h a
            k:f32[3] = add_any i j
            _:f32[3] = freeze f
          in (k,) }""")
    )


def test_ref_argument_errors():
    def g(r, x):
        return jnp.sum(r[...] * x)

    r, x = jax.new_ref(jnp.ones(3)), jnp.arange(3.0)
    # Recorded from JAX 0.10.2: the forward pass runs; the cotangent of a Ref fails.
    msg = r"Expected cotangent type Ref\{float32\[3\]\} but got float32\[3\]"
    y, f_vjp = jax.vjp(g, r, x)
    assert float(y) == 3.0
    with pytest.raises(ValueError, match=msg):
        f_vjp(1.0)
    with pytest.raises(ValueError, match=msg):
        jax.grad(g)(r, x)
    with pytest.raises(ValueError, match=msg):
        jax.grad(g, (0, 1))(r, x)
    np.testing.assert_array_equal(jax.grad(g, 1)(r, x), [1.0, 1.0, 1.0])


def test_writing_a_closed_over_ref_with_a_differentiated_value():
    r = jax.new_ref(jnp.ones(3))

    def h(x):
        r[...] = x * 2.0
        return jnp.sum(r[...])

    # Recorded from JAX 0.10.2.
    msg = (
        "set/swap operation with a differentiated value on a non-differentiated array "
        r"reference of type Ref\{float32\[3\]\}"
    )
    with pytest.raises(Exception, match=msg):
        jax.grad(h)(jnp.asarray(X))


def test_while_loop_writing_a_ref():
    def w(x):
        r = jax.new_ref(x)

        def body(i):
            r[...] = r[...] * 1.5
            return i + 1

        jax.lax.while_loop(lambda i: i < 2, body, 0)
        return jnp.sum(r[...])

    x = jnp.asarray(X)
    # Recorded from JAX 0.10.2: jvp gives 2.25 * sum(t); grad raises.
    out, t = jax.jvp(w, (x,), (jnp.ones(3),))
    np.testing.assert_allclose([out, t], [13.5, 6.75])
    for g in (jax.grad(w), jax.jit(jax.grad(w))):
        with pytest.raises(ValueError, match=r"does not work for lax\.while_loop"):
            g(x)


def scan_accumulating(x):
    r = jax.new_ref(jnp.zeros(()))

    def body(c, xi):
        r[...] += jnp.sin(xi) * c
        return c * 1.5, None

    jax.lax.scan(body, x[0], x)
    return r[...]


def fori_writing(x):
    r = jax.new_ref(jnp.zeros(3))

    def body(i, c):
        r[...] = r[...] + x * c
        return c * 2.0

    jax.lax.fori_loop(0, 3, body, x)
    return jnp.sum(r[...])


def scan_scaling(x):
    r = jax.new_ref(x)

    def body(c, xi):
        r[...] = r[...] * xi
        return c, None

    jax.lax.scan(body, 0.0, x)
    return jnp.sum(r[...])


def cond_writing(x):
    r = jax.new_ref(x)

    def yes():
        r[...] = r[...] * 4.0

    def no():
        r[...] = r[...] + 1.0

    jax.lax.cond(x[0] > 0, yes, no)
    return jnp.sum(r[...] ** 2)


def switch_writing(x):
    r = jax.new_ref(x)

    def double():
        r[...] = r[...] * 2.0

    def times_x():
        r[...] = r[...] * 3.0 * x

    jax.lax.switch(1, [double, times_x])
    return jnp.sum(r[...])


def jit_scan_writing(x):
    r = jax.new_ref(jnp.zeros(()))

    @jax.jit
    def inner(x):
        def body(c, xi):
            r[...] += jnp.sin(xi) * c
            return c * 1.5, None

        jax.lax.scan(body, x[0], x)

    inner(x)
    return r[...]


# Recorded from JAX 0.10.2: grad, jit(grad) and grad(jit) of each.
LOOPS = [
    (scan_accumulating, [3.0632393, -0.62422025, -2.227483]),
    (fori_writing, [14.0, 28.0, 42.0]),
    (scan_scaling, [42.0, 24.0, 18.0]),
    (cond_writing, [32.0, 64.0, 96.0]),
    (switch_writing, [6.0, 12.0, 18.0]),
    (jit_scan_writing, [3.0632393, -0.62422025, -2.227483]),
]


@pytest.mark.parametrize("f, expected", LOOPS, ids=[f.__name__ for f, _ in LOOPS])
def test_grad_of_control_flow_writing_an_outer_ref(f, expected):
    x = jnp.asarray(X)
    for g in (jax.grad(f), jax.jit(jax.grad(f)), jax.grad(jax.jit(f))):
        np.testing.assert_allclose(g(x), expected, rtol=1e-6, atol=1e-6)


def test_grad_of_jit_with_a_while_loop_writing_an_outer_ref():
    def w(x):
        r = jax.new_ref(x)

        @jax.jit
        def inner(x):
            def body(i):
                r[...] = r[...] * 1.5
                return i + 1

            jax.lax.while_loop(lambda i: i < 2, body, 0)

        inner(x)
        return jnp.sum(r[...])

    x = jnp.asarray(X)
    # Recorded from JAX 0.10.2: linearize works (value 13.5, tangent 6.75); grad fails.
    for f in (w, jax.jit(w)):
        y, f_jvp = jax.linearize(f, x)
        np.testing.assert_allclose([y, f_jvp(jnp.ones(3))], [13.5, 6.75])
    for g in (jax.grad(w), jax.jit(jax.grad(w)), jax.grad(jax.jit(w))):
        with pytest.raises(ValueError, match=r"does not work for lax\.while_loop"):
            g(x)


def test_jaxpr_of_grad_of_cond_writing_a_ref():
    # Recorded from JAX 0.10.2: make_jaxpr(grad(cond_writing))(ones(3)).
    assert lines(jax.make_jaxpr(jax.grad(cond_writing))(jnp.ones(3))) == lines(
        jaxpr_text("""
        { lambda ; a:f32[3]. let
            b:Ref{f32[3]} = new_ref[kind=None memory_space=None] a
            c:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a
            d:f32[] = squeeze[dimensions=(0,)] c
            e:bool[] = gt d 0.0:f32[]
            f:i32[] = convert_element_type[new_dtype=int32 weak_type=False] e
            cond[
              branches=(
                { lambda ; g:Ref{f32[3]}. let
                    h:f32[3] <- g[...]
                    i:f32[3] = add h 1.0:f32[]
                    j:f32[3], g[...] <- g[...], i
                  in () }
                { lambda ; k:Ref{f32[3]}. let
                    l:f32[3] <- k[...]
                    m:f32[3] = mul l 4.0:f32[]
                    n:f32[3], k[...] <- k[...], m
                  in () }
              )
            ] f b
            o:f32[3] <- b[...]
            p:f32[3] = integer_pow[y=2] o
            q:f32[3] = mul 2.0:f32[] o
            _:f32[] = reduce_sum[axes=(0,) out_sharding=None] p
            r:f32[3] = broadcast_in_dim 1.0:f32[]
            s:f32[3] = mul r q
            t:Ref{f32[3]} = new_ref[kind=None memory_space=None] s
            cond[
              branches=(
                { lambda ; u:Ref{f32[3]}. let
                    v:f32[3] = broadcast_in_dim 0.0:f32[]
                    w:f32[3], u[...] <- u[...], v
                    u[...] += w
                  in () }
                { lambda ; x:Ref{f32[3]}. let
                    y:f32[3] = broadcast_in_dim 0.0:f32[]
                    z:f32[3], x[...] <- x[...], y
                    ba:f32[3] = mul z 4.0:f32[]
                    x[...] += ba
                  in () }
              )
            ] f t
            bb:f32[3] = freeze t
          in (bb,) }""")
    )
