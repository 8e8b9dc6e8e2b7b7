"""lamina.core: JAX 0.10.2's `jax.core` names, as lamina's own types and functions."""

import warnings

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina import core
from lamina.interpreters import Trace, Tracer
from lamina.ir import ShapedArray

# dir(jax.core) in JAX 0.10.2, without dunder and private names.
JAX_CORE = [
    "AbstractValue",
    "Atom",
    "ParamDict",
    "ShapedArray",
    "Trace",
    "Tracer",
    "Value",
    "ensure_compile_time_eval",
    "eval_context",
    "eval_jaxpr",
    "max_dim",
    "min_dim",
]


def test_public_names_are_lambdas_own():
    assert sorted(core.__all__) == JAX_CORE
    assert core.ShapedArray is ShapedArray
    assert core.Trace is Trace and core.Tracer is Tracer
    closed = jax.make_jaxpr(lambda x: x * 2)(jnp.ones(3))
    assert all(isinstance(a, core.ShapedArray) for a in closed.in_avals)
    assert isinstance(closed.in_avals[0], core.AbstractValue)
    assert isinstance(closed.jaxpr.invars[0], core.Atom.__args__)


def test_eval_jaxpr_and_dims():
    closed = jax.make_jaxpr(lambda x, y: jnp.sin(x) * y)(1.0, 2.0)
    (out,) = core.eval_jaxpr(closed.jaxpr, closed.consts, 0.5, 3.0)
    np.testing.assert_allclose(out, 3 * np.sin(0.5), rtol=1e-6)
    assert (core.max_dim(2, 5), core.min_dim(2, 5)) == (5, 2)


def test_eval_context_runs_eagerly_inside_jit():
    seen = []

    @jax.jit
    def f(a):
        with core.eval_context():
            seen.append(jnp.ones(3) * 2)
        with core.ensure_compile_time_eval():
            seen.append(jnp.arange(2) + 1)
        seen.append(jnp.ones(3) * 2)  # outside the blocks: traced
        return a

    f(1.0)
    assert [isinstance(v, Tracer) for v in seen] == [False, False, True]
    assert seen[0].tolist() == [2.0, 2.0, 2.0] and seen[1].tolist() == [1, 2]


def test_deprecated_names_warn_and_work():
    with pytest.warns(DeprecationWarning, match=r"jax.core.concrete_or_error is deprecated"):
        concrete_or_error = core.concrete_or_error
    assert concrete_or_error(int, 2.0) == 2
    with pytest.warns(DeprecationWarning, match="Use jax.errors.JaxprTypeError"):
        assert core.JaxprTypeError is jax.errors.JaxprTypeError
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert core.is_constant_shape((2, 3)) and not core.is_concrete(_tracer_of(1.0))
        assert core.get_opaque_trace_state() == core.get_opaque_trace_state()


def _tracer_of(x):
    out = []
    jax.jit(lambda t: out.append(t) or t)(x)
    return out[0]


def test_removed_names_raise_as_in_jax():
    # Message recorded from JAX 0.10.2.
    with pytest.raises(AttributeError, match=r"removed in JAX v0\.10\.0; use jax\.typeof instead"):
        core.get_aval  # noqa: B018
    with pytest.raises(AttributeError, match=r"Use jax\.extend\.core\.TraceTag"):
        core.TraceTag  # noqa: B018
    with pytest.raises(AttributeError):
        core.no_such_name  # noqa: B018
