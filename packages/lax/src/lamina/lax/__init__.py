"""lamina.lax: JAX's ``lax`` primitives, each defined once with all of its rules.

Tiers, bottom to top (see the package README's "Layout"): ``base/`` holds the operand
helpers and the primitives every family's rules are written with (elementwise math,
conversion, broadcast/reshape/transpose, reductions, pad/slice/concatenate, ...); the
families above it (``slicing/``, ``dot/``, ``convolution/``, ``control_flow/``,
``windowed/``, ``parallel/``, ``special/``, ``linalg/`` and single-concept modules)
import the base at the top and only lower families besides. Importing the package
installs the array operators (``+``, ``*``, ``<``, ``@``, ...) on arrays and tracers
(:mod:`.operators`).
"""

import sys as _sys

from lamina.interpreters import (  # noqa: F401
    device_put_p,
    stop_gradient,
    stop_gradient_p,
)
from lamina.lax import linalg  # noqa: F401  (jax.lax.linalg is a public submodule)
from lamina.lax.base.filling import *  # noqa: F403
from lamina.lax.base.primitives import *  # noqa: F403
from lamina.lax.base.reduce import *  # noqa: F403
from lamina.lax.base.reshaping import *  # noqa: F403
from lamina.lax.base.stacking import *  # noqa: F403
from lamina.lax.composite import *  # noqa: F403
from lamina.lax.control_flow.associative_scan import *  # noqa: F403
from lamina.lax.control_flow.cond import *  # noqa: F403
from lamina.lax.control_flow.custom_solves import *  # noqa: F403
from lamina.lax.control_flow.linear_solve import *  # noqa: F403
from lamina.lax.control_flow.loops import *  # noqa: F403
from lamina.lax.control_flow.map import *  # noqa: F403
from lamina.lax.control_flow.scan import *  # noqa: F403
from lamina.lax.convolution.conv_general_dilated import *  # noqa: F403
from lamina.lax.convolution.dimension_numbers import *  # noqa: F403
from lamina.lax.convolution.variants import *  # noqa: F403
from lamina.lax.dot.dot_general import *  # noqa: F403
from lamina.lax.dot.ragged_dot import *  # noqa: F403
from lamina.lax.fft import *  # noqa: F403
from lamina.lax.operators import install_operators as _install_operators
from lamina.lax.optimization_barrier import *  # noqa: F403
from lamina.lax.parallel.collectives import *  # noqa: F403
from lamina.lax.parallel.exchange import *  # noqa: F403
from lamina.lax.parallel.point_to_point import *  # noqa: F403
from lamina.lax.parallel.ragged_all_to_all import *  # noqa: F403
from lamina.lax.rng import *  # noqa: F403
from lamina.lax.sharding_constraint import *  # noqa: F403
from lamina.lax.slicing.dynamic_slicing import *  # noqa: F403
from lamina.lax.slicing.gather_scatter import *  # noqa: F403
from lamina.lax.sorting import *  # noqa: F403
from lamina.lax.special.functions import *  # noqa: F403
from lamina.lax.special.gamma import *  # noqa: F403
from lamina.lax.staging import *  # noqa: F403
from lamina.lax.tokens import *  # noqa: F403
from lamina.lax.total_order import *  # noqa: F403
from lamina.lax.windowed.cumulative import *  # noqa: F403
from lamina.lax.windowed.reduce_window import *  # noqa: F403
from lamina.lax.windowed.select_and import *  # noqa: F403
from lamina.lax.windowed.windows import *  # noqa: F403

_install_operators()

# Not part of jax.lax: what the layers above (numpy, nn) build on.
from lamina.lax.base.operands import aval_of  # noqa: F401, E402
from lamina.lax.base.primitives import to_dtype  # noqa: F401, E402
from lamina.lax.callbacks.debug_callback import (  # noqa: F401, E402  (jax.debug's primitives)
    DebugEffect,
    OrderedDebugEffect,
    debug_callback,
    debug_callback_p,
)
from lamina.lax.callbacks.debug_print import debug_log, debug_print, debug_print_p  # noqa: F401, E402
from lamina.lax.callbacks.io_callback import (  # noqa: F401, E402
    IOEffect,
    OrderedIOEffect,
    io_callback,
    io_callback_p,
)
from lamina.lax.callbacks.pure_callback import pure_callback, pure_callback_p  # noqa: F401, E402
from lamina.lax.dot.dot_general import canonicalize_precision  # noqa: F401, E402
from lamina.lax.ffi_call import (  # noqa: F401, E402  (foreign function calls, for lamina.ffi)
    build_ffi_lowering_function,
    ffi_call,
    ffi_call_p,
    ffi_lowering,
)
from lamina.lax.linalg._lapack import (  # noqa: F401, E402  (for modules lamina.export reads)
    register_targets as register_lapack_targets,
)
from lamina.lax.operators import (  # noqa: F401, E402
    equal,
    power,
    promote_args,
    promote_args_no_broadcast,
    true_divide,
)
from lamina.lax.parallel.device_axes import (  # noqa: F401, E402  (pmap's, shard_map's axes)
    bind_device_axis,
    bind_mesh_axes,
    device_axis_size,
    mesh_axes,
)
from lamina.lax.prng import (  # noqa: F401, E402  (PRNG keys, for lamina.random and numpy)
    PRNG_IMPLS,
    RBG,
    THREEFRY,
    UNSAFE_RBG,
    PRNGImpl,
    PRNGKeyArray,
    PRNGSpec,
    check_prng_key,
    is_typed_key,
    key_dtype,
    random_bits,
    random_bits_p,
    random_clone,
    random_clone_p,
    random_fold_in,
    random_fold_in_p,
    random_seed,
    random_seed_p,
    random_split,
    random_split_p,
    random_unwrap,
    random_unwrap_p,
    random_wrap,
    random_wrap_p,
    resolve_prng_impl,
    threefry_2x32,
    wrap_key_data,
)
from lamina.lax.sharding_constraint import (  # noqa: F401, E402
    register_explicit_check,
    register_spec_sharding,
)
from lamina.lax.sorting import take_along  # noqa: F401, E402
from lamina.lax.state.access import (  # noqa: F401, E402  (mutable array references)
    addupdate_p,
    get_p,
    ref_addupdate,
    ref_get,
    ref_set,
    ref_swap,
    swap_p,
)
from lamina.lax.state.allocation import (  # noqa: F401, E402
    empty_ref,
    empty_ref_p,
    free_ref,
    free_ref_p,
    freeze,
    freeze_p,
    new_ref,
    new_ref_p,
)
from lamina.lax.state.indexing import (  # noqa: F401, E402
    Indexer,
    IntAxis,
    Slice,
    SliceAxis,
    ds,
    dslice,
    make_indexer,
)

# Each module lists its public names in __all__; the package exports their union.
_MODULES = (
    "base.primitives",
    "base.reduce",
    "base.filling",
    "base.stacking",
    "base.reshaping",
    "slicing.dynamic_slicing",
    "slicing.gather_scatter",
    "dot.dot_general",
    "dot.ragged_dot",
    "convolution.dimension_numbers",
    "convolution.conv_general_dilated",
    "convolution.variants",
    "control_flow.cond",
    "control_flow.loops",
    "control_flow.scan",
    "control_flow.map",
    "control_flow.associative_scan",
    "control_flow.linear_solve",
    "control_flow.custom_solves",
    "windowed.windows",
    "windowed.select_and",
    "windowed.reduce_window",
    "windowed.cumulative",
    "parallel.collectives",
    "parallel.exchange",
    "parallel.point_to_point",
    "parallel.ragged_all_to_all",
    "special.functions",
    "special.gamma",
    "fft",
    "sorting",
    "total_order",
    "rng",
    "tokens",
    "optimization_barrier",
    "staging",
    "sharding_constraint",
    "composite",
)
__all__ = sorted(
    {
        "device_put_p",
        "stop_gradient",
        "stop_gradient_p",
        *(n for m in _MODULES for n in _sys.modules[f"{__name__}.{m}"].__all__),
    }
)
