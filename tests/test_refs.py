"""Mutable array references at the top level (``jax.Ref``, ``jax.new_ref``, ``jax.ref``):
values against NumPy, Jaxprs and errors recorded from JAX 0.10.2."""

import re
import textwrap

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp


def jaxpr_text(text: str) -> str:
    return textwrap.dedent(text).strip()


def test_names():
    # Recorded from JAX 0.10.2: dir(jax.ref) without dunder names.
    public = sorted(n for n in dir(jax.ref) if not n.startswith("_"))
    assert public == [
        "AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get",
        "new_ref", "set", "swap",
    ]  # fmt: skip
    assert jax.new_ref is jax.ref.new_ref and jax.freeze is jax.ref.freeze
    assert jax.ref.Ref is jax.Ref


def test_eager_reads_and_writes_against_numpy():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    r = jax.new_ref(jnp.asarray(x))
    expected = x.copy()
    np.testing.assert_array_equal(r[...], expected)
    np.testing.assert_array_equal(r[1], expected[1])
    np.testing.assert_array_equal(r[:, 1], expected[:, 1])
    np.testing.assert_array_equal(r[-1], expected[-1])
    np.testing.assert_array_equal(r[:, ::2], expected[:, ::2])
    np.testing.assert_array_equal(r[jax.ds(1, 1)], expected[1:2])
    np.testing.assert_array_equal(r[jnp.array([0, 1, 1])], expected[[0, 1, 1]])
    r[...] += 1.0
    expected += 1
    r[1, 2] = 10.0
    expected[1, 2] = 10
    r[0, 0:2] = jnp.array([5.0, 6.0])
    expected[0, 0:2] = [5, 6]
    r.addupdate(jnp.ones(3), 0)
    expected[0] += 1
    old = jax.ref.swap(r, 1, jnp.zeros(3))
    np.testing.assert_array_equal(old, [4, 5, 10])
    expected[1] = 0
    jax.ref.set(r, (0, 2), 7.0)
    expected[0, 2] = 7
    jax.ref.addupdate(r, ..., jnp.ones((2, 3)))
    expected += 1
    np.testing.assert_array_equal(jax.ref.get(r, None), expected)
    np.testing.assert_array_equal(jax.freeze(r), expected)
    assert (r.shape, r.dtype, r.ndim, r.size, len(r)) == ((2, 3), np.float32, 2, 6, 2)


def test_repr_type_and_isinstance():
    # Recorded from JAX 0.10.2.
    r = jax.new_ref(jnp.arange(3.0))
    assert repr(r) == "Ref([0., 1., 2.], dtype=float32)"
    assert str(jax.typeof(r)) == "Ref{float32[3]}"
    assert repr(jax.new_ref(1)) == "Ref(1, dtype=int32, weak_type=True)"
    assert isinstance(r, jax.Ref) and not isinstance(r, jax.Array)
    seen = []
    jax.make_jaxpr(lambda r: seen.append((isinstance(r, jax.Ref), isinstance(r, jax.Array))))(r)
    assert seen == [(True, False)]


def test_indexing_jaxpr():
    def f(r, i):
        a = r[0]
        b = r[:, 1]
        c = r[i]
        d = r[1, i]
        e = r[0, 1:3]
        f = r[jax.ds(i, 1)]
        g = r[..., 0]
        return a, b, c, d, e, f, g

    jaxpr = jax.make_jaxpr(f)(jax.new_ref(jnp.zeros((2, 3))), 1)
    # Recorded from JAX 0.10.2.
    assert str(jaxpr) == jaxpr_text("""
        { lambda ; a:Ref{f32[2,3]} b:i32[]. let
            c:f32[3] <- a[0,:]
            d:f32[2] <- a[:,1]
            e:f32[3] <- a[b,:]
            f:f32[] <- a[1,b]
            g:f32[2] <- a[0,1:]
            h:f32[1,3] <- a[b:b+1,:]
            i:f32[2] <- a[:,0]
          in (c, d, e, f, g, h, i) }
    """)


def test_writes_jaxpr():
    def f(r, i, v):
        r[0] = v
        r[i, 1] = 2.0
        r[1] += v
        jax.ref.addupdate(r, 0, v)
        old = jax.ref.swap(r, 1, v)
        return old, jax.ref.get(r, None)

    jaxpr = jax.make_jaxpr(f)(jax.new_ref(jnp.zeros((2, 3))), 1, jnp.ones(3))
    # Recorded from JAX 0.10.2.
    assert str(jaxpr) == jaxpr_text("""
        { lambda ; a:Ref{f32[2,3]} b:i32[] c:f32[3]. let
            a[0,:] <- c
            a[b,1] <- 2.0:f32[]
            d:f32[3] <- a[1,:]
            e:f32[3] = add d c
            a[1,:] <- e
            a[0,:] += c
            f:f32[3], a[1,:] <- a[1,:], c
            g:f32[2,3] <- a[...]
          in (f, g) }
    """)


def test_new_ref_freeze_free_empty_jaxprs():
    # Recorded from JAX 0.10.2.
    assert str(jax.make_jaxpr(lambda x: jax.freeze(jax.new_ref(x)))(1.0)) == jaxpr_text("""
        { lambda ; a:f32[]. let
            b:Ref{f32[]} = new_ref[kind=None memory_space=None] a
            c:f32[] = freeze b
          in (c,) }
    """)
    assert str(jax.make_jaxpr(lambda x: jax.free_ref(jax.new_ref(x)))(1.0)) == jaxpr_text("""
        { lambda ; a:f32[]. let
            b:Ref{f32[]} = new_ref[kind=None memory_space=None] a
            free_ref b
          in () }
    """)
    ty = jax.ShapeDtypeStruct((2,), jnp.float32)
    assert str(jax.make_jaxpr(lambda: jax.freeze(jax.empty_ref(ty)))()) == jaxpr_text("""
        { lambda ; . let
            a:Ref{f32[2]} = empty_ref[memory_space=None ty=float32[2]]<space>
            b:f32[2] = freeze a
          in (b,) }
    """).replace("<space>", " ")


def test_jit_internal_ref():
    def f(x):
        r = jax.new_ref(x)
        r[...] += 1.0
        r[0] = 3.0
        return r[...]

    x = jnp.arange(3.0)
    # Recorded from JAX 0.10.2.
    assert str(jax.make_jaxpr(f)(x)) == jaxpr_text("""
        { lambda ; a:f32[3]. let
            b:Ref{f32[3]} = new_ref[kind=None memory_space=None] a
            c:f32[3] <- b[...]
            d:f32[3] = add c 1.0:f32[]
            b[...] <- d
            b[0] <- 3.0:f32[]
            e:f32[3] <- b[...]
          in (e,) }
    """)
    np.testing.assert_array_equal(jax.jit(f)(x), [3.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(x), [3.0, 2.0, 3.0])


def test_jit_ref_arguments_and_closures_write_back():
    def g(r, x):
        r[...] += x

    r = jax.new_ref(jnp.zeros(3))
    jg = jax.jit(g)
    jg(r, jnp.ones(3))
    jg(r, jnp.ones(3))
    np.testing.assert_array_equal(r[...], [2.0, 2.0, 2.0])

    closed = jax.new_ref(jnp.zeros(3))

    def h(x):
        closed[...] = x
        return closed[...]

    # Recorded from JAX 0.10.2: the closed-over reference is passed to the inner jit last.
    assert str(jax.make_jaxpr(jax.jit(h))(jnp.ones(3))) == jaxpr_text("""
        { lambda a:Ref{f32[3]}; b:f32[3]. let
            c:f32[3] = jit[
              name=h
              jaxpr={ lambda ; b:f32[3] a:Ref{f32[3]}. let
                  d:f32[3], a[...] <- a[...], b
                  c:f32[3] <- a[...]
                in (c,) }
            ] b a
          in (c,) }
    """)
    np.testing.assert_array_equal(jax.jit(h)(jnp.full(3, 7.0)), [7.0, 7.0, 7.0])
    np.testing.assert_array_equal(closed[...], [7.0, 7.0, 7.0])
    # A nested jit writes through to the outer reference.
    jax.jit(lambda r, x: jax.jit(lambda r: r.__setitem__(..., x))(r))(r, jnp.full(3, 4.0))
    np.testing.assert_array_equal(r[...], [4.0, 4.0, 4.0])


def test_fori_loop_with_closed_over_ref():
    def f(x):
        r = jax.new_ref(jnp.zeros(3))

        def body(i, c):
            r[...] += x * i
            return c + 1.0

        c = jax.lax.fori_loop(0, 3, body, 0.0)
        return r[...], c

    # Recorded from JAX 0.10.2.
    assert str(jax.make_jaxpr(f)(jnp.ones(3))) == jaxpr_text("""
        { lambda ; a:f32[3]. let
            b:f32[3] = broadcast_in_dim 0.0:f32[]
            c:Ref{f32[3]} = new_ref[kind=None memory_space=None] b
            _:i32[] d:f32[] = scan[
              jaxpr={ lambda ; e:Ref{f32[3]} f:f32[3] g:i32[] h:f32[]. let
                  i:i32[] = add g 1:i32[]
                  j:f32[3] <- e[...]
                  k:f32[] = convert_element_type[new_dtype=float32 weak_type=False] g
                  l:f32[3] = mul f k
                  m:f32[3] = add j l
                  n:f32[3], e[...] <- e[...], m
                  o:f32[] = add h 1.0:f32[]
                in (i, o) }
              length=3
              num_carry=2
              num_consts=2
              reverse=False
              unroll=1
            ] c a 0:i32[] 0.0:f32[]
            p:f32[3] <- c[...]
          in (p, d) }
    """)
    for run in (f, jax.jit(f)):
        ref_value, c = run(jnp.ones(3))
        np.testing.assert_array_equal(ref_value, [3.0, 3.0, 3.0])
        assert float(c) == 3.0


def test_scan_while_cond_with_refs():
    r = jax.new_ref(jnp.zeros(3))

    def f(x):
        def body(c, xi):
            r[...] += xi
            return c + 1.0, r[0]

        return jax.lax.scan(body, 0.0, x)

    (_, ys) = f(jnp.ones((4, 3)))
    np.testing.assert_array_equal(ys, [1.0, 2.0, 3.0, 4.0])
    (_, ys) = jax.jit(f)(jnp.ones((4, 3)))
    # Recorded from JAX 0.10.2: the second run continues from the first.
    np.testing.assert_array_equal(ys, [5.0, 6.0, 7.0, 8.0])
    np.testing.assert_array_equal(r[...], [8.0, 8.0, 8.0])

    def w(r):
        def body(c):
            r[...] = r[...] * 2.0
            return c + 1

        return jax.lax.while_loop(lambda c: c < 3, body, 0)

    s = jax.new_ref(jnp.ones(2))
    assert int(jax.jit(w)(s)) == 3
    np.testing.assert_array_equal(s[...], [8.0, 8.0])

    def cnd(r, p):
        jax.lax.cond(p, lambda: r.__setitem__(..., r[...] + 1), lambda: None)

    jax.jit(cnd)(s, True)
    jax.jit(cnd)(s, False)
    np.testing.assert_array_equal(s[...], [9.0, 9.0])


def test_vmap():
    xs = jnp.arange(6.0).reshape(2, 3)

    def f(x):
        r = jax.new_ref(x)
        r[...] = r[...] * 2.0
        r[0] += 1.0
        return jax.freeze(r)

    expected = np.arange(6.0).reshape(2, 3) * 2
    expected[:, 0] += 1
    np.testing.assert_array_equal(jax.vmap(f)(xs), expected)
    # Recorded from JAX 0.10.2.
    assert str(jax.make_jaxpr(jax.vmap(f))(xs)) == jaxpr_text("""
        { lambda ; a:f32[2,3]. let
            b:Ref{f32[2,3]} = new_ref[kind=None memory_space=None] a
            c:f32[2,3] <- b[...]
            d:f32[2,3] = mul c 2.0:f32[]
            b[...] <- d
            e:f32[2] <- b[:,0]
            f:f32[2] = add e 1.0:f32[]
            b[:,0] <- f
            g:f32[2,3] = freeze b
          in (g,) }
    """)

    def g(x):
        r = jax.new_ref(jnp.zeros(3))
        r[...] += x
        return r[...]

    np.testing.assert_array_equal(jax.vmap(g)(xs), xs)

    def k(r, x):
        r[...] += x

    rk = jax.new_ref(jnp.zeros((2, 3)))
    jax.vmap(k)(rk, xs)
    np.testing.assert_array_equal(rk[...], xs)

    def take(x, i):
        return jax.new_ref(x)[i]

    np.testing.assert_array_equal(jax.vmap(take)(xs, jnp.array([0, 2])), [0.0, 5.0])

    unbatched = jax.new_ref(jnp.zeros(3))

    def write(x):
        unbatched[...] += x
        return x

    # Recorded from JAX 0.10.2 (the type is Exception itself).
    with pytest.raises(Exception, match="performing a set/swap operation with vmapped value"):
        jax.vmap(write)(xs)


def test_jvp_of_internal_refs():
    def f(x):
        r = jax.new_ref(x)
        r[...] = jnp.sin(r[...]) * 2.0
        return jax.freeze(r).sum()

    x, t = np.arange(3.0, dtype=np.float32), np.ones(3, np.float32)
    out, tan = jax.jvp(f, (jnp.asarray(x),), (jnp.asarray(t),))
    np.testing.assert_allclose(out, (np.sin(x) * 2).sum(), rtol=1e-6)
    np.testing.assert_allclose(tan, (np.cos(x) * 2 * t).sum(), rtol=1e-6)

    def g(x):
        r = jax.new_ref(jnp.zeros(3))
        r[...] += x**2
        r[1] += x[0]
        return r[...].sum()

    out, tan = jax.jvp(g, (jnp.asarray(x),), (jnp.asarray(t),))
    assert float(out) == 5.0 and float(tan) == 7.0


def test_grad_reading_a_closed_over_ref():
    r = jax.new_ref(jnp.arange(3.0))
    np.testing.assert_array_equal(jax.grad(lambda x: (x * r[...]).sum())(jnp.ones(3)), [0, 1, 2])


def test_errors():
    # Messages recorded from JAX 0.10.2.
    with pytest.raises(
        ValueError,
        match="traced for jit returned a mutable array reference of "
        r"type Ref\{float32\[\]\}, but mutable array references cannot be "
        "returned.\n\nThe returned mutable array was passed in as the argument r.",
    ):
        jax.jit(lambda r: r)(jax.new_ref(1.0))
    with pytest.raises(ValueError, match="The returned mutable array was created on line"):
        jax.jit(lambda x: jax.new_ref(x))(1.0)
    r = jax.new_ref(jnp.ones(2))
    with pytest.raises(
        ValueError,
        match="only one reference to a mutable array may be passed "
        "as an argument to a function, but when tracing .* for jit the mutable "
        r"array reference of type Ref\{float32\[2\]\} appeared at both a and b.",
    ):
        jax.jit(lambda a, b: a[...] + b[...])(r, r)
    with pytest.raises(ValueError, match=r"appeared at both d\['a'\] and d\['b'\]"):
        jax.jit(lambda d: d["a"][...])({"a": r, "b": r})
    with pytest.raises(ValueError, match=r"Can only call `ref_get` on a `Ref`: \[1. 1. 1.\]."):
        jax.ref.get(jnp.ones(3), 0)
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Cannot store a Ref into another Ref. Did you forget to load from it using `[...]`?"
        ),
    ):
        jax.make_jaxpr(lambda a, b: a.__setitem__(..., b))(jax.new_ref(1.0), jax.new_ref(2.0))
    big = jax.new_ref(jnp.zeros((2, 3)))
    with pytest.raises(
        ValueError,
        match=r"Invalid shape for `swap`. Ref shape: \(2, 3\). "
        r"Expected shape: \(3,\). Value shape: \(2,\).",
    ):
        big[0] = jnp.ones(2)
    with pytest.raises(
        ValueError,
        match=re.escape("Invalid dtype for `swap`. Ref dtype: float32. Value dtype: int32."),
    ):
        big[0] = jnp.ones(3, jnp.int32)
    with pytest.raises(ValueError, match=re.escape("Out of bound indexer: idx=5, dim=2.")):
        big[5]
    with pytest.raises(
        TypeError,
        match=re.escape(
            "Error interpreting argument to new_ref as a JAX value. "
            "The problematic value is of type <class 'list'>"
        ),
    ):
        jax.new_ref([1.0, 2.0])
    with pytest.raises(
        NotImplementedError,
        match=re.escape("array ref with memory space only works inside of a `jit`."),
    ):
        jax.new_ref(1.0, memory_space="any")
    with pytest.raises(NotImplementedError):
        jax.empty_ref(jax.ShapeDtypeStruct((2,), jnp.float32))
    with pytest.raises(TypeError, match="unsupported operand"):
        jax.new_ref(1.0) + 1


def test_free_and_freeze_eagerly():
    # Recorded from JAX 0.10.2: neither invalidates the reference eagerly.
    r = jax.new_ref(1.0)
    assert jax.free_ref(r) == ()
    assert float(r[...]) == 1.0
    assert float(jax.freeze(r)) == 1.0
