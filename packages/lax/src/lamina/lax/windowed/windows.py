"""Window geometry shared by the windowed primitives: the result shape of a window
over an operand, JAX's checks of window params, the ``stablehlo`` window attributes, and
the window of a batched operand."""

from __future__ import annotations

import numpy as np

from lamina.interpreters.mlir import eval_dynamic_shape_as_tensor, func, hlo, ir
from lamina.ir import is_constant_shape

__all__ = ["reduce_window_shape_tuple"]


def dilated_size(size, dilation):
    return 0 if size == 0 else (size - 1) * dilation + 1


def reduce_window_shape_tuple(
    operand_shape,
    window_dimensions,
    window_strides,
    padding,
    base_dilation=None,
    window_dilation=None,
):
    """The shape of a windowed reduction's result."""
    ndim = len(operand_shape)
    base_dilation = (1,) * ndim if base_dilation is None else base_dilation
    window_dilation = (1,) * ndim if window_dilation is None else window_dilation
    out = []
    for d, w, s, (lo, hi), bd, wd in zip(
        operand_shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
        strict=True,
    ):
        span = dilated_size(d, bd) + lo + hi - dilated_size(w, wd)
        out.append(0 if span < 0 else span // s + 1)
    return tuple(out)


def check_window(
    name, shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    """JAX's checks of window params, with its messages."""
    ndim = len(shape)
    if len(window_dimensions) != ndim:
        raise TypeError(
            f"{name} got the wrong number of window_dimensions for operand: got operand "
            f"shape {tuple(shape)} with window_dimensions {tuple(window_dimensions)}."
        )
    for what, value in (
        ("window_strides", window_strides),
        ("base_dilation", base_dilation),
        ("window_dilation", window_dilation),
    ):
        if len(value) != ndim:
            raise TypeError(
                f"{name} got inconsistent {what} and window_dimensions: got {what} "
                f"{tuple(value)} and window_dimensions {tuple(window_dimensions)}."
            )
    if len(padding) != ndim:
        raise ValueError(
            f"{name} got inconsistent padding and window_dimensions: got padding "
            f"{tuple(padding)} and window_dimensions {tuple(window_dimensions)}."
        )
    for what, value in (
        ("window_dimensions", window_dimensions),
        ("window_strides", window_strides),
        ("base_dilation", base_dilation),
        ("window_dilation", window_dilation),
    ):
        if any(v <= 0 for v in value):
            raise TypeError(
                f"{name} {what} must have every element be strictly positive, got {tuple(value)}."
            )


def window_attrs(window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """The keyword arguments of ``stablehlo.reduce_window`` for these params."""
    pads = np.asarray(padding, np.int64).reshape(len(window_dimensions), 2)
    return dict(
        window_dimensions=list(window_dimensions),
        window_strides=list(window_strides),
        base_dilations=list(base_dilation),
        window_dilations=list(window_dilation),
        padding=ir.DenseIntElementsAttr.get(pads),
    )


def with_batch_window(params, bdim):
    """Window params with a size-1, stride-1 window inserted for the batch axis."""

    def insert(value, item):
        value = list(value)
        value.insert(bdim, item)
        return tuple(value)

    new = dict(params)
    new["window_dimensions"] = insert(params["window_dimensions"], 1)
    new["window_strides"] = insert(params["window_strides"], 1)
    new["padding"] = insert(params["padding"], (0, 0))
    for key in ("base_dilation", "window_dilation"):
        if key in params:
            new[key] = insert(params[key], 1)
    return new


def dynamic_reduce_window(ctx, result_types, operands, inits, scalar_types, body, params):
    """A window reduction whose window or padding holds symbolic sizes (shape
    polymorphism): the ``stablehlo.dynamic_reduce_window`` custom call, whose sizes are
    computed in the program, with ``body`` (scalars in, scalars out) as a function of
    the module; shape refinement turns it into a ``reduce_window``."""
    mctx = ctx.module_context
    with ir.InsertionPoint(mctx.module.body):
        reducer = func.FuncOp("reducer", ir.FunctionType.get(scalar_types * 2, scalar_types))
    reducer.attributes["sym_visibility"] = ir.StringAttr.get("private")
    mctx.symbol_table.insert(reducer)
    block = reducer.add_entry_block()
    with ir.InsertionPoint(block):
        func.ReturnOp(body(*block.arguments))
    n = len(params["window_dimensions"])
    pads = [d for pair in params["padding"] for d in pair]
    pads = eval_dynamic_shape_as_tensor(ctx, pads)
    pads_type = ir.RankedTensorType.get([n, 2], ir.RankedTensorType(pads.type).element_type)
    sizes = [
        eval_dynamic_shape_as_tensor(ctx, params[key])
        for key in ("window_dimensions", "window_strides", "base_dilation", "window_dilation")
    ]
    op = hlo.CustomCallOp(
        result_types,
        [*operands, *inits, *sizes, hlo.reshape(pads_type, pads)],
        call_target_name=ir.StringAttr.get("stablehlo.dynamic_reduce_window"),
        called_computations=ir.ArrayAttr.get(
            [ir.FlatSymbolRefAttr.get(ir.StringAttr(reducer.sym_name).value)]
        ),
    )
    return list(op.results)


def is_static_window(params) -> bool:
    """Whether every size of the window params is an int (not symbolic)."""
    values = [d for pair in params["padding"] for d in pair]
    for key in ("window_dimensions", "window_strides", "base_dilation", "window_dilation"):
        values.extend(params[key])
    return is_constant_shape(values)
