"""lamina.numpy against the public names of jax.numpy, jax.numpy.linalg and
jax.numpy.fft in JAX 0.10.2 (recorded with their signatures in data/): every function
lamina defines takes JAX's parameters, in JAX's order; every method of jax.Array that
lamina installs takes the method's parameters."""

import inspect
import json
import pathlib

import pytest

import lamina.numpy as jnp
from lamina.interpreters import device_put

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
    """Parameter names (with ``*``/``**`` prefixes and a bare ``*``) of a recorded
    signature; positional-only markers and private parameters dropped."""
    inside = signature_text.split(" -> ")[0].strip()[1:-1]
    parts, depth, current = [], 0, ""
    for ch in inside:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    names = [p.split(":")[0].split("=")[0].strip() for p in parts]
    return [n for n in names if n != "/" and not n.lstrip("*").startswith("_")]


def lamina_parameters(fun) -> list[str]:
    params, star_seen = [], False
    for p in inspect.signature(fun).parameters.values():
        if p.name.startswith("_"):
            continue
        if p.kind is p.KEYWORD_ONLY and not star_seen:
            params.append("*")
        star_seen = star_seen or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
        params.append({p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name)
    return params


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
