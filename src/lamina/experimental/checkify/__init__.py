"""`lamina.experimental.checkify`: checks in traced code (`jax.experimental.checkify`).

``checkify(f, errors=...)`` returns ``f`` with its failures as an ``Error`` value: the
user's ``check`` calls and, on request, automatic checks for NaNs, division by zero and
out-of-bounds indexing. It works under ``jit``, ``vmap``, ``grad`` and control flow.
"""

from lamina.experimental.checkify import automatic_rules as _automatic_rules  # noqa: F401
from lamina.experimental.checkify import shard_map_rule as _shard_map_rule  # noqa: F401
from lamina.experimental.checkify import structural_rules as _structural_rules  # noqa: F401
from lamina.experimental.checkify.checks import check, check_error, debug_check
from lamina.experimental.checkify.error_value import Error, init_error
from lamina.experimental.checkify.failures import (
    DivisionByZeroError,
    ErrorCategory,
    JaxRuntimeError,
    NaNError,
    OOBError,
)
from lamina.experimental.checkify.transformation import checkify, user_checks

nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks

__all__ = [
    "Error",
    "ErrorCategory",
    "JaxRuntimeError",
    "all_checks",
    "automatic_checks",
    "check",
    "check_error",
    "checkify",
    "debug_check",
    "div_checks",
    "float_checks",
    "index_checks",
    "init_error",
    "nan_checks",
    "user_checks",
]
