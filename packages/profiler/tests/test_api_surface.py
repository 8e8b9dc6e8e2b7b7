"""lamina.profiler has every public name of `jax.profiler`, with JAX's parameters:
names, kinds and defaults (recorded from JAX 0.10.2 in data/jax_profiler_api.json)."""

import inspect
import json
from pathlib import Path

import pytest

import lamina.profiler as profiler

API = json.loads((Path(__file__).parent / "data" / "jax_profiler_api.json").read_text())["names"]


def test_public_names_are_jax_names():
    assert sorted(profiler.__all__) == sorted(API)
    assert {n for n in dir(profiler) if not n.startswith("_")} >= set(API)


@pytest.mark.parametrize("name", sorted(API))
def test_name_has_jax_kind_and_parameters(name):
    want = API[name]
    value = getattr(profiler, name)
    assert inspect.isclass(value) == (want["kind"] == "class"), name
    if want["parameters"] is None:
        return
    got = [
        {"name": p.name, "kind": p.kind.name}
        | ({"default": repr(p.default)} if p.default is not p.empty else {})
        for p in inspect.signature(value).parameters.values()
    ]
    assert got == want["parameters"], name
