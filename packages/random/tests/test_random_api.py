"""lamina.random against the public names of jax.random in JAX 0.10.2 (recorded with
their signatures in data/jax_random_api.json): every name exists, with JAX's parameter
names, order, keyword-only markers and defaults."""

import json
import pathlib

import numpy as np
import pytest

import lamina.random as random
from lamina.interpreters.test_util import recorded_parameters, signature_parameters
from lamina.ir import Primitive

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "jax_random_api.json").read_text())
FUNCTIONS = sorted(name for name, entry in RECORDED.items() if entry["signature"])


def _recorded(name):
    """``[(name or '*', default text or None)]`` of the recorded signature."""
    return recorded_parameters(RECORDED[name]["signature"])


def test_every_public_name_is_exported():
    assert set(RECORDED) <= set(random.__all__)
    assert isinstance(random.random_gamma_p, Primitive)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_signature_matches_jax(name):
    want, got = _recorded(name), signature_parameters(getattr(random, name))
    assert [n for n, _ in got] == [n for n, _ in want]
    for (param, default_text), (_, default) in zip(want, got, strict=True):
        if default_text is None:
            continue
        expected = eval(default_text, {"np": np})  # recorded literals: 2, 'low', np.float32(1.0)
        assert type(default) is type(expected) and default == expected, (param, default)
