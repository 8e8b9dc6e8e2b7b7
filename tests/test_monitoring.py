"""lamina.monitoring: listeners, and the compile events lamina records as JAX does."""

import time

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina import monitoring

TRACE = "/jax/core/compile/jaxpr_trace_duration"
LOWER = "/jax/core/compile/jaxpr_to_mlir_module_duration"
COMPILE = "/jax/core/compile/backend_compile_duration"


@pytest.fixture
def recorded():
    """Every event of every kind recorded while the test runs."""
    events = []
    listeners = [
        (monitoring.register_event_listener, monitoring.unregister_event_listener,
         lambda e, **kw: events.append(("event", e, kw))),
        (monitoring.register_event_duration_secs_listener,
         monitoring.unregister_event_duration_listener,
         lambda e, d, **kw: events.append(("duration", e, d, kw))),
        (monitoring.register_event_time_span_listener,
         monitoring.unregister_event_time_span_listener,
         lambda e, s, t, **kw: events.append(("span", e, s, t, kw))),
        (monitoring.register_scalar_listener, monitoring.unregister_scalar_listener,
         lambda e, v, **kw: events.append(("scalar", e, v, kw))),
    ]  # fmt: skip
    for register, _, callback in listeners:
        register(callback)
    yield events
    for _, unregister, callback in listeners:
        unregister(callback)


def test_record_functions_reach_their_listeners(recorded):
    monitoring.record_event("/my/event", kind="a")
    monitoring.record_event_duration_secs("/my/duration", 0.5, kind="b")
    monitoring.record_event_time_span("/my/span", 1.0, 3.0)
    monitoring.record_scalar("/my/scalar", 7)
    assert recorded == [
        ("event", "/my/event", {"kind": "a"}),
        ("duration", "/my/duration", 0.5, {"kind": "b"}),
        ("span", "/my/span", 1.0, 3.0, {}),
        ("scalar", "/my/scalar", 7, {}),
    ]


def test_unregister_and_clear():
    seen = []

    def listener(event, **kw):
        seen.append(event)

    monitoring.register_event_listener(listener)
    monitoring.record_event("/a")
    monitoring.unregister_event_listener(listener)
    monitoring.record_event("/b")
    assert seen == ["/a"]
    with pytest.raises(AssertionError):  # as in JAX: only a registered one
        monitoring.unregister_event_listener(listener)
    monitoring.register_event_listener(listener)
    monitoring.clear_event_listeners()
    monitoring.record_event("/c")
    assert seen == ["/a"]


def _compile_events(events):
    return [(e[1], e[-1]["fun_name"]) for e in events if e[0] == "duration"]


def test_jit_records_trace_lower_and_compile_durations(recorded):
    x = jnp.ones(3)
    recorded.clear()

    def fresh_function(x):
        return x * 2 + 1

    f = jax.jit(fresh_function)
    before = time.time()
    np.testing.assert_allclose(f(x), [3.0, 3.0, 3.0])
    after = time.time()
    # Recorded from JAX 0.10.2: these three, in this order, with these fun_names.
    assert _compile_events(recorded) == [
        (TRACE, "fresh_function"),
        (LOWER, "jit(fresh_function)"),
        (COMPILE, "jit(fresh_function)"),
    ]
    durations = [e[2] for e in recorded if e[0] == "duration"]
    assert all(d > 0 for d in durations)
    # Each step also comes as its start time (a scalar) and its time span.
    for name, _ in _compile_events(recorded):
        (start,) = [e[2] for e in recorded if e[0] == "scalar" and e[1] == name]
        (span,) = [e for e in recorded if e[0] == "span" and e[1] == name]
        assert before <= start == span[2] <= span[3] <= after
    assert sum(durations) <= after - before

    recorded.clear()
    f(x)  # cached: nothing is traced or compiled
    assert recorded == []
    f(jnp.ones(4, jnp.int32))  # a new signature compiles again
    assert (TRACE, "fresh_function") in _compile_events(recorded)
    assert (COMPILE, "jit(fresh_function)") in _compile_events(recorded)


def test_eager_primitive_compiles_once(recorded):
    x = jnp.arange(5.0)
    recorded.clear()
    jnp.cosh(x)
    # Recorded from JAX 0.10.2: an eager op's first use records its compilation too.
    assert _compile_events(recorded) == [
        (TRACE, "cosh"),
        (LOWER, "jit(cosh)"),
        (COMPILE, "jit(cosh)"),
    ]
    recorded.clear()
    jnp.cosh(x)
    assert recorded == []


def test_stages_and_make_jaxpr_record_their_steps(recorded):
    def staged(x):
        return jax.lax.sin(x) * 3

    f = jax.jit(staged)
    spec = jax.ShapeDtypeStruct((2, 7), jnp.float32)
    lowered = f.lower(spec)
    assert _compile_events(recorded) == [(TRACE, "staged"), (LOWER, "jit(staged)")]
    recorded.clear()
    lowered.compile()
    assert _compile_events(recorded) == [(COMPILE, "jit(staged)")]
    recorded.clear()
    jax.make_jaxpr(staged)(1.0)
    assert _compile_events(recorded) == [(TRACE, "staged")]
    recorded.clear()
    jax.eval_shape(staged, 1.0)
    assert _compile_events(recorded) == [(TRACE, "staged")]
