"""lamina.numpy against the public names of jax.numpy, jax.numpy.linalg and
jax.numpy.fft in JAX 0.10.2 (recorded with their signatures in data/): every function
lamina defines takes JAX's parameters, in JAX's order; every method of jax.Array that
lamina installs takes the method's parameters."""

import json
import pathlib

import pytest

import lamina.numpy as jnp
from lamina.interpreters import device_put
from lamina.interpreters.test_util import recorded_parameters, signature_parameters

DATA = pathlib.Path(__file__).parent / "data"
FUNCTION_KINDS = {"function", "PjitFunction", "ufunc", "_ArrayFunctionDispatcher"}
MODULES = {
    "jax_numpy_api.json": jnp,
    "jax_numpy_linalg_api.json": jnp.linalg,
    "jax_numpy_fft_api.json": jnp.fft,
}


def _recorded_functions():
    for filename, module in MODULES.items():
        recorded = json.loads((DATA / filename).read_text())
        for name, entry in sorted(recorded.items()):
            if entry["kind"] in FUNCTION_KINDS and entry["signature"]:
                yield pytest.param(module, name, entry["signature"], id=f"{module.__name__}.{name}")


def split_parameters(signature_text: str) -> list[str]:
    """Parameter names of a recorded signature, private ones dropped."""
    names = [name for name, _ in recorded_parameters(signature_text)]
    return [n for n in names if not n.lstrip("*").startswith("_")]


def lamina_parameters(fun) -> list[str]:
    names = [name for name, _ in signature_parameters(fun)]
    return [n for n in names if not n.lstrip("*").startswith("_")]


@pytest.mark.parametrize("module, name, signature", _recorded_functions())
def test_signature_matches_jax(module, name, signature):
    fun = getattr(module, name, None)
    if fun is None:
        pytest.fail(f"{module.__name__}.{name} is not defined")
    assert lamina_parameters(fun) == split_parameters(signature)


ARRAY_ATTRIBUTES = json.loads((DATA / "jax_array_attributes.json").read_text())


@pytest.mark.parametrize(
    "name",
    sorted(n for n, e in ARRAY_ATTRIBUTES.items() if e["signature"] and not n.startswith("__")),
)
def test_array_method_signature_matches_jax(name):
    method = getattr(type(device_put(1.0)), name, None)
    if method is None:
        pytest.fail(f"Array.{name} is not defined")
    want = split_parameters(ARRAY_ATTRIBUTES[name]["signature"])
    got = lamina_parameters(method)
    assert got[1:] == want[1:]  # the receiver may be named differently
