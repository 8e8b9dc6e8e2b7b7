"""lamina.lax against the public names of jax.lax in JAX 0.10.2 (recorded in
data/jax_lax_api.json with their signatures): every name lamina defines has JAX's
parameters, in JAX's order, with JAX's defaults."""

import inspect
import json
import pathlib

import pytest

import lamina.lax as lax

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "jax_lax_api.json").read_text())
DEFINED = sorted(
    name
    for name, entry in RECORDED.items()
    if entry["signature"] and callable(getattr(lax, name, None))
)


def _strip(signature_text: str) -> list[str]:
    signature = signature_text.split(" -> ")[0].strip()[1:-1]
    names, depth, current = [], 0, ""
    for ch in signature:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            names.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        names.append(current.strip())
    return [n.split(":")[0].split("=")[0].strip() for n in names]


def _lamina_parameters(fun) -> list[str]:
    params = []
    seen_kw_only = False
    for p in inspect.signature(fun).parameters.values():
        if p.kind is p.KEYWORD_ONLY and not seen_kw_only:
            params.append("*")
            seen_kw_only = True
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        if p.kind is p.VAR_POSITIONAL:
            seen_kw_only = True
        params.append(prefix + p.name)
    return params


def test_most_of_the_core_is_defined():
    assert {"add", "dot_general", "reduce_sum", "transpose", "stop_gradient"} <= set(DEFINED)


@pytest.mark.parametrize("name", DEFINED)
def test_signature_matches_jax(name):
    want = _strip(RECORDED[name]["signature"])
    want = [w for w in want if w != "/"]
    assert _lamina_parameters(getattr(lax, name)) == want
