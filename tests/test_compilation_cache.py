"""The persistent compilation cache: on by default, hits and misses, what its keys
depend on, damaged entries, concurrent processes, and turning it off.

The test suite runs with the cache off (conftest.py at the repository root); each test
here gives it a directory under pytest's tmp_path."""

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina.experimental.compilation_cache import compilation_cache as cc
from lamina.extend import backend
from lamina.interpreters import compilation_cache as cache_module

COMPILE = "/jax/core/compile/backend_compile_duration"


@pytest.fixture
def cache_dir(tmp_path):
    cc.set_cache_dir(tmp_path)
    try:
        yield tmp_path
    finally:
        cc.set_cache_dir("")
        backend.clear_in_memory_compilation_cache()


@pytest.fixture
def events():
    seen = []

    def on_event(event, **kw):
        seen.append(event)

    def on_duration(event, duration, **kw):
        seen.append(event)

    jax.monitoring.register_event_listener(on_event)
    jax.monitoring.register_event_duration_secs_listener(on_duration)
    try:
        yield seen
    finally:
        jax.monitoring.unregister_event_listener(on_event)
        jax.monitoring.unregister_event_duration_listener(on_duration)


def _entries(directory):
    return sorted(directory.glob("*-cache"))


def _step(x):
    return jnp.tanh(x @ x.T) * 3 + 1


X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
EXPECTED = np.tanh(X @ X.T) * 3 + 1


def _run_fresh(f=_step):
    """Call a new jit of ``f`` after dropping the in-memory executables."""
    backend.clear_in_memory_compilation_cache()
    return np.asarray(jax.jit(f)(X))


def test_miss_then_hit(cache_dir, events):
    np.testing.assert_allclose(_run_fresh(), EXPECTED, rtol=1e-6)
    assert events.count(COMPILE) == 1 and events.count("/jax/compilation_cache/cache_misses") == 1
    (entry,) = _entries(cache_dir)
    assert entry.name.startswith("jit__step_-")
    events.clear()
    np.testing.assert_allclose(_run_fresh(), EXPECTED, rtol=1e-6)
    assert events.count(COMPILE) == 0 and events.count("/jax/compilation_cache/cache_hits") == 1
    assert _entries(cache_dir) == [entry]


def test_every_program_is_kept_by_default(cache_dir):
    # min compile time and min entry size are 0 in lamina (JAX: 1 second, 0 bytes)
    assert jax.config.jax_persistent_cache_min_compile_time_secs == 0
    assert jax.config.jax_persistent_cache_min_entry_size_bytes == 0
    _run_fresh(lambda x: x + 1)
    assert len(_entries(cache_dir)) == 1


def test_thresholds(cache_dir):
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 10**9)
    try:
        _run_fresh()
    finally:
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    assert _entries(cache_dir) == []


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "garbage"])
def test_damaged_entry_is_recompiled(cache_dir, events, damage):
    _run_fresh()
    (entry,) = _entries(cache_dir)
    good = entry.read_bytes()
    if damage == "flip":
        data = bytearray(good)
        data[len(data) // 2] ^= 0x40
        entry.write_bytes(bytes(data))
    elif damage == "truncate":
        entry.write_bytes(good[: len(good) - 100])
    elif damage == "empty":
        entry.write_bytes(b"")
    else:
        entry.write_bytes(os.urandom(len(good)))
    events.clear()
    np.testing.assert_allclose(_run_fresh(), EXPECTED, rtol=1e-6)
    assert events.count(COMPILE) == 1 and events.count("/jax/compilation_cache/cache_hits") == 0
    # written again, whole: the next run loads it
    key = entry.name.rsplit("-", 2)[-2]
    assert cache_module.decode_entry(key, entry.read_bytes())
    events.clear()
    np.testing.assert_allclose(_run_fresh(), EXPECTED, rtol=1e-6)
    assert events.count(COMPILE) == 0 and events.count("/jax/compilation_cache/cache_hits") == 1


def test_decode_entry_checks():
    key = "ab" * 32
    entry = cache_module.encode_entry(key, b"executable bytes", 1.5)
    assert cache_module.decode_entry(key, entry) == (b"executable bytes", 1.5)
    for bad, message in [
        (entry[:10], "truncated"),
        (entry[:-1], "truncated"),
        (entry[:-1] + bytes([entry[-1] ^ 1]), "checksum"),
        (b"X" + entry[1:], "format"),
    ]:
        with pytest.raises(ValueError, match=message):
            cache_module.decode_entry(key, bad)
    with pytest.raises(ValueError, match="another key"):
        cache_module.decode_entry("cd" * 32, entry)


def test_key_depends_on_what_changes_the_executable(monkeypatch):
    devices = jax.devices()
    options = backend.get_compile_options(1, 1, [[devices[0]]])
    module = jax.jit(_step).lower(X).as_text()
    base = cache_module.cache_key(module, devices[:1], options)
    assert base == cache_module.cache_key(module, devices[:1], options)
    other_module = jax.jit(lambda x: _step(x) + 1).lower(X).as_text()
    assert cache_module.cache_key(other_module, devices[:1], options) != base
    other_options = backend.get_compile_options(1, 1, [[devices[0]]])
    other_options.executable_build_options.num_partitions = 1
    other_options.num_partitions = 2
    assert cache_module.cache_key(module, devices[:1], other_options) != base
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=true")
    assert cache_module.cache_key(module, devices[:1], options) != base
    monkeypatch.delenv("XLA_FLAGS")
    monkeypatch.setattr(cache_module.jaxlib, "__version__", "0.0.0")
    assert cache_module.cache_key(module, devices[:1], options) != base


def test_key_depends_on_the_devices():
    # 2 CPU devices in a fresh process: device id and count change the key
    code = textwrap.dedent(
        """
        import lamina as jax
        from lamina.extend import backend
        from lamina.interpreters import compilation_cache as c
        d = jax.devices()
        o = backend.get_compile_options(1, 1, [[d[0]]])
        keys = {c.cache_key("m", d[:1], o), c.cache_key("m", d[1:], o), c.cache_key("m", d, o)}
        print(len(keys))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "JAX_NUM_CPU_DEVICES": "2"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "3"


_PROGRAM = textwrap.dedent(
    """
    import sys
    import lamina as jax
    import lamina.numpy as jnp

    compiles = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda e, d, **k: compiles.append(e) if e.endswith("backend_compile_duration") else None)

    @jax.jit
    def train(w, x):
        for i in range(int(sys.argv[1])):
            w = jnp.tanh(w @ x + i) * 0.5
        return w.sum()

    w = jnp.ones((16, 16)) * 0.01
    print(float(train(w, w)), len(compiles))
    """
)


def _start(env, layers=3):
    return subprocess.Popen(
        [sys.executable, "-c", _PROGRAM, str(layers)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process):
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    value, compiles = out.split()
    return float(value), int(compiles)


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    return {**env, "JAX_PLATFORMS": "cpu", **extra}


def test_on_by_default_in_the_users_cache_directory(tmp_path):
    env = _env(XDG_CACHE_HOME=str(tmp_path))
    value, compiles = _finish(_start(env))
    directory = tmp_path / "lamina" / "compilation_cache"
    assert compiles >= 1 and len(_entries(directory)) == compiles
    again, compiles = _finish(_start(env))
    assert (again, compiles) == (value, 0)


def test_two_processes_compiling_at_once(tmp_path):
    env = _env(JAX_COMPILATION_CACHE_DIR=str(tmp_path))
    runs = [_start(env, layers=40) for _ in range(2)]
    (a, _), (b, _) = (_finish(p) for p in runs)
    assert a == b
    assert not list(tmp_path.glob(".tmp-*"))  # no temporary file left behind
    entries = _entries(tmp_path)
    key = lambda p: p.name.rsplit("-", 2)[-2]  # noqa: E731
    for entry in entries:  # each entry whole
        cache_module.decode_entry(key(entry), entry.read_bytes())
    value, compiles = _finish(_start(env, layers=40))
    assert (value, compiles) == (a, 0)


@pytest.mark.parametrize(
    "off",
    [{"JAX_ENABLE_COMPILATION_CACHE": "false"}, {"JAX_COMPILATION_CACHE_DIR": ""}],
)
def test_turned_off_from_the_environment(tmp_path, off):
    env = _env(XDG_CACHE_HOME=str(tmp_path), **off)
    _finish(_start(env))
    _, compiles = _finish(_start(env))
    assert compiles >= 1
    assert not (tmp_path / "lamina").exists()


def test_turned_off_in_process(cache_dir):
    jax.config.update("jax_enable_compilation_cache", False)
    try:
        _run_fresh()
    finally:
        jax.config.update("jax_enable_compilation_cache", True)
    cc.set_cache_dir(None)
    _run_fresh()
    assert _entries(cache_dir) == []


def test_unusable_directory_warns_and_compiles(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cc.set_cache_dir(blocker / "cache")
    try:
        with pytest.warns(UserWarning, match="not usable"):
            np.testing.assert_allclose(_run_fresh(), EXPECTED, rtol=1e-6)
        jax.config.update("jax_raise_persistent_cache_errors", True)
        cc.reset_cache()
        with pytest.raises(OSError):
            _run_fresh()
    finally:
        jax.config.update("jax_raise_persistent_cache_errors", False)
        cc.set_cache_dir("")
        backend.clear_in_memory_compilation_cache()


def test_directory_removed_while_running(cache_dir):
    _run_fresh()
    shutil.rmtree(cache_dir)
    _run_fresh()
    assert len(_entries(cache_dir)) == 1


def test_eviction_keeps_the_limit(cache_dir):
    _run_fresh()
    (first,) = _entries(cache_dir)
    jax.config.update("jax_compilation_cache_max_size", first.stat().st_size * 3 // 2)
    try:
        os.utime(first, (1, 1))  # least recently used
        _run_fresh(lambda x: _step(x) - 2)
    finally:
        jax.config.update("jax_compilation_cache_max_size", -1)
    (left,) = _entries(cache_dir)
    assert left != first
