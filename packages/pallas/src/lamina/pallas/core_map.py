"""``kernel`` and ``core_map``: kernels over a mesh of cores rather than a grid.

``kernel`` runs its body once per point of the mesh (its ``shape``'s sizes taken as a
grid) on whole arrays, through ``pallas_call``. ``core_map`` runs a function closing
over references on each core; it needs a multi-core backend (TPU or Mosaic GPU).
"""

from __future__ import annotations

from lamina.pallas.call.pallas_call import pallas_call

__all__ = ["core_map", "kernel"]

_NOT_SPECIFIED = object()


def _grid_of(mesh) -> tuple[int, ...]:
    shape = getattr(mesh, "shape", None)
    if shape is None:
        raise TypeError(f"a mesh needs a `shape` (axis names to sizes), got {mesh!r}")
    return tuple(shape.values()) if hasattr(shape, "values") else tuple(shape)


def kernel(body=_NOT_SPECIFIED, out_type=(), *, mesh, scratch_types=(), compiler_params=None,
           interpret=False, cost_estimate=None, debug=False, name=None, metadata=None):  # fmt: skip
    """A function running ``body(*in_refs, *out_refs, *scratch_refs)`` on whole arrays
    once per point of ``mesh``; usable as a decorator."""

    def build(body):
        return pallas_call(
            body, out_type, grid=_grid_of(mesh), scratch_shapes=tuple(scratch_types),
            interpret=interpret, compiler_params=compiler_params, cost_estimate=cost_estimate,
            debug=debug, name=name, metadata=metadata,
        )  # fmt: skip

    if body is _NOT_SPECIFIED:
        return build
    return build(body)


def core_map(mesh, *, compiler_params=None, interpret=False, debug=False, cost_estimate=None,
             name=None, metadata=None, scratch_shapes=()):  # fmt: skip
    """Runs a function closing over references once per core of ``mesh``."""

    def decorator(f):
        raise NotImplementedError(
            "pl.core_map needs a multi-core backend (TPU or Mosaic GPU), which lamina.pallas "
            "does not have; use pl.kernel or pallas_call."
        )

    return decorator
