"""Every option of JAX 0.10.2's ``jax.config``: names, kinds, defaults, trace-context
membership, type checks and messages, context managers and decorators, environment
variables. The table in data/jax_config_options.json and the messages below are
recorded from JAX 0.10.2."""

import enum
import importlib
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import threading

import pytest
from jaxlib import _jax

import lamina.interpreters as li
from lamina.interpreters.core.config_state import Flag, State

config = li.config
config_module = importlib.import_module("lamina.interpreters.core.config")
JAX_OPTIONS = json.loads(
    (pathlib.Path(__file__).parent / "data" / "jax_config_options.json").read_text()
)


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


def test_the_same_133_options_as_jax():
    assert len(JAX_OPTIONS) == 133
    assert set(config.values) == set(JAX_OPTIONS)


# lamina's documented differences: the persistent compilation cache is on by default and
# keeps every program (the cache directory comes from the environment: see below).
LAMINA_DEFAULTS = {
    "jax_compilation_cache_dir": config.jax_compilation_cache_dir,
    "jax_persistent_cache_min_compile_time_secs": 0.0,
}


@pytest.mark.parametrize("name", sorted(JAX_OPTIONS))
def test_kind_and_default(name):
    want = JAX_OPTIONS[name]
    holder = config._state(name)
    assert type(holder).__name__ == want["kind"]
    value = config.values[name]
    plain = value.value if isinstance(value, enum.Enum) else value
    assert plain == LAMINA_DEFAULTS.get(name, want["default"])
    if want["kind"] == "State":
        assert getattr(config, name) == value  # readable as an attribute
        assert (name in _jax.config.trace_context_names()) == want["trace"]
    else:
        with pytest.raises(AttributeError, match=f"'Config' object has no attribute '{name}'"):
            getattr(config, name)
        assert config.read(name) == value


def test_read_refuses_options_with_a_context_manager():
    # Recorded from JAX 0.10.2: read() is for flags; x64 is the exception.
    with pytest.raises(AttributeError, match=r"value via e\.g\. `config\.jax_debug_nans`"):
        config.read("jax_debug_nans")
    assert config.read("jax_enable_x64") is False
    assert config.read("jax_platform_name") == ""
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_nope"):
        config.read("jax_nope")


# (option, bad value, exception type, message) recorded from JAX 0.10.2.
BAD_UPDATES = [
    ("jax_numpy_dtype_promotion", "bad", ValueError, "'bad' is not a valid NumpyDtypePromotion"),
    ("jax_numpy_dtype_promotion", 3, TypeError,
     "new enum value must be an instance of <enum 'NumpyDtypePromotion'>, got 3 of type "
     "<class 'int'>."),
    ("jax_num_cpu_devices", "x", ValueError,
     "new int config value must be None or of type int, got x of type <class 'str'>"),
    ("jax_exec_time_optimization_effort", "x", ValueError,
     "new float config value must be None or of type float, got x of type <class 'str'>"),
    ("jax_debug_log_modules", 1, TypeError,
     "new string config value must be of type str, got 1 of type <class 'int'>."),
    ("jax_compilation_cache_dir", 1, ValueError,
     "new string config value must be None or of type str, got 1 of type <class 'int'>."),
    ("jax_legacy_prng_key", "bad", ValueError, "'bad' is not a valid LegacyPrngKeyState"),
    ("jax_explicit_x64_dtypes", "bad", ValueError, "'bad' is not a valid ExplicitX64Mode"),
    ("jax_default_device", "xpu", ValueError,
     "jax.default_device must be passed either a Device object (e.g. `jax.devices('cpu')[0]`) "
     "or a platform name string like 'cpu' or 'gpu', got: 'xpu'"),
    ("jax_pjrt_client_create_options", 3, ValueError,
     "new string config value must be None or of type dict | str, got 3 of type <class 'int'>."),
    ("jax_array_garbage_collection_guard", "x", ValueError,
     "new enum value must be None or in ['allow', 'log', 'fatal'], got x of type <class 'str'>."),
    ("jax_numpy_rank_promotion", None, ValueError,
     "new enum value must be in ['allow', 'warn', 'raise'], got None of type <class 'NoneType'>."),
    ("jax_nope", 3, AttributeError, "Unrecognized config option: jax_nope"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "value", "error", "message"), BAD_UPDATES)
def test_bad_updates(name, value, error, message):
    before = config.values.get(name)
    with pytest.raises(error) as info:
        config.update(name, value)
    assert str(info.value) == message
    assert config.values.get(name) == before


def test_updates_convert_as_jax_does():
    try:
        config.update("jax_log_compiles", 0)  # bool options take truthiness
        assert config.jax_log_compiles is False
        config.update("jax_explicit_x64_dtypes", "error")
        assert config.jax_explicit_x64_dtypes is config_module.ExplicitX64Mode.ERROR
        config.update("jax_exec_time_optimization_effort", 1)  # ints are floats too
        assert config.jax_exec_time_optimization_effort == 1
        config.update("jax_platform_name", 3)  # flags are not checked
        assert config.read("jax_platform_name") == 3
        config.update("jax_default_device", "cpu")
        assert config.jax_default_device == "cpu"
    finally:
        config.update("jax_explicit_x64_dtypes", "warn")
        config.update("jax_exec_time_optimization_effort", 0.0)
        config.update("jax_platform_name", "")
        config.update("jax_default_device", None)
    assert config.jax_numpy_dtype_promotion == "standard"  # a StrEnum compares as its value


def test_context_managers_are_per_thread_and_nest():
    seen = []
    with li.numpy_rank_promotion("raise"):
        assert config.jax_numpy_rank_promotion == "raise"
        thread = threading.Thread(target=lambda: seen.append(config.jax_numpy_rank_promotion))
        thread.start()
        thread.join()
        with li.numpy_rank_promotion("warn"):
            assert config.jax_numpy_rank_promotion == "warn"
        assert config.jax_numpy_rank_promotion == "raise"
    assert seen == ["allow"]
    assert config.jax_numpy_rank_promotion == "allow"


def test_context_manager_checks_its_value_and_needs_one():
    # Recorded from JAX 0.10.2.
    with pytest.raises(ValueError, match="'bad' is not a valid NumpyDtypePromotion"):
        li.numpy_dtype_promotion("bad")
    with pytest.raises(TypeError) as info:
        li.numpy_dtype_promotion()
    assert str(info.value) == (
        "Context manager for numpy_dtype_promotion config option requires an argument "
        "representing the new value for the config option."
    )
    with li.debug_infs():  # boolean options default to True
        assert config.jax_debug_infs is True
    assert config.jax_debug_infs is False
    with pytest.raises(TypeError, match="bool\\(\\) not supported for instances of type 'State'"):
        bool(li.debug_infs)


def test_decorators_on_functions_and_classes():
    @li.numpy_rank_promotion("raise")
    def f():
        """Doc."""
        return config.jax_numpy_rank_promotion

    assert f() == "raise" and f.__name__ == "f" and f.__doc__ == "Doc."
    assert config.jax_numpy_rank_promotion == "allow"

    # As in JAX 0.10.2, a decorated class becomes a function that builds instances
    # within the override.
    @li.numpy_dtype_promotion("strict")
    class A:
        def __init__(self):
            self.mode = config.jax_numpy_dtype_promotion

    assert not isinstance(A, type) and A.__name__ == "A"
    assert A().mode == "strict"
    assert config.jax_numpy_dtype_promotion == "standard"

    @li.disable_jit()
    def g():
        return config.jax_disable_jit

    assert g() is True and config.jax_disable_jit is False


def test_checking_leaks_and_transfer_guard_set_their_options():
    with li.checking_leaks():
        assert config.jax_check_tracer_leaks is True
    with li.transfer_guard("disallow"):
        assert config.jax_transfer_guard_host_to_device == "disallow"
        assert config.jax_transfer_guard_device_to_host == "disallow"
        assert config.jax_transfer_guard_device_to_device == "disallow"
        assert config.jax_transfer_guard == "disallow"
    assert config.jax_transfer_guard_host_to_device is None


def test_global_transfer_guard_sets_each_direction():
    try:
        config.update("jax_transfer_guard", "log")
        assert config.jax_transfer_guard_device_to_host == "log"
        assert _jax.guard_lib.global_state().host_to_device == (
            _jax.guard_lib.TransferGuardLevel.LOG
        )
    finally:
        config.update("jax_transfer_guard", None)
    assert _jax.guard_lib.global_state().host_to_device is None


def test_trace_context_follows_context_managers():
    names = _jax.config.trace_context_names()
    index = names.index("jax_default_matmul_precision")
    with li.default_matmul_precision("highest"):
        assert config_module.trace_context()[index] == "highest"
    assert config_module.trace_context()[index] is None


def test_make_user_context_keys_jit_caches():
    context = li.make_user_context(default_value=0)
    traces = []
    f = li.jit(lambda x: traces.append(1) or x)
    f(1.0)
    with context(1):
        f(1.0)
        assert context.value == 1
    f(1.0)
    assert len(traces) == 2 and context.value == 0


def test_num_cpu_devices_refused_after_start():
    li.devices()  # the backend has started
    with pytest.raises(RuntimeError) as info:
        config.update("jax_num_cpu_devices", config.jax_num_cpu_devices + 5)
    assert str(info.value) == (  # recorded from JAX 0.10.2
        "jax_num_cpu_devices config should be updated before backends are initialized i.e. "
        "before any JAX operation is executed. You should initialize this config immediately "
        "after `import jax`."
    )
    config.update("jax_num_cpu_devices", config.jax_num_cpu_devices)  # no change: fine


def test_compilation_cache_defaults():
    # lamina's own defaults (JAX: no directory, 1 second); read in fresh processes
    code = (
        "import lamina.interpreters as li; c = li.config; print(c.jax_compilation_cache_dir, "
        "c.jax_persistent_cache_min_compile_time_secs, "
        "c.jax_persistent_cache_min_entry_size_bytes)"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    clean.pop("XDG_CACHE_HOME", None)
    for env, want in [
        ({"XDG_CACHE_HOME": "/somewhere/cache"}, "/somewhere/cache/lamina/compilation_cache"),
        ({"HOME": "/h"}, "/h/.cache/lamina/compilation_cache"),
        ({"JAX_COMPILATION_CACHE_DIR": "/elsewhere"}, "/elsewhere"),
    ]:
        out = subprocess.run(
            [sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True
        )
        assert out.stdout.split() == [want, "0.0", "0"], out.stderr


def test_environment_variables_of_each_kind():
    code = """
        import lamina.interpreters as li
        c = li.config
        print(c.jax_numpy_rank_promotion, c.jax_numpy_dtype_promotion, c.jax_explicit_x64_dtypes,
              c.jax_traceback_in_locations_limit, c.jax_persistent_cache_min_compile_time_secs,
              c.jax_transfer_guard_host_to_device, c.read("jax_dump_ir_to"),
              c.read("jax_pallas_verbose_errors"), c.jax_threefry_partitionable)
    """
    out = run_python(
        code,
        JAX_NUMPY_RANK_PROMOTION="raise",
        JAX_NUMPY_DTYPE_PROMOTION="strict",
        JAX_EXPLICIT_X64_DTYPES="error",
        JAX_TRACEBACK_IN_LOCATIONS_LIMIT="7",
        JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="2.5",
        JAX_TRANSFER_GUARD="log",
        JAX_DUMP_IR_TO="/tmp/x",
        JAX_PALLAS_VERBOSE_ERRORS="1",
        JAX_THREEFRY_PARTITIONABLE="false",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [
        "raise", "strict", "2", "7", "2.5", "log", "/tmp/x", "True", "False"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [  # recorded from JAX 0.10.2
        ("JAX_NUMPY_RANK_PROMOTION", "loud", 'Invalid value "loud" for JAX flag '
         "jax_numpy_rank_promotion"),
        ("JAX_LEGACY_PRNG_KEY", "x", 'Invalid value "x" for JAX flag jax_legacy_prng_key'),
        ("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "x",
         'Invalid value "x" for JAX flag jax_persistent_cache_min_compile_time_secs'),
        ("JAX_DEBUG_INFS", "maybe", "invalid truth value 'maybe' for environment "
         "'JAX_DEBUG_INFS'"),
    ],
)  # fmt: skip
def test_bad_environment_variables(name, value, message):
    out = run_python("import lamina.interpreters", **{name: value})
    assert out.returncode != 0 and message in out.stderr


def test_states_are_jaxlib_holders():
    assert isinstance(config._state("jax_debug_nans"), State)
    assert isinstance(config._state("jax_debug_nans"), _jax.config.Config)
    assert isinstance(config._state("jax_platform_name"), Flag)
    assert li.numpy_dtype_promotion.__name__ == "numpy_dtype_promotion"
