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


BROKEN_LAYER = """
import numpy
del numpy.float32  # a layer fails to load: an AttributeError inside it
import lamina
for attempt in ("from lamina import jit", "lamina.grad", "hasattr(lamina, 'vmap')"):
    try:
        exec(attempt)
        print(attempt, "no error")
    except Exception as e:
        print(attempt, type(e).__name__, e, "| cause:", type(e.__cause__).__name__)
"""


def test_a_layer_failing_to_load_is_not_a_missing_name():
    result = subprocess.run(
        [sys.executable, "-c", BROKEN_LAYER], capture_output=True, text=True, timeout=120
    )
    cause = "AttributeError: module 'numpy' has no attribute 'float32' | cause: AttributeError"
    assert result.stdout.splitlines() == [
        f"from lamina import jit ImportError lamina could not load 'jit': {cause}",
        f"lamina.grad ImportError lamina could not load 'grad': {cause}",
        f"hasattr(lamina, 'vmap') ImportError lamina could not load 'vmap': {cause}",
    ]


def test_an_import_error_inside_a_layer_propagates():
    probe = (
        "import sys\nsys.modules['opt_einsum'] = None\nimport lamina\n"
        "try:\n    from lamina import jit\n"
        "except ImportError as e:\n    print(type(e).__name__, e)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert (
        result.stdout.strip()
        == "ModuleNotFoundError import of opt_einsum halted; None in sys.modules"
    )
