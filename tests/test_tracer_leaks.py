"""``jax_check_tracer_leaks`` around differentiation (recorded from JAX 0.10.2): tracers
leaked from grad, jvp, vjp and linearize are not reported; a jit or vmap trace inside or
around them is."""

import types

import pytest

import lamina as jax
import lamina.numpy as jnp


def test_leaks_from_differentiation():
    holder = types.SimpleNamespace()

    def leaky(x):
        holder.v = x
        return x * x

    with jax.check_tracer_leaks(True):
        jax.grad(leaky)(1.0)
        jax.jvp(leaky, (1.0,), (1.0,))
        jax.vjp(leaky, 1.0)
        jax.linearize(leaky, 1.0)
        jax.value_and_grad(leaky)(1.0)
        jax.jacrev(leaky)(1.0)
        cases = [
            (jax.grad(jax.jit(leaky)), 1.0, "DynamicJaxprTrace"),
            (jax.jit(jax.grad(leaky)), 1.0, "DynamicJaxprTrace"),
            (jax.vmap(jax.grad(leaky)), jnp.ones(2), "BatchTrace"),
            (jax.jacfwd(leaky), jnp.ones(2), "BatchTrace"),
        ]
        for program, arg, trace in cases:
            with pytest.raises(Exception, match=rf"^Leaked trace {trace}\. Leaked tracer"):
                program(arg)
            del holder.v
