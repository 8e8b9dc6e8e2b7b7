"""`lamina.extend.pallas`: hooks for Pallas backends (`jax.extend.pallas`). Pallas is
not built yet (issue 19): its names raise saying so."""

__all__ = ["GridMapping", "register_lowering_rule"]  # noqa: F822 (__getattr__)


def __getattr__(name: str):
    if name in __all__:
        raise AttributeError(f"lamina.extend.pallas.{name} is not built yet (issue 19)")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
