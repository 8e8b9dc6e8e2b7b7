"""From block specs to ``BlockMapping``s: for each operand of a ``pallas_call``, the
array's type, its block dimensions and its index map traced to a Jaxpr (grid indices
in, one int32 start index per array axis out); ``GridMapping`` holds them all with the
grid and the scratch buffers' types. Bad specs raise JAX's errors.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from lamina.interpreters import describe_function, trace_to_jaxpr
from lamina.ir import AbstractRef, ClosedJaxpr, ShapedArray, tree_util
from lamina.lax import convert_element_type
from lamina.pallas.core.specs import (
    Blocked,
    BlockSpec,
    BoundedSlice,
    Element,
    Indirect,
    Squeezed,
    block_dims,
    no_block_spec,
)

__all__ = ["BlockMapping", "GridMapping", "block_mapping", "index_map_jaxpr", "specs_for"]

_I32 = ShapedArray((), np.dtype(np.int32))


def _dim_text(d) -> str:
    if isinstance(d, Element):
        return f"Element(block_size={d.block_size}, padding={d.padding})"
    if isinstance(d, Squeezed):
        return "Squeezed()"
    return f"{type(d).__name__}(block_size={d.block_size})"


def dims_text(dims) -> str:
    inner = ", ".join(_dim_text(d) for d in dims)
    return f"({inner},)" if len(dims) == 1 else f"({inner})"


@dataclasses.dataclass(frozen=True, eq=False)
class BlockMapping:
    """One operand: its array type, block dimensions and index map."""

    block_dims: tuple
    array_aval: ShapedArray
    index_map: ClosedJaxpr
    origin: str

    @property
    def block_shape(self) -> tuple[int, ...]:
        """The block's shape in the array (1 for squeezed dimensions)."""
        return tuple(d.block_size for d in self.block_dims)

    @property
    def squeezed(self) -> tuple[bool, ...]:
        return tuple(isinstance(d, Squeezed) for d in self.block_dims)

    @property
    def ref_aval(self) -> AbstractRef:
        shape = tuple(d.block_size for d in self.block_dims if not isinstance(d, Squeezed))
        return AbstractRef(ShapedArray(shape, self.array_aval.dtype))

    @property
    def padding(self) -> tuple[tuple[int, int], ...]:
        return tuple(d.padding if isinstance(d, Element) else (0, 0) for d in self.block_dims)

    def __repr__(self):
        return f"BlockMapping(block_shape={dims_text(self.block_dims)})"


@dataclasses.dataclass(frozen=True, eq=False)
class GridMapping:
    """The grid, the operands' block mappings (inputs, then outputs) and the types of
    the scratch buffers."""

    grid: tuple[int, ...]
    block_mappings: tuple[BlockMapping, ...]
    num_inputs: int
    scratch_avals: tuple[ShapedArray, ...] = ()

    @property
    def num_outputs(self) -> int:
        return len(self.block_mappings) - self.num_inputs

    @property
    def inputs(self) -> tuple[BlockMapping, ...]:
        return self.block_mappings[: self.num_inputs]

    @property
    def outputs(self) -> tuple[BlockMapping, ...]:
        return self.block_mappings[self.num_inputs :]

    def __repr__(self):
        return f"GridMapping(grid={self.grid}, block_mappings={self.block_mappings})"


def index_map_jaxpr(index_map, grid: tuple[int, ...], n_dims: int, origin: str, dims):
    """``index_map`` traced on the grid indices; checks that it returns ``n_dims``
    values and makes them int32 scalars."""

    def flat(*indices):
        out = index_map(*indices)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(out) != n_dims:
            raise ValueError(
                f"Index map function {describe_function(index_map)} for {origin} must "
                f"return {n_dims} values to match block_shape={dims_text(dims)}. "
                f"Currently returning {len(out)} values:"
            )
        return [convert_element_type(x, np.dtype(np.int32)) for x in out]

    closed, _ = trace_to_jaxpr(flat, [_I32] * len(grid), "index_map", what="index_map")
    return closed


def block_mapping(spec, aval: ShapedArray, grid: tuple[int, ...], origin: str) -> BlockMapping:
    """The ``BlockMapping`` of an operand of type ``aval`` under ``spec``."""
    if spec is None or spec is no_block_spec:
        spec = BlockSpec()
    if not isinstance(spec, BlockSpec):
        raise TypeError(f"{origin}: expected a BlockSpec, got {spec!r}")
    shape = tuple(aval.shape)
    if spec.block_shape is None:
        dims = tuple(Blocked(d) for d in shape)
    else:
        dims = block_dims(spec.block_shape)
    if len(dims) != len(shape):
        raise ValueError(
            f"Block shape for {origin} (= {dims_text(dims)}) must have the same number "
            f"of dimensions as the array shape {shape}."
        )
    for d in dims:
        if isinstance(d, (BoundedSlice, Indirect)):
            raise NotImplementedError(f"{type(d).__name__} block dimensions are TPU-only")
    index_map = spec.index_map
    if index_map is None:

        def index_map(*indices):
            return (0,) * len(shape)

    return BlockMapping(dims, aval, index_map_jaxpr(index_map, grid, len(shape), origin, dims),
                        origin)  # fmt: skip


def specs_for(specs, n: int, what: str, operands: str) -> list:
    """One spec per operand from ``specs`` (a spec, or a sequence of them)."""
    if specs is no_block_spec or specs is None:
        return [None] * n
    if isinstance(specs, BlockSpec):
        if n != 1:
            raise ValueError(
                f"Pytree for `{what}` and `{operands}` do not match. There are 1 mismatches, "
                f"including:\n    * `{what}` is a BlockSpec but `{operands}` is a tuple of "
                f"length {n}"
            )
        return [specs]
    specs = tuple(specs)
    if len(specs) != n:
        raise ValueError(
            f"Pytree for `{what}` and `{operands}` do not match. There are 1 mismatches, "
            f"including:\n    * `{what}` is a tuple of length {len(specs)} but `{operands}` is "
            f"a tuple of length {n}, so the lengths do not match"
        )
    return list(specs)


def flatten_specs(specs: list, operand_trees) -> list:
    """Each operand's spec repeated for each of its leaves."""
    out = []
    for spec, tree in zip(specs, operand_trees, strict=True):
        out.extend([spec] * tree_util.tree_structure(tree).num_leaves)
    return out
