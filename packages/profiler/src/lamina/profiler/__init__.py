"""lamina.profiler: where the time goes, in the tools JAX users use.

Traces (:func:`trace`, :func:`start_trace` / :func:`stop_trace`, or a profiler server
that TensorBoard connects to) are jaxlib's profiler sessions, written in TensorBoard's
layout and, when asked, for Perfetto; annotations name spans of the user's code;
memory profiles list what the live arrays hold, for ``pprof``. A jitted function's
tracing, lowering, compilation and dispatch show as spans named for it, and the names
of ``named_scope`` / ``named_call`` become the op names of the compiled program.
"""

from jaxlib._profile_data import ProfileData, ProfileEvent, ProfilePlane

from lamina.profiler.annotations import StepTraceAnnotation, TraceAnnotation, annotate_function
from lamina.profiler.memory import device_memory_profile, save_device_memory_profile
from lamina.profiler.server import register_subprocess, start_server, stop_server
from lamina.profiler.traces import ProfileOptions, start_trace, stop_trace, trace

__all__ = [
    "ProfileData",
    "ProfileEvent",
    "ProfileOptions",
    "ProfilePlane",
    "StepTraceAnnotation",
    "TraceAnnotation",
    "annotate_function",
    "device_memory_profile",
    "register_subprocess",
    "save_device_memory_profile",
    "start_server",
    "start_trace",
    "stop_server",
    "stop_trace",
    "trace",
]
