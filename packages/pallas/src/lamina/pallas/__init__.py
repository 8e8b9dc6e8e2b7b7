"""lamina.pallas: the Pallas kernel language (``jax.experimental.pallas``), also
``lamina.experimental.pallas``.

Kernels are Python functions on references to blocks of their operands, run by
``pallas_call`` over a grid. Interpret mode (``interpret=True``) computes them with
ordinary lax operations on any platform. See this package's README.md.
"""

from lamina.lax import Slice, ds, dslice
from lamina.pallas import triton as triton  # registers the masked load/store primitives
from lamina.pallas.call.block_mapping import BlockMapping as BlockMapping
from lamina.pallas.call.block_mapping import GridMapping as GridMapping
from lamina.pallas.call.pallas_call import pallas_call, pallas_call_p
from lamina.pallas.call.pallas_call import register_lowering_rule as register_lowering_rule
from lamina.pallas.core.grid_env import num_programs, program_id
from lamina.pallas.core.specs import *  # noqa: F403
from lamina.pallas.core.specs import __all__ as _SPEC_NAMES
from lamina.pallas.core_map import core_map, kernel
from lamina.pallas.cost import estimate_cost
from lamina.pallas.language.arithmetic import (
    align_to,
    broadcast_to,
    cdiv,
    empty,
    empty_like,
    empty_ref_like,
    multiple_of,
    next_power_of_2,
    reciprocal,
    strides_from_shape,
)
from lamina.pallas.language.control import loop, run_scoped, run_state, when, with_scoped
from lamina.pallas.language.debugging import (
    debug_check,
    debug_print,
    delay,
    enable_debug_checks,
    enable_poison_buffers,
)
from lamina.pallas.language.views import TransformedRef as TransformedRef
from lamina.pallas.mlir_text import lower_as_mlir
from lamina.pallas.pallas_export import pallas_export_experimental
from lamina.pallas.tpu_only import (
    get_global,
    select_ref,
    semaphore_read,
    semaphore_signal,
    semaphore_wait,
)

__all__ = [  # the specs module's names, then the rest
    *_SPEC_NAMES,
    "Slice",
    "align_to",
    "broadcast_to",
    "cdiv",
    "core_map",
    "debug_check",
    "debug_print",
    "delay",
    "ds",
    "dslice",
    "empty",
    "empty_like",
    "empty_ref_like",
    "enable_debug_checks",
    "enable_poison_buffers",
    "estimate_cost",
    "get_global",
    "kernel",
    "loop",
    "lower_as_mlir",
    "multiple_of",
    "next_power_of_2",
    "num_programs",
    "pallas_call",
    "pallas_call_p",
    "pallas_export_experimental",
    "program_id",
    "reciprocal",
    "run_scoped",
    "run_state",
    "select_ref",
    "semaphore_read",
    "semaphore_signal",
    "semaphore_wait",
    "strides_from_shape",
    "when",
    "with_scoped",
]
