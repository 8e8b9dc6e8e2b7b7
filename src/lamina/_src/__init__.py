"""`lamina._src`: the few ``jax._src`` names that libraries built on JAX reach for.

Under the import alias (``lamina.compat``) ``jax._src.<module>`` is
``lamina._src.<module>``. This is not a copy of JAX's private tree: each module holds
only the names that optax, chex, equinox, flax (linen and nnx) and diffrax (and their
test suites) import from ``jax._src``, and each name is lamina's own object, so a
library that patches or registers through it changes what lamina does:

- ``ad_util``: ``stop_gradient_p`` (lineax gives it a transpose rule);
- ``checkify``: ``checkify``, ``Error``, ``JaxException``, ``user_checks``, ``Out``
  (flax.nnx);
- ``compiler``: ``backend_compile_and_load``, the function every compilation calls
  (chex's ``restrict_backends`` wraps it);
- ``core``: ``ShapedArray``, ``Tracer``, ``physical_aval`` (flax.linen's fp8 ops);
- ``dispatch``: ``wait_for_tokens`` (equinox);
- ``dtypes``: ``extended``, ``ExtendedDType``, ``TypePromotionError``, ``DType``,
  ``finfo``, ``supports_inf`` (equinox, flax);
- ``interpreters.ad``: ``CustomVJPException`` (diffrax's tests);
- ``state.types``: ``AbstractRef`` (flax.nnx);
- ``traceback_util``: ``api_boundary``, ``register_exclusion``, ``include_frame``,
  ``UnfilteredStackTrace`` and the list ``_exclude_paths`` (equinox, flax);
- ``tree_util``: ``_registry`` (which types are pytree nodes, for flax.nnx),
  ``prefix_errors``;
- ``xla_bridge``: ``_backends`` (the started backends by platform, for chex).
"""

import importlib

_MODULES = (
    "ad_util",
    "checkify",
    "compiler",
    "core",
    "dispatch",
    "dtypes",
    "interpreters",
    "state",
    "traceback_util",
    "tree_util",
    "xla_bridge",
)


def __getattr__(name: str):
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_MODULES})
