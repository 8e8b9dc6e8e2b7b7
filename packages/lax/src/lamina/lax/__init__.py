"""lamina.lax: JAX's ``lax`` primitives, each defined once with all of its rules.

Built so far (issue 3): the elementwise arithmetic, transcendental and comparison
primitives, ``select_n``, ``convert_element_type``, the shape primitives
(``broadcast_in_dim``, ``reshape``, ``transpose``, ``iota``), ``reduce_sum`` /
``reduce_max`` and ``dot_general``. Importing the package installs the array operators
(``+``, ``*``, ``<``, ``@``, ...) on arrays and tracers (:mod:`.operators`).
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
from lamina.lax.dot.dot_general import canonicalize_precision  # noqa: F401, E402
from lamina.lax.operators import (  # noqa: F401, E402
    equal,
    power,
    promote_args,
    promote_args_no_broadcast,
    true_divide,
)
from lamina.lax.sorting import take_along  # noqa: F401, E402

# Each module lists its public names in __all__; the package exports their union.
_MODULES = (
    "base.primitives",
    "base.reduce",
    "composite",
    "control_flow.associative_scan",
    "control_flow.cond",
    "control_flow.custom_solves",
    "control_flow.linear_solve",
    "control_flow.loops",
    "control_flow.map",
    "control_flow.scan",
    "convolution.conv_general_dilated",
    "convolution.dimension_numbers",
    "convolution.variants",
    "dot.dot_general",
    "dot.ragged_dot",
    "fft",
    "slicing.gather_scatter",
    "optimization_barrier",
    "rng",
    "staging",
    "tokens",
    "parallel.collectives",
    "parallel.exchange",
    "parallel.point_to_point",
    "parallel.ragged_all_to_all",
    "base.filling",
    "base.reshaping",
    "base.stacking",
    "sharding_constraint",
    "slicing.dynamic_slicing",
    "sorting",
    "special.functions",
    "special.gamma",
    "total_order",
    "windowed.cumulative",
    "windowed.reduce_window",
    "windowed.select_and",
    "windowed.windows",
)
__all__ = sorted(
    {
        "device_put_p",
        "stop_gradient",
        "stop_gradient_p",
        *(n for m in _MODULES for n in _sys.modules[f"{__name__}.{m}"].__all__),
    }
)
