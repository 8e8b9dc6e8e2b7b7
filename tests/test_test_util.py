"""lamina.test_util as jax.test_util: the same three checks, and at the same tolerances
they pass or fail where JAX 0.10.2's do (same functions, arguments and tolerances)."""

import functools

import numpy as np
import pytest

import lamina as jax
from lamina import numpy as jnp
from lamina import test_util

X = np.linspace(0.1, 2.0, 12, dtype=np.float32).reshape(3, 4)
Y = np.linspace(-1, 1, 4, dtype=np.float32)


def outcome(check) -> str:
    """ "pass", or the first two lines of the assertion message."""
    try:
        check()
    except AssertionError as err:
        return " | ".join(str(err).strip().splitlines()[:2])
    return "pass"


@jax.custom_jvp
def softplus(x):
    return jnp.log1p(jnp.exp(x))


softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] * jax.nn.sigmoid(p[0])))


@jax.custom_jvp
def softplus_wrong(x):
    return jnp.log1p(jnp.exp(x))


softplus_wrong.defjvp(lambda p, t: (softplus_wrong(p[0]), t[0] * jax.nn.sigmoid(p[0]) * 1.05))


@jax.custom_vjp
def tanh_wrong_bwd(x):
    return jnp.tanh(x)


tanh_wrong_bwd.defvjp(lambda x: (jnp.tanh(x), x), lambda x, g: (g * (1 - jnp.tanh(x) ** 2) * 0.9,))


def test_exports():
    assert test_util.__all__ == ["check_grads", "check_jvp", "check_vjp"]
    assert jax.test_util.check_vjp is test_util.check_vjp


def test_wrong_custom_rules_are_caught():
    # recorded from JAX 0.10.2
    assert outcome(lambda: test_util.check_grads(softplus, (X,), 2)) == "pass"
    assert outcome(lambda: test_util.check_grads(softplus_wrong, (X,), 1)) == (
        "Not equal to tolerance rtol=0.024, atol=0.024 | JVP tangent"
    )
    assert outcome(lambda: test_util.check_grads(softplus_wrong, (X,), 1, modes=["rev"])) == (
        "Not equal to tolerance rtol=0.002, atol=0.002 | VJP cotangent projection"
    )
    assert outcome(lambda: test_util.check_grads(tanh_wrong_bwd, (X,), 1, modes=["rev"])) == (
        "Not equal to tolerance rtol=0.002, atol=0.002 | VJP cotangent projection"
    )
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        test_util.check_grads(tanh_wrong_bwd, (X,), 1, modes=["fwd"])


def test_check_jvp_and_check_vjp_take_the_derivative_function():
    tanh = jnp.tanh
    test_util.check_jvp(tanh, functools.partial(jax.jvp, tanh), (X,))
    test_util.check_vjp(tanh, functools.partial(jax.vjp, tanh), (X,))
    wrong = functools.partial(jax.jvp, softplus_wrong)
    with pytest.raises(AssertionError, match="\nsoftplus tangent\n"):
        test_util.check_jvp(softplus_wrong, wrong, (X,), err_msg="softplus")


@pytest.mark.parametrize(
    "tol, want",
    # recorded from JAX 0.10.2: check_grads(f, (X, Y), 2, atol=tol, rtol=tol)
    [
        (1e-2, "pass"),
        (1e-3, "pass"),
        (1e-4, "Not equal to tolerance rtol=0.0001, atol=0.0001 | JVP tangent"),
        ({jnp.float32: 1e-2}, "pass"),
        ({"float32": 1e-5}, "Not equal to tolerance rtol=1e-05, atol=1e-05 | JVP tangent"),
        ({np.dtype("float32"): 1e-3}, "pass"),
    ],
)
def test_tolerances_as_jax(tol, want):
    f = lambda a, b: jnp.sum(jnp.sin(a) * b)  # noqa: E731
    assert outcome(lambda: test_util.check_grads(f, (X, Y), 2, atol=tol, rtol=tol)) == want


def test_step_sizes_and_dtypes_as_jax():
    # recorded from JAX 0.10.2: eps=1e-6 is too small a step for float32, and the
    # default step too small for float16 and bfloat16
    f = lambda a, b: jnp.sum(jnp.sin(a) * b)  # noqa: E731
    assert outcome(lambda: test_util.check_grads(f, (X, Y), 1, eps=1e-2)) == "pass"
    assert outcome(lambda: test_util.check_grads(f, (X, Y), 1, eps=1e-6)) == (
        "Not equal to tolerance rtol=0.002, atol=0.002 | JVP tangent"
    )
    g = lambda a: jnp.sin(a) * a  # noqa: E731
    assert outcome(lambda: test_util.check_grads(g, (X.astype(jnp.bfloat16),), 1)) == (
        "Not equal to tolerance rtol=1.2, atol=1.2 | JVP tangent"
    )
    assert outcome(lambda: test_util.check_grads(g, (X.astype(np.float16),), 1)) == (
        "Not equal to tolerance rtol=0.12, atol=0.12 | JVP tangent"
    )
    z = np.array([1 + 2j, 0.5 - 1j], np.complex64)
    test_util.check_grads(lambda v: jnp.sin(v) * v, (z,), 2)
    test_util.check_grads(lambda a: a**3 + 2.0 * a, (1.5,), 3)
    test_util.check_grads(lambda d: jnp.sum(d["w"] @ d["b"]), ({"w": X, "b": Y},), 2)
    test_util.check_grads(jnp.tanh, (X,), 2, modes=["lin"])


def test_integer_arguments_fail_as_in_jax():
    with pytest.raises(TypeError, match=r"primal and tangent arguments to jax\.jvp do not match"):
        test_util.check_grads(lambda a: a * 2, (np.arange(3),), 1)
