"""The configuration names at lamina's top level: ``config`` and the context managers
JAX 0.10.2 exposes as ``jax.<name>`` (recorded from ``dir(jax)``)."""

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp

# name at the top level -> the option it sets, recorded from JAX 0.10.2.
STATES = {
    "allow_f16_reductions": "jax_allow_f16_reductions",
    "array_garbage_collection_guard": "jax_array_garbage_collection_guard",
    "auto_pcast": "jax_auto_pcast",
    "check_tracer_leaks": "jax_check_tracer_leaks",
    "debug_infs": "jax_debug_infs",
    "debug_key_reuse": "jax_debug_key_reuse",
    "debug_nans": "jax_debug_nans",
    "default_device": "jax_default_device",
    "default_matmul_precision": "jax_default_matmul_precision",
    "default_prng_impl": "jax_default_prng_impl",
    "enable_checks": "jax_enable_checks",
    "enable_custom_prng": "jax_enable_custom_prng",
    "enable_x64": "jax_enable_x64",
    "explain_cache_misses": "jax_explain_cache_misses",
    "jax2tf_associative_scan_reductions": "jax2tf_associative_scan_reductions",
    "legacy_prng_key": "jax_legacy_prng_key",
    "log_compiles": "jax_log_compiles",
    "no_execution": "jax_no_execution",
    "no_tracing": "jax_no_tracing",
    "numpy_dtype_promotion": "jax_numpy_dtype_promotion",
    "numpy_rank_promotion": "jax_numpy_rank_promotion",
    "remove_size_one_mesh_axis_from_type": "jax_remove_size_one_mesh_axis_from_type",
    "softmax_custom_jvp": "jax_softmax_custom_jvp",
    "thread_guard": "jax_thread_guard",
    "threefry_partitionable": "jax_threefry_partitionable",
    "transfer_guard_device_to_device": "jax_transfer_guard_device_to_device",
    "transfer_guard_device_to_host": "jax_transfer_guard_device_to_host",
    "transfer_guard_host_to_device": "jax_transfer_guard_host_to_device",
}
# A value each accepts other than its default.
OTHER = {
    "array_garbage_collection_guard": "log",
    "default_device": "cpu",
    "default_matmul_precision": "highest",
    "default_prng_impl": "rbg",
    "legacy_prng_key": "warn",
    "numpy_dtype_promotion": "strict",
    "numpy_rank_promotion": "warn",
    "transfer_guard_device_to_device": "log",
    "transfer_guard_device_to_host": "log",
    "transfer_guard_host_to_device": "log",
}


@pytest.mark.parametrize("name", sorted(STATES))
def test_context_manager_and_decorator(name):
    state = getattr(jax, name)
    option = STATES[name]
    assert state.name == option and name in dir(jax)
    before = getattr(jax.config, option)
    new = OTHER.get(name, not before)
    with state(new):
        assert getattr(jax.config, option) == new
        assert state.value == new
    assert getattr(jax.config, option) == before

    @state(new)
    def read():
        return getattr(jax.config, option)

    assert read() == new and getattr(jax.config, option) == before


def test_the_other_top_level_names():
    with jax.disable_jit():
        assert jax.config.jax_disable_jit
    with jax.checking_leaks():
        assert jax.config.jax_check_tracer_leaks
    with jax.transfer_guard("log"):
        assert jax.config.jax_transfer_guard_device_to_host == "log"
    context = jax.make_user_context(3)
    with context(4):
        assert context.value == 4
    assert context.value == 3


def test_promotion_options_reach_jax_numpy():
    with jax.numpy_dtype_promotion("strict"), pytest.raises(jax.dtypes.TypePromotionError):
        jnp.ones(2) + jnp.ones(2, "int32")
    with jax.numpy_rank_promotion("raise"), pytest.raises(ValueError, match="rank_promotion"):
        jnp.ones((2, 3)) + jnp.ones(3)
    with jax.enable_x64():
        assert jnp.asarray(np.ones(2)).dtype == np.float64
