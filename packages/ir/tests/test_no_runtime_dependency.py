import subprocess
import sys

PROBE = """
import sys
import lamina.ir
import lamina.ir.parsing.parser, lamina.ir.core.jaxpr, lamina.ir.checker, lamina.ir.tree_util
loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('jaxlib', 'jax'))
print(','.join(loaded))
"""


def test_lamina_ir_loads_without_jaxlib():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
