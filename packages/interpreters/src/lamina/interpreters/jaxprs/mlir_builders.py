"""Small builders over jaxlib's MLIR bindings that lowering rules share.

Everything here emits at the current ``ir.InsertionPoint`` inside the current
``ir.Context`` and ``ir.Location`` (the lowering sets all three up): types for abstract
values, constants, broadcasts and conversions.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from lamina.interpreters.core.mlir_bindings import chlo, func, ir, jax_mlir_ext, sdy, stablehlo
from lamina.interpreters.jaxprs import dim_values
from lamina.ir import AbstractToken, ShapedArray, dtypes, physical_aval

__all__ = [
    "broadcast_in_dim",
    "broadcast_to",
    "cached_attribute",
    "constant",
    "convert",
    "dtype_to_ir_type",
    "elementwise",
    "i64_array",
    "iota",
    "ir_type",
    "ir_types",
    "lowering_context",
    "make_context",
    "operation",
    "reshape",
]

_registry: ir.DialectRegistry | None = None


def make_context() -> ir.Context:
    """A fresh MLIR context with the func, stablehlo, chlo and sdy dialects (and the other
    upstream dialects jaxlib registers) loaded."""
    global _registry
    if _registry is None:
        _registry = ir.DialectRegistry()
        jax_mlir_ext.register_dialects(_registry)
    context = ir.Context()
    context.append_dialect_registry(_registry)
    context.load_all_available_dialects()
    stablehlo.register_dialect(context)
    chlo.register_dialect(context)
    sdy.register_dialect(context)  # Shardy attributes, in modules lamina.export reads
    return context


class _ContextCaches:
    """The types and attributes the builders made in one context, by what they stand
    for (a module's lowering asks for the same few thousands of times), and, for a
    lowering context, how many modules and bytes of constants it has served."""

    __slots__ = ("attributes", "constant_bytes", "context", "modules", "scalars", "types")

    def __init__(self, context: ir.Context | None):
        self.context = context
        self.types: dict[tuple, ir.Type] = {}  # (shape, dtype) -> tensor type
        self.scalars: dict[tuple, tuple[ir.Attribute, ir.Type]] = {}  # (dtype, bytes)
        self.attributes: dict[Any, ir.Attribute] = {}  # see cached_attribute
        self.modules = 0
        self.constant_bytes = 0


class _ThreadCaches(threading.local):
    """Per thread: the caches of its lowering context, and of the context the builders
    last ran in (usually the same). Holders refer to their context, never the other
    way round: a context holding its own types would be a cycle that keeps it alive."""

    def __init__(self):
        self.lowering: _ContextCaches | None = None
        self.current = _ContextCaches(None)


_thread = _ThreadCaches()


def _caches() -> _ContextCaches:
    """The caches of the current context (the hot builders check ``_thread.current``
    inline and call this only when the context changed)."""
    caches = _thread.current
    context = ir.Context.current
    if caches.context is not context:
        lowering = _thread.lowering
        if lowering is not None and lowering.context is context:
            caches = lowering
        else:
            caches = _ContextCaches(context)
        _thread.current = caches
    return caches


# Making a context and loading its dialects costs about 2 ms, as much as lowering a
# small program: lowerings share one context per thread (a module keeps its context
# alive). Its uniqued attributes (constants above all) live as long as it does, so a
# context serves a bounded number of modules and bytes of constants, then a new one
# takes over.
_CONTEXT_MODULES = 100
_CONTEXT_CONSTANT_BYTES = 16 << 20


def lowering_context() -> ir.Context:
    """The calling thread's context for a new module (see ``_CONTEXT_MODULES``)."""
    caches = _thread.lowering
    if (
        caches is None
        or caches.modules >= _CONTEXT_MODULES
        or caches.constant_bytes >= _CONTEXT_CONSTANT_BYTES
    ):
        caches = _thread.lowering = _thread.current = _ContextCaches(make_context())
    caches.modules += 1
    return caches.context


def _signless(bits):
    return lambda: ir.IntegerType.get_signless(bits)


def _unsigned(bits):
    return lambda: ir.IntegerType.get_unsigned(bits)


def _named(type_name):
    # ``ir`` loads on first use, so the type class is looked up when the type is made.
    return lambda: getattr(ir, type_name).get()


def _complex(type_name):
    return lambda: ir.ComplexType.get(getattr(ir, type_name).get())


# numpy dtype -> function making the MLIR element type (types belong to a context, so
# they are made on demand inside the current one).
_ELEMENT_TYPES: dict[np.dtype, Any] = {
    np.dtype(np.bool_): _signless(1),
    np.dtype(ml_dtypes.int2): _signless(2),
    np.dtype(ml_dtypes.int4): _signless(4),
    np.dtype(np.int8): _signless(8),
    np.dtype(np.int16): _signless(16),
    np.dtype(np.int32): _signless(32),
    np.dtype(np.int64): _signless(64),
    np.dtype(ml_dtypes.uint2): _unsigned(2),
    np.dtype(ml_dtypes.uint4): _unsigned(4),
    np.dtype(np.uint8): _unsigned(8),
    np.dtype(np.uint16): _unsigned(16),
    np.dtype(np.uint32): _unsigned(32),
    np.dtype(np.uint64): _unsigned(64),
    np.dtype(np.float16): _named("F16Type"),
    np.dtype(np.float32): _named("F32Type"),
    np.dtype(np.float64): _named("F64Type"),
    np.dtype(ml_dtypes.bfloat16): _named("BF16Type"),
    np.dtype(np.complex64): _complex("F32Type"),
    np.dtype(np.complex128): _complex("F64Type"),
    np.dtype(ml_dtypes.float4_e2m1fn): _named("Float4E2M1FNType"),
    np.dtype(ml_dtypes.float6_e2m3fn): _named("Float6E2M3FNType"),
    np.dtype(ml_dtypes.float6_e3m2fn): _named("Float6E3M2FNType"),
    np.dtype(ml_dtypes.float8_e3m4): _named("Float8E3M4Type"),
    np.dtype(ml_dtypes.float8_e4m3): _named("Float8E4M3Type"),
    np.dtype(ml_dtypes.float8_e4m3b11fnuz): _named("Float8E4M3B11FNUZType"),
    np.dtype(ml_dtypes.float8_e4m3fn): _named("Float8E4M3FNType"),
    np.dtype(ml_dtypes.float8_e4m3fnuz): _named("Float8E4M3FNUZType"),
    np.dtype(ml_dtypes.float8_e5m2): _named("Float8E5M2Type"),
    np.dtype(ml_dtypes.float8_e5m2fnuz): _named("Float8E5M2FNUZType"),
    np.dtype(ml_dtypes.float8_e8m0fnu): _named("Float8E8M0FNUType"),
}


def _is_float0(dtype) -> bool:
    return getattr(dtypes, "float0", None) is not None and dtype == dtypes.float0


def dtype_to_ir_type(dtype) -> ir.Type:
    """The MLIR element type of a dtype: bool is ``i1``, unsigned ``ui32``, and so on."""
    dtype = np.dtype(dtype)
    if _is_float0(dtype):  # tangents of integers: carried as booleans
        dtype = np.dtype(np.bool_)
    try:
        make = _ELEMENT_TYPES[dtype]
    except KeyError:
        raise TypeError(f"no MLIR type for dtype {dtype}") from None
    return make()


def operation(name: str, result_types: Sequence[ir.Type], operands: Sequence[ir.Value],
              attributes: dict | None = None, regions: int = 0) -> ir.Operation:  # fmt: skip
    """The operation ``name`` (``stablehlo.add``) made in one call to the bindings: the
    generated builders (``stablehlo.add(x, y)``) spend a few microseconds of Python per
    operation, which the ops a lowering makes most add up to much of its time."""
    return ir.Operation.create(name, result_types, operands, attributes, regions=regions)


def elementwise(name: str, *operands: ir.Value) -> ir.Value:
    """The result of the elementwise operation ``name``, of its first operand's type."""
    return ir.Operation.create(name, [operands[0].type], operands).result


def cached_attribute(key: Any, make: Any) -> ir.Attribute:
    """The attribute ``make()`` made for ``key`` (hashable, naming what it holds) in the
    current context, made once per context."""
    attributes = _caches().attributes
    try:
        found = attributes.get(key)
    except TypeError:  # unhashable: made every time
        return make()
    if found is None:
        found = attributes[key] = make()
    return found


def i64_array(values: Sequence[int]) -> ir.Attribute:
    """A ``DenseI64ArrayAttr`` (``array<i64: 0, 1>``), made once per context."""
    key = ("i64", tuple(values))
    caches = _thread.current
    if caches.context is not ir.Context.current:
        caches = _caches()
    found = caches.attributes.get(key)
    if found is None:
        found = caches.attributes[key] = ir.DenseI64ArrayAttr.get(list(key[1]))
    return found


def _broadcast(type_: ir.Type, value: ir.Value, dims: Sequence[int]) -> ir.Value:
    attributes = {"broadcast_dimensions": i64_array(dims)}
    return ir.Operation.create("stablehlo.broadcast_in_dim", [type_], [value], attributes).result


def _tensor_type(shape: tuple, dtype: np.dtype) -> ir.Type:
    """``tensor<...>`` of a static ``shape`` and a NumPy ``dtype``, from the cache."""
    types = _caches().types
    found = types.get((shape, dtype))
    if found is None:
        found = ir.RankedTensorType.get(dim_values.ir_shape(shape), dtype_to_ir_type(dtype))
        types[(shape, dtype)] = found
    return found


def ir_type(aval) -> ir.Type:
    """``tensor<...>`` for a ShapedArray, ``!stablehlo.token`` for a token."""
    if isinstance(aval, ShapedArray):
        key = (aval.shape, aval.dtype)
        caches = _thread.current
        if caches.context is not ir.Context.current:
            caches = _caches()
        found = caches.types.get(key)
        if found is None:
            if not isinstance(aval.dtype, np.dtype):  # an extended dtype: its physical data
                aval = physical_aval(aval)
            found = ir.RankedTensorType.get(
                dim_values.ir_shape(aval.shape), dtype_to_ir_type(aval.dtype)
            )
            caches.types[key] = found
        return found
    if isinstance(aval, AbstractToken):
        return stablehlo.TokenType.get()
    raise TypeError(f"cannot lower abstract value {aval!r} to an MLIR type")


def ir_types(avals: Sequence[Any]) -> list[ir.Type]:
    return [ir_type(a) for a in avals]


def _dense_attr(x: np.ndarray) -> ir.Attribute:
    if x.ndim == 0:  # scalars (literals, mostly) recur: made once per context
        key = (x.dtype, x.tobytes())
        scalars = _caches().scalars
        found = scalars.get(key)
        if found is None:
            attr = _new_dense_attr(x)
            found = scalars[key] = (attr, attr.type)
        return found[0]
    return _new_dense_attr(x)


def _new_dense_attr(x: np.ndarray) -> ir.Attribute:
    _caches().constant_bytes += x.nbytes
    x = np.ascontiguousarray(x).reshape(x.shape)  # ascontiguousarray makes 0-d 1-d
    return ir.DenseElementsAttr.get(x, type=dtype_to_ir_type(x.dtype), shape=x.shape)


def constant(value, aval: ShapedArray | None = None) -> ir.Value:
    """A ``stablehlo.constant`` holding ``value`` (as ``aval``'s dtype when given).

    Arrays with zero strides (``np.broadcast_to``, say) are emitted as their smaller
    distinct part broadcast with ``stablehlo.broadcast_in_dim``.
    """
    if isinstance(aval, AbstractToken):
        return stablehlo.create_token()
    dtype = None if aval is None else aval.dtype
    if _is_float0(dtype):
        dtype = np.dtype(np.bool_)
    x = np.asarray(value, dtype=dtype)
    if not x.shape and x.dtype.kind != "V":  # a scalar (literals, mostly): the fast path
        key = (x.dtype, x.tobytes())
        caches = _thread.current
        if caches.context is not ir.Context.current:
            caches = _caches()
        found = caches.scalars.get(key)
        if found is None:
            attr = _new_dense_attr(x)
            found = caches.scalars[key] = (attr, attr.type)
        return ir.Operation.create("stablehlo.constant", [found[1]], [], {"value": found[0]}).result
    if _is_float0(x.dtype):
        x = np.zeros(x.shape, np.bool_)
    if x.size > 0 and 0 in x.strides:
        kept = [ax for ax in range(x.ndim) if x.strides[ax] != 0]
        core = x[tuple(slice(None) if ax in kept else 0 for ax in range(x.ndim))]
        out_type = ir.RankedTensorType.get(x.shape, dtype_to_ir_type(x.dtype))
        return _broadcast(out_type, _constant(_dense_attr(core)), kept)
    return _constant(_dense_attr(x))


def _constant(attr: ir.Attribute) -> ir.Value:
    return ir.Operation.create("stablehlo.constant", [attr.type], [], {"value": attr}).result


def broadcast_in_dim(value: ir.Value, aval_out: ShapedArray, dims: Sequence[int]) -> ir.Value:
    """``stablehlo.broadcast_in_dim``: operand dimension i becomes result dimension
    ``dims[i]``; ``stablehlo.dynamic_broadcast_in_dim`` to a symbolic shape."""
    if not dim_values.is_static_shape(aval_out.shape):
        sizes = dim_values.shape_tensor(aval_out.shape)
        return stablehlo.dynamic_broadcast_in_dim(ir_type(aval_out), value, sizes, list(dims))
    return _broadcast(ir_type(aval_out), value, dims)


def reshape(value: ir.Value, aval_out: ShapedArray) -> ir.Value:
    """``stablehlo.reshape`` to ``aval_out``'s shape; ``stablehlo.dynamic_reshape`` to a
    symbolic one."""
    if not dim_values.is_static_shape(aval_out.shape):
        sizes = dim_values.shape_tensor(aval_out.shape)
        return stablehlo.dynamic_reshape(ir_type(aval_out), value, sizes)
    return ir.Operation.create("stablehlo.reshape", [ir_type(aval_out)], [value]).result


def iota(aval_out: ShapedArray, dimension: int) -> ir.Value:
    """``stablehlo.iota`` along ``dimension`` (``dynamic_iota`` for a symbolic shape)."""
    if not dim_values.is_static_shape(aval_out.shape):
        sizes = dim_values.shape_tensor(aval_out.shape)
        return stablehlo.dynamic_iota(ir_type(aval_out), sizes, dimension)
    return stablehlo.iota(ir_type(aval_out), dimension)


def broadcast_to(value: ir.Value, aval_in: ShapedArray, shape: Sequence[int]) -> ir.Value:
    """Broadcast NumPy-style (trailing dimensions aligned) to ``shape``; returns
    ``value`` itself when its shape is already ``shape``."""
    shape = tuple(shape)
    if tuple(aval_in.shape) == shape:
        return value
    if aval_in.ndim > len(shape):
        raise ValueError(f"cannot broadcast shape {aval_in.shape} to {shape}")
    offset = len(shape) - aval_in.ndim
    dims = list(range(offset, len(shape)))
    if isinstance(aval_in.dtype, np.dtype) and dim_values.is_static_shape(shape):
        return _broadcast(_tensor_type(shape, aval_in.dtype), value, dims)
    return broadcast_in_dim(value, aval_in.update(shape=shape), dims)


def convert(value: ir.Value, aval_in: ShapedArray, aval_out: ShapedArray) -> ir.Value:
    """``stablehlo.convert`` between element types; no op when the dtypes agree."""
    if np.dtype(aval_in.dtype) == np.dtype(aval_out.dtype):
        return value
    out_type = ir_type(aval_out.update(shape=aval_in.shape))
    return ir.Operation.create("stablehlo.convert", [out_type], [value]).result


def func_type(in_avals: Sequence[Any], out_avals: Sequence[Any]) -> ir.FunctionType:
    return ir.FunctionType.get(ir_types(in_avals), ir_types(out_avals))


def return_op(values: Sequence[ir.Value]) -> None:
    func.ReturnOp(list(values))


def sharding_op(value: ir.Value, aval: Any, hlo_sharding: Any, unspecified_dims=()) -> ir.Value:
    """``value`` annotated with a GSPMD sharding (``hlo_sharding``, an ``HloSharding``):
    the ``@Sharding`` custom call that XLA's SPMD partitioner reads as a layout
    constraint; ``unspecified_dims`` are dimensions it may lay out as it likes."""
    attributes = {
        "call_target_name": ir.StringAttr.get("Sharding"),
        "backend_config": ir.StringAttr.get(""),
        "mhlo.sharding": ir.StringAttr.get(str(hlo_sharding)),
    }
    if unspecified_dims:
        dims = ", ".join(str(d) for d in sorted(unspecified_dims))
        attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(
            {"xla.sdy.unspecified_dims": ir.StringAttr.get(f"[{dims}]")}
        )
    op = stablehlo.CustomCallOp.build_generic(
        results=[ir_type(aval)], operands=[value], attributes=attributes
    )
    return op.result
