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


def test_a_keyboard_interrupt_while_paused_restores_the_collector():
    def f(x):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        make_jaxpr(f)(np.ones(3, np.float32))
    assert gc.isenabled()


def test_a_program_that_turned_the_collector_off_finds_it_off_after_tracing():
    def fails(x):
        raise ValueError("boom")

    gc.disable()
    try:
        jaxpr = make_jaxpr(lambda x: P.sin(x))(np.ones(3, np.float32))
        assert [e.primitive.name for e in jaxpr.eqns] == ["sin"]
        assert not gc.isenabled()
        with pytest.raises(ValueError, match="boom"):
            make_jaxpr(fails)(1.0)
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("first_out", ["first_in", "second_in"])
def test_traces_overlapping_in_two_threads_turn_the_collector_back_on_once(first_out):
    """Thread A starts tracing, thread B starts while A is inside; whichever ends first,
    the collector stays off until the other ends too, then comes back on."""
    import threading

    inside = {"first_in": threading.Event(), "second_in": threading.Event()}
    leave = {"first_in": threading.Event(), "second_in": threading.Event()}
    seen_after = {}
    errors = []

    def tracer(name):
        def f(x):
            inside[name].set()
            assert leave[name].wait(10)
            return P.sin(x)

        try:
            make_jaxpr(f)(np.ones(3, np.float32))
            seen_after[name] = gc.isenabled()
        except BaseException as e:  # reported below, in the main thread
            errors.append(e)

    a = threading.Thread(target=tracer, args=("first_in",))
    b = threading.Thread(target=tracer, args=("second_in",))
    a.start()
    assert inside["first_in"].wait(10)
    b.start()
    assert inside["second_in"].wait(10)
    assert not gc.isenabled()
    last_out = "second_in" if first_out == "first_in" else "first_in"
    leave[first_out].set()
    (a if first_out == "first_in" else b).join(10)
    assert seen_after[first_out] is False  # the other thread is still tracing
    assert not gc.isenabled()
    leave[last_out].set()
    a.join(10)
    b.join(10)
    assert not errors, errors
    assert gc.isenabled()
