"""``jax._src.xla_bridge``: ``_backends``, the backends started so far by platform name
(empty before any device is used; reading it starts none)."""

from lamina.interpreters import backend as _backend

__all__ = ["_backends"]  # noqa: F822 (read when asked)


def __getattr__(name: str):
    if name == "_backends":
        return dict(_backend.backends()) if _backend.backends_are_initialized() else {}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
