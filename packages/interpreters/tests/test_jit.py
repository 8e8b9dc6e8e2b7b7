"""jit: results against eager execution, caching and retracing, static arguments,
pytrees, donation, keep_unused, config options, threads and errors.

The primitives are test-local (``jit_prims.py``): lax is a higher layer."""

import logging
import threading

import jit_prims as P
import numpy as np
import pytest

from lamina.interpreters import config, device_put, disable_jit, make_jaxpr
from lamina.interpreters.jit_functions.jit import clear_caches, jit
from lamina.interpreters.runtime import executables

methods = P.methods
pytestmark = pytest.mark.usefixtures("methods")
X = np.arange(4, dtype=np.float32)


def counted(fun):
    """``fun`` with a trace counter: ``.count`` grows each time it runs."""

    def wrapper(*args, **kwargs):
        wrapper.count += 1
        return fun(*args, **kwargs)

    wrapper.count = 0
    wrapper.__name__ = fun.__name__
    return wrapper


def f(x, y):
    return P.add(P.mul(P.sin(x), 2.0), y)  # explicit: eager arrays have no operators here


def test_jit_matches_eager():
    eager = f(device_put(X), device_put(X))
    np.testing.assert_allclose(np.asarray(jit(f)(X, X)), np.asarray(eager), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jit(f)(X, X)), np.sin(X) * 2 + X, rtol=1e-6)


def test_result_is_device_array_and_weak_types_follow():
    out = jit(lambda x: x * 2)(3.0)
    assert out.weak_type and out.dtype == np.float32 and float(out) == 6.0
    out = jit(lambda x: x * 2)(np.float32(3.0))
    assert not out.weak_type


def test_traced_once_per_signature():
    g = counted(lambda x, y: x * 2.0 + y)
    jg = jit(g)
    jg(X, X)
    jg(X, X + 1)
    jg(device_put(X), X)
    assert g.count == 1 and jg._cache_size() == 1
    jg(X[:2], X[:2])  # new shape
    assert g.count == 2
    jg(X.astype(np.int32), X)  # new dtype
    assert g.count == 3
    jg(1.0, 2.0)  # weak scalars
    jg(np.float32(1.0), 2.0)  # strong scalar: a new signature
    assert g.count == 5 and jg._cache_size() == 5
    jg.clear_cache()
    assert jg._cache_size() == 0
    jg(X, X)
    assert g.count == 6


def test_clear_caches_forgets_traces():
    g = counted(f)
    jg = jit(g)
    jg(X, X)
    clear_caches()
    jg(X, X)
    assert g.count == 2


def test_wraps_metadata():
    def documented(x):
        """Doc."""
        return x

    j = jit(documented)
    assert j.__name__ == "documented" and j.__doc__ == "Doc." and j.__wrapped__ is documented


def test_static_argnums_and_argnames():
    def g(x, n, scale=1.0):
        return x * float(n) * scale

    h = counted(g)
    j = jit(h, static_argnums=1, static_argnames="scale")
    np.testing.assert_allclose(np.asarray(j(X, 3)), X * 3)
    np.testing.assert_allclose(np.asarray(j(X, 3, scale=2.0)), X * 6)
    j(X, 3)
    assert h.count == 2
    j(X, 4)
    assert h.count == 3
    # static_argnums is inferred from static_argnames and vice versa
    j2 = jit(g, static_argnames="n")
    np.testing.assert_allclose(np.asarray(j2(X, 5)), X * 5)


def test_unhashable_static_argument():
    j = jit(lambda x, s: x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        j(X, [1, 2])
    j = jit(lambda x, s: x, static_argnames="s")
    with pytest.raises(ValueError, match="unhashable type: 'list'"):
        j(X, s=[1, 2])


def test_kwargs_are_dynamic():
    g = counted(f)
    j = jit(g)
    np.testing.assert_allclose(np.asarray(j(X, y=X)), np.sin(X) * 2 + X, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(j(x=X, y=1.0)), np.sin(X) * 2 + 1, rtol=1e-6)


def test_pytrees_in_and_out():
    def g(tree):
        a, b = tree["pair"]
        return {"sum": a + b, "parts": (a * 2.0, [b])}

    out = jit(g)({"pair": (X, X + 1)})
    assert set(out) == {"sum", "parts"}
    np.testing.assert_allclose(np.asarray(out["sum"]), 2 * X + 1)
    np.testing.assert_allclose(np.asarray(out["parts"][0]), 2 * X)
    np.testing.assert_allclose(np.asarray(out["parts"][1][0]), X + 1)
    assert jit(lambda: None)() is None


def test_constant_outputs_and_closed_over_arrays():
    c = device_put(np.arange(4, dtype=np.float32))
    out = jit(lambda x: (x + c, 3.0))(X)
    np.testing.assert_allclose(np.asarray(out[0]), X + np.arange(4))
    assert float(out[1]) == 3.0


def test_nested_jit_stages_one_shared_jaxpr():
    inner = jit(f)
    text = str(make_jaxpr(lambda x: inner(x, x) + inner(x, x))(X))
    assert text.startswith("let f = { lambda")
    assert text.count("jit[name=f jaxpr=f]") == 2
    outer = jit(lambda x: inner(x, x) * 2.0)
    np.testing.assert_allclose(np.asarray(outer(X)), (np.sin(X) * 2 + X) * 2, rtol=1e-6)


def test_inline_jit_inlines_equations():
    inner = jit(lambda x: x * 2.0, inline=True)
    text = str(make_jaxpr(lambda x: inner(x) + 1.0)(X))
    assert "jit[" not in text and "mul" in text


def test_jit_p_eager_runs_one_executable():
    from lamina.interpreters import jit_p

    closed = make_jaxpr(f)(X, X)
    eqn = make_jaxpr(lambda x: jit(f)(x, x))(X).jaxpr.eqns[0]
    out = jit_p.bind(X, X, **eqn.params)
    np.testing.assert_allclose(np.asarray(out[0]), np.sin(X) * 2 + X, rtol=1e-6)
    assert closed is not None


def test_donation_deletes_input():
    j = jit(lambda a, b: a + b, donate_argnums=0)
    a, b = device_put(np.ones(4, np.float32)), device_put(np.ones(4, np.float32))
    out = j(a, b)
    np.testing.assert_allclose(np.asarray(out), 2 * np.ones(4))
    assert a.is_deleted() and not b.is_deleted()
    j2 = jit(lambda a, b: a + b, donate_argnames="b")
    a, b = device_put(np.ones(4, np.float32)), device_put(np.ones(4, np.float32))
    j2(a, b)
    assert b.is_deleted() and not a.is_deleted()


def test_keep_unused():
    def g(x, unused):
        return x * 2.0

    assert "tensor<3xf32>" not in jit(g).lower(X, np.ones(3, np.float32)).as_text()
    kept = jit(g, keep_unused=True)
    assert "tensor<3xf32>" in kept.lower(X, np.ones(3, np.float32)).as_text()
    np.testing.assert_allclose(np.asarray(kept(X, np.ones(3, np.float32))), 2 * X)
    np.testing.assert_allclose(np.asarray(jit(g)(X, np.ones(3, np.float32))), 2 * X)


def test_non_array_argument_names_its_path():
    def g(x, y):
        return x

    with pytest.raises(TypeError) as info:
        jit(g)(X, "s")
    message = str(info.value)
    assert message.startswith(
        f"Error interpreting argument to {g} as an abstract array. The problematic value "
        "is of type <class 'str'> and was passed to the function at path y."
    )
    assert "static_argnums or static_argnames" in message
    with pytest.raises(TypeError, match=r"at path y\['a'\]\."):
        jit(g)(X, y={"a": "s"})


def test_disable_jit_calls_function_directly():
    seen = []

    def g(x):
        seen.append(type(x))
        return x

    with disable_jit():
        jit(g)(X)
    assert seen == [np.ndarray]
    config.update("jax_disable_jit", True)
    try:
        jit(g)(X)
    finally:
        config.update("jax_disable_jit", False)
    assert seen == [np.ndarray, np.ndarray]


def test_log_compiles(caplog):
    config.update("jax_log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING):
            jit(lambda x: x * 2.0)(X)
    finally:
        config.update("jax_log_compiles", False)
    text = caplog.text
    assert "Compiling jit(<lambda>) with global shapes and types (ShapedArray(float32[4]),)" in text
    assert "Finished XLA compilation of jit(<lambda>)" in text


def test_debug_nans_names_the_primitive():
    g = jit(lambda x: P.log(x) * 2.0)
    assert np.isnan(np.asarray(g(-X - 1))).all()  # off: NaNs pass
    config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
            g(-X - 1)
        np.testing.assert_allclose(np.asarray(g(X + 1)), np.log(X + 1) * 2, rtol=1e-6)
    finally:
        config.update("jax_debug_nans", False)


def test_argnums_and_argnames_checked_against_the_signature():
    # recorded from JAX 0.10.2
    def one(x):
        return x

    def positional_only(x, /, y):
        return x

    cases = [
        (lambda: jit(one, static_argnums=3),
         "Jitted function has static_argnums=(3,), but only accepts 1 positional arguments."),
        (lambda: jit(one, static_argnums=-2),
         "Jitted function has static_argnums=(-2,), but only accepts 1 positional arguments."),
        (lambda: jit(positional_only, static_argnums=(0, 4)),
         "Jitted function has static_argnums=(0, 4), but only accepts 2 positional arguments."),
        (lambda: jit(one, donate_argnums=2),
         "Jitted function has donate_argnums=(2,), but only accepts 1 positional arguments."),
        (lambda: jit(one, static_argnames="y"),
         "Jitted function has invalid argnames {'y'} in static_argnames. Function does not "
         "take these args."),
        (lambda: jit(one, donate_argnames="z"),
         "Jitted function has invalid argnames {'z'} in donate_argnames. Function does not "
         "take these args."),
        (lambda: jit(positional_only, static_argnames="x"),
         "Jitted function has invalid argnames {'x'} in static_argnames. These are "
         "positional-only"),
    ]  # fmt: skip
    for make, message in cases:
        with pytest.raises(ValueError) as info:
            make()
        assert str(info.value) == message
    # *args and **kwargs take any; so do functions without a signature
    assert jit(lambda *a: a[0], static_argnums=3)(X) is not None
    jit(lambda x, **k: x, static_argnames="zz")
    jit(max, static_argnums=4)
    assert float(jit(one, static_argnums=-1)(2.0)) == 2.0


def test_threads_share_one_jitted_function():
    g = counted(lambda x, k: x * k)
    j = jit(g)
    errors, results = [], {}

    def work(i):
        try:
            for _ in range(20):
                x = np.full(4, i, np.float32)
                results[i] = np.asarray(j(x, np.float32(2.0)))
                assert (results[i] == 2 * i).all()
        except Exception as err:
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert g.count == 1


def test_not_callable():
    with pytest.raises(TypeError, match="Expected a callable value"):
        jit(3)


def test_decorator_form_and_methods():
    @jit
    def double(x):
        return x * 2.0

    class Model:
        scale = 3.0

        @jit
        def apply(self, x):
            return x * 2.0

    np.testing.assert_allclose(np.asarray(double(X)), 2 * X)
    m = Model()
    with pytest.raises(TypeError):  # self is not an array: JAX needs static_argnums=0
        m.apply(X)
    assert jit(static_argnums=0)(lambda n, x: x * float(n))(3, X) is not None


def test_executables_go_with_their_functions():
    import gc

    from jaxlib.mlir import ir

    jit(lambda x: P.sin(x))(X)  # the lowering context exists before counting
    gc.collect()
    cached = len(executables._executables)
    contexts = ir.Context._get_live_count()
    for i in range(150):  # more than one lowering context serves (100 modules each)
        g = jit(lambda x, i=i: P.add(P.sin(x), x))
        np.testing.assert_allclose(g(X[: i % 4 + 1]), np.sin(X[: i % 4 + 1]) + X[: i % 4 + 1])
        del g
    gc.collect()
    assert len(executables._executables) <= cached + 1
    assert ir.Context._get_live_count() <= contexts + 1
    # A live function keeps its executable: a second call compiles nothing.
    h = counted(lambda x: P.mul(x, x))
    jh = jit(h)
    jh(X)
    gc.collect()
    np.testing.assert_allclose(jh(X), X * X)
    assert h.count == 1
