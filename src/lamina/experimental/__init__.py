"""`lamina.experimental`: JAX's experimental APIs (`jax.experimental`).

Submodules load on import, as in JAX: ``import lamina.experimental.checkify``.
"""
