"""lamina.extend.backend: the clients lamina runs on."""

import subprocess
import sys

import lamina as jax
from lamina.extend import backend


def test_backends_and_default_device():
    assert backend.get_backend() is backend.backends()["cpu"]
    assert backend.get_default_device() == jax.devices()[0]
    assert backend.backend_xla_version() is None  # recorded from JAX 0.10.2 (CPU)


def test_compile_options():
    device = jax.devices()[0]
    options = backend.get_compile_options(1, 1, [[device]])
    assert (options.num_replicas, options.num_partitions) == (1, 1)
    assert options.device_assignment.replica_count() == 1
    assert options.executable_build_options.use_spmd_partitioning  # as in JAX


def test_clear_in_memory_compilation_cache_recompiles():
    compiles = []

    def on_compile(event, duration, **kw):
        if event == "/jax/core/compile/backend_compile_duration":
            compiles.append(kw["fun_name"])

    jax.monitoring.register_event_duration_secs_listener(on_compile)
    try:
        f = jax.jit(lambda x: x * 7 - 1)
        f(1.0)
        f(1.0)
        backend.clear_in_memory_compilation_cache()
        assert float(f(1.0)) == 6.0
    finally:
        jax.monitoring.unregister_event_duration_listener(on_compile)
    assert compiles == ["jit(<lambda>)", "jit(<lambda>)"]


def test_clear_backends_starts_clients_again():
    # In a fresh process: arrays made before clearing belong to the old clients.
    code = """
import lamina as jax
from lamina.extend import backend

class Cache:
    cleared = 0
    def cache_clear(self):
        self.cleared += 1

cache = Cache()
backend.register_backend_cache(cache, "test")
old = backend.get_backend()
assert float(jax.jit(lambda x: x + 1)(1.0)) == 2.0
backend.clear_backends()
assert cache.cleared == 1
assert float(jax.jit(lambda x: x + 1)(1.0)) == 2.0
assert backend.get_backend() is not old
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "ok", result.stderr
