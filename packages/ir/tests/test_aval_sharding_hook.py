"""ShapedArray.sharding answers through the rule the sharding layer registers."""

import numpy as np
import pytest

from lamina.ir import ShapedArray, register_aval_sharding
from lamina.ir.core import avals


def test_without_a_rule_the_attribute_is_missing(monkeypatch):
    monkeypatch.setattr(avals, "_aval_sharding", [None])
    with pytest.raises(AttributeError, match=r"needs lamina\.sharding to be loaded"):
        _ = ShapedArray((2,), np.float32).sharding
    assert not hasattr(ShapedArray((2,), np.float32), "sharding")


def test_the_registered_rule_answers(monkeypatch):
    monkeypatch.setattr(avals, "_aval_sharding", [None])
    register_aval_sharding(lambda aval: ("layout", aval.ndim))
    assert ShapedArray((2, 3), np.float32).sharding == ("layout", 2)
