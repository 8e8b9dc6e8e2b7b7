"""``import lamina`` leaves jaxlib's MLIR bindings unloaded: only lowering needs them."""

import subprocess
import sys

PROBE = """
import sys
import lamina
loaded = sorted(m for m in sys.modules
                if m == 'jaxlib.mlir.ir' or m.startswith('jaxlib.mlir.dialects'))
print(','.join(loaded))
"""


def test_import_lamina_does_not_load_mlir_bindings():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == ""
