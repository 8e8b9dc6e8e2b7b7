"""lamina.nn and lamina.nn.initializers against the public names of jax.nn and
jax.nn.initializers in JAX 0.10.2 (recorded with their signatures in data/): every name
exists, and every function takes JAX's parameters in JAX's order, with JAX's
keyword-only markers and defaults."""

import inspect
import json
import pathlib

import pytest

import lamina.nn as nn
from lamina.nn import initializers

DATA = pathlib.Path(__file__).parent / "data"
MODULES = {"jax_nn_api.json": nn, "jax_nn_initializers_api.json": initializers}
FUNCTION_KINDS = {"function", "PjitFunction", "custom_jvp"}


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    return [*parts, current.strip()] if current.strip() else parts


def recorded_parameters(signature_text: str) -> list[tuple[str, str | None]]:
    """(name, default text or None) of each parameter of a recorded signature, with a
    bare ``*`` kept and positional-only markers dropped."""
    inside = signature_text.split(" -> ")[0].strip()[1:-1]
    out = []
    for part in _split_top_level(inside):
        if part == "/":
            continue
        name = part.split(":")[0].split("=")[0].strip()
        default = part.split("=", 1)[1].strip() if "=" in part else None
        out.append((name, default))
    return out


def lamina_parameters(fun) -> list[tuple[str, str | None]]:
    out, star_seen = [], False
    for p in inspect.signature(fun).parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star_seen:
            out.append(("*", None))
        star_seen = star_seen or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        default = None if p.default is p.empty else repr(p.default)
        out.append((prefix + p.name, default))
    return out


def _recorded():
    for filename, module in MODULES.items():
        for name, entry in sorted(json.loads((DATA / filename).read_text()).items()):
            yield pytest.param(module, name, entry, id=f"{module.__name__}.{name}")


@pytest.mark.parametrize("module, name, entry", list(_recorded()))
def test_name_and_signature_match_jax(module, name, entry):
    assert name in module.__all__
    obj = getattr(module, name)
    if entry["kind"] not in FUNCTION_KINDS:
        return
    assert lamina_parameters(obj) == recorded_parameters(entry["signature"])


def test_no_extra_public_names():
    for filename, module in MODULES.items():
        recorded = set(json.loads((DATA / filename).read_text()))
        assert set(module.__all__) - {"initializers"} == recorded - {"initializers"}


def test_initializers_submodule_and_aliases():
    assert nn.initializers is initializers
    assert nn.swish is nn.silu and nn.hard_swish is nn.hard_silu
    assert initializers.xavier_uniform is initializers.glorot_uniform
    assert initializers.kaiming_normal is initializers.he_normal
