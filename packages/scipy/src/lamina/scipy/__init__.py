"""lamina.scipy: JAX's SciPy API (`jax.scipy`) on lamina.numpy and lax.

The submodules load when first touched, as `jax.scipy`'s do: `lamina.scipy.stats.norm`
works after `import lamina.scipy` alone.
"""

import importlib as _importlib

_SUBMODULES = (
    "cluster",
    "fft",
    "integrate",
    "interpolate",
    "linalg",
    "ndimage",
    "optimize",
    "signal",
    "sparse",
    "spatial",
    "special",
    "stats",
)

__all__ = list(_SUBMODULES)


def __getattr__(name: str):
    if name not in _SUBMODULES:
        raise AttributeError(f"module 'lamina.scipy' has no attribute {name!r}")
    module = _importlib.import_module(f"{__name__}.{name}")
    globals()[name] = module
    return module


def __dir__():
    return sorted({*globals(), *_SUBMODULES})
