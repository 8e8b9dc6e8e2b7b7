"""`lamina.memory`: where a value lives (`jax.memory.Space`)."""

import enum

__all__ = ["Space"]


class Space(enum.Enum):
    """A memory space: device memory, pinned host memory, or any."""

    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self) -> str:
        return f"MemorySpace.{self.name}"

    __str__ = __repr__


Space.__name__ = Space.__qualname__ = "MemorySpace"
