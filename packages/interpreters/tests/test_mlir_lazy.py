"""``lamina.interpreters.mlir``: jaxlib's MLIR bindings load on first use, not at import."""

import subprocess
import sys

import pytest

from lamina.interpreters.mlir import lazy_module

PROBE = """
import sys
import lamina.interpreters
def mlir_loaded():
    return sorted(m for m in sys.modules
                  if m == 'jaxlib.mlir.ir' or m.startswith('jaxlib.mlir.dialects'))
print(mlir_loaded())
import numpy as np
lamina.interpreters.jit(lambda x: x)(np.float32(1))
print('jaxlib.mlir.dialects.stablehlo' in mlir_loaded())
"""


def test_import_does_not_load_mlir_bindings():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.split() == ["[]", "True"]


def test_lazy_module_imports_on_first_attribute(tmp_path, monkeypatch):
    (tmp_path / "lamina_lazy_probe.py").write_text("VALUE = [1]\nimported = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lamina_lazy_probe", raising=False)
    lazy = lazy_module("lamina_lazy_probe")
    assert "lamina_lazy_probe" not in sys.modules
    assert lazy.__name__ == "lamina_lazy_probe"
    assert lazy.VALUE is sys.modules["lamina_lazy_probe"].VALUE
    assert "imported" in dir(lazy)
    with pytest.raises(AttributeError):
        lazy.missing  # noqa: B018
    monkeypatch.delitem(sys.modules, "lamina_lazy_probe")


def test_bindings_are_jaxlibs():
    from jaxlib.mlir import ir as real_ir
    from jaxlib.mlir.dialects import stablehlo as real_hlo

    from lamina.interpreters.mlir import hlo, ir

    assert ir.Context is real_ir.Context
    assert hlo.add is real_hlo.add
