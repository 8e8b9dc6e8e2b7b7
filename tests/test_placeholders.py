"""Layers that are not built yet fail loudly, with the issue that will build them."""

import importlib
import subprocess
import sys

import pytest

import lamina

LAYERS = {
    "pallas": (19, "pallas_call"),
}


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_root_attribute_says_the_layer_is_not_built(layer):
    issue, _ = LAYERS[layer]
    # In a fresh process, where the placeholder package has not been imported.
    result = _run(f"import lamina; lamina.{layer}")
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line == (f"AttributeError: lamina.{layer} is not built yet (issue {issue})"), (
        last_line
    )
    result = _run(f"import lamina; print(hasattr(lamina, {layer!r}))")
    assert result.stdout.strip() == "False", result.stderr


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_placeholder_attributes_and_submodules_say_the_layer_is_not_built(layer):
    issue, attr = LAYERS[layer]
    not_built = f"lamina.{layer} is not built yet (issue {issue})"
    module = importlib.import_module(f"lamina.{layer}")
    with pytest.raises(AttributeError) as info:
        getattr(module, attr)
    assert str(info.value).startswith(not_built)
    with pytest.raises(ModuleNotFoundError) as info:
        importlib.import_module(f"lamina.{layer}.{attr.lower()}")
    assert str(info.value).startswith(not_built)


def test_placeholders_stay_out_of_the_public_names():
    assert not set(LAYERS) & set(lamina.__all__)
