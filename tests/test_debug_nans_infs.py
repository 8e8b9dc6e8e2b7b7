"""jax_debug_nans / jax_debug_infs: which calls raise, and the messages (recorded from
JAX 0.10.2 with the same programs)."""

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina import lax

DEOPT = (
    "Invalid nan value encountered in the output of a jax.jit function. "
    "Calling the de-optimized version.\n"
)


@pytest.fixture(params=["jax_debug_nans", "jax_debug_infs"])
def option(request):
    jax.config.update(request.param, True)
    try:
        yield request.param
    finally:
        jax.config.update(request.param, False)


def _ones():
    return jnp.ones(3)


def _zeros():
    return jnp.zeros(3)


# (program, error under jax_debug_nans, error under jax_debug_infs); None: no error.
CASES = {
    "eager log(-1)": (lambda: lax.log(-_ones()), "nan in log", None),
    "eager 0/0": (lambda: _zeros() / _zeros(), "nan in div", None),
    "eager 1/0": (lambda: _ones() / _zeros(), None, "inf in div"),
    "eager log(0)": (lambda: lax.log(_zeros()), None, "inf in log"),
    "eager sqrt(-1)": (lambda: lax.sqrt(-_ones()), "nan in sqrt", None),
    "jit 0/0": (lambda: jax.jit(lambda x: x / x)(_zeros()), "nan in div", None),
    "jit 1/0": (lambda: jax.jit(lambda x: 1 / x)(_zeros()), None, "inf in div"),
    "jit log then mul": (lambda: jax.jit(lambda x: lax.log(x) * 2)(-_ones()), "nan in log", None),
    "jit sin": (lambda: jax.jit(jnp.sin)(_ones()), None, None),
    "grad 0/0": (lambda: jax.grad(lambda x: x / x)(0.0), "nan in div", "inf in integer_pow"),
    "grad lax.log at 0": (lambda: jax.grad(lax.log)(0.0), None, "inf in log"),
    "grad lax.div": (lambda: jax.grad(lambda x: lax.div(1.0, x))(0.0), None, "inf in div"),
    "vmap log": (lambda: jax.vmap(jnp.log)(-_ones()), "nan in log", None),
    "vmap lax.div": (lambda: jax.vmap(lambda a: lax.div(1.0, a))(_zeros()), None, "inf in div"),
    "scan 1/0": (lambda: lax.scan(lambda c, x: (c / x, c), 1.0, _zeros()), None, "inf in scan"),
    "scan 0/0": (
        lambda: lax.scan(lambda c, x: (c * 0 / x, c), 1.0, _zeros()),
        "nan in scan",
        None,
    ),
    "while log": (
        lambda: lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.log(c[1] - 1)), (0, 0.5)
        ),
        "nan in while",
        None,
    ),
    "cond log": (lambda: lax.cond(True, jnp.log, lambda x: x, -1.0), "nan in cond", None),
    "cond 1/0": (lambda: lax.cond(True, lambda x: 1 / x, lambda x: x, 0.0), None, "inf in cond"),
    "fori log": (
        lambda: lax.fori_loop(0, 3, lambda i, c: jnp.log(c - 2), 1.0),
        "nan in scan",
        None,
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_which_calls_raise(option, case):
    program, on_nans, on_infs = CASES[case]
    expected = on_nans if option == "jax_debug_nans" else on_infs
    if expected is None:
        jax.block_until_ready(program())
        return
    kind, name = expected.split(" in ")
    with pytest.raises(FloatingPointError) as info:
        jax.block_until_ready(program())
    assert str(info.value) == f"invalid value ({kind}) encountered in {name}"


def test_off_nothing_is_checked():
    assert np.isnan(np.asarray(lax.log(-_ones()))).all()
    assert np.isinf(np.asarray(jax.jit(lambda x: 1 / x)(_zeros()))).all()


def test_jit_prints_that_it_reruns(capsys):
    f = jax.jit(lambda x: lax.log(x) * 2)
    f(-_ones())  # compiled and cached while the option is off
    nan_in_log = pytest.raises(
        FloatingPointError, match=r"invalid value \(nan\) encountered in log"
    )
    with jax.debug_nans(True), nan_in_log:
        f(-_ones())  # the C++ fast path's hook finds it
    assert capsys.readouterr().out == DEOPT
    np.testing.assert_allclose(np.asarray(f(_ones())), np.zeros(3))


def test_jit_of_a_nan_input_no_primitive_to_blame():
    x = jnp.array([np.nan, 1.0])
    with jax.debug_nans(True), pytest.raises(FloatingPointError) as info:
        jax.jit(lambda v: v)(x)
    message = str(info.value)
    assert message.startswith(
        "('jit(<lambda>)', 'nan'). Because jax_config.debug_nans.value and/or "
        "config.jax_debug_infs is set, the de-optimized function"
    )
    assert message.endswith("consider opening a bug report at https://github.com/jax-ml/jax.")


def test_context_managers_are_thread_local_settings():
    assert jax.debug_nans.value is False and jax.debug_infs.value is False
    with jax.debug_infs(True):
        assert jax.config.jax_debug_infs is True
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in log"):
            lax.log(_zeros())
        with jax.debug_infs(False):
            lax.log(_zeros())  # off again inside
    assert jax.config.jax_debug_infs is False
    lax.log(_zeros())
    jax.config.update("jax_debug_nans", True)
    try:
        with jax.debug_nans(False):
            lax.log(-_ones())
        with pytest.raises(FloatingPointError):
            lax.log(-_ones())
    finally:
        jax.config.update("jax_debug_nans", False)
