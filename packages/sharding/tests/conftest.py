"""The layer's tests run on 8 CPU devices (set before the backend starts)."""

import pytest

from lamina.interpreters import config
from lamina.sharding import make_mesh

config.update("jax_num_cpu_devices", 8)


@pytest.fixture(scope="module")
def mesh():
    """A 2 × 4 mesh over the 8 devices, with Explicit axes x and y (``make_mesh``'s
    default); test modules that need another mesh define their own."""
    return make_mesh((2, 4), ("x", "y"))
