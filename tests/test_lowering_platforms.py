"""``jit(f).trace(...).lower(lowering_platforms=...)``: lowering for a platform other
than the machine's, and for several at once (behaviour recorded from JAX 0.10.2)."""

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp

X = jnp.arange(3.0)


def test_lowering_for_cuda_works_without_a_gpu():
    lowered = (
        jax.jit(lambda x: jnp.linalg.cholesky(x))
        .trace(jnp.eye(3))
        .lower(lowering_platforms=("cuda",))
    )
    text = lowered.as_text()
    assert "@cusolver_potrf_ffi(" in text and "lapack_" not in text


def test_default_lowering_is_for_the_device_platform():
    text = jax.jit(lambda x: jnp.linalg.cholesky(x)).trace(jnp.eye(3)).lower().as_text()
    assert "@lapack_spotrf_ffi(" in text and "cusolver" not in text


def test_a_cuda_module_without_custom_calls_compiles_and_runs_here():
    # As JAX 0.10.2: the module is compiled for the device the call would run on.
    compiled = jax.jit(jnp.sin).trace(X).lower(lowering_platforms=("cuda",)).compile()
    np.testing.assert_allclose(compiled(X), np.sin(np.arange(3.0)), rtol=1e-6)


def test_several_platforms_take_the_platform_index_first():
    text = jax.jit(jnp.sin).trace(X).lower(lowering_platforms=("cpu", "cuda")).as_text()
    assert (
        'func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}, '
        "%arg1: tensor<3xf32>)" in text
    )


def test_a_module_for_several_platforms_is_not_compiled():
    lowered = jax.jit(jnp.sin).trace(X).lower(lowering_platforms=("cpu", "cuda"))
    with pytest.raises(ValueError, match="several platforms"):
        lowered.compile()


def test_gpu_names_the_gpu_present():
    # Recorded from JAX 0.10.2 on a machine without a GPU.
    if jax.default_backend() == "gpu":
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested"):
        jax.jit(jnp.sin).trace(X).lower(lowering_platforms=("gpu",))
