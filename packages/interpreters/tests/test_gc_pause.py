"""The cyclic garbage collector waits while a program is traced, and comes back after."""

import gc

import numpy as np
import pytest
import tracing_prims as P

from lamina.interpreters.core.gc_pause import gc_paused
from lamina.interpreters.jaxprs.trace_api import make_jaxpr


def test_tracing_holds_the_collector_off_and_restores_it():
    seen = []

    def f(x):
        seen.append(gc.isenabled())
        return P.sin(x)

    assert gc.isenabled()
    jaxpr = make_jaxpr(f)(np.ones(3, np.float32))
    assert [e.primitive.name for e in jaxpr.eqns] == ["sin"]
    assert seen == [False]
    assert gc.isenabled()


def test_an_error_while_paused_restores_the_collector():
    def f(x):
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        make_jaxpr(f)(np.ones(3, np.float32))
    assert gc.isenabled()


def test_a_collector_turned_off_outside_stays_off():
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
