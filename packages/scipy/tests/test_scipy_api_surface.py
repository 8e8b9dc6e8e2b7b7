"""Every public name of `jax.scipy` (JAX 0.10.2) is in lamina.scipy, with JAX's
parameters: names, kinds and defaults (recorded from JAX 0.10.2 in
data/jax_scipy_api.json; annotations are not compared)."""

import importlib
import inspect
import json
import re
from pathlib import Path

import pytest

API = json.loads((Path(__file__).parent / "data" / "jax_scipy_api.json").read_text())
ANNOTATION = re.compile(r": '[^']*'|: [A-Za-z_][\w\.\[\], |]*(?=[,)=])")


def _lamina_module(jax_name: str) -> str:
    return "lamina." + jax_name


def _parameters(signature: str) -> list[str]:
    """The parameter list of a recorded signature without annotations or return type."""
    params = signature.split(" -> ")[0]
    params = ANNOTATION.sub("", params).strip("()")
    return [re.sub(r"\s*=\s*", "=", p.strip()) for p in params.split(",") if p.strip()]


CASES = [(module, name) for module, names in sorted(API.items()) for name in sorted(names)]


@pytest.mark.parametrize("module", sorted(API))
def test_module_has_exactly_jax_public_names(module):
    mod = importlib.import_module(_lamina_module(module))
    missing = set(API[module]) - set(dir(mod))
    assert not missing, f"{module} lacks {sorted(missing)}"


@pytest.mark.parametrize("module,name", CASES)
def test_signature_matches_jax(module, name):
    want = API[module][name]
    value = getattr(importlib.import_module(_lamina_module(module)), name)
    if want["kind"] == "module":
        assert inspect.ismodule(value)
        return
    if want["kind"] == "class":
        assert inspect.isclass(value), f"{module}.{name} should be a class"
    if want.get("signature") is None:
        return
    got = ANNOTATION.sub("", str(inspect.signature(value)).split(" -> ")[0])
    assert _parameters(got) == _parameters(want["signature"]), (module, name)
