"""lamina.nn and lamina.nn.initializers against the public names of jax.nn and
jax.nn.initializers in JAX 0.10.2 (recorded with their signatures in data/): every name
exists, and every function takes JAX's parameters in JAX's order, with JAX's
keyword-only markers and defaults."""

import inspect
import json
import pathlib

import pytest

import lamina.nn as nn
from lamina.interpreters.test_util import recorded_parameters, signature_parameters
from lamina.nn import initializers

DATA = pathlib.Path(__file__).parent / "data"
MODULES = {"jax_nn_api.json": nn, "jax_nn_initializers_api.json": initializers}
FUNCTION_KINDS = {"function", "PjitFunction", "custom_jvp"}


def lamina_parameters(fun) -> list[tuple[str, str | None]]:
    return [
        (name, None if d is inspect.Parameter.empty else repr(d))
        for name, d in signature_parameters(fun)
    ]


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
