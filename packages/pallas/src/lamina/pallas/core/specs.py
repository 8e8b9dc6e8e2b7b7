"""How a kernel sees its operands: block dimensions (``Blocked``, ``Element``,
``Squeezed``, ...), ``BlockSpec``, ``GridSpec``, memory spaces and ``MemoryRef``,
``CostEstimate``, ``CompilerParams`` and the small marker types of ``jax.experimental.pallas``.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from lamina.ir import AbstractRef, ShapedArray, dtypes

__all__ = [
    "ANY",
    "HOST",
    "BlockDim",
    "BlockSpec",
    "Blocked",
    "BoundedSlice",
    "Buffered",
    "CompilerParams",
    "CostEstimate",
    "DeviceIdType",
    "Element",
    "GridSpec",
    "Indirect",
    "MemoryRef",
    "MemorySpace",
    "RevisitMode",
    "Squeezed",
    "no_block_spec",
    "semaphore",
    "squeezed",
]


@dataclasses.dataclass(frozen=True)
class Blocked:
    """A block of ``block_size`` elements; the index map gives the block's index."""

    block_size: int

    def __repr__(self):
        return f"Blocked({self.block_size})"


@dataclasses.dataclass(frozen=True)
class Element:
    """A block of ``block_size`` elements; the index map gives the offset of its first
    element, in the array padded by ``padding`` (low, high)."""

    block_size: int
    padding: tuple[int, int] = (0, 0)

    def __repr__(self):
        if self.padding == (0, 0):
            return f"Element({self.block_size})"
        return f"Element({self.block_size}, {self.padding})"


@dataclasses.dataclass(frozen=True)
class Squeezed:
    """A dimension of size 1 that the kernel does not see; the index map gives the index."""

    def __repr__(self):
        return "Squeezed()"

    @property
    def block_size(self) -> int:
        return 1


squeezed = Squeezed()


@dataclasses.dataclass(frozen=True)
class BoundedSlice:
    """A block of at most ``block_size`` elements, the index map giving a ``pl.ds``."""

    block_size: int


@dataclasses.dataclass(frozen=True)
class Indirect:
    """A block whose elements are chosen by an index array (TPU only)."""

    block_size: int


BlockDim = Element | Squeezed | Blocked | BoundedSlice | Indirect


class RevisitMode(enum.Enum):
    """When a pipelined block may be fetched again."""

    NONE = "none"
    ALWAYS = "always"


@dataclasses.dataclass(frozen=True)
class Buffered:
    """How many buffers a pipelined block uses."""

    buffer_count: int
    use_lookahead: bool = False
    revisit: RevisitMode | None = None


class _NoBlockSpec:
    def __repr__(self):
        return "NoBlockSpec"


no_block_spec = _NoBlockSpec()


@dataclasses.dataclass
class BlockSpec:
    """Which block of an operand each kernel instance sees: ``block_shape`` (ints, or
    ``None``/``pl.squeezed``/``pl.Element(...)``) and ``index_map(*grid_indices)``
    giving the block's position. ``block_shape=None`` is the whole array."""

    block_shape: Sequence[BlockDim | int | None] | None = None
    index_map: Callable[..., Any] | None = None
    pipeline_mode: Buffered | None = None
    memory_space: Any | None = None

    def __init__(self, block_shape=None, index_map=None, pipeline_mode=None, *,
                 memory_space=None):  # fmt: skip
        self.block_shape = None if block_shape is None else tuple(block_shape)
        self.index_map = index_map
        self.pipeline_mode = pipeline_mode
        self.memory_space = memory_space


def block_dims(block_shape) -> tuple:
    """``block_shape`` with ints as ``Blocked`` and ``None`` as ``Squeezed``."""
    out = []
    for d in block_shape:
        if d is None:
            out.append(squeezed)
        elif isinstance(d, (int, np.integer)) and not isinstance(d, bool):
            out.append(Blocked(int(d)))
        elif isinstance(d, (Blocked, Element, Squeezed, BoundedSlice, Indirect)):
            out.append(d)
        else:
            raise ValueError(f"Unsupported block dimension type: {type(d)}")
    return tuple(out)


@dataclasses.dataclass
class GridSpec:
    """The grid and the block specs of a ``pallas_call``, given together."""

    grid: Any = ()
    in_specs: Any = no_block_spec
    out_specs: Any = no_block_spec
    scratch_shapes: Any = ()
    grid_names: tuple | None = None

    def __init__(self, grid=(), in_specs=no_block_spec, out_specs=no_block_spec,
                 scratch_shapes=()):  # fmt: skip
        self.grid = grid
        self.grid_names = None
        self.in_specs = in_specs
        self.out_specs = out_specs
        self.scratch_shapes = (
            tuple(scratch_shapes) if isinstance(scratch_shapes, list) else (scratch_shapes)
        )


# ---------------------------------------------------------------- memory


class MemorySpace(enum.Enum):
    """Where a kernel's buffer lives."""

    ANY = "any"
    DEFAULT = "default"
    ERROR = "error"
    INDEX = "index"
    KEY = "key"
    HOST = "host"

    def __str__(self):
        return self.value

    def __call__(self, shape: tuple[int, ...], dtype) -> MemoryRef:
        return MemoryRef(ShapedArray(tuple(shape), dtypes.canonicalize_dtype(dtype)), self)


ANY = MemorySpace.ANY
HOST = MemorySpace.HOST


@dataclasses.dataclass(frozen=True)
class MemoryRef:
    """The type of a scratch buffer: an array type in a memory space."""

    inner_aval: Any
    memory_space: Any

    @property
    def shape(self):
        return self.inner_aval.shape

    @property
    def dtype(self):
        return self.inner_aval.dtype

    def get_array_aval(self):
        return self.inner_aval

    def get_ref_aval(self) -> AbstractRef:
        return AbstractRef(self.inner_aval, self.memory_space)


@dataclasses.dataclass(frozen=True)
class semaphore:
    """The dtype of a semaphore (TPU and Mosaic GPU only)."""


class DeviceIdType(enum.Enum):
    """How a remote device is named: by mesh coordinates or by logical id."""

    MESH = "mesh"
    LOGICAL = "logical"


# ---------------------------------------------------------------- call parameters


@dataclasses.dataclass(frozen=True)
class CostEstimate:
    """What a kernel costs, for the compiler's scheduling."""

    flops: int
    transcendentals: int
    bytes_accessed: int
    remote_bytes_transferred: int = 0

    def to_json(self) -> bytes:
        return (
            f'{{"flops": {self.flops}, "transcendentals": {self.transcendentals}, '
            f'"bytes_accessed": {self.bytes_accessed}}}'
        ).encode("ascii")


class CompilerParams(Protocol):
    """What every backend's compiler params have: the backend's name."""

    BACKEND: Any

    def replace(self, **changes) -> CompilerParams: ...
