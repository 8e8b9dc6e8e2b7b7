import importlib
import subprocess
import sys

import pytest

NOT_BUILT = "lamina.pallas is not built yet (issue 19)"


def test_layer_imports_in_its_own_environment():
    module = importlib.import_module("lamina.pallas")
    assert module.__name__ == "lamina.pallas"


def test_attributes_say_the_layer_is_not_built():
    module = importlib.import_module("lamina.pallas")
    with pytest.raises(AttributeError) as info:
        _ = module.pallas_call
    assert str(info.value).startswith(NOT_BUILT)
    assert not hasattr(module, "pallas_call")


@pytest.mark.parametrize(
    "statement", ["import lamina.pallas.mosaic", "from lamina.pallas import mosaic"]
)
def test_submodules_say_the_layer_is_not_built(statement):
    # A fresh process: the package is imported by the statement itself.
    result = subprocess.run([sys.executable, "-c", statement], capture_output=True, text=True)
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line.startswith(f"ModuleNotFoundError: {NOT_BUILT}"), last_line


def test_submodule_import_in_process_says_the_layer_is_not_built():
    importlib.import_module("lamina.pallas")
    with pytest.raises(ModuleNotFoundError) as info:
        importlib.import_module("lamina.pallas.mosaic")
    assert str(info.value).startswith(NOT_BUILT)
