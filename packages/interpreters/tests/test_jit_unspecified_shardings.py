"""``jit`` accepts ``in_shardings``/``out_shardings`` that ask for nothing: ``None``,
``UnspecifiedValue`` or pytrees of them (flax's ``nnx.jit`` always passes such trees);
real shardings are lamina.sharding's (issue 17) and say so."""

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
def test_real_shardings_name_the_layer(what):
    with pytest.raises(
        NotImplementedError, match=r"lamina.sharding, which is not built yet \(issue 17\)"
    ):
        jit(swap, **{what: (object(),)})
