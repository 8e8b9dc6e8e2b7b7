import numpy as np
import pytest

from lamina.interpreters import device_put


@pytest.fixture
def put():
    return lambda x, dtype=None: device_put(np.asarray(x, dtype=dtype))
