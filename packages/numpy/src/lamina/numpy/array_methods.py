"""Not written yet: the methods of ``jax.Array`` on lamina arrays and tracers."""

__all__: list[str] = []


def install_array_methods() -> None:
    pass
