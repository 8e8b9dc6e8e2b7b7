import importlib
import subprocess
import sys

import pytest

NOT_BUILT = "lamina.sharding is not built yet (issue 17)"


def test_layer_imports_in_its_own_environment():
    module = importlib.import_module("lamina.sharding")
    assert module.__name__ == "lamina.sharding"


def test_attributes_say_the_layer_is_not_built():
    module = importlib.import_module("lamina.sharding")
    with pytest.raises(AttributeError) as info:
        _ = module.Mesh
    assert str(info.value).startswith(NOT_BUILT)
    assert not hasattr(module, "Mesh")


@pytest.mark.parametrize(
    "statement", ["import lamina.sharding.mesh", "from lamina.sharding import mesh"]
)
def test_submodules_say_the_layer_is_not_built(statement):
    # A fresh process: the package is imported by the statement itself.
    result = subprocess.run([sys.executable, "-c", statement], capture_output=True, text=True)
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line.startswith(f"ModuleNotFoundError: {NOT_BUILT}"), last_line


def test_submodule_import_in_process_says_the_layer_is_not_built():
    importlib.import_module("lamina.sharding")
    with pytest.raises(ModuleNotFoundError) as info:
        importlib.import_module("lamina.sharding.mesh")
    assert str(info.value).startswith(NOT_BUILT)
