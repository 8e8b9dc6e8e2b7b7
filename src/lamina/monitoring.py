"""`lamina.monitoring`: listeners for named events (`jax.monitoring`).

lamina reports how long each compilation step takes, under JAX's event names:
``/jax/core/compile/jaxpr_trace_duration`` (tracing a function to a Jaxpr),
``/jax/core/compile/jaxpr_to_mlir_module_duration`` (lowering it to StableHLO) and
``/jax/core/compile/backend_compile_duration`` (XLA compiling it), each with a
``fun_name`` keyword. Calls that find their executable cached record nothing.
"""

from lamina.interpreters import monitoring as _monitoring

__all__ = [
    "clear_event_listeners",
    "record_event",
    "record_event_duration_secs",
    "record_event_time_span",
    "record_scalar",
    "register_event_duration_secs_listener",
    "register_event_listener",
    "register_event_time_span_listener",
    "register_scalar_listener",
    "unregister_event_duration_listener",
    "unregister_event_listener",
    "unregister_event_time_span_listener",
    "unregister_scalar_listener",
]

clear_event_listeners = _monitoring.clear_event_listeners
record_event = _monitoring.record_event
record_event_duration_secs = _monitoring.record_event_duration_secs
record_event_time_span = _monitoring.record_event_time_span
record_scalar = _monitoring.record_scalar
register_event_duration_secs_listener = _monitoring.register_event_duration_secs_listener
register_event_listener = _monitoring.register_event_listener
register_event_time_span_listener = _monitoring.register_event_time_span_listener
register_scalar_listener = _monitoring.register_scalar_listener
unregister_event_duration_listener = _monitoring.unregister_event_duration_listener
unregister_event_listener = _monitoring.unregister_event_listener
unregister_event_time_span_listener = _monitoring.unregister_event_time_span_listener
unregister_scalar_listener = _monitoring.unregister_scalar_listener
