"""lamina.experimental.checkify against JAX 0.10.2.

Every message and value asserted here was recorded from JAX 0.10.2 running the same
program (``jax.experimental.checkify``).
"""

import re

import numpy as np
import pytest

import lamina
import lamina.numpy as jnp
from lamina import lax
from lamina.experimental import checkify

F32 = jnp.float32


def _positive(x):
    checkify.check(x > 0, "{x} needs to be positive!", x=x)
    return 1 / x


def _msg(err):
    return err.get()


# --------------------------------------------------------------------------- API


def test_names_match_jax():
    # dir(jax.experimental.checkify), recorded from JAX 0.10.2
    names = [
        "Error", "ErrorCategory", "JaxRuntimeError", "all_checks", "automatic_checks",
        "check", "check_error", "checkify", "debug_check", "div_checks", "float_checks",
        "index_checks", "init_error", "nan_checks", "user_checks",
    ]  # fmt: skip
    assert [n for n in dir(checkify) if not n.startswith("_") and n in names] == names
    for n in names:
        assert hasattr(checkify, n)


def test_error_sets():
    assert checkify.float_checks == checkify.nan_checks | checkify.div_checks
    assert checkify.automatic_checks == checkify.float_checks | checkify.index_checks
    assert checkify.all_checks == checkify.automatic_checks | checkify.user_checks
    assert len(checkify.all_checks) == 4
    assert issubclass(checkify.JaxRuntimeError, ValueError)


def test_init_error():
    assert checkify.init_error.get() is None
    assert str(checkify.init_error) == "Error(None)"


# --------------------------------------------------------------------------- user checks


def test_user_check_eager_checkify():
    err, out = checkify.checkify(_positive)(F32(-3.0))
    assert err.get() == "-3.0 needs to be positive! (`check` failed)"
    assert str(err) == "Error(-3.0 needs to be positive! (`check` failed))"
    np.testing.assert_allclose(out, -1 / 3, rtol=1e-6)
    with pytest.raises(checkify.JaxRuntimeError, match=r"-3.0 needs to be positive!"):
        err.throw()
    assert isinstance(err.get_exception(), Exception)


def test_user_check_passes():
    err, out = lamina.jit(checkify.checkify(_positive))(F32(3.0))
    assert err.get() is None and err.get_exception() is None
    err.throw()  # no failure: nothing raised
    np.testing.assert_allclose(out, 1 / 3, rtol=1e-6)


def test_jit_inside_and_outside():
    assert checkify.checkify(lamina.jit(_positive))(-3.0)[0].get() == (
        "-3.0 needs to be positive! (`check` failed)"
    )
    err, _ = lamina.jit(checkify.checkify(_positive))(F32(-2.0))
    assert err.get() == "-2.0 needs to be positive! (`check` failed)"


def test_first_failure_wins():
    def g(x):
        checkify.check(x > 5, "first")
        checkify.check(x > 10, "second")
        return x

    assert checkify.checkify(g)(1.0)[0].get() == "first (`check` failed)"
    assert checkify.checkify(g)(7.0)[0].get() == "second (`check` failed)"


def test_keyword_format_arguments():
    err = checkify.checkify(lambda x: checkify.check(x > 0, "{a} and {b}", a=x, b=x * 2))(
        F32(-2.0)
    )[0]
    assert err.get() == "-2.0 and -4.0 (`check` failed)"


def test_eager_check_raises():
    with pytest.raises(checkify.JaxRuntimeError) as info:
        checkify.check(False, "eager fail {}", jnp.array(3))
    assert str(info.value) == "eager fail 3 (`check` failed)"
    checkify.check(True, "fine")


def test_check_under_jit_without_checkify_raises():
    with pytest.raises(ValueError) as info:
        lamina.jit(_positive)(1.0)
    assert str(info.value) == (
        "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
        "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
        "functionalizing it through `checkify.checkify`."
    )
    with pytest.raises(ValueError, match=r"Cannot abstractly evaluate a checkify\.check"):
        body = lambda c, y: (checkify.check(y > 0, "s"), (c, y))[1]  # noqa: E731
        lamina.jit(lambda x: lax.scan(body, 0.0, x))(jnp.ones(3))


def test_bad_arguments():
    with pytest.raises(TypeError) as info:
        checkify.check(jnp.array([True]), "x")
    assert str(info.value) == "check takes a scalar pred as argument, got [ True]"
    with pytest.raises(TypeError) as info:
        checkify.check(True, "x {}", 3)
    assert str(info.value) == (
        "Formatting arguments to checkify.check need to be PyTrees of arrays, but got 3 "
        "of type <class 'int'>."
    )
    with pytest.raises(TypeError) as info:
        checkify.check_error(3)
    assert (
        str(info.value) == "check_error takes an Error as argument, got type <class 'int'> instead."
    )


def test_debug_check():
    def dc(x):
        checkify.debug_check(x > 0, "dbg {}", x)
        return x

    assert float(dc(F32(-1))) == -1.0  # dropped outside checkify
    assert float(lamina.jit(dc)(-1.0)) == -1.0
    assert checkify.checkify(dc)(F32(-1))[0].get() == "dbg -1.0 (`check` failed)"


def test_nested_checkify_and_check_error():
    def inner(x):
        checkify.check(x > 0, "inner")
        return x

    def outer(x):
        e, y = checkify.checkify(inner)(x)
        checkify.check_error(e)
        return y

    assert checkify.checkify(outer)(F32(-1))[0].get() == "inner (`check` failed)"
    nested = checkify.checkify(lambda x: checkify.checkify(inner)(x))(F32(-1))
    assert nested[1][0].get() == "inner (`check` failed)"
    assert nested[0].get() is None
    with pytest.raises(checkify.JaxRuntimeError, match="inner"):
        outer(F32(-1))


def test_user_checks_only_by_default():
    def both(x):
        y = jnp.log(x)
        checkify.check(x > -5, "too small {}", x)
        return y

    all_checks = checkify.checkify(both, errors=checkify.all_checks)
    assert all_checks(F32(-1.0))[0].get() == "nan generated by primitive: log."
    # user checks get their codes while tracing, before the automatic ones
    assert all_checks(F32(-10.0))[0].get() == "too small -10.0 (`check` failed)"
    nan_only = checkify.checkify(both, errors=checkify.nan_checks)
    assert nan_only(F32(-10.0))[0].get() == "nan generated by primitive: log."
    assert checkify.checkify(both, errors=checkify.index_checks)(F32(-10.0))[0].get() is None


# --------------------------------------------------------------------------- automatic checks


def test_nan_checks():
    nan = checkify.nan_checks
    assert _msg(checkify.checkify(jnp.sin, errors=checkify.float_checks)(F32(np.inf))[0]) == (
        "nan generated by primitive: sin."
    )
    assert _msg(checkify.checkify(jnp.log, errors=nan)(F32(-1))[0]) == (
        "nan generated by primitive: log."
    )
    # a NaN input counts too
    assert _msg(checkify.checkify(lambda x: x + 1, errors=nan)(F32(np.nan))[0]) == (
        "nan generated by primitive: add."
    )
    err, _ = lamina.jit(checkify.checkify(jnp.sqrt, errors=checkify.float_checks))(
        jnp.array([1.0, -1.0])
    )
    assert err.get() == "nan generated by primitive: sqrt."
    assert checkify.checkify(jnp.sin, errors=nan)(F32(1.0))[0].get() is None
    assert checkify.checkify(jnp.log, errors=checkify.user_checks)(F32(-1))[0].get() is None


def test_div_checks():
    err, out = checkify.checkify(lambda x, y: x // y, errors=checkify.div_checks)(
        jnp.array([1, 2]), jnp.array([1, 0])
    )
    assert err.get() == "division by zero"
    np.testing.assert_array_equal(out, [1, -2])
    err, out = checkify.checkify(lambda x, y: x / y, errors=checkify.float_checks)(F32(1), F32(0))
    assert err.get() == "division by zero"
    assert float(out) == np.inf
    # jnp.remainder does not divide with div
    err, out = checkify.checkify(lambda x, y: x % y, errors=checkify.div_checks)(
        jnp.array([1, 2]), jnp.array([1, 0])
    )
    assert err.get() is None
    np.testing.assert_array_equal(out, [0, 0])


def _oob(shape, index, axis, size):
    return (
        f"out-of-bounds indexing for array of shape {shape}: index {index} is out of "
        f"bounds for axis {axis} with size {size}. "
    )


def test_index_checks():
    idx = checkify.index_checks
    x = jnp.arange(3)
    err, out = checkify.checkify(lambda x, i: x[i], errors=idx)(x, jnp.int32(5))
    assert err.get() == _oob((3,), 5, 0, 3) and int(out) == 2
    err, _ = checkify.checkify(lambda x, i: x[i], errors=idx)(x, jnp.int32(-5))
    assert err.get() == _oob((3,), -2, 0, 3)
    err, out = checkify.checkify(lambda x, i: lax.dynamic_slice(x, (i,), (2,)), errors=idx)(x, 2)
    assert err.get() == _oob((3,), 2, 0, 3)
    np.testing.assert_array_equal(out, [1, 2])
    dus = lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2, x.dtype), (i,))  # noqa: E731
    err, out = checkify.checkify(dus, errors=idx)(x, 2)
    assert err.get() == _oob((3,), 2, 0, 3)
    np.testing.assert_array_equal(out, [0, 1, 1])
    err, out = checkify.checkify(lambda x, i: jnp.take(x, i), errors=idx)(
        jnp.ones((3, 4)), jnp.array([1, 20])
    )
    assert err.get() == _oob((12,), 20, 0, 12)
    np.testing.assert_array_equal(out, [1.0, np.nan])
    dus2 = lambda i: lax.dynamic_update_slice(jnp.zeros((3, 3)), jnp.ones((2, 2)), (i, -1))  # noqa: E731
    assert checkify.checkify(dus2, errors=idx)(jnp.int32(1))[0].get() == _oob((3, 3), 2, 1, 3)
    assert checkify.checkify(lambda x, i: x[i], errors=idx)(x, jnp.int32(1))[0].get() is None


def test_index_checks_on_static_out_of_bounds_integers():
    # x[5] with a static 5 reads through dynamic_slice, as in JAX, so the index check
    # sees it (recorded from JAX 0.10.2: the messages, values, and no error in bounds)
    idx = checkify.index_checks
    x = jnp.arange(3.0)
    for f in (checkify.checkify(lambda x: x[5], errors=idx),
              lamina.jit(checkify.checkify(lambda x: x[5], errors=idx))):  # fmt: skip
        err, out = f(x)
        assert err.get() == _oob((3,), 5, 0, 3) and float(out) == 2.0
    err, out = checkify.checkify(lambda x: x[-5], errors=idx)(x)
    assert err.get() == _oob((3,), -2, 0, 3) and float(out) == 0.0
    err, out = checkify.checkify(lambda x: x[5, 1:], errors=idx)(jnp.ones((3, 4)))
    assert err.get() == _oob((3, 4), 5, 0, 3)
    np.testing.assert_array_equal(out, [1.0, 1.0, 1.0])
    with pytest.raises(checkify.JaxRuntimeError, match=re.escape(_oob((3, 4), 5, 0, 3))):
        err.throw()
    for f in (lambda x: x[1], lambda x: x[-1]):
        assert checkify.checkify(f, errors=idx)(x)[0].get() is None


def test_scatter_index_checks():
    err, out = checkify.checkify(lambda x, i: x.at[i].set(1), errors=checkify.index_checks)(
        jnp.arange(3), jnp.int32(5)
    )
    assert err.get() == _oob((3,), 5, 0, 3)
    np.testing.assert_array_equal(out, [0, 1, 2])
    err, out = checkify.checkify(lambda x, i, u: x.at[i].add(u), errors=checkify.index_checks)(
        jnp.zeros((4, 3)), jnp.array([[0], [7]]), jnp.ones((2, 1, 3))
    )
    assert err.get() == _oob((4, 3), 7, 0, 4)
    assert float(out.sum()) == 3.0


# --------------------------------------------------------------------------- vmap


def test_vmap_of_checkify_reports_each_index():
    err, out = lamina.vmap(checkify.checkify(_positive))(jnp.array([1.0, -2.0, 3.0, -4.0]))
    assert err.get() == (
        "at mapped index 1: -2.0 needs to be positive! (`check` failed)\n"
        "at mapped index 3: -4.0 needs to be positive! (`check` failed)"
    )
    np.testing.assert_allclose(out, [1, -0.5, 1 / 3, -0.25], rtol=1e-6)
    assert type(err.get_exception()).__name__ == "BatchedError"
    with pytest.raises(checkify.JaxRuntimeError) as info:
        err.throw()
    assert str(info.value) == "-4.0 needs to be positive! (`check` failed)"


def test_checkify_of_vmap_reports_one_failure():
    err, _ = checkify.checkify(lamina.vmap(_positive))(jnp.array([1.0, -2.0, 3.0, -4.0]))
    assert err.get() == "-4.0 needs to be positive! (`check` failed)"


def test_vmap_first_failure_per_index():
    def g(x):
        checkify.check(x > 5, "first")
        checkify.check(x > 10, "second")
        return x

    err, _ = lamina.vmap(checkify.checkify(g))(jnp.array([1.0, 7.0, 11.0]))
    assert (
        err.get()
        == "at mapped index 0: first (`check` failed)\nat mapped index 1: second (`check` failed)"
    )


def test_vmap_index_checks_with_jit():
    f = lamina.jit(lambda x, i: x[i])
    x, i = jnp.arange(12.0).reshape(3, 4), jnp.array([1, 4, -9])
    expected = (
        "at mapped index 1: " + _oob((4,), 4, 0, 4) + "\nat mapped index 2: " + _oob((4,), -5, 0, 4)
    )
    err, out = lamina.vmap(checkify.checkify(f, errors=checkify.index_checks))(x, i)
    assert err.get() == expected
    np.testing.assert_array_equal(out, [1.0, 7.0, 8.0])
    err, _ = lamina.jit(lamina.vmap(checkify.checkify(f, errors=checkify.index_checks)))(x, i)
    assert err.get() == expected
    err, _ = checkify.checkify(lamina.vmap(f), errors=checkify.index_checks)(x, i)
    assert err.get() == _oob((3, 4), 4, 1, 4)


# --------------------------------------------------------------------------- grad


def _h(x):
    checkify.check(x > 0, "must be positive")
    return jnp.sin(x)


def test_checks_inside_grad():
    err, g = checkify.checkify(lamina.grad(_h))(F32(-1.0))
    assert err.get() == "must be positive (`check` failed)"
    np.testing.assert_allclose(g, 0.5403023, rtol=1e-6)
    assert checkify.checkify(lamina.jit(lamina.grad(_h)))(-1.0)[0].get() == (
        "must be positive (`check` failed)"
    )
    assert checkify.checkify(lamina.grad(jnp.log), errors=checkify.div_checks)(F32(0))[0].get() == (
        "division by zero"
    )


def test_grad_of_checkified():
    g = lamina.grad(lambda x: checkify.checkify(_h)(x)[1])(1.0)
    np.testing.assert_allclose(g, 0.5403023, rtol=1e-6)


def test_grad_with_vector_checks():
    def gck(x):
        checkify.check(jnp.all(x > 0), "grad input {}", x)
        return jnp.sum(x**2)

    x = jnp.array([1.0, -2.0])
    assert (
        checkify.checkify(lamina.grad(gck))(x)[0].get() == "grad input [ 1. -2.] (`check` failed)"
    )
    xs = jnp.array([[1.0, -2.0], [1.0, 2.0], [-3.0, 1.0]])
    assert checkify.checkify(lamina.vmap(lamina.grad(gck)))(xs)[0].get() == (
        "grad input [-3.  1.] (`check` failed)"
    )
    assert lamina.vmap(checkify.checkify(lamina.grad(gck)))(xs)[0].get() == (
        "at mapped index 0: grad input [ 1. -2.] (`check` failed)\n"
        "at mapped index 2: grad input [-3.  1.] (`check` failed)"
    )


def test_index_check_inside_grad():
    f = lambda x: lamina.grad(lambda y: jnp.sum(jnp.sin(y[jnp.array([0, 5])])))(x)  # noqa: E731
    err, _ = checkify.checkify(f, errors=checkify.index_checks)(jnp.ones(3))
    assert err.get() == _oob((3,), 5, 0, 3)


def test_custom_derivatives():
    @lamina.custom_jvp
    def cs(x):
        return jnp.sin(x)

    cs.defjvp(lambda p, t: (cs(p[0]), jnp.cos(p[0]) * t[0]))
    nan = checkify.nan_checks
    assert (
        checkify.checkify(cs, errors=nan)(F32(np.inf))[0].get()
        == "nan generated by primitive: sin."
    )
    g = lamina.grad(lambda x: checkify.checkify(cs, errors=nan)(x)[1])(1.0)
    np.testing.assert_allclose(g, 0.5403023, rtol=1e-6)

    @lamina.custom_vjp
    def cv(x):
        return jnp.log(x)

    cv.defvjp(lambda x: (cv(x), x), lambda r, g: (g / r,))
    assert checkify.checkify(cv, errors=nan)(F32(-1))[0].get() == "nan generated by primitive: log."
    g = lamina.grad(lambda x: checkify.checkify(cv, errors=nan)(x)[1])(2.0)
    np.testing.assert_allclose(g, 0.5)


def test_checkpoint():
    nan = checkify.nan_checks
    f = lamina.checkpoint(jnp.log)
    assert checkify.checkify(f, errors=nan)(F32(-1))[0].get() == "nan generated by primitive: log."
    g = lamina.grad(lamina.checkpoint(lambda x: jnp.sin(jnp.log(x))))
    assert checkify.checkify(g, errors=nan)(F32(-1))[0].get() == "nan generated by primitive: log."


# --------------------------------------------------------------------------- control flow


def _scan_body(c, x):
    checkify.check(x < 3, "x too big: {}", x)
    return c + x, jnp.sin(c)


def test_scan():
    scan = checkify.checkify(lambda xs: lax.scan(_scan_body, 0.0, xs))
    err, (c, ys) = scan(jnp.arange(5.0))
    assert err.get() == "x too big: 3.0 (`check` failed)"
    assert float(c) == 10.0
    np.testing.assert_allclose(ys, [0, 0, 0.84147096, 0.14112, -0.2794155], rtol=1e-5)
    assert lamina.jit(scan)(jnp.arange(3.0))[0].get() is None


def test_vmap_of_scan():
    def sb(c, x):
        return c * x, jnp.sqrt(c * x)

    f = checkify.checkify(lambda xs: lax.scan(sb, 1.0, xs), errors=checkify.nan_checks)
    err, _ = lamina.vmap(f)(jnp.array([[1.0, 2.0, -1.0], [1.0, 2.0, 3.0]]))
    assert err.get() == "at mapped index 0: nan generated by primitive: sqrt."


def _wcond(c):
    checkify.check(c < 10, "cond saw {}", c)
    return c < 20


def _wbody(c):
    checkify.check(c < 5, "body saw {}", c)
    return c + 3


def test_while_loop():
    err, out = checkify.checkify(lambda x: lax.while_loop(_wcond, _wbody, x))(jnp.int32(0))
    assert err.get() == "body saw 6 (`check` failed)" and int(out) == 21
    err, out = checkify.checkify(lambda x: lax.while_loop(_wcond, lambda c: c + 7, x))(jnp.int32(0))
    assert err.get() == "cond saw 14 (`check` failed)" and int(out) == 21
    plain = lambda x: lax.while_loop(lambda c: c < 20, lambda c: c + 3, x)  # noqa: E731
    err, out = lamina.jit(checkify.checkify(plain))(jnp.int32(0))
    assert err.get() is None and int(out) == 21


def test_fori_loop_index_check():
    f = lambda x: lax.fori_loop(0, 5, lambda i, c: c * x[i], 1.0)  # noqa: E731
    err, out = checkify.checkify(f, errors=checkify.index_checks)(jnp.ones(3))
    assert err.get() == _oob((3,), 3, 0, 3) and float(out) == 1.0


def test_vmap_of_checkify_of_while():
    def f(x):
        body = lambda c: (c[0] + 3, c[1] + jnp.log(c[1]))  # noqa: E731
        return lax.while_loop(lambda c: c[0] < 20, body, (0, x))

    err, (i, y) = lamina.vmap(checkify.checkify(f, errors=checkify.nan_checks))(
        jnp.array([1.0, -6.0, 30.0])
    )
    assert err.get() == "at mapped index 1: nan generated by primitive: log."
    np.testing.assert_array_equal(i, [21, 21, 21])
    np.testing.assert_allclose(y, [1.0, np.nan, 55.829533], rtol=1e-5)


def test_cond_and_switch():
    def cf(p, x):
        def t(x):
            checkify.check(x > 0, "true branch {}", x)
            return x

        return lax.cond(p, t, jnp.log, x)

    ck = checkify.checkify(cf, errors=checkify.all_checks)
    assert ck(True, F32(-1))[0].get() == "true branch -1.0 (`check` failed)"
    assert ck(False, F32(-1))[0].get() == "nan generated by primitive: log."
    assert ck(False, F32(1))[0].get() is None
    assert checkify.checkify(cf)(False, F32(-1))[0].get() is None
    sw = lambda i, x: lax.switch(i, [jnp.sin, jnp.log, jnp.cos], x)  # noqa: E731
    assert checkify.checkify(sw, errors=checkify.nan_checks)(1, F32(-1))[0].get() == (
        "nan generated by primitive: log."
    )


def test_cond_under_vmap():
    f = lambda x: lamina.vmap(lambda y: lax.cond(y > 0, jnp.log, lambda z: z / 0.0, y))(x)  # noqa: E731
    err, _ = checkify.checkify(f, errors=checkify.float_checks)(jnp.array([1.0, -1.0]))
    assert err.get() == "division by zero"
    g = lambda y: lax.cond(y > 0, jnp.log, lambda z: jnp.log(z), y)  # noqa: E731
    err, _ = lamina.vmap(checkify.checkify(g, errors=checkify.float_checks))(
        jnp.array([1.0, -1.0, 0.0, -3.0])
    )
    assert err.get() == (
        "at mapped index 1: nan generated by primitive: log.\n"
        "at mapped index 3: nan generated by primitive: log."
    )


def test_checkified_jaxpr_discharges_the_check():
    text = str(lamina.make_jaxpr(checkify.checkify(_h))(1.0))
    assert "check" not in text.replace("checkify", "")
    staged = str(lamina.make_jaxpr(_h)(1.0))
    assert "check[debug=False]" in staged


def test_prng_keys_as_format_arguments():
    # chex's assert_trees_all_equal under chexify formats key arrays; the message is
    # recorded from JAX 0.10.2.
    def f(k1, k2):
        same = jnp.all(lamina.random.key_data(k1) == lamina.random.key_data(k2))
        checkify.check(same, "keys differ {} {}", k1, k2)
        return 1

    key = lamina.random.key(0)
    err, _ = checkify.checkify(f)(key, key)
    assert err.get() is None
    err, _ = lamina.jit(checkify.checkify(f))(key, lamina.random.key(1))
    assert err.get() == (
        "keys differ Array((), dtype=key<fry>) overlaying:\n[0 0] "
        "Array((), dtype=key<fry>) overlaying:\n[0 1] (`check` failed)"
    )
