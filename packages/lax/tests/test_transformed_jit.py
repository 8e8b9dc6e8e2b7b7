"""Transforming calls of jitted functions: the Jaxprs derived from a jitted call (its
JVP, known and unknown parts, transpose, batched form) are built once, so eager
``grad(jit(f))`` and ``vmap(jit(f))`` compile once; residuals that are inputs of the call
are passed on, not returned."""

import logging

import numpy as np

import lamina.lax as lax
from lamina.interpreters import (
    config,
    grad,
    jit,
    jit_p,
    make_jaxpr,
    partial_eval_jaxpr,
    value_and_grad,
    vmap,
)

x5 = np.linspace(0.1, 1.0, 5, dtype=np.float32)


def sin_times_x(x):
    return lax.reduce_sum(lax.mul(lax.sin(x), x), (0,))


def d_sin_times_x(x):
    return np.cos(x) * x + np.sin(x)


def _compiles(fun, caplog) -> list[str]:
    """The names of the jits that ``fun()`` compiles."""
    caplog.clear()
    config.update("jax_log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING, logger="lamina"):
            fun()
    finally:
        config.update("jax_log_compiles", False)
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("Compiling")]


def test_eager_grad_of_jit_compiles_once(caplog):
    jitted = jit(sin_times_x)
    g = grad(jitted)
    assert _compiles(lambda: g(x5), caplog)  # the known and the transposed part
    for _ in range(2):
        assert _compiles(lambda: np.testing.assert_allclose(g(x5), d_sin_times_x(x5)), caplog) == []
    value, g2 = value_and_grad(jitted)(x5)
    np.testing.assert_allclose(value, np.sum(np.sin(x5) * x5), rtol=1e-6)
    np.testing.assert_allclose(g2, d_sin_times_x(x5), rtol=1e-6)


def test_eager_grad_of_nested_jits_compiles_once(caplog):
    inner = jit(lambda x: lax.mul(lax.sin(x), x))
    outer = jit(lambda x: lax.reduce_sum(inner(lax.exp(x)), (0,)))
    g = grad(outer)
    e = np.exp(x5)
    want = d_sin_times_x(e) * e
    np.testing.assert_allclose(g(x5), want, rtol=1e-5)
    assert _compiles(lambda: np.testing.assert_allclose(g(x5), want, rtol=1e-5), caplog) == []


def test_eager_vmap_of_jit_compiles_once(caplog):
    v = vmap(jit(lambda x: lax.mul(lax.sin(x), x)))
    xs = np.stack([x5, 2 * x5])
    np.testing.assert_allclose(v(xs), np.sin(xs) * xs, rtol=1e-6)
    assert (
        _compiles(lambda: np.testing.assert_allclose(v(xs), np.sin(xs) * xs, rtol=1e-6), caplog)
        == []
    )
    # Another batch size is another program.
    assert _compiles(lambda: v(xs[:1]), caplog)


def test_known_inputs_are_forwarded_not_returned():
    jaxpr = make_jaxpr(grad(jit(sin_times_x)))(x5).jaxpr
    known, transposed = [e for e in jaxpr.eqns if e.primitive is jit_p]
    known_jaxpr = known.params["jaxpr"].jaxpr
    assert not set(known_jaxpr.outvars) & set(known_jaxpr.invars), known_jaxpr
    # cos(x) and sin(x) come from the known call; x itself goes straight in.
    assert len(known.outvars) == 3
    assert jaxpr.invars[0] in transposed.invars


def test_partial_eval_jaxpr_is_cached():
    closed = make_jaxpr(sin_times_x)(x5)
    split = partial_eval_jaxpr(closed, [True], "f")
    assert partial_eval_jaxpr(closed, [True], "f") is split
    assert partial_eval_jaxpr(closed, [False], "f") is not split
