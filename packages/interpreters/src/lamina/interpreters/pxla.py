"""``jax.interpreters.pxla``: ``create_compile_options``, the XLA compile options of a
program (device assignment, replicas and partitions), as lamina compiles with them."""

from __future__ import annotations

from lamina.interpreters.runtime.backend import compile_options

__all__ = ["create_compile_options"]


def create_compile_options(
    computation,
    tuple_args,
    allow_prop_to_inputs,
    allow_prop_to_outputs,
    backend,
    np_dev,
    compiler_options,
):
    """jaxlib ``CompileOptions`` for running ``computation`` as one SPMD program over
    the devices of the array ``np_dev``, with ``tuple_args`` and the
    sharding-propagation flags as given (``compiler_options`` is ignored, as by
    lamina's ``jit``)."""
    del computation, backend, compiler_options
    devices = list(getattr(np_dev, "flat", np_dev))
    options = compile_options(devices)
    build = options.executable_build_options
    build.allow_spmd_sharding_propagation_to_parameters = list(allow_prop_to_inputs)
    build.allow_spmd_sharding_propagation_to_output = list(allow_prop_to_outputs)
    options.parameter_is_tupled_arguments = bool(tuple_args)
    return options
