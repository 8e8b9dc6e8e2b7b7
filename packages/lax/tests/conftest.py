import pathlib
import sys

import numpy as np
import pytest

from lamina.interpreters import device_put

# Test-local helper modules (gather_scatter_reference.py, ...) are imported by name.
sys.path.insert(0, str(pathlib.Path(__file__).parent))


@pytest.fixture
def put():
    return lambda x, dtype=None: device_put(np.asarray(x, dtype=dtype))
