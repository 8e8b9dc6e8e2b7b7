"""`lamina.extend`: interfaces for libraries built on lamina (`jax.extend`).

Submodules, loaded on first use: ``backend``, ``core`` (with ``core.primitives``),
``ifrt_programs``, ``linear_util``, ``lowering``, ``mlir``, ``pallas``, ``random``,
``sharding``, ``source_info_util``, ``xla``.
"""

import importlib

_SUBMODULES = (
    "backend",
    "core",
    "linear_util",
    "lowering",
    "mlir",
    "pallas",
    "random",
    "sharding",
    "source_info_util",
    "xla",
)


def __getattr__(name: str):
    if name in (*_SUBMODULES, "ifrt_programs"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_SUBMODULES})
