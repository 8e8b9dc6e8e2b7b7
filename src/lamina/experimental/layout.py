"""`lamina.experimental.layout`: ``Layout`` and ``Format`` (``jax.experimental.layout``).

A ``Layout`` names how an array's elements lie in device memory (the order of its
dimensions from major to minor, and optional tiling); a ``Format`` pairs a layout with a
sharding. Both are plain values here, compared and hashed by their fields: libraries
carry them through their sharding annotations (flax maps over them). lamina compiles
every array in the default (row-major) layout, and has no
``with_layout_constraint``.
"""

from __future__ import annotations

from lamina.interpreters import Sharding

__all__ = ["Format", "Layout"]


class _Auto:
    """``Layout.AUTO``: let the compiler choose the layout."""

    def __repr__(self) -> str:
        return "AUTO"


class Layout:
    """A device memory layout: dimensions from major to minor, optional tiles."""

    AUTO = _Auto()

    def __init__(
        self,
        major_to_minor: tuple[int, ...],
        tiling: tuple[tuple[int, ...], ...] | None = None,
        sub_byte_element_size_in_bits: int = 0,
    ):
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(tuple(t) for t in tiling)
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    def _key(self):
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __repr__(self) -> str:
        return (
            f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
            f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})"
        )

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other) -> bool:
        return isinstance(other, Layout) and self._key() == other._key()

    def update(self, **changes) -> Layout:
        """A copy with the given fields replaced."""
        fields = dict(
            major_to_minor=self.major_to_minor,
            tiling=self.tiling,
            sub_byte_element_size_in_bits=self.sub_byte_element_size_in_bits,
        )
        fields.update(changes)
        return Layout(**fields)

    def check_compatible_aval(self, aval_shape: tuple[int, ...]) -> None:
        """Raise ``ValueError`` unless the layout has one entry per dimension."""
        if len(self.major_to_minor) != len(aval_shape):
            raise ValueError(
                "Length of major_to_minor and the rank of the value should match. Got "
                f"major_to_minor={self.major_to_minor} and shape={aval_shape}"
            )


class Format:
    """A layout (a ``Layout``, ``Layout.AUTO`` or ``None``) with a sharding (or ``None``)."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout: Layout | _Auto | None = None, sharding: Sharding | None = None):
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(
                f"Sharding has to be concrete when layout is of type {type(layout)}. Please "
                "pass a `jax.sharding.NamedSharding` or `jax.sharding.SingleDeviceSharding` "
                f"to the sharding argument. Got sharding {sharding}"
            )
        if not isinstance(layout, (Layout, _Auto, type(None))):
            raise TypeError(
                "Invalid value received for the layout argument. Expected values are "
                f"`None`, `Layout.AUTO` or an instance of `Layout`. Got {layout} of type "
                f"{type(layout)}"
            )
        if not isinstance(sharding, (Sharding, type(None))):
            raise TypeError(
                "Invalid value received for the sharding argument. Expected values are "
                f"`None` or an instance of `jax.Sharding`. Got {sharding} of type "
                f"{type(sharding)}"
            )
        self.layout = layout
        self.sharding = sharding

    def __repr__(self) -> str:
        return f"Format(layout={self.layout}, sharding={self.sharding})"

    def __hash__(self) -> int:
        return hash((self.layout, self.sharding))

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, Format)
            and self.layout == other.layout
            and self.sharding == other.sharding
        )
