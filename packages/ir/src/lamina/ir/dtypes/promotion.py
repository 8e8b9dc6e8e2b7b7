"""JAX's type-promotion lattice, over dtype names.

This module knows nothing about NumPy: every node of the lattice is a string, either the
``name`` of a dtype (``"int8"``, ``"bfloat16"``, ``"float8_e4m3fn"``, ...) or one of the
three *weak* nodes ``"int"``, ``"float"`` and ``"complex"`` that stand for Python scalars
(and for weakly typed values). :mod:`lamina.ir.dtypes` turns values and dtypes into
nodes, asks :func:`least_upper_bound` for the join, and turns the answer back into a
dtype; it re-exports everything public from here.

The lattice (``a -> b`` means "b is the next type above a")::

    bool -> int
    int  -> uint8, int8, and each 1/2/4-bit integer (which lead nowhere)
    uint8 -> uint16, int16        int8 -> int16 -> int32 -> int64 -> float
    uint16 -> uint32, int32       uint64 -> float
    uint32 -> uint64, int64       (with x64 off: uint32 -> uint64, int32)
    float -> bfloat16, float16, complex, and each 4/6/8-bit float (which lead nowhere)
    bfloat16 -> float32           float16 -> float32
    float32 -> float64, complex64 float64 -> complex128
    complex -> complex64 -> complex128

In ``strict`` mode only weak types promote: ``int`` sits below ``float`` and below every
integer dtype, ``float`` below ``complex`` and every floating dtype, ``complex`` below
both complex dtypes; two different dtypes never meet.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

__all__ = [
    "PROMOTION_MODES",
    "WEAK_NODES",
    "TypePromotionError",
    "lattice_nodes",
    "least_upper_bound",
]

PROMOTION_MODES = ("standard", "strict")

# The weak nodes: Python int, float and complex, and weakly typed values of those kinds.
WEAK_NODES = ("int", "float", "complex")

_SUBBYTE_INTS = ("uint1", "uint2", "uint4", "int1", "int2", "int4")
_FLOAT4 = ("float4_e2m1fn",)
_FLOAT6 = ("float6_e2m3fn", "float6_e3m2fn")
_FLOAT8 = (
    "float8_e3m4",
    "float8_e4m3",
    "float8_e8m0fnu",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
)
_NARROW_FLOATS = _FLOAT4 + _FLOAT6 + _FLOAT8
_INTS = (*_SUBBYTE_INTS, "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64")
_FLOATS = (*_NARROW_FLOATS, "bfloat16", "float16", "float32", "float64")
_COMPLEXES = ("complex64", "complex128")
_DTYPE_NODES = ("bool", *_INTS, *_FLOATS, *_COMPLEXES)


class TypePromotionError(ValueError):
    """Raised when two or more types have no implicit promotion path.

    A subclass of ``ValueError``, as in JAX.
    """


def _standard_edges(x64: bool) -> dict[str, tuple[str, ...]]:
    edges: dict[str, tuple[str, ...]] = {node: () for node in (*_DTYPE_NODES, *WEAK_NODES)}
    edges.update(
        {
            "bool": ("int",),
            "int": ("uint8", "int8", *_SUBBYTE_INTS),
            "uint8": ("uint16", "int16"),
            "uint16": ("uint32", "int32"),
            # With x64 off, uint32 and a signed integer meet at int32 rather than forming
            # an int64 from 32-bit inputs.
            "uint32": ("uint64", "int64" if x64 else "int32"),
            "uint64": ("float",),
            "int8": ("int16",),
            "int16": ("int32",),
            "int32": ("int64",),
            "int64": ("float",),
            "float": (*_NARROW_FLOATS, "bfloat16", "float16", "complex"),
            "bfloat16": ("float32",),
            "float16": ("float32",),
            "float32": ("float64", "complex64"),
            "float64": ("complex128",),
            "complex": ("complex64",),
            "complex64": ("complex128",),
        }
    )
    return edges


def _strict_edges() -> dict[str, tuple[str, ...]]:
    edges: dict[str, tuple[str, ...]] = {node: () for node in _DTYPE_NODES}
    edges["int"] = ("float", *_INTS)
    edges["float"] = ("complex", *_FLOATS)
    edges["complex"] = _COMPLEXES
    return edges


def _upper_bounds(edges: dict[str, tuple[str, ...]]) -> dict[str, frozenset[str]]:
    """Map each node to the set of nodes at or above it."""
    bounds: dict[str, frozenset[str]] = {}
    for start in edges:
        seen = {start}
        todo = [start]
        while todo:
            for above in edges[todo.pop()]:
                if above not in seen:
                    seen.add(above)
                    todo.append(above)
        bounds[start] = frozenset(seen)
    return bounds


_UPPER_BOUNDS = {
    ("standard", True): _upper_bounds(_standard_edges(x64=True)),
    ("standard", False): _upper_bounds(_standard_edges(x64=False)),
    ("strict", True): _upper_bounds(_strict_edges()),
    ("strict", False): _upper_bounds(_strict_edges()),
}


def lattice_nodes() -> tuple[str, ...]:
    """Every node of the lattice: the dtype names, then the weak nodes."""
    return (*_DTYPE_NODES, *WEAK_NODES)


def least_upper_bound(nodes: Iterable[str], *, mode: str = "standard", x64: bool) -> str:
    """The smallest node at or above every one of ``nodes``.

    Args:
      nodes: lattice nodes (dtype names or ``"int"``/``"float"``/``"complex"``).
      mode: ``"standard"`` or ``"strict"`` (``jax_numpy_dtype_promotion``).
      x64: whether 64-bit types are enabled.

    Raises:
      ValueError: a node is not part of the lattice (an extended dtype, say).
      TypePromotionError: the nodes have no common upper bound.
    """
    return _join(frozenset(nodes), mode, x64)


@functools.lru_cache(maxsize=1024)
def _join(nodes: frozenset[str], mode: str, x64: bool) -> str:
    try:
        bounds = _UPPER_BOUNDS[mode, x64]
    except KeyError:
        raise ValueError(
            f"unknown type promotion mode {mode!r}; expected one of {PROMOTION_MODES}"
        ) from None
    if not nodes:
        raise ValueError("least_upper_bound needs at least one type")
    for node in sorted(nodes):
        if node not in bounds:
            raise ValueError(
                f"dtype={node} cannot take part in type promotion; only boolean, integer, "
                "floating and complex types can. Convert it explicitly first."
            )
    common = frozenset.intersection(*(bounds[n] for n in nodes))
    # The join is the member of `common` that every other member lies above.
    least = [c for c in common if common <= bounds[c]]
    if len(least) == 1:
        return least[0]
    raise TypePromotionError(_no_path_message(sorted(nodes, key=_order), mode))


def _order(node: str) -> int:
    return lattice_nodes().index(node)


def _no_path_message(nodes: list[str], mode: str) -> str:
    shown = ", ".join(f"weak {n}" if n in WEAK_NODES else n for n in nodes)
    head = f"Input dtypes ({shown}) have no implicit type promotion path"
    if mode == "strict":
        return (
            f"{head} with jax_numpy_dtype_promotion='strict'. Cast the inputs to the "
            "dtype you want with x.astype(...), or use jax_numpy_dtype_promotion='standard'."
        )
    for group, what, target in (
        (_FLOAT8, "8-bit floats", "float32"),
        (_FLOAT6, "6-bit floats", "float32"),
        (_FLOAT4, "4-bit floats", "float32"),
        (_SUBBYTE_INTS, "1-, 2- and 4-bit integers", "int32"),
    ):
        if any(n in group for n in nodes):
            return (
                f"{head}: {what} never promote implicitly, so that no precision is "
                f"gained or lost by accident. Cast explicitly, e.g. x.astype('{target}')."
            )
    return f"{head}. Cast the inputs to the dtype you want with x.astype(...)."
