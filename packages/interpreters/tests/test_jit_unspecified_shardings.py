"""``jit`` accepts ``in_shardings``/``out_shardings`` that ask for nothing: ``None``,
``UnspecifiedValue`` or pytrees of them (flax's ``nnx.jit`` always passes such trees);
leaves that are not shardings raise JAX's TypeError."""

import numpy as np
import pytest

from lamina.interpreters import jit
from lamina.interpreters.jaxprs.calls import UNSPECIFIED


def swap(a, b):
    return b, a


@pytest.mark.parametrize(
    "in_shardings,out_shardings",
    [
        (None, None),
        (UNSPECIFIED, UNSPECIFIED),
        ((None, None), None),
        ((None, {"x": None}), [None]),
        ([UNSPECIFIED, None], (UNSPECIFIED,)),
    ],
)
def test_shardings_that_ask_for_nothing(in_shardings, out_shardings):
    f = jit(swap, in_shardings=in_shardings, out_shardings=out_shardings)
    np.testing.assert_array_equal(f(np.float32(1), np.float32(2)), (2, 1))


def test_decorator_form():
    f = jit(in_shardings=None, out_shardings=(None,))(swap)
    assert [float(x) for x in f(1.0, 2.0)] == [2.0, 1.0]


@pytest.mark.parametrize("what", ["in_shardings", "out_shardings"])
def test_leaves_that_are_not_shardings(what):
    # recorded from JAX 0.10.2: jax.jit(f, in_shardings=(3,)) raises this TypeError
    with pytest.raises(
        TypeError,
        match=f"^{what} leaf specifications are expected to be PartitionSpec instances "
        "or None, but got 3$",
    ):
        jit(swap, **{what: (3,)})
