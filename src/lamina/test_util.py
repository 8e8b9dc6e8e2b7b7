"""`lamina.test_util`: JAX's testing helpers (`jax.test_util`)."""

from lamina.interpreters.test_util import check_grads, check_jvp, check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]
