"""Top-level names of `jax` beyond the transformations: float0, Device, typeof,
named_call, named_scope, ensure_compile_time_eval (JAX 0.10.2's behaviour, recorded)."""

import logging

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp


def test_float0_is_the_tangent_dtype_of_integers():
    assert jax.float0 is jax.dtypes.float0
    assert jax.float0 == np.dtype([("float0", np.void, 0)])
    assert repr(jax.float0) == "dtype([('float0', 'V')])"
    _, int_grad = jax.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True)(1.0, 2)
    assert int_grad.dtype == jax.float0


def test_device_is_the_class_of_devices():
    assert all(isinstance(d, jax.Device) for d in jax.devices())
    assert isinstance(jnp.ones(2).devices().pop(), jax.Device)
    assert not isinstance("cpu", jax.Device)


@pytest.mark.parametrize(
    "value, expected",
    [  # reprs recorded from jax.typeof in JAX 0.10.2
        (np.ones((2, 3), np.float32), "ShapedArray(float32[2,3])"),
        (3, "ShapedArray(int32[], weak_type=True)"),
        (2.0, "ShapedArray(float32[], weak_type=True)"),
        (np.bool_(True), "ShapedArray(bool[])"),
        (np.float64(1), "ShapedArray(float32[])"),
        (jnp.arange(3), "ShapedArray(int32[3])"),
    ],
)
def test_typeof(value, expected):
    assert repr(jax.typeof(value)) == expected


def test_typeof_of_tracers_and_keys():
    seen = []
    jax.jit(lambda x: seen.append(repr(jax.typeof(x))))(np.ones(2))
    assert seen == ["ShapedArray(float32[2])"]
    assert repr(jax.typeof(jax.random.key(0))) == "ShapedArray(key<fry>[])"
    with pytest.raises(TypeError, match=r"Argument '\[1, 2\]' of type '<class 'list'>' is not"):
        jax.typeof([1, 2])


def test_named_call_leaves_the_jaxpr_unchanged():
    f = jax.named_call(lambda x: x * 2 + 1, name="foo")
    assert f(1.0) == 3.0
    assert f.__name__ == "<lambda>"  # the wrapped function's own name, as in JAX
    # Recorded from JAX 0.10.2: the name is not printed, jit keeps the function's name.
    assert str(jax.make_jaxpr(f)(1.0)) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = mul a 2.0:f32[]\n"
        "    c:f32[] = add b 1.0:f32[]\n"
        "  in (c,) }"
    )
    assert str(jax.make_jaxpr(jax.jit(f))(1.0)) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda ; a:f32[]. let\n"
        "          c:f32[] = mul a 2.0:f32[]\n"
        "          b:f32[] = add c 1.0:f32[]\n"
        "        in (b,) }\n"
        "    ] a\n"
        "  in (b,) }"
    )
    assert jax.grad(f)(1.0) == 2.0


def test_named_scope():
    def g(x):
        with jax.named_scope("bar"):
            return jnp.sin(x)

    # Recorded from JAX 0.10.2.
    assert str(jax.make_jaxpr(g)(1.0)) == "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }"
    assert float(jax.jit(g)(0.0)) == 0.0
    with pytest.raises(TypeError, match=r"named_scope name argument must be a string\."):
        jax.named_scope(3)


def test_ensure_compile_time_eval_under_jit():
    seen = []

    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sum(np.arange(3))
            seen.append((type(y), repr(y)))
            z = jnp.sin(x)  # traced operand: still traced
            seen.append(not isinstance(z, type(jnp.ones(1))))
        return x * int(y)  # usable as a Python int

    assert float(f(1.0)) == 3.0
    assert seen == [(type(jnp.ones(1)), "Array(3, dtype=int32)"), True]
    # Recorded from JAX 0.10.2 (the unused sin stays, as JAX leaves it).
    assert str(jax.make_jaxpr(f)(1.0)) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = jit[\n"
        "      name=f\n"
        "      jaxpr={ lambda ; a:f32[]. let\n"
        "          c:f32[] = sin a\n"
        "          b:f32[] = mul a 3.0:f32[]\n"
        "        in (b,) }\n"
        "    ] a\n"
        "  in (b,) }"
    )


def test_ensure_compile_time_eval_under_grad_and_vmap():
    def loss(x):
        with jax.ensure_compile_time_eval():
            c = jnp.sum(np.arange(4.0))
            y = x * c
        return y * float(c)

    assert float(jax.grad(loss)(2.0)) == 36.0  # recorded from JAX 0.10.2
    np.testing.assert_array_equal(jax.vmap(loss)(np.arange(2.0)), [0.0, 36.0])
    assert float(jax.jit(jax.grad(loss))(2.0)) == 36.0


def test_ensure_compile_time_eval_nests_and_restores():
    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            with jax.ensure_compile_time_eval():
                a = jnp.ones(2) * 2
            b = a + x  # traced
            total = int(a.sum())
        return b, total

    out, total = f(1.0)
    np.testing.assert_array_equal(out, [3.0, 3.0])
    assert total == 4
    with jax.ensure_compile_time_eval():
        assert float(jnp.ones(()) + 1) == 2.0
    with pytest.raises(jax.errors.ConcretizationTypeError):  # the block has ended
        jax.jit(lambda x: int(jnp.sum(x)))(np.arange(3))


def test_process_indices_and_old_host_names():
    assert jax.process_indices() == [0]
    with pytest.warns(UserWarning, match="jax.host_count has been renamed to jax.process_count"):
        assert jax.host_count() == jax.process_count() == 1
    with pytest.warns(UserWarning, match="jax.host_id has been renamed to jax.process_index"):
        assert jax.host_id() == 0
    with pytest.warns(UserWarning, match="jax.host_ids has been renamed to jax.process_indices"):
        assert jax.host_ids() == [0]


def test_log_compiles_context(caplog):
    assert not jax.log_compiles.value
    caplog.set_level(logging.DEBUG, logger="lamina")
    with jax.log_compiles():
        assert jax.log_compiles.value and jax.config.jax_log_compiles
        jax.jit(lambda x: x * 5 - 3)(np.ones(7, np.float32))
    assert not jax.config.jax_log_compiles
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(m.startswith("Finished XLA compilation") for m in warned)
    caplog.clear()
    jax.jit(lambda x: x * 7 - 3)(np.ones(7, np.float32))
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_copy_to_host_async_returns_its_argument():
    x = {"a": jnp.arange(3.0), "b": [1, "s", np.ones(2)]}
    assert jax.copy_to_host_async(x) is x  # as JAX 0.10.2: the same object
    np.testing.assert_array_equal(jax.device_get(x)["a"], [0.0, 1.0, 2.0])
    deleted = jnp.ones(2)
    deleted.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        jax.copy_to_host_async(deleted)


def test_shard_is_the_class_of_addressable_shards():
    (shard,) = jnp.arange(4.0).addressable_shards
    assert isinstance(shard, jax.Shard)
    assert shard.index == (slice(None, None, None),) and shard.replica_id == 0
    assert shard.device == jax.devices()[0]
    np.testing.assert_array_equal(shard.data, [0.0, 1.0, 2.0, 3.0])


def test_vjp_function_is_a_pytree_that_jit_returns_and_takes():
    f = lambda x: jnp.sin(x).sum()  # noqa: E731
    x = jnp.arange(3.0)
    y, f_vjp = jax.jit(lambda x: jax.vjp(f, x))(x)
    np.testing.assert_allclose(y, np.sin(np.arange(3.0)).sum(), rtol=1e-6)
    (ct,) = jax.jit(lambda v, c: v(c))(f_vjp, 2.0)
    np.testing.assert_allclose(ct, 2 * np.cos(np.arange(3.0)), rtol=1e-6)
    assert all(isinstance(leaf, jax.Array) for leaf in jax.tree.leaves(f_vjp))


def test_fwd_and_bwd_compiles_the_backward_once():
    fwd, bwd = jax.fwd_and_bwd(lambda x, w: (x @ w).sum(), argnums=0)
    x = jnp.ones((2, 3))
    for scale in (1.0, 2.0, 3.0):
        w = jnp.full((3, 4), scale)
        y, residuals = fwd(x, w)
        assert float(y) == 24 * scale
        np.testing.assert_allclose(bwd(residuals, 1.0), np.full((2, 3), 4 * scale))
    assert bwd._cache_size() == 1 and fwd._cache_size() == 1


def test_fwd_and_bwd_with_aux_several_argnums_unjitted():
    def f(x, w):
        return (x * w).sum(), x.shape

    fwd, bwd = jax.fwd_and_bwd(f, argnums=(0, 1), has_aux=True, jitted=False)
    y, residuals, aux = fwd(jnp.arange(3.0), jnp.full(3, 2.0))
    assert float(y) == 6.0 and aux == (3,)
    dx, dw = bwd(residuals, 1.0)
    np.testing.assert_array_equal(dx, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(dw, [0.0, 1.0, 2.0])


def test_vjp_with_refs_markers_as_jax():
    f = lambda x, y: (x * y).sum()  # noqa: E731
    _, f_vjp = jax.vjp(f, jnp.ones(3), jnp.full(3, 2.0))
    skipped, dy = f_vjp.with_refs(jax.ad.DontWant(), jax.ad.GradValue())(1.0)
    assert skipped == jax.ad.DidntWant() and jax.tree.leaves(skipped) == []
    np.testing.assert_array_equal(dy, [1.0, 1.0, 1.0])
    with pytest.raises(TypeError, match="was called with 2 arguments"):
        f_vjp(1.0, 2.0)


def test_user_context_keys_the_jit_cache():
    traces = []

    @jax.jit
    def f(x):
        traces.append(1)
        return x * 2

    context = jax.make_user_context(default_value=None)
    f(1.0), f(1.0)
    with context(1):
        f(1.0), f(1.0)
        assert context.value == 1
    with context(2):
        f(1.0)
    with context(1):
        f(1.0)
    assert len(traces) == 3 and context.value is None  # as JAX 0.10.2
    context.set_global(5)
    assert context.get_global() == 5
    f(1.0)
    assert len(traces) == 4


def test_version_memory_and_environment_info(capsys):
    assert jax.version.__version__ == "0.10.2" and jax.version.__version_info__ == (0, 10, 2)
    assert [s.name for s in jax.memory.Space] == ["Device", "Host", "Any"]
    assert repr(jax.memory.Space.Host) == "MemorySpace.Host"
    text = jax.print_environment_info(return_string=True)
    lines = text.splitlines()
    assert lines[0].startswith("jax:    0.10.2") and lines[1] == "jaxlib: 0.10.2"
    assert lines[4] == 'device info: cpu-1, 1 local devices"'
    assert jax.print_environment_info() is None
    assert capsys.readouterr().out == text + "\n"


def test_vjp_with_refs_accumulates_into_a_ref():
    f = lambda x, y: (x * y).sum()  # noqa: E731
    _, f_vjp = jax.vjp(f, jnp.ones(3), jnp.full(3, 2.0))
    ref = jax.new_ref(jnp.zeros(3))
    for expected in (2.0, 4.0):  # recorded from JAX 0.10.2
        result = f_vjp.with_refs(ref, jax.ad.DontWant())(1.0)
        assert result == (jax.ad.GradRef(), jax.ad.DidntWant())
        np.testing.assert_array_equal(ref[...], [expected] * 3)


def test_gradients_keep_weak_types_as_jax():
    # recorded from JAX 0.10.2: a weakly typed input's gradient is weakly typed
    assert jax.grad(jnp.sin)(1.0).weak_type
    assert not jax.grad(jnp.sin)(np.float32(1.0)).weak_type
    _, f_vjp = jax.vjp(jnp.sin, 1.0)
    assert f_vjp(1.0)[0].weak_type and not f_vjp(np.float32(1.0))[0].weak_type
    assert jax.jit(jax.grad(lambda x: x))(1.0).weak_type
