"""The compiled GPU lowering of ``pallas_call``: the kernel's Jaxpr as a Triton
module (jaxlib's Triton dialect bindings), called through the ``__gpu$xla.gpu.triton``
custom call, as JAX 0.10.2 emits it.

The module has one ``tt.func`` taking a pointer per input and output. The grid is the
launch grid (up to three axes: ``tt.get_program_id x/y/z``). A reference is a block
of an operand in global memory: reads and writes compute a tensor of pointers (the
block's start from the index map plus the element offsets times the array's strides)
and ``tt.load``/``tt.store`` them, masked where a block runs past the array's end.
Values are Triton tensors (or scalars); ``pl.when`` becomes ``scf.if``, ``fori_loop``
``scf.for`` (``scf.while`` with a traced bound). Primitives outside this set raise
``NotImplementedError`` naming them.
"""

from __future__ import annotations

import io
import math

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, scf, stablehlo
from jaxlib.mlir.dialects import math as mmath
from jaxlib.triton import dialect as tt

from lamina.interpreters import mlir_builders as mb
from lamina.ir import ClosedJaxpr, Literal, dtypes
from lamina.pallas.call.block_mapping import GridMapping

__all__ = ["lower_kernel_to_triton", "triton_call_lowering"]

_I32 = np.dtype(np.int32)


# ---------------------------------------------------------------- values and types


def _elem_type(dtype) -> ir.Type:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return ir.IntegerType.get_signless(1)
    if dtypes.issubdtype(dtype, np.integer):
        return ir.IntegerType.get_signless(dtype.itemsize * 8)
    return mb.dtype_to_ir_type(dtype)


def _type(shape, dtype) -> ir.Type:
    elem = _elem_type(dtype)
    return ir.RankedTensorType.get(list(shape), elem) if shape else elem


def _is_float(dtype) -> bool:
    return dtypes.issubdtype(np.dtype(dtype), np.floating)


def _is_signed(dtype) -> bool:
    return dtypes.issubdtype(np.dtype(dtype), np.signedinteger)


def _shape_of(v: ir.Value) -> tuple[int, ...]:
    return (
        tuple(ir.RankedTensorType(v.type).shape) if isinstance(v.type, ir.RankedTensorType) else ()
    )


def _const(value, dtype, shape=()):
    elem = _elem_type(dtype)
    if _is_float(dtype):
        attr = ir.FloatAttr.get(elem, float(value))
    else:
        attr = ir.IntegerAttr.get(elem, int(value))
    scalar = arith.constant(elem, attr)
    return _broadcast(scalar, shape)


def _broadcast(v: ir.Value, shape) -> ir.Value:
    """``v`` (a scalar, or a tensor of the same rank with 1s to stretch) as ``shape``."""
    shape = tuple(shape)
    have = _shape_of(v)
    if have == shape:
        return v
    elem = ir.RankedTensorType(v.type).element_type if have else v.type
    target = ir.RankedTensorType.get(list(shape), elem)
    if not have:
        return tt.splat(target, v)
    return tt.broadcast(target, v)


def _expand(v: ir.Value, axis: int) -> ir.Value:
    return tt.expand_dims(v, axis)


def _arange(size: int) -> ir.Value:
    return tt.make_range(ir.RankedTensorType.get([size], _elem_type(_I32)), 0, size)


def _along(v: ir.Value, axis: int, ndim: int) -> ir.Value:
    """A 1-D tensor placed along ``axis`` of an ``ndim``-D shape (other axes 1)."""
    for k in range(ndim):
        if k != axis:
            v = _expand(v, k)
    return v


# ---------------------------------------------------------------- references


class _Block:
    """A reference: the block of an operand in global memory that a kernel sees."""

    def __init__(self, ptr, bm, starts):
        self.ptr = ptr
        self.bm = bm
        self.starts = starts  # per array axis: the block's first element (i32 scalar)
        shape = bm.array_aval.shape
        self.strides = [math.prod(shape[k + 1 :]) for k in range(len(shape))]
        self.visible = [a for a, s in enumerate(bm.squeezed) if not s]

    def pointers(self, indexer, operands):
        """The pointers and mask of the elements ``ref[indexer]`` selects."""
        bm = self.bm
        dims = [bm.block_dims[a].block_size for a in self.visible]
        ops = iter(operands)
        per_axis = {}  # array axis -> (offset in block: scalar or 1-D, out axis or None)
        out_shape = []
        if indexer is None:
            for a, size in zip(self.visible, dims, strict=True):
                per_axis[a] = (_arange(size), len(out_shape), size)
                out_shape.append(size)
        else:
            if indexer.int_shape:
                raise NotImplementedError("Pallas GPU lowering: indexing with integer arrays")
            for a, axis in zip(self.visible, indexer.axes, strict=True):
                if not hasattr(axis, "size"):
                    per_axis[a] = (_as_i32(next(ops)), None, 1)
                    continue
                start = next(ops) if axis.start is None else _const(axis.start, _I32)
                idx = _arange(axis.size)
                if axis.stride != 1:
                    idx = arith.muli(idx, _const(axis.stride, _I32, (axis.size,)))
                idx = arith.addi(idx, _broadcast(_as_i32(start), (axis.size,)))
                per_axis[a] = (idx, len(out_shape), axis.size)
                out_shape.append(axis.size)
        n = len(out_shape)
        shape = tuple(out_shape)
        offset = _const(0, _I32, shape)
        mask = None
        array_shape = bm.array_aval.shape
        for a in range(len(array_shape)):
            start = self.starts[a]
            if a in per_axis:
                idx, out_axis, size = per_axis[a]
                if out_axis is None:
                    g = _broadcast(arith.addi(start, idx), shape)
                else:
                    g = arith.addi(idx, _broadcast(start, (size,)))
                    g = _broadcast(_along(g, out_axis, n), shape)
            else:
                g = _broadcast(start, shape)
            edge = array_shape[a] % self.bm.block_dims[a].block_size or indexer is not None
            if edge:
                inside = arith.cmpi(arith.CmpIPredicate.slt, g, _const(array_shape[a], _I32, shape))
                mask = inside if mask is None else arith.andi(mask, inside)
            if self.strides[a] != 1:
                g = arith.muli(g, _const(self.strides[a], _I32, shape))
            offset = arith.addi(offset, g)
        ptr_type = self.ptr.type
        if shape:
            ptrs = tt.splat(ir.RankedTensorType.get(list(shape), ptr_type), self.ptr)
            ptrs = tt.addptr(ptrs.type, ptrs, offset)
        else:
            ptrs = tt.addptr(ptr_type, self.ptr, offset)
        return ptrs, mask, shape


def _as_i32(v):
    if isinstance(v, ir.Value):
        if isinstance(v.type, ir.IntegerType) and ir.IntegerType(v.type).width != 32:
            return arith.trunci(ir.IntegerType.get_signless(32), v)
        return v
    return _const(int(v), _I32)


def _and(a, b):
    return b if a is None else a if b is None else arith.andi(a, b)


def _load(block: _Block, indexer, operands, dtype, user_mask=None, other=None):
    ptrs, mask, shape = block.pointers(indexer, operands)
    mask = _and(mask, user_mask)
    if mask is None:
        return tt.load(ptrs)
    other = _const(0, dtype, shape) if other is None else _broadcast(other, shape)
    return tt.load(ptrs, mask=mask, other=other)


def _store(block: _Block, indexer, operands, value, user_mask=None):
    ptrs, mask, shape = block.pointers(indexer, operands)
    tt.store(ptrs, _broadcast(value, shape), mask=_and(mask, user_mask))


# ---------------------------------------------------------------- primitives

_FLOAT_UNARY = {
    "exp": mmath.exp, "log": mmath.log, "sin": mmath.sin, "cos": mmath.cos,
    "tanh": mmath.tanh, "sqrt": mmath.sqrt, "rsqrt": mmath.rsqrt, "exp2": mmath.exp2,
    "log1p": mmath.log1p, "expm1": mmath.expm1, "erf": mmath.erf, "floor": mmath.floor,
    "ceil": mmath.ceil, "abs": mmath.absf, "tan": mmath.tan, "atan": mmath.atan,
    "sinh": mmath.sinh, "cosh": mmath.cosh, "asin": mmath.asin, "acos": mmath.acos,
    "cbrt": mmath.cbrt, "round": mmath.roundeven,
}  # fmt: skip
_BINARY = {
    # name: (float op, signed int op, unsigned int op)
    "add": (arith.addf, arith.addi, arith.addi),
    "sub": (arith.subf, arith.subi, arith.subi),
    "mul": (arith.mulf, arith.muli, arith.muli),
    "div": (arith.divf, arith.divsi, arith.divui),
    "rem": (arith.remf, arith.remsi, arith.remui),
    "max": (arith.maximumf, arith.maxsi, arith.maxui),
    "min": (arith.minimumf, arith.minsi, arith.minui),
    "and": (None, arith.andi, arith.andi),
    "or": (None, arith.ori, arith.ori),
    "xor": (None, arith.xori, arith.xori),
    "pow": (mmath.powf, None, None),
    "atan2": (mmath.atan2, None, None),
    "shift_left": (None, arith.shli, arith.shli),
    "shift_right_arithmetic": (None, arith.shrsi, arith.shrsi),
    "shift_right_logical": (None, arith.shrui, arith.shrui),
}
_COMPARE = {
    "eq": (arith.CmpFPredicate.OEQ, arith.CmpIPredicate.eq, arith.CmpIPredicate.eq),
    "ne": (arith.CmpFPredicate.UNE, arith.CmpIPredicate.ne, arith.CmpIPredicate.ne),
    "lt": (arith.CmpFPredicate.OLT, arith.CmpIPredicate.slt, arith.CmpIPredicate.ult),
    "le": (arith.CmpFPredicate.OLE, arith.CmpIPredicate.sle, arith.CmpIPredicate.ule),
    "gt": (arith.CmpFPredicate.OGT, arith.CmpIPredicate.sgt, arith.CmpIPredicate.ugt),
    "ge": (arith.CmpFPredicate.OGE, arith.CmpIPredicate.sge, arith.CmpIPredicate.uge),
}


def _rmw_op(kind: str, dtype):
    if kind == "add":
        return tt.RMWOp.FADD if _is_float(dtype) else tt.RMWOp.ADD
    if kind in ("max", "min"):
        if _is_float(dtype):
            raise NotImplementedError(f"Pallas GPU lowering: atomic_{kind} of floats")
        signed = _is_signed(dtype)
        return getattr(tt.RMWOp, ("" if signed else "U") + kind.upper())
    return getattr(tt.RMWOp, kind.upper())


def _pick(ops, dtype):
    if _is_float(dtype):
        return ops[0]
    return ops[1] if _is_signed(dtype) or np.dtype(dtype) == np.bool_ else ops[2]


def _convert(x, src, dst):
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return x
    shape = _shape_of(x)
    out = _type(shape, dst)
    if _is_float(src) and _is_float(dst):
        return (arith.extf if dst.itemsize > src.itemsize else arith.truncf)(out, x)
    if _is_float(src):
        if dst == np.bool_:
            return arith.cmpf(arith.CmpFPredicate.UNE, x, _const(0, src, shape))
        return (arith.fptosi if _is_signed(dst) else arith.fptoui)(out, x)
    if _is_float(dst):
        return (arith.sitofp if _is_signed(src) else arith.uitofp)(out, x)
    if dst == np.bool_:
        return arith.cmpi(arith.CmpIPredicate.ne, x, _const(0, src, shape))
    if dst.itemsize > src.itemsize:
        return (arith.extsi if _is_signed(src) else arith.extui)(out, x)
    if dst.itemsize < src.itemsize:
        return arith.trunci(out, x)
    return x


def _reduce(x, axes, combine, dtype):
    for axis in sorted(axes, reverse=True):
        op = tt.ReduceOp([x], axis)
        elem = _elem_type(dtype)
        block = op.regions[0].blocks.append(elem, elem)
        with ir.InsertionPoint(block):
            tt.reduce_return([combine(block.arguments[0], block.arguments[1])])
        x = op.results[0]
    return x


class _Lowering:
    """Lowers the equations of a kernel's Jaxpr (and the Jaxprs inside it)."""

    def run(self, jaxpr, consts, args):
        env = {}
        self.used = {a for e in jaxpr.eqns for a in e.invars if not isinstance(a, Literal)}
        self.used |= {a for a in jaxpr.outvars if not isinstance(a, Literal)}
        used = self.used

        def read(atom):
            if isinstance(atom, Literal):
                return _const(np.asarray(atom.val).item(), atom.aval.dtype)
            return env[atom]

        for v, x in zip(jaxpr.constvars, consts, strict=True):
            env[v] = _const(np.asarray(x).item(), v.aval.dtype) if np.ndim(x) == 0 else x
        for v, x in zip(jaxpr.invars, args, strict=True):
            env[v] = x
        for eqn in jaxpr.eqns:
            ins = [read(a) for a in eqn.invars]
            self.used = used
            outs = self.eqn(eqn, ins)
            if not eqn.primitive.multiple_results:
                outs = [outs]
            for v, x in zip(eqn.outvars, outs, strict=True):
                env[v] = x
        return [read(v) for v in jaxpr.outvars]

    def eqn(self, eqn, ins):
        name = eqn.primitive.name
        p = eqn.params
        in_avals = [a.aval for a in eqn.invars]
        out_aval = eqn.outvars[0].aval if eqn.outvars else None
        rule = getattr(self, "_" + name.replace("-", "_"), None)
        if rule is not None:
            return rule(eqn, ins, in_avals, **p)
        shape = getattr(out_aval, "shape", ())
        if name in _BINARY:
            dtype = in_avals[0].dtype
            op = _pick(_BINARY[name], dtype)
            if op is None:
                raise NotImplementedError(f"Pallas GPU lowering: {name} of {dtype}")
            return op(_broadcast(ins[0], shape), _broadcast(ins[1], shape))
        if name in _COMPARE:
            dtype = in_avals[0].dtype
            a, b = _broadcast(ins[0], shape), _broadcast(ins[1], shape)
            pred = _pick(_COMPARE[name], dtype)
            return (arith.cmpf if _is_float(dtype) else arith.cmpi)(pred, a, b)
        if name in _FLOAT_UNARY and _is_float(in_avals[0].dtype):
            return _FLOAT_UNARY[name](ins[0])
        raise NotImplementedError(f"Unimplemented primitive in Pallas GPU lowering: {name}.")

    # -- references
    def _get(self, eqn, ins, in_avals, *, indexer):
        block, *idx = ins
        return _load(block, indexer, idx, in_avals[0].dtype)

    def _swap(self, eqn, ins, in_avals, *, indexer):
        block, value, *idx = ins
        old = None
        if eqn.outvars and eqn.outvars[0] in self.used:
            old = _load(block, indexer, idx, in_avals[0].dtype)
        _store(block, indexer, idx, value)
        return old

    def _addupdate(self, eqn, ins, in_avals, *, indexer):
        block, value, *idx = ins
        old = _load(block, indexer, idx, in_avals[0].dtype)
        add = arith.addf if _is_float(in_avals[0].dtype) else arith.addi
        _store(block, indexer, idx, add(old, _broadcast(value, _shape_of(old))))
        return []

    def _masked_load(self, eqn, ins, in_avals, *, indexer, has_mask, has_other):
        block, *rest = ins
        n = 0 if indexer is None else indexer.n_operands
        idx, extra = rest[:n], rest[n:]
        mask = extra[0] if has_mask else None
        other = extra[1] if has_other else None
        return _load(block, indexer, idx, in_avals[0].dtype, mask, other)

    def _masked_swap(self, eqn, ins, in_avals, *, indexer, has_mask):
        block, value, *rest = ins
        n = 0 if indexer is None else indexer.n_operands
        idx, extra = rest[:n], rest[n:]
        mask = extra[0] if has_mask else None
        old = None
        if eqn.outvars[0] in self.used:
            old = _load(block, indexer, idx, in_avals[0].dtype, mask)
        _store(block, indexer, idx, value, mask)
        return old

    def _atomic_rmw(self, eqn, ins, in_avals, *, indexer, atomic_type, has_mask):
        block, value, *rest = ins
        n = 0 if indexer is None else indexer.n_operands
        idx, extra = rest[:n], rest[n:]
        ptrs, mask, shape = block.pointers(indexer, idx)
        mask = _and(mask, extra[0] if has_mask else None)
        dtype = in_avals[0].dtype
        op = _rmw_op(atomic_type, dtype)
        return tt.atomic_rmw(_type(shape, dtype), op, ptrs, _broadcast(value, shape),
                             tt.MemSemantic.ACQUIRE_RELEASE, tt.MemSyncScope.GPU,
                             mask=mask)  # fmt: skip

    def _atomic_cas(self, eqn, ins, in_avals):
        block, cmp, value = ins
        ptrs, _, shape = block.pointers(None, [])
        return tt.atomic_cas(_type(shape, in_avals[0].dtype), ptrs, _broadcast(cmp, shape),
                             _broadcast(value, shape), tt.MemSemantic.ACQUIRE_RELEASE,
                             tt.MemSyncScope.GPU)  # fmt: skip

    # -- elementwise and shapes
    def _neg(self, eqn, ins, in_avals):
        x = ins[0]
        if _is_float(in_avals[0].dtype):
            return arith.negf(x)
        return arith.subi(_const(0, in_avals[0].dtype, _shape_of(x)), x)

    def _stop_gradient(self, eqn, ins, in_avals):
        return ins[0]

    def _copy(self, eqn, ins, in_avals):
        return ins[0]

    def _square(self, eqn, ins, in_avals):
        mul = arith.mulf if _is_float(in_avals[0].dtype) else arith.muli
        return mul(ins[0], ins[0])

    def _clamp(self, eqn, ins, in_avals):
        shape = eqn.outvars[0].aval.shape
        lo, x, hi = (_broadcast(v, shape) for v in ins)
        ops = _BINARY["max"], _BINARY["min"]
        dtype = in_avals[1].dtype
        return _pick(ops[1], dtype)(_pick(ops[0], dtype)(x, lo), hi)

    def _is_finite(self, eqn, ins, in_avals):
        x = ins[0]
        inf = _const(np.inf, in_avals[0].dtype, _shape_of(x))
        return arith.cmpf(arith.CmpFPredicate.ONE, mmath.absf(x), inf)

    def _sign(self, eqn, ins, in_avals):
        x, dtype = ins[0], in_avals[0].dtype
        shape = _shape_of(x)
        zero, one, neg = (_const(v, dtype, shape) for v in (0, 1, -1))
        lt, gt = _COMPARE["lt"], _COMPARE["gt"]
        cmp = arith.cmpf if _is_float(dtype) else arith.cmpi
        out = arith.select(cmp(_pick(gt, dtype), x, zero), one, zero)
        return arith.select(cmp(_pick(lt, dtype), x, zero), neg, out)

    def _logistic(self, eqn, ins, in_avals):
        x = ins[0]
        one = _const(1, in_avals[0].dtype, _shape_of(x))
        return arith.divf(one, arith.addf(one, mmath.exp(arith.negf(x))))

    def _not(self, eqn, ins, in_avals):
        x = ins[0]
        return arith.xori(x, _const(-1 if in_avals[0].dtype != np.bool_ else 1,
                                    in_avals[0].dtype, _shape_of(x)))  # fmt: skip

    def _integer_pow(self, eqn, ins, in_avals, *, y):
        x = ins[0]
        mul = arith.mulf if _is_float(in_avals[0].dtype) else arith.muli
        if y < 1:
            raise NotImplementedError("Pallas GPU lowering: integer_pow with y < 1")
        out = x
        for _ in range(y - 1):
            out = mul(out, x)
        return out

    def _select_n(self, eqn, ins, in_avals):
        if len(ins) != 3:
            raise NotImplementedError("Pallas GPU lowering: select_n of more than 2 cases")
        shape = eqn.outvars[0].aval.shape
        pred, false, true = ins
        pred = _convert(pred, in_avals[0].dtype, np.bool_)
        return arith.select(_broadcast(pred, shape), _broadcast(true, shape),
                            _broadcast(false, shape))  # fmt: skip

    def _convert_element_type(self, eqn, ins, in_avals, *, new_dtype, **_):
        return _convert(ins[0], in_avals[0].dtype, new_dtype)

    def _iota(self, eqn, ins, in_avals, *, dtype, shape, dimension, **_):
        x = _arange(shape[dimension])
        x = _broadcast(_along(x, dimension, len(shape)), shape)
        return _convert(x, _I32, dtype)

    def _broadcast_in_dim(self, eqn, ins, in_avals, *, shape, broadcast_dimensions, **_):
        x = ins[0]
        if not _shape_of(x):
            return _broadcast(x, shape)
        for k in range(len(shape)):
            if k not in broadcast_dimensions:
                x = _expand(x, k)
        return _broadcast(x, shape)

    def _reshape(self, eqn, ins, in_avals, *, new_sizes, **_):
        x = ins[0]
        if not _shape_of(x):
            return _broadcast(x, new_sizes)
        elem = ir.RankedTensorType(x.type).element_type
        if not new_sizes:
            raise NotImplementedError("Pallas GPU lowering: reshape to a scalar")
        return tt.reshape(ir.RankedTensorType.get(list(new_sizes), elem), x)

    def _squeeze(self, eqn, ins, in_avals, *, dimensions):
        shape = eqn.outvars[0].aval.shape
        return self._reshape(eqn, ins, in_avals, new_sizes=shape)

    def _transpose(self, eqn, ins, in_avals, *, permutation):
        return tt.trans(ins[0], list(permutation))

    def _dot_general(self, eqn, ins, in_avals, *, dimension_numbers, preferred_element_type,
                     **_):  # fmt: skip
        (lc, rc), (lb, rb) = dimension_numbers
        a, b = ins
        if lb or rb or len(in_avals[0].shape) != 2 or len(in_avals[1].shape) != 2:
            raise NotImplementedError("Pallas GPU lowering: dot_general beyond 2-D matmul")
        if tuple(lc) == (0,):
            a = tt.trans(a, [1, 0])
        if tuple(rc) == (1,):
            b = tt.trans(b, [1, 0])
        out = eqn.outvars[0].aval
        acc = _const(0, out.dtype, out.shape)
        return tt.dot(a, b, acc)

    def _reduce(self, combine_by_dtype, ins, in_avals, axes):
        dtype = in_avals[0].dtype
        return _reduce(ins[0], axes, _pick(combine_by_dtype, dtype), dtype)

    def _reduce_sum(self, eqn, ins, in_avals, *, axes, **_):
        return self._reduce(_BINARY["add"], ins, in_avals, axes)

    def _reduce_max(self, eqn, ins, in_avals, *, axes, **_):
        return self._reduce(_BINARY["max"], ins, in_avals, axes)

    def _reduce_min(self, eqn, ins, in_avals, *, axes, **_):
        return self._reduce(_BINARY["min"], ins, in_avals, axes)

    # -- calls and control flow
    def _inline(self, closed: ClosedJaxpr, ins):
        return self.run(closed.jaxpr, closed.consts, ins)

    def _jit(self, eqn, ins, in_avals, *, jaxpr, **_):
        return self._inline(jaxpr, ins)

    def _custom_jvp_call(self, eqn, ins, in_avals, *, call_jaxpr, **_):
        return self._inline(call_jaxpr, ins)

    def _custom_vjp_call(self, eqn, ins, in_avals, *, call_jaxpr, **_):
        return self._inline(call_jaxpr, ins)

    def _cond(self, eqn, ins, in_avals, *, branches, **_):
        index, *ops = ins
        if len(branches) != 2:
            raise NotImplementedError("Pallas GPU lowering: switch with more than 2 branches")
        out_types = [_type(v.aval.shape, v.aval.dtype) for v in eqn.outvars]
        pred = arith.cmpi(arith.CmpIPredicate.ne, index, _const(0, in_avals[0].dtype))
        op = scf.IfOp(pred, out_types, has_else=True)
        for region_block, branch in ((op.then_block, branches[1]), (op.else_block, branches[0])):
            with ir.InsertionPoint(region_block):
                scf.yield_(self._inline(branch, ops))
        return list(op.results)

    def _scan(self, eqn, ins, in_avals, *, jaxpr, length, reverse, num_consts, num_carry,
              **_):  # fmt: skip
        if len(ins) != num_consts + num_carry or reverse:
            raise NotImplementedError("Pallas GPU lowering: scan over xs (only fori_loop)")
        consts, carry = ins[:num_consts], ins[num_consts:]
        lo, hi, step = (_const(v, _I32) for v in (0, length, 1))
        loop = scf.ForOp(lo, hi, step, carry)
        with ir.InsertionPoint(loop.body):
            outs = self._inline(jaxpr, [*consts, *loop.inner_iter_args])
            scf.yield_(outs)
        return list(loop.results)

    def _while(self, eqn, ins, in_avals, *, cond_jaxpr, body_jaxpr, cond_nconsts,
               body_nconsts):  # fmt: skip
        cond_consts, rest = ins[:cond_nconsts], ins[cond_nconsts:]
        body_consts, init = rest[:body_nconsts], rest[body_nconsts:]
        types = [v.type for v in init]
        op = scf.WhileOp(types, init)
        before = op.before.blocks.append(*types)
        after = op.after.blocks.append(*types)
        with ir.InsertionPoint(before):
            (pred,) = self._inline(cond_jaxpr, [*cond_consts, *before.arguments])
            scf.condition(pred, list(before.arguments))
        with ir.InsertionPoint(after):
            scf.yield_(self._inline(body_jaxpr, [*body_consts, *after.arguments]))
        return list(op.results)


# ---------------------------------------------------------------- the module


def lower_kernel_to_triton(jaxpr: ClosedJaxpr, gm: GridMapping, name: str, context):
    """The Triton module (an ``ir.Module`` in ``context``) of the kernel ``jaxpr``."""
    if len(gm.grid) > 3:
        raise NotImplementedError("Pallas GPU lowering: grids of more than 3 dimensions")
    if gm.scratch_avals:
        raise NotImplementedError("Pallas GPU lowering: scratch_shapes")
    with context, ir.Location.unknown(context):
        tt.register_dialect(context)
        module = ir.Module.create()
        ptr_types = [
            tt.PointerType.get(_elem_type(bm.array_aval.dtype), 1) for bm in gm.block_mappings
        ]
        ftype = ir.FunctionType.get(ptr_types, [])
        with ir.InsertionPoint(module.body):
            fn = tt.FuncOp(name, ir.TypeAttr.get(ftype))
            fn.attributes["sym_visibility"] = ir.StringAttr.get("public")
            entry = fn.body.blocks.append(*ptr_types)
            with ir.InsertionPoint(entry):
                lowering = _Lowering()
                ids = [tt.get_program_id(tt.ProgramIDDim(k)) for k in range(len(gm.grid))]
                blocks = []
                for ptr, bm in zip(entry.arguments, gm.block_mappings, strict=True):
                    idx = lowering.run(bm.index_map.jaxpr, bm.index_map.consts, ids)
                    starts = [
                        arith.muli(i, _const(d.block_size, _I32))
                        if type(d).__name__ == "Blocked" else i
                        for i, d in zip(idx, bm.block_dims, strict=True)
                    ]  # fmt: skip
                    blocks.append(_Block(ptr, bm, starts))
                lowering.run(jaxpr.jaxpr, jaxpr.consts, [*ids, *blocks])
                tt.return_([])
        if not module.operation.verify():
            raise RuntimeError("the Triton module of the kernel does not verify")
    return module


def _sanitize(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out if out and not out[0].isdigit() else "_" + out


def _i32_attr(x: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), x)


def triton_call_lowering(ctx, *args, jaxpr, grid_mapping, out_avals, input_output_aliases,
                         compiler_params, debug, name, **_):  # fmt: skip
    """``pallas_call`` as the ``__gpu$xla.gpu.triton`` custom call of its Triton module."""
    gm = grid_mapping
    # The kernel function's name ("f at file:line" while tracing), as JAX names it.
    traced = str(jaxpr.jaxpr.debug_info or "kernel").split(" at ")[0]
    kernel_name = _sanitize(name or traced)
    module = lower_kernel_to_triton(jaxpr, gm, kernel_name, ctx.module_context.context)
    num_warps = getattr(compiler_params, "num_warps", None) or 4
    num_stages = getattr(compiler_params, "num_stages", None)
    if num_stages is None:
        num_stages = 1 if ctx.platform == "rocm" else 3
    if debug:
        print(f"\nThe Triton module for pallas_call {kernel_name}:")
        print(module)
    buf = io.BytesIO()
    module.operation.write_bytecode(buf)
    grid = (*gm.grid, 1, 1, 1)[:3]
    config = {
        "name": ir.StringAttr.get(kernel_name),
        "ir": ir.StringAttr.get(buf.getvalue()),
        "num_stages": _i32_attr(num_stages),
        "num_warps": _i32_attr(num_warps),
        "grid_x": _i32_attr(grid[0]),
        "grid_y": _i32_attr(grid[1]),
        "grid_z": _i32_attr(grid[2]),
        "debug": ir.BoolAttr.get(bool(debug)),
    }

    def layout(aval):
        return ir.DenseIntElementsAttr.get(
            np.arange(len(aval.shape) - 1, -1, -1, dtype=np.int64),
            type=ir.IndexType.get(),
        )

    aliases = [
        stablehlo.OutputOperandAlias.get(
            output_tuple_indices=[o] if len(out_avals) > 1 else [], operand_index=i,
            operand_tuple_indices=[],
        )
        for i, o in input_output_aliases
    ]  # fmt: skip
    op = stablehlo.CustomCallOp(
        [mb.ir_type(a) for a in out_avals],
        list(args),
        call_target_name=ir.StringAttr.get("__gpu$xla.gpu.triton"),
        has_side_effect=ir.BoolAttr.get(False),
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
        called_computations=ir.ArrayAttr.get([]),
        operand_layouts=ir.ArrayAttr.get([layout(a) for a in ctx.avals_in]),
        result_layouts=ir.ArrayAttr.get([layout(a) for a in out_avals]),
        output_operand_aliases=ir.ArrayAttr.get(aliases),
    )
    op.attributes["backend_config"] = ir.DictAttr.get(config)
    return list(op.results)
