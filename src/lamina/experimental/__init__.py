"""`lamina.experimental`: JAX's experimental APIs (`jax.experimental`).

Submodules load on import, as in JAX: ``import lamina.experimental.checkify``.
``io_callback`` loads the array layers on first use.
"""

__all__ = ["io_callback"]


def __getattr__(name: str):
    if name == "io_callback":
        import lamina.numpy  # noqa: F401  (array operators on the arrays callbacks get)
        from lamina.lax import io_callback

        globals()[name] = io_callback
        return io_callback
    raise AttributeError(f"module 'lamina.experimental' has no attribute {name!r}")
