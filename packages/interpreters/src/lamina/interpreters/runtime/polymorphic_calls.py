"""Running shape-polymorphic programs on concrete arrays.

A module lowered from symbolic shapes has a ``main`` taking tensors of dynamic sizes.
To run it, the arguments' shapes are first checked against the specification in
Python (``lamina.ir.solve_dim_vars``: JAX's errors, before anything is compiled); then
the module gets a new ``main`` of the arguments' static types that calls the old one
(renamed ``_polymorphic_main``), and jaxlib's shape refinement
(``refine_polymorphic_shapes``) propagates the static sizes through every function,
folding the dimension computations and ``shape_assertion`` checks into constants. The
refined module compiles as any other; it is kept per (module, argument types).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import _jax

from lamina.interpreters.core.mlir_bindings import func, hlo, ir
from lamina.interpreters.jaxprs import mlir_builders as mb
from lamina.interpreters.runtime import backend
from lamina.interpreters.runtime.execute import CompiledModule
from lamina.interpreters.runtime.transfer import put_on_device
from lamina.ir import IntOps, ShapedArray, dtypes, is_symbolic_dim, solve_dim_vars

__all__ = ["call_polymorphic", "check_arg_avals", "refine_module", "specialize_out_avals"]

_POLY_MAIN = "_polymorphic_main"


def check_arg_avals(in_avals: Sequence[ShapedArray], arg_avals: Sequence[ShapedArray]) -> dict:
    """Check concrete argument types against the (symbolic) ``in_avals`` as JAX's
    ``Exported.call`` does (count, rank, dtype, then the shape specification and
    constraints); returns the dimension variables' values."""
    if len(arg_avals) != len(in_avals):
        raise ValueError(
            f"The exported function takes {len(in_avals)} arguments, called with {len(arg_avals)}"
        )
    for i, (want, got) in enumerate(zip(in_avals, arg_avals, strict=True)):
        if len(want.shape) != len(got.shape):
            raise ValueError(
                f"Rank mismatch for args[{i}]: expected {tuple(want.shape)} and called with "
                f"{tuple(got.shape)}"
            )
        if np.dtype(want.dtype) != np.dtype(got.dtype):
            raise ValueError(
                f"Dtype mismatch for args[{i}]: expected {want.dtype} and called with {got.dtype}"
            )
    return solve_dim_vars(in_avals, lambda i, j: int(arg_avals[i].shape[j]), IntOps)


def specialize_out_avals(out_avals: Sequence[ShapedArray], env: dict) -> list[ShapedArray]:
    """``out_avals`` with the dimension variables bound by ``env``."""
    return [
        a.update(shape=tuple(d.evaluate(env) if is_symbolic_dim(d) else d for d in a.shape))
        for a in out_avals
    ]


def _as_bytes(module) -> bytes:
    if isinstance(module, bytes):
        return module
    if isinstance(module, str):
        return module.encode()
    return module.as_bytecode()  # a LoweredModule


def refine_module(module, arg_avals: Sequence[ShapedArray], out_avals) -> bytes:
    """The module (text, bytecode or a ``LoweredModule``) specialized to arguments of
    types ``arg_avals`` with results ``out_avals``: a static ``main`` calling the
    polymorphic one, refined by jaxlib so that no dynamic size remains."""
    context = mb.make_context()
    with context, ir.Location.unknown():
        m = ir.Module.parse(_as_bytes(module))
        poly = next(
            op
            for op in m.body.operations
            if isinstance(op, func.FuncOp) and ir.StringAttr(op.sym_name).value == "main"
        )
        poly.attributes["sym_name"] = ir.StringAttr.get(_POLY_MAIN)
        poly.attributes["sym_visibility"] = ir.StringAttr.get("private")
        in_types = [mb.ir_type(a) for a in arg_avals]
        out_types = [mb.ir_type(a) for a in out_avals]
        with ir.InsertionPoint.at_block_begin(m.body):
            main = func.FuncOp("main", ir.FunctionType.get(in_types, out_types))
        main.attributes["sym_visibility"] = ir.StringAttr.get("public")
        block = main.add_entry_block()
        poly_type = ir.FunctionType(ir.TypeAttr(poly.attributes["function_type"]).value)
        with ir.InsertionPoint(block):
            args = [
                a if a.type == t else hlo.convert(t, a)
                for a, t in zip(block.arguments, poly_type.inputs, strict=True)
            ]
            call = func.CallOp(list(poly_type.results), ir.FlatSymbolRefAttr.get(_POLY_MAIN), args)
            outs = [
                r if r.type == t else hlo.convert(t, r)
                for r, t in zip(call.results, out_types, strict=True)
            ]
            func.ReturnOp(outs)
        text = m.operation.get_asm(binary=True)
    try:
        return _jax.mlir.refine_polymorphic_shapes(
            text, enable_shape_assertions=True, validate_static_shapes=True
        )
    except Exception as e:
        raise ValueError(f"Error refining shapes: {e}") from e


_compiled: dict[tuple, CompiledModule] = {}
_lock = threading.Lock()


def call_polymorphic(
    module, in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray], args: Sequence[Any]
) -> list:
    """Run a shape-polymorphic module (text, bytecode or ``LoweredModule``, whose
    ``main`` takes ``in_avals`` and returns ``out_avals``) on concrete ``args``."""
    args = [a if hasattr(a, "aval") else put_on_device(np.asarray(a)) for a in args]
    arg_avals = [ShapedArray(a.shape, a.dtype) for a in args]
    env = check_arg_avals(in_avals, arg_avals)
    outs = specialize_out_avals(out_avals, env)
    data = _as_bytes(module)
    key = (data, tuple(arg_avals), dtypes.canonicalize_dtype(np.int64))
    compiled = _compiled.get(key)
    if compiled is None:
        with _lock:
            compiled = _compiled.get(key)
            if compiled is None:
                refined = refine_module(data, arg_avals, outs)
                compiled = CompiledModule(
                    refined, backend.default_device(), name="polymorphic", out_avals=outs
                )
                _compiled[key] = compiled
    return compiled(*args)
