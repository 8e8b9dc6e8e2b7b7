"""lamina.random against the public names of jax.random in JAX 0.10.2 (recorded with
their signatures in data/jax_random_api.json): every name exists, with JAX's parameter
names, order, keyword-only markers and defaults."""

import inspect
import json
import pathlib

import numpy as np
import pytest

import lamina.random as random
from lamina.ir.primitives import Primitive

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "jax_random_api.json").read_text())
FUNCTIONS = sorted(name for name, entry in RECORDED.items() if entry["signature"])


def _split_params(signature_text: str) -> list[str]:
    inner = signature_text.split(" -> ")[0].strip()[1:-1]
    params, depth, current = [], 0, ""
    for ch in inner:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            params.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        params.append(current.strip())
    return params


def _recorded(name):
    """``[(name or '*', default text or None)]`` of the recorded signature."""
    out = []
    for text in _split_params(RECORDED[name]["signature"]):
        if text in ("*", "/"):
            out.append((text, None))
            continue
        head, _, default = text.partition(" = ") if " = " in text else text.partition("=")
        out.append((head.split(":")[0].strip(), default.strip() or None))
    return [p for p in out if p[0] != "/"]


def _lamina(fun):
    out, kw_only = [], False
    for p in inspect.signature(fun).parameters.values():
        if p.kind is p.KEYWORD_ONLY and not kw_only:
            out.append(("*", None))
            kw_only = True
        default = None if p.default is inspect.Parameter.empty else p.default
        out.append((p.name, default))
    return out


def test_every_public_name_is_exported():
    assert set(RECORDED) <= set(random.__all__)
    assert isinstance(random.random_gamma_p, Primitive)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_signature_matches_jax(name):
    want, got = _recorded(name), _lamina(getattr(random, name))
    assert [n for n, _ in got] == [n for n, _ in want]
    for (param, default_text), (_, default) in zip(want, got, strict=True):
        if default_text is None:
            continue
        expected = eval(default_text, {"np": np})  # recorded literals: 2, 'low', np.float32(1.0)
        assert type(default) is type(expected) and default == expected, (param, default)
