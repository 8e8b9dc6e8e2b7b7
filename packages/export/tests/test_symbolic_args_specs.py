"""``symbolic_args_specs``: argument specifications with symbolic shapes, as JAX 0.10.2's
``jax.export.symbolic_args_specs``."""

import numpy as np
import pytest

from lamina.export.shape_poly import symbolic_args_specs


def test_symbolic_args_specs():
    x, y = np.zeros((3, 4), np.float32), np.zeros((4,), np.int32)
    specs = symbolic_args_specs((x, y), ("b, n", "n"))
    assert [str(s.shape) for s in specs] == ["(b, n)", "(n,)"]
    assert specs[0].shape[1] is not specs[1].shape[0] and specs[0].shape[1] == specs[1].shape[0]
    assert specs[1].dtype == np.int32
    specs = symbolic_args_specs((x, y), "b, ...", constraints=("b >= 2",))
    assert [str(s.shape) for s in specs] == ["(b, 4)", "(b,)"]
    with pytest.raises(ValueError):
        symbolic_args_specs((x, y), ("b", "n", "m"))
