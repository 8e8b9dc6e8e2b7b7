"""jaxlib's C++ looks up ``jax.core.ShapedArray`` once a module named ``jax.core``
exists. When that module is lamina's (``import jax`` resolving to lamina), the class
there is lamina's abstract value class, so transfers to the host keep working."""

import subprocess
import sys

PROGRAM = """
import sys
import numpy as np
import lamina, lamina.core
from lamina.ir import ShapedArray
sys.modules["jax"] = lamina
sys.modules["jax.core"] = lamina.core
import jax.core
assert jax.core.ShapedArray is ShapedArray
import lamina.numpy as jnp
x = jnp.arange(4.0)
tree = lamina.device_get({"a": x, "b": [x * 2]})
np.testing.assert_array_equal(tree["b"][0], [0.0, 2.0, 4.0, 6.0])
assert isinstance(tree["a"], np.ndarray)
assert x.tolist() == [0.0, 1.0, 2.0, 3.0] and float(x.sum()) == 6.0
print(repr(x))
"""


def test_host_transfers_with_lamina_core_as_jax_core():
    result = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Array([0., 1., 2., 3.], dtype=float32)"
