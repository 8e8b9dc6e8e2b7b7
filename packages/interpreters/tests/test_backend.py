"""Backends and devices. The CPU client is process-wide, so device counts other than
the default are checked in fresh processes."""

import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from jaxlib import xla_client

import lamina.interpreters as li
from lamina.interpreters import backend


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_FLAGS"))}
    clean["JAX_COMPILATION_CACHE_DIR"] = ""  # cache off, as in conftest.py
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


COUNTS = """
    import lamina.interpreters as li
    {setup}
    print(li.device_count(), li.local_device_count(), len(li.devices()), len(li.local_devices()),
          li.process_count(), li.process_index(), li.default_backend(), li.devices()[-1])
"""


@pytest.mark.parametrize(
    ("setup", "env"),
    [
        ('li.config.update("jax_num_cpu_devices", 8)', {}),
        ("", {"JAX_NUM_CPU_DEVICES": "8"}),
        ("", {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"}),
    ],
    ids=["config", "JAX_NUM_CPU_DEVICES", "XLA_FLAGS"],
)
def test_eight_cpu_devices(setup, env):
    out = run_python(COUNTS.format(setup=setup), **env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "8 8 8 8 1 0 cpu cpu:7"


def test_no_info_logging_from_jaxlib():
    out = run_python(COUNTS.format(setup=""))
    assert out.returncode == 0 and "pjrt_client.cc" not in out.stderr, out.stderr


def test_num_cpu_devices_must_be_set_before_first_use():
    li.devices()  # the backend has started
    current = li.config.jax_num_cpu_devices
    li.config.update("jax_num_cpu_devices", current)  # the same value is fine
    with pytest.raises(RuntimeError, match="should be updated before backends are initialized"):
        li.config.update("jax_num_cpu_devices", current + 3)
    assert li.config.jax_num_cpu_devices == current


def test_default_process_devices():
    devices = li.devices()
    assert devices == li.local_devices() == li.devices("cpu") == li.local_devices(0)
    assert repr(devices[0]) == "CpuDevice(id=0)" and devices[0].platform == "cpu"
    assert li.default_backend() == "cpu"
    assert li.process_index() == 0 and li.process_count() == 1
    assert li.device_count() == len(devices) == li.local_device_count()
    assert set(li.backends()) == {"cpu"}
    assert li.get_backend() is li.get_backend("cpu") is li.backends()["cpu"]
    with pytest.raises(ValueError, match="Unknown process_index 1"):
        li.local_devices(1)


def test_unknown_backends():
    msg = ("Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are "
           "present. Platforms present are: cpu")  # fmt: skip
    with pytest.raises(RuntimeError, match=msg):
        li.devices("gpu")
    with pytest.raises(
        RuntimeError, match=r"Unknown backend bogus\. Available backends are \['cpu'\]"
    ):
        li.devices("bogus")


@pytest.mark.parametrize(
    ("platforms", "message"),
    [
        ("bogus", "Unable to initialize backend 'bogus': Backend 'bogus' is not in the list"),
        ("gpu", "Unable to initialize backend 'cuda': no jax-cuda PJRT plugin"),
    ],
)
def test_requested_platforms_must_start(platforms, message):
    if platforms == "gpu" and backend._cuda_plugin_library() is not None:
        pytest.skip("a CUDA plugin is installed")
    out = run_python("import lamina.interpreters as li; li.devices()", JAX_PLATFORMS=platforms)
    assert out.returncode != 0 and message in out.stderr
    assert "JAX_PLATFORMS=''" in out.stderr


def test_compile_and_log(caplog):
    text = """
    module @double {
      func.func public @main(%a: tensor<3xf32>) -> tensor<3xf32> {
        %0 = stablehlo.add %a, %a : tensor<3xf32>
        return %0 : tensor<3xf32>
      }
    }"""
    device = li.devices()[0]
    with caplog.at_level(logging.DEBUG, logger="lamina.interpreters.backend"):
        executable = backend.compile(text, [device], name="double")
    assert isinstance(executable, xla_client.LoadedExecutable)
    (record,) = caplog.records
    assert record.levelno == logging.DEBUG
    assert record.getMessage().startswith("Finished XLA compilation of double in ")
    caplog.clear()
    li.config.update("jax_log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING, logger="lamina.interpreters.backend"):
            backend.compile(text, [device], name="double")
    finally:
        li.config.update("jax_log_compiles", False)
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    x = li.device_put(np.arange(3, dtype=np.float32))
    (out,) = executable.execute_sharded([x]).disassemble_into_single_device_arrays()
    np.testing.assert_array_equal(out[0]._single_device_array_to_np_array_did_copy()[0], [0, 2, 4])


def test_compile_options_assign_the_given_devices():
    options = backend.compile_options(li.devices()[:1])
    assert options.num_partitions == 1 and options.num_replicas == 1
    assert options.device_assignment.computation_count() == 1


def test_compile_options_carry_the_effort_options():
    # As JAX 0.10.2 builds them: memory fitting at O2, optimization level unset, no
    # XLA-AutoFDO profile (-1); the jax_* options change them.
    options = backend.compile_options(li.devices()[:1])
    build = options.executable_build_options
    assert (build.memory_fitting_level, build.optimization_level) == (29, 0)
    assert (build.exec_time_optimization_effort, build.memory_fitting_effort) == (0.0, 0.0)
    assert options.profile_version == -1
    li.config.update("jax_optimization_level", "O1")
    li.config.update("jax_exec_time_optimization_effort", 0.5)
    try:
        build = backend.compile_options(li.devices()[:1]).executable_build_options
        assert (build.optimization_level, build.exec_time_optimization_effort) == (19, 0.5)
    finally:
        li.config.update("jax_optimization_level", "UNKNOWN")
        li.config.update("jax_exec_time_optimization_effort", 0.0)
