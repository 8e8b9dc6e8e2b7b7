"""`lamina.version`: the version of JAX's API that lamina implements (`jax.version`).

Libraries gate code on ``jax.version.__version__``; lamina reports the JAX release it
matches, JAX 0.10.2, and the jaxlib it needs. lamina's own version is
``lamina.__version__``.
"""

__all__ = ["__version__", "__version_info__"]

_version = "0.10.2"
__version__ = _version
__version_info__ = tuple(int(part) for part in _version.split("."))
_minimum_jaxlib_version = "0.10.2"
_minimum_jaxlib_version_info = tuple(int(p) for p in _minimum_jaxlib_version.split("."))
