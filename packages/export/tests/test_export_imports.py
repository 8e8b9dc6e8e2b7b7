import importlib


def test_layer_imports_in_its_own_environment():
    module = importlib.import_module("lamina.export")
    assert module.__name__ == "lamina.export"
