"""The options lamina's compilations hand XLA."""

import numpy as np

import lamina as jax
from lamina.interpreters import backend


def test_detailed_logging_for_larger_modules_only():
    # As JAX 0.10.2 compiles: XLA's detailed logging is off for a module of at most
    # jax_compiler_detailed_logging_min_ops (10) operations, on for a larger one.
    seen = []
    compile_and_load = backend.backend_compile_and_load

    def spy(client, module, devices, options, host_callbacks=()):
        seen.append(options.executable_build_options.debug_options.xla_detailed_logging)
        return compile_and_load(client, module, devices, options, host_callbacks)

    backend.backend_compile_and_load = spy
    try:
        x = np.ones(3, np.float32)
        jax.jit(lambda v: v * 2 + 1).lower(x).compile()  # 9 operations, module and func too
        jax.jit(lambda v: v * 2 + 1 - v * v).lower(x).compile()
    finally:
        backend.backend_compile_and_load = compile_and_load
    assert seen == [False, True]
