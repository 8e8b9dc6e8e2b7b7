"""JAX 0.10.2 exports its modules with Shardy (``sdy``) sharding annotations, where
lamina's partitioned programs use GSPMD's (``mhlo.sharding``). Before such a module is
called from a lamina program its annotations are rewritten as GSPMD's: meshes dropped,
argument and result shardings as ``mhlo.sharding`` attributes, sharding constraints as
``@Sharding`` custom calls."""

from __future__ import annotations

import re

from lamina.interpreters import mlir
from lamina.sharding import AbstractMesh, NamedSharding, PartitionSpec

__all__ = ["shardy_to_gspmd"]

_MESH_AXIS = re.compile(r'"([^"]+)"\s*=\s*(\d+)')
_SHARDING = re.compile(r"^#sdy\.sharding<@([\w.$-]+),\s*\[(.*)\]\s*>$", re.S)
_DIM = re.compile(r"\{([^}]*)\}")
_AXIS = re.compile(r'"([^"]+)"')


def _unsupported(what: str) -> NotImplementedError:
    return NotImplementedError(f"calling an export whose Shardy annotations use {what}")


def _mesh(op) -> AbstractMesh:
    text = str(op.attributes["mesh"])
    if "device_ids" in text:
        raise _unsupported(f"a mesh with explicit device ids ({text})")
    axes = _MESH_AXIS.findall(text)
    return AbstractMesh(tuple(int(s) for _, s in axes), tuple(n for n, _ in axes))


def _hlo_text(attr, meshes: dict, ndim: int) -> str:
    """The GSPMD sharding text of a ``#sdy.sharding`` attribute of a rank-``ndim`` value."""
    text = str(attr)
    m = _SHARDING.match(text)
    if m is None or m.group(1) not in meshes:
        raise _unsupported(f"the sharding {text}")
    entries = []
    for dim in _DIM.findall(m.group(2)):
        if ":" in dim:
            raise _unsupported(f"sub-axes ({text})")
        names = tuple(_AXIS.findall(dim))
        entries.append(None if not names else names[0] if len(names) == 1 else names)
    sharding = NamedSharding(meshes[m.group(1)], PartitionSpec(*entries))
    return str(sharding._to_xla_hlo_sharding(ndim))


def _ndim(t) -> int:
    return mlir.ir.RankedTensorType(t).rank


def _convert_attrs(func, key: str, types, meshes) -> None:
    if key not in func.attributes:
        return
    dicts = []
    for d, t in zip(mlir.ir.ArrayAttr(func.attributes[key]), types, strict=True):
        entries = {a.name: a.attr for a in mlir.ir.DictAttr(d)}
        sdy = entries.pop("sdy.sharding", None)
        if sdy is not None:
            entries["mhlo.sharding"] = mlir.ir.StringAttr.get(_hlo_text(sdy, meshes, _ndim(t)))
        dicts.append(mlir.ir.DictAttr.get(entries))
    func.attributes[key] = mlir.ir.ArrayAttr.get(dicts)


def _walk(op, found: list) -> None:
    for region in op.regions:
        for block in region:
            for inner in block:
                found.append(inner.operation)
                _walk(inner.operation, found)


def shardy_to_gspmd(module) -> None:
    """Rewrites ``module``'s Shardy annotations (in place, under its context) as
    GSPMD's; ``NotImplementedError`` for Shardy operations other than meshes and
    sharding constraints."""
    top = list(module.body.operations)
    meshes = {
        mlir.ir.StringAttr(op.attributes["sym_name"]).value: _mesh(op)
        for op in top
        if op.operation.name == "sdy.mesh"
    }
    if not meshes:
        return
    ops: list = []
    _walk(module.operation, ops)
    for op in ops:
        if op.name == "sdy.sharding_constraint":
            value = op.operands[0]
            hlo = _hlo_text(op.attributes["sharding"], meshes, _ndim(value.type))
            with mlir.ir.InsertionPoint(op), op.location:
                call = mlir.hlo.CustomCallOp.build_generic(
                    results=[value.type],
                    operands=[value],
                    attributes={
                        "call_target_name": mlir.ir.StringAttr.get("Sharding"),
                        "backend_config": mlir.ir.StringAttr.get(""),
                        "mhlo.sharding": mlir.ir.StringAttr.get(hlo),
                    },
                )
            op.results[0].replace_all_uses_with(call.result)
            op.erase()
        elif op.name.startswith("sdy.") and op.name != "sdy.mesh":
            raise _unsupported(f"the operation {op.name}")
    for op in top:
        if op.operation.name == "func.func":
            ftype = mlir.ir.FunctionType(mlir.ir.TypeAttr(op.attributes["function_type"]).value)
            _convert_attrs(op, "arg_attrs", ftype.inputs, meshes)
            _convert_attrs(op, "res_attrs", ftype.results, meshes)
        elif op.operation.name == "sdy.mesh":
            op.operation.erase()
