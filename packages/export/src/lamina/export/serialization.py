"""The bytes of a serialized export: JAX's flatbuffer schema (``Exported`` table,
schema version 11 read, version 3 written as JAX 0.10.2 writes it), field for field,
so that JAX and lamina read each other's exports.

``write_exported`` takes anything with the attributes of an ``Exported``;
``read_exported`` returns its fields as a dict (``vjp`` holding the fields of the
serialized VJP, or None), checking the structure as it reads: malformed bytes raise
``ValueError``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina.export.flatbuffer import Builder, FlatbufferError, Table, root_table
from lamina.export.pytree_serialization import read_pytreedef, write_array, write_pytreedef
from lamina.export.safety_checks import DisabledSafetyCheck
from lamina.export.sharding_serialization import (
    read_abstract_mesh,
    read_named_sharding,
    read_sharding,
    write_abstract_mesh,
    write_named_sharding,
    write_sharding,
)
from lamina.ir import Effect, ShapedArray, dtypes
from lamina.sharding import AxisType

__all__ = ["read_exported", "write_exported"]

# The DType enum of the schema.
_DTYPE_KINDS = {
    np.dtype(np.bool_): 0,
    np.dtype(np.int8): 1,
    np.dtype(np.int16): 2,
    np.dtype(np.int32): 3,
    np.dtype(np.int64): 4,
    np.dtype(np.uint8): 5,
    np.dtype(np.uint16): 6,
    np.dtype(np.uint32): 7,
    np.dtype(np.uint64): 8,
    np.dtype(np.float16): 9,
    np.dtype(np.float32): 10,
    np.dtype(np.float64): 11,
    np.dtype(np.complex64): 12,
    np.dtype(np.complex128): 13,
    np.dtype(dtypes.bfloat16): 14,
    np.dtype(dtypes.int4): 15,
    np.dtype(dtypes.uint4): 16,
    np.dtype(dtypes.float8_e4m3b11fnuz): 17,
    np.dtype(dtypes.float8_e4m3fn): 18,
    np.dtype(dtypes.float8_e4m3fnuz): 19,
    np.dtype(dtypes.float8_e5m2): 20,
    np.dtype(dtypes.float8_e5m2fnuz): 21,
    np.dtype(dtypes.float0): 22,
    np.dtype(dtypes.float8_e4m3): 23,
    np.dtype(dtypes.float8_e3m4): 24,
    np.dtype(dtypes.float8_e8m0fnu): 25,
    np.dtype(dtypes.float4_e2m1fn): 26,
}
_KIND_DTYPES = {k: d for d, k in _DTYPE_KINDS.items()}
_MEMORY_DEVICE = 1  # MemorySpace.Device
_DISABLED_PLATFORM, _DISABLED_CUSTOM_CALL = 0, 1  # DisabledSafetyCheckKind
# The version written: JAX 0.10.2 writes 3, which every reader it supports accepts.
_WRITTEN_SERIALIZATION_VERSION = 3
_MAX_VJP_DEPTH = 64

# Fields of the Exported table.
(
    _VERSION, _FUN_NAME, _IN_TREE, _IN_AVALS, _OUT_TREE, _OUT_AVALS, _NR_DEVICES_SHORT,
    _IN_SHARDINGS, _OUT_SHARDINGS, _PLATFORMS, _ORDERED_EFFECTS, _UNORDERED_EFFECTS,
    _DISABLED_CHECKS, _MLIR_MODULE, _CALLING_CONVENTION, _KEPT_VAR_IDX,
    _USES_GLOBAL_CONSTANTS, _VJP, _NR_DEVICES, _UNIQUE_AVALS, _UNIQUE_MESHES,
    _UNIQUE_NAMED_SHARDINGS, _IN_AVALS_IDXS, _OUT_AVALS_IDXS, _IN_SHARDINGS_IDXS,
    _OUT_SHARDINGS_IDXS,
) = range(26)  # fmt: skip
# Fields of the AbstractValue, Effect and DisabledSafetyCheck tables.
_AVAL_KIND, _AVAL_SHAPE, _AVAL_DTYPE, _AVAL_MEMORY = range(4)
_CHECK_KIND, _CHECK_TARGET = range(2)


# ---------------------------------------------------------------------- writing


def _aval_key(aval, sharding=None) -> tuple:
    """What tells avals apart in the table of unique avals; JAX's avals on meshes with
    explicit axes carry their sharding, so it is part of the key there."""
    key = (tuple(aval.shape), np.dtype(aval.dtype), bool(getattr(aval, "weak_type", False)))
    if sharding is not None and AxisType.Explicit in sharding.mesh.axis_types:
        key += (sharding.mesh.abstract_mesh, sharding.spec)
    return key


def _write_aval(b: Builder, aval) -> int:
    try:
        kind = _DTYPE_KINDS[np.dtype(aval.dtype)]
    except (KeyError, TypeError):
        raise NotImplementedError(f"serializing values of dtype {aval.dtype}") from None
    shape = b.create_offset_vector([b.create_string(str(d)) for d in aval.shape])
    b.start_table(4)
    b.add_scalar(_AVAL_KIND, "b", 0, 0)  # shapedArray
    b.add_offset(_AVAL_SHAPE, shape)
    b.add_scalar(_AVAL_DTYPE, "b", kind, 0)
    b.add_scalar(_AVAL_MEMORY, "b", _MEMORY_DEVICE, 0)
    return b.end_table()


def _check_nullary(eff: Effect) -> None:
    try:
        replica = type(eff)()
    except Exception:
        raise NotImplementedError(
            f"Effect {eff} must have a nullary constructor to be serializable"
        ) from None
    if eff != replica or hash(eff) != hash(replica):
        raise NotImplementedError(
            f"Effect {eff} must have a nullary class constructor that produces an "
            "equal effect object."
        )


def _write_effect(b: Builder, eff: Effect) -> int:
    _check_nullary(eff)
    name = b.create_string(str(type(eff)))
    b.start_table(1)
    b.add_offset(0, name)
    return b.end_table()


def _write_disabled_check(b: Builder, check: DisabledSafetyCheck) -> int:
    target = check.is_custom_call()
    if target is not None:
        kind, target_off = _DISABLED_CUSTOM_CALL, b.create_string(target)
    elif check == DisabledSafetyCheck.platform():
        kind, target_off = _DISABLED_PLATFORM, 0
    else:
        raise NotImplementedError(f"serializing DisabledSafetyCheck: {check}")
    b.start_table(2)
    b.add_scalar(_CHECK_KIND, "b", kind, 0)
    b.add_offset(_CHECK_TARGET, target_off)
    return b.end_table()


def _write(b: Builder, exp, vjp_order: int) -> int:
    # Children first, in the order JAX writes them, so the bytes are JAX's.
    fun_name = b.create_string(exp.fun_name)
    in_tree = write_pytreedef(b, exp.in_tree)
    in_avals = write_array(b, _write_aval, exp.in_avals)
    out_tree = write_pytreedef(b, exp.out_tree)
    out_avals = write_array(b, _write_aval, exp.out_avals)
    # The unique meshes and named shardings, in the order JAX numbers them.
    meshes: dict = {}
    shardings: dict = {}
    for s in itertools.chain(exp._in_named_shardings, exp._out_named_shardings):
        if s is not None:
            meshes.setdefault(s.mesh.abstract_mesh, len(meshes))
            shardings.setdefault(s, len(shardings))

    def sharding_table(b, s):
        return write_sharding(b, s, meshes)

    in_shardings = write_array(b, sharding_table, exp._in_named_shardings)
    out_shardings = write_array(b, sharding_table, exp._out_named_shardings)
    ordered = write_array(b, _write_effect, exp.ordered_effects)
    unordered = write_array(b, _write_effect, exp.unordered_effects)
    checks = write_array(b, _write_disabled_check, exp.disabled_safety_checks)
    platforms = write_array(b, Builder.create_string, exp.platforms)
    module = b.create_byte_vector(exp.mlir_module_serialized)
    kept = b.create_scalar_vector(exp.module_kept_var_idx, np.uint16)
    vjp = 0
    if vjp_order > 0:
        if not exp.has_vjp():
            raise ValueError(
                "serialization of an Exported that does not have vjps of high-enough order"
            )
        vjp = _write(b, exp.vjp(), vjp_order - 1)
    in_keys = list(map(_aval_key, exp.in_avals, exp._in_named_shardings))
    out_keys = list(map(_aval_key, exp.out_avals, exp._out_named_shardings))
    unique: dict[tuple, int] = {}
    unique_avals = []
    for k, a in zip(in_keys + out_keys, (*exp.in_avals, *exp.out_avals), strict=True):
        if k not in unique:
            unique[k] = len(unique_avals)
            unique_avals.append(a)
    unique_avals_off = write_array(b, _write_aval, unique_avals)
    meshes_off = write_array(b, write_abstract_mesh, meshes)
    named_shardings = write_array(
        b, lambda b, s: write_named_sharding(b, s, meshes), list(shardings)
    )
    in_idxs = b.create_scalar_vector([unique[k] for k in in_keys], np.uint32)
    out_idxs = b.create_scalar_vector([unique[k] for k in out_keys], np.uint32)

    def sharding_idxs(items):
        return b.create_scalar_vector(
            [0 if s is None else 1 + shardings[s] for s in items], np.uint32
        )

    in_sh_idxs = sharding_idxs(exp._in_named_shardings)
    out_sh_idxs = sharding_idxs(exp._out_named_shardings)

    b.start_table(26)
    b.add_scalar(_VERSION, "H", _WRITTEN_SERIALIZATION_VERSION, 0)
    b.add_offset(_FUN_NAME, fun_name)
    b.add_offset(_IN_TREE, in_tree)
    b.add_offset(_IN_AVALS, in_avals)
    b.add_offset(_OUT_TREE, out_tree)
    b.add_offset(_OUT_AVALS, out_avals)
    b.add_scalar(_NR_DEVICES, "I", exp.nr_devices, 0)
    b.add_offset(_IN_SHARDINGS, in_shardings)
    b.add_offset(_OUT_SHARDINGS, out_shardings)
    b.add_offset(_PLATFORMS, platforms)
    b.add_offset(_ORDERED_EFFECTS, ordered)
    b.add_offset(_UNORDERED_EFFECTS, unordered)
    b.add_offset(_DISABLED_CHECKS, checks)
    b.add_offset(_MLIR_MODULE, module)
    b.add_scalar(_CALLING_CONVENTION, "H", exp.calling_convention_version, 0)
    b.add_offset(_KEPT_VAR_IDX, kept)
    b.add_scalar(_USES_GLOBAL_CONSTANTS, "?", bool(exp.uses_global_constants), False)
    b.add_offset(_VJP, vjp)
    b.add_offset(_UNIQUE_AVALS, unique_avals_off)
    b.add_offset(_UNIQUE_MESHES, meshes_off)
    b.add_offset(_UNIQUE_NAMED_SHARDINGS, named_shardings)
    b.add_offset(_IN_AVALS_IDXS, in_idxs)
    b.add_offset(_OUT_AVALS_IDXS, out_idxs)
    b.add_offset(_IN_SHARDINGS_IDXS, in_sh_idxs)
    b.add_offset(_OUT_SHARDINGS_IDXS, out_sh_idxs)
    return b.end_table()


def write_exported(exp, vjp_order: int = 0) -> bytes:
    """The serialized bytes of ``exp`` with ``vjp_order`` orders of its VJP."""
    b = Builder(65536)
    return b.finish(_write(b, exp, vjp_order))


# ---------------------------------------------------------------------- reading


def _read_aval(t: Table, parse_shape: Callable[[Sequence[str]], tuple]) -> ShapedArray:
    kind = t.scalar(_AVAL_KIND, "b")
    if kind != 0:
        raise FlatbufferError(f"unknown abstract value kind {kind}")
    code = t.scalar(_AVAL_DTYPE, "b")
    if code not in _KIND_DTYPES:
        raise FlatbufferError(f"unknown dtype code {code}")
    memory = t.scalar(_AVAL_MEMORY, "b")
    if memory not in (0, _MEMORY_DEVICE):
        raise FlatbufferError(f"memory space {memory} is not supported")
    return ShapedArray(parse_shape(t.strings(_AVAL_SHAPE)), _KIND_DTYPES[code])


def _read_effect(t: Table) -> Effect:
    name = t.string(0)
    pending, seen = [Effect], set()
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        if str(cls) == name:
            try:
                return cls()
            except Exception:
                raise ValueError(
                    f"deserializing effect {name} that does not have a nullary class constructor"
                ) from None
        pending.extend(cls.__subclasses__())
    raise ValueError(f"cannot deserialize effect type {name}")


def _read_disabled_check(t: Table) -> DisabledSafetyCheck:
    kind = t.scalar(_CHECK_KIND, "b")
    if kind == _DISABLED_CUSTOM_CALL:
        return DisabledSafetyCheck.custom_call(t.string(_CHECK_TARGET) or "")
    if kind == _DISABLED_PLATFORM:
        return DisabledSafetyCheck.platform()
    raise ValueError(f"Cannot deserialize DisabledSafetyCheck with unknown kind: {kind}")


def _pick(what: str, items: list, idxs: list[int]) -> list:
    if any(i >= len(items) for i in idxs):
        raise FlatbufferError(f"an index of {what} is out of range")
    return [items[i] for i in idxs]


def _read_shardings(t: Table, n_in: int, n_out: int) -> tuple[list, list]:
    """The named sharding (or None) of each argument and result."""
    meshes = [read_abstract_mesh(m) for m in t.tables(_UNIQUE_MESHES)]
    unique = [read_named_sharding(s, meshes) for s in t.tables(_UNIQUE_NAMED_SHARDINGS)]
    found = []
    for idxs_slot, tables_slot, n in (
        (_IN_SHARDINGS_IDXS, _IN_SHARDINGS, n_in),
        (_OUT_SHARDINGS_IDXS, _OUT_SHARDINGS, n_out),
    ):
        idxs = t.scalars(idxs_slot, np.uint32)
        if idxs:
            sh = [None if i == 0 else _pick("shardings", unique, [i - 1])[0] for i in idxs]
        else:
            sh = [read_sharding(s, meshes) for s in t.tables(tables_slot)] or [None] * n
        if len(sh) != n:
            raise FlatbufferError("the shardings do not match the arguments or results")
        found.append(sh)
    return found[0], found[1]


def _read(t: Table, parse_shape, depth: int) -> dict[str, Any]:
    if depth > _MAX_VJP_DEPTH:
        raise FlatbufferError("VJPs nested too deeply")
    unique = [_read_aval(a, parse_shape) for a in t.tables(_UNIQUE_AVALS)]
    if t.scalars(_IN_AVALS_IDXS, np.uint32):
        in_avals = _pick("in_avals", unique, t.scalars(_IN_AVALS_IDXS, np.uint32))
    else:
        in_avals = [_read_aval(a, parse_shape) for a in t.tables(_IN_AVALS)]
    if t.scalars(_OUT_AVALS_IDXS, np.uint32):
        out_avals = _pick("out_avals", unique, t.scalars(_OUT_AVALS_IDXS, np.uint32))
    else:
        out_avals = [_read_aval(a, parse_shape) for a in t.tables(_OUT_AVALS)]
    kept = tuple(t.scalars(_KEPT_VAR_IDX, np.uint16))
    if any(i >= len(in_avals) for i in kept) or list(kept) != sorted(set(kept)):
        raise FlatbufferError("module_kept_var_idx does not index the inputs")
    in_shardings, out_shardings = _read_shardings(t, len(in_avals), len(out_avals))
    module = t.bytes(_MLIR_MODULE)
    if not module:
        raise FlatbufferError("the serialized export has no module")
    vjp = t.table(_VJP)
    return dict(
        fun_name=t.string(_FUN_NAME) or "",
        in_tree=read_pytreedef(t.table(_IN_TREE), in_avals),
        in_avals=tuple(in_avals),
        out_tree=read_pytreedef(t.table(_OUT_TREE), out_avals),
        out_avals=tuple(out_avals),
        _in_named_shardings=tuple(in_shardings),
        _out_named_shardings=tuple(out_shardings),
        nr_devices=t.scalar(_NR_DEVICES, "I") or t.scalar(_NR_DEVICES_SHORT, "h"),
        platforms=tuple(t.strings(_PLATFORMS)),
        ordered_effects=tuple(_read_effect(e) for e in t.tables(_ORDERED_EFFECTS)),
        unordered_effects=tuple(_read_effect(e) for e in t.tables(_UNORDERED_EFFECTS)),
        disabled_safety_checks=tuple(_read_disabled_check(c) for c in t.tables(_DISABLED_CHECKS)),
        mlir_module_serialized=module,
        calling_convention_version=t.scalar(_CALLING_CONVENTION, "H"),
        module_kept_var_idx=kept,
        uses_global_constants=bool(t.scalar(_USES_GLOBAL_CONSTANTS, "B")),
        vjp=None if vjp is None else _read(vjp, parse_shape, depth + 1),
    )


def read_exported(data: bytes, parse_shape: Callable[[Sequence[str]], tuple]) -> dict[str, Any]:
    """The fields of the export serialized in ``data``; ``parse_shape`` turns the
    dimensions of a shape, as strings, into the shape."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"deserialize takes bytes, got {type(data).__name__}")
    try:
        return _read(root_table(data), parse_shape, 0)
    except RecursionError:
        raise FlatbufferError("the serialized export is nested too deeply") from None
