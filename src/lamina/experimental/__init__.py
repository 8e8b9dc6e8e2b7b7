"""`lamina.experimental`: JAX's experimental APIs (`jax.experimental`).

Submodules load on import, as in JAX: ``import lamina.experimental.checkify``.
"""

import importlib

__all__ = [  # loaded by __getattr__ on first use, as they need the interpreters
    "EArray",
    "compilation_cache",
    "cur_qdd",
    "io_callback",
    "primal_tangent_dtype",
    "shard_map",
]

_LAZY = {
    "EArray": ("lamina.experimental.extended_array", "EArray"),
    "compilation_cache": ("lamina.experimental.compilation_cache", None),
    "cur_qdd": ("lamina.experimental.quasi_dynamic_data", "cur_qdd"),
    "io_callback": ("lamina.lax", "io_callback"),
    "primal_tangent_dtype": ("lamina.ir.dtypes", "primal_tangent_dtype"),
    "shard_map": ("lamina.experimental.shard_map", None),
}
# Names from the array layers load lamina.numpy as well, which installs the array
# operators (callbacks hand arrays to user code), as the top level does.
_ARRAY_LAYERS = ("lamina.lax", "lamina.interpreters")


def __getattr__(name: str):
    if name in _LAZY:
        module, attr = _LAZY[name]
        if module.startswith(_ARRAY_LAYERS):
            importlib.import_module("lamina.numpy")
        value = importlib.import_module(module)
        value = value if attr is None else getattr(value, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'lamina.experimental' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
