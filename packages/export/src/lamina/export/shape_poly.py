"""Shape polymorphism for export: symbolic dimensions (``symbolic_shape``,
``SymbolicScope``, ``is_symbolic_dim``) and argument specifications with symbolic
shapes (``symbolic_args_specs``). The expressions themselves are ``lamina.ir``'s,
since abstract values hold them."""

from __future__ import annotations

from lamina.interpreters import ShapeDtypeStruct
from lamina.ir import (
    DimExpr,
    InconclusiveDimensionOperation,
    SymbolicScope,
    is_symbolic_dim,
    symbolic_shape,
    tree_util,
)

__all__ = [
    "DimExpr",
    "InconclusiveDimensionOperation",
    "SymbolicScope",
    "is_symbolic_dim",
    "symbolic_args_specs",
    "symbolic_shape",
]


def _shape_and_dtype(a):
    if isinstance(a, ShapeDtypeStruct):
        return a.shape, a.dtype
    try:
        return tuple(a.shape), a.dtype
    except AttributeError:
        msg = f"symbolic_args_specs needs arrays or ShapeDtypeStructs, got {a!r}"
        raise TypeError(msg) from None


def symbolic_args_specs(args, shapes_specs, constraints=(), scope=None):
    """ShapeDtypeStructs like ``args`` (a pytree of arrays or ShapeDtypeStructs) with
    the shapes of ``shapes_specs``: None, one specification string for all, or a
    pytree prefix of ``args`` holding specifications (placeholders ``_`` and ``...``
    take the arguments' own dimensions)."""
    leaves, treedef = tree_util.tree_flatten(args)
    if isinstance(args, tuple) and isinstance(shapes_specs, list):
        shapes_specs = tuple(shapes_specs)
    try:
        specs = tree_util.broadcast_prefix(shapes_specs, args, is_leaf=lambda x: x is None)
    except ValueError:
        errors = tree_util.prefix_errors(shapes_specs, args, is_leaf=lambda x: x is None)
        raise errors[0]("export.symbolic_args_specs shapes_specs") from None
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot use both `scope` and `constraints`")
    out = []
    for leaf, spec in zip(leaves, specs, strict=True):
        shape, dtype = _shape_and_dtype(leaf)
        out.append(ShapeDtypeStruct(symbolic_shape(spec, like=shape, scope=scope), dtype))
    return treedef.unflatten(out)
