"""``lamina.config``: reads, updates, validation, context managers and environment
variables (read in fresh processes), following JAX 0.10.2."""

import importlib
import os
import subprocess
import sys
import textwrap
import threading

import pytest
from jaxlib import _jax

import lamina.interpreters as li
from lamina.ir import dtypes

config = li.config  # the options object; the package attribute hides the module's name
config_module = importlib.import_module("lamina.interpreters.core.config")


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with extra environment variables."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_FLAGS"))}
    clean["JAX_COMPILATION_CACHE_DIR"] = ""  # cache off, as in conftest.py
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_defaults():
    assert config.jax_enable_x64 is False
    assert config.jax_disable_jit is False
    assert config.jax_debug_nans is False
    assert config.jax_log_compiles is False
    assert config.jax_platforms is None
    assert config.jax_default_matmul_precision is None
    assert config.jax_num_cpu_devices == -1
    assert config.read("jax_enable_x64") is False
    assert config.x64_enabled is False
    assert set(config.values) >= {"jax_enable_x64", "jax_disable_jit", "jax_platforms"}


def test_unknown_options():
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_bogus"):
        config.update("jax_bogus", 1)
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_bogus"):
        config.read("jax_bogus")
    with pytest.raises(AttributeError, match="'Config' object has no attribute 'jax_bogus'"):
        config.jax_bogus  # noqa: B018


def test_update_and_validation():
    try:
        config.update("jax_debug_nans", True)
        assert config.jax_debug_nans is True
        config.update("jax_log_compiles", "yes")  # bool options take truthiness, like JAX
        assert config.jax_log_compiles is True
        config.update("jax_default_matmul_precision", "highest")
        assert config.jax_default_matmul_precision == "highest"
        with pytest.raises(ValueError, match="new enum value must be None or in \\['default'"):
            config.update("jax_default_matmul_precision", "bogus")
        with pytest.raises(ValueError, match="new int config value must be None or of type int"):
            config.update("jax_num_cpu_devices", "4")
        with pytest.raises(ValueError, match="new string config value must be None or of type"):
            config.update("jax_platforms", 3)
    finally:
        config.update("jax_debug_nans", False)
        config.update("jax_log_compiles", False)
        config.update("jax_default_matmul_precision", None)


def test_x64_option_drives_dtypes_and_jaxlib():
    try:
        config.update("jax_enable_x64", True)
        assert config.jax_enable_x64 and dtypes.x64_enabled()
        assert li.device_put(1.0).dtype == "float64"
        assert True in config_module.trace_context()
    finally:
        config.update("jax_enable_x64", False)
    assert not dtypes.x64_enabled()
    assert li.device_put(1.0).dtype == "float32"


def test_enable_x64_context_manager_is_per_thread():
    seen = []
    with li.enable_x64():
        assert config.jax_enable_x64 and dtypes.x64_enabled()
        thread = threading.Thread(target=lambda: seen.append(config.jax_enable_x64))
        thread.start()
        thread.join()
        with li.enable_x64(False):
            assert not config.jax_enable_x64
        assert li.device_put(2).dtype == "int64"
    assert seen == [False]
    assert not config.jax_enable_x64


def test_disable_jit_context_manager():
    with li.disable_jit():
        assert config.jax_disable_jit is True
        with li.disable_jit(False):
            assert config.jax_disable_jit is False
    assert config.jax_disable_jit is False


def test_jaxlib_sees_the_states():
    # jaxlib refuses device puts until it has an x64 state; lamina registers one.
    holder = config._state("jax_enable_x64")
    assert isinstance(holder, _jax.config.Config)
    with li.enable_x64():
        assert holder.value is True
    assert holder.value is False


def test_environment_variables():
    code = """
        import lamina.interpreters as li
        c = li.config
        print(c.jax_enable_x64, c.jax_disable_jit, c.jax_debug_nans, c.jax_log_compiles,
              c.jax_platforms, c.jax_num_cpu_devices, c.jax_default_matmul_precision)
        print(li.device_put(1.0).dtype, li.device_count())
    """
    out = run_python(
        code,
        JAX_ENABLE_X64="True",
        JAX_DISABLE_JIT="1",
        JAX_DEBUG_NANS="yes",
        JAX_LOG_COMPILES="on",
        JAX_PLATFORMS="cpu",
        JAX_NUM_CPU_DEVICES="3",
        JAX_DEFAULT_MATMUL_PRECISION="float32",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["True True True True cpu 3 float32", "float64 3"]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("JAX_DISABLE_JIT", "maybe", "invalid truth value 'maybe' for environment "
         "'JAX_DISABLE_JIT'"),
        ("JAX_NUM_CPU_DEVICES", "x", 'Invalid value "x" for JAX flag jax_num_cpu_devices'),
    ],
)  # fmt: skip
def test_bad_environment_variables(name, value, message):
    out = run_python("import lamina.interpreters", **{name: value})
    assert out.returncode != 0 and message in out.stderr
