"""A sharding in Shardy's terms (the ``sdy`` MLIR dialect, which JAX 0.10.2 lowers
shardings to by default): for each dimension the mesh axes it is split over and whether
the partitioner may split it further (open), plus the unreduced and replicated axes.
``build()`` makes the ``#sdy.sharding`` attribute (in an MLIR context that has the
dialect loaded); ``mesh_attr()`` the ``#sdy.mesh`` of the mesh it refers to."""

from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir.dialects import sdy

__all__ = ["SdyArray", "SdyDim"]


@dataclass(frozen=True)
class SdyDim:
    """One dimension: the mesh axes it is split over (major first), and whether it is
    open to further splitting."""

    axes: tuple[str, ...]
    is_open: bool

    def build(self) -> sdy.DimensionShardingAttr:
        return sdy.DimensionShardingAttr.get(
            [sdy.AxisRefAttr.get(axis) for axis in self.axes], is_closed=not self.is_open
        )

    def _text(self) -> str:
        names = ", ".join(f"'{a}'" for a in self.axes)
        if self.is_open:
            names += ", ?" if self.axes else "?"
        return f"{{{names}}}"

    def __repr__(self) -> str:
        return f"SdyDim({self._text()})"


@dataclass(frozen=True, kw_only=True)
class SdyArray:
    """An array's sharding: one :class:`SdyDim` per dimension over a mesh of
    ``mesh_shape`` ((name, size) pairs)."""

    mesh_shape: tuple[tuple[str, int], ...] | None
    dim_shardings: tuple[SdyDim, ...]
    logical_device_ids: tuple[int, ...] | None = None
    replicated_axes: frozenset = frozenset()
    unreduced_axes: frozenset = frozenset()

    def _in_mesh_order(self, axes: frozenset) -> list[str]:
        return [name for name, _ in self.mesh_shape or () if name in axes]

    def mesh_attr(self) -> sdy.MeshAttr:
        if self.mesh_shape is None:
            return sdy.MeshAttr.get([])
        axes = [sdy.MeshAxisAttr.get(name, size) for name, size in self.mesh_shape]
        return sdy.MeshAttr.get(axes, list(self.logical_device_ids or ()))

    def build(self, attr_cache: dict | None = None) -> sdy.TensorShardingAttr:
        """The ``#sdy.sharding`` attribute, with the mesh written inline (``attr_cache``
        maps already built arrays to their attributes)."""
        if attr_cache is not None and self in attr_cache:
            return attr_cache[self]
        attr = sdy.TensorShardingAttr.get(
            self.mesh_attr(),
            [d.build() for d in self.dim_shardings],
            replicated_axes=[
                sdy.AxisRefAttr.get(a) for a in self._in_mesh_order(self.replicated_axes)
            ],
            unreduced_axes=[
                sdy.AxisRefAttr.get(a) for a in self._in_mesh_order(self.unreduced_axes)
            ],
        )
        if attr_cache is not None:
            attr_cache[self] = attr
        return attr

    def __repr__(self) -> str:
        dims = ", ".join(d._text() for d in self.dim_shardings)
        ids = "" if self.logical_device_ids is None else f", device_ids={self.logical_device_ids}"
        replicated = f", replicated_axes={self.replicated_axes}" if self.replicated_axes else ""
        return f"SdyArray([{dims}]{ids}{replicated})"
