"""``jax._src.traceback_util``: traceback filtering (``lamina.ir``'s).

``register_exclusion(path)`` makes filtered tracebacks drop the frames of files under
``path`` as they drop lamina's; ``_exclude_paths`` is that very list (flax edits it
directly). ``api_boundary`` marks a function whose exceptions are filtered.
"""

from lamina.ir import (
    UnfilteredStackTrace,
    api_boundary,
    include_frame,
    register_exclusion,
)
from lamina.ir import excluded_paths as _exclude_paths

__all__ = [
    "UnfilteredStackTrace",
    "_exclude_paths",
    "api_boundary",
    "include_frame",
    "register_exclusion",
]
