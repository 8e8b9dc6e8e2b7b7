"""lamina.lib: jaxlib's version, all that `jax.lib` holds in JAX 0.10.2."""

import importlib.metadata

import pytest

import lamina


def test_version_is_jaxlibs():
    assert lamina.lib.__version__ == importlib.metadata.version("jaxlib") == "0.10.2"


def test_old_submodules_are_gone_as_in_jax():
    # JAX 0.10.2 removed jax.lib.xla_bridge and jax.lib.xla_client.
    for name in ("xla_bridge", "xla_client"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(f"lamina.lib.{name}")
