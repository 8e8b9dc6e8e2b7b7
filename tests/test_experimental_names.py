"""Names of `lamina.experimental` and `lamina.extend.backend` that JAX 0.10.2 has."""

import inspect
import os
import subprocess
import sys
import textwrap
import warnings

import jaxlib._ifrt_proxy
import ml_dtypes
import numpy as np
import pytest

import lamina as jax
import lamina.experimental as experimental
import lamina.numpy as jnp
from lamina.experimental.compilation_cache import compilation_cache as cc
from lamina.extend import backend

_PROBE = textwrap.dedent(
    """
    import sys
    import lamina as jax
    import lamina.numpy as jnp
    from lamina import monitoring
    from lamina.experimental.compilation_cache import compilation_cache as cc

    events = []
    monitoring.register_event_listener(lambda e, **k: events.append(e))
    monitoring.register_event_duration_secs_listener(lambda e, d, **k: events.append(e))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    cc.set_cache_dir(sys.argv[1])
    print(jax.jit(lambda x: jnp.sin(x) * 2 + 1)(jnp.arange(3.0)).tolist())
    print(events.count("/jax/compilation_cache/cache_hits"),
          events.count("/jax/compilation_cache/cache_misses"),
          events.count("/jax/core/compile/backend_compile_duration"))
    """
)


def _probe(cache_dir):
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(cache_dir)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    ).stdout.splitlines()
    return out[-2], [int(n) for n in out[-1].split()]


def test_persistent_cache_across_processes(tmp_path):
    # the first process compiles and writes (the arange and the jit), the second
    # loads both from disk and compiles nothing
    value, (hits, misses, compiles) = _probe(tmp_path)
    assert (hits, misses) == (0, 2) and compiles == 2
    assert len(list(tmp_path.glob("*-cache"))) == 2
    again, (hits, misses, compiles) = _probe(tmp_path)
    assert again == value and (hits, misses, compiles) == (2, 0, 0)


def test_dir_names():
    # recorded from JAX 0.10.2
    names = {"EArray", "compilation_cache", "cur_qdd", "io_callback", "primal_tangent_dtype"}
    assert names <= set(dir(experimental))

    assert {"reset_cache", "set_cache_dir"} <= set(dir(cc))


def test_ifrt_proxy_is_jaxlibs():

    assert "ifrt_proxy" in dir(backend)
    assert backend.ifrt_proxy is jaxlib._ifrt_proxy


def test_cur_qdd():

    seen = []

    def f(x):
        seen.append(experimental.cur_qdd(x))
        return x

    # recorded from JAX 0.10.2: staged values have none, through vmap and grad too
    jax.jit(jax.vmap(f))(jnp.ones(2))
    jax.jit(jax.grad(f))(1.0)
    assert seen == [None, None]
    # a concrete array has no quasi-dynamic data to give (as in JAX 0.10.2)
    with pytest.raises(AttributeError, match="has no attribute 'cur_qdd'"):
        jax.vmap(f)(jnp.ones(2))


def test_primal_tangent_dtype():

    # names and fields recorded from JAX 0.10.2
    d = experimental.primal_tangent_dtype(np.float32, ml_dtypes.bfloat16)
    assert repr(d) == str(d) == d.name == "PrimalTangentDType{f32/bf16}"
    assert d.primal_dtype == np.float32 and d.tangent_dtype == ml_dtypes.bfloat16
    assert d == experimental.primal_tangent_dtype("float32", "bfloat16")
    assert hash(d) == hash(experimental.primal_tangent_dtype("float32", "bfloat16"))
    assert repr(experimental.primal_tangent_dtype("float32", "int8", "foo")) == "foo"

    assert jax.dtypes.issubdtype(d, jax.dtypes.extended)


def test_experimental_shard_map_module():
    # JAX 0.10.2 keeps the module, deprecated (warned on first import), with check_rep
    # in place of check_vma
    assert "shard_map" in dir(experimental)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = experimental.shard_map
    assert callable(module.shard_map)
    assert list(inspect.signature(module.shard_map).parameters) == [
        "f",
        "mesh",
        "in_specs",
        "out_specs",
        "check_rep",
    ]


def test_cache_thresholds(tmp_path):
    # a compile faster than jax_persistent_cache_min_compile_time_secs is not written

    cc.set_cache_dir(tmp_path)
    cc.reset_cache()
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1e9)
    try:
        jax.jit(lambda x: x * 3 - 1)(jnp.float32(2)).block_until_ready()
        assert list(tmp_path.glob("*-cache")) == []
    finally:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
        cc.set_cache_dir(None)
        cc.reset_cache()


def test_unknown_name():
    with pytest.raises(AttributeError):
        experimental.no_such_name  # noqa: B018
