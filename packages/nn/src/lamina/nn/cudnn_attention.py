"""cuDNN's fused (flash) attention: ``dot_product_attention(implementation="cudnn")``.

Two primitives, named and parametrised as JAX 0.10.2's:
``dot_product_attention_fwd_wrapper`` (q, k, v in BTNH → the output, and with
``is_training`` the softmax statistics, f32 (B, N, T)) and
``dot_product_attention_bwd_wrapper`` (q, k, v, the statistics, the output's cotangent
and the output → dq, dk, dv), tied together by a ``custom_vjp``. On CUDA they lower to
XLA's cuDNN custom calls ``__cudnn$fmhaSoftmax`` and ``__cudnn$fmhaSoftmaxBackward``
(API version 2, the fused-attention backend config as JSON, results in BNTH order laid
out as BTNH and transposed back, and an empty u8 workspace), as JAX lowers them; there is
no lowering for other platforms. lamina builds the cases without bias, mask, sequence
lengths or dropout, with as many key/value heads as query heads; the primitives take
only q, k, v (JAX also passes empty placeholders for the missing operands). Under
``vmap`` the mapped axis is merged into the batch axis.
"""

from __future__ import annotations

import enum
import functools
import json

import numpy as np

import lamina.lax as lax
from lamina.interpreters import batching, custom_vjp, def_standard_impl
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import Primitive, ShapedArray

__all__ = ["MaskType", "cudnn_dot_product_attention"]


class MaskType(enum.Enum):
    """The masks cuDNN's attention applies by itself (JAX's enum)."""

    NO_MASK = 0
    PADDING = 1
    CAUSAL = 2
    PADDING_CAUSAL = 3
    ALIBI = 4


_ELEMENT_TYPE = {np.dtype("bfloat16"): "BF16", np.dtype(np.float16): "F16"}
_BTNH_AS_BNTH = [3, 1, 2, 0]  # minor-to-major of a (B, N, T, H) result stored as BTNH
_TO_BTNH = [0, 2, 1, 3]
# (lhs contracting, rhs contracting, lhs batch, rhs batch) of the BTNH layout's products.
_FWD_DOTS = {
    "bmm1_dot_dimension_numbers": (3, 3, (0, 2), (0, 2)),
    "bmm2_dot_dimension_numbers": (3, 1, (0, 1), (0, 2)),
}
_BWD_DOTS = {
    "bmm1_grad_gemm1_dot_dimension_numbers": (2, 1, (0, 1), (0, 2)),
    "bmm1_grad_gemm2_dot_dimension_numbers": (3, 1, (0, 1), (0, 2)),
    "bmm2_grad_gemm1_dot_dimension_numbers": (2, 1, (0, 1), (0, 2)),
    "bmm2_grad_gemm2_dot_dimension_numbers": (3, 3, (0, 2), (0, 2)),
}


def _backend_config(q_aval, k_aval, params, dots) -> str:
    B, T, N, _ = q_aval.shape
    S = k_aval.shape[1]
    layout = {
        "dim_level_types": [],
        "dim_unique": [],
        "dim_ordered": [],
        "minor_to_major": ["3", "2", "1", "0"],
        "tiles": [],
        "element_size_in_bits": "0",
        "memory_space": "0",
        "index_primitive_type": "PRIMITIVE_TYPE_INVALID",
        "pointer_primitive_type": "PRIMITIVE_TYPE_INVALID",
        "dynamic_shape_metadata_prefix_bytes": "0",
    }
    config = {
        "algorithm": {
            "algo_id": "0",
            "math_type": "TENSOR_OP_MATH",
            "tuning_knobs": {"17": "1", "24": "0"},
            "is_cudnn_frontend": True,
            "workspace_size": "0",
        },
        "fmha_scale": params["scale"],
        "intermediate_tensor_shape": {
            "element_type": _ELEMENT_TYPE[np.dtype(q_aval.dtype)],
            "dimensions": [str(B), str(N), str(T), str(S)],
            "tuple_shapes": [],
            "layout": layout,
            "is_dynamic_dimension": [False, False, False, False],
        },
        "is_flash_attention": True,
        "mask_type": params["mask_type"].name,
    }
    for key, (lc, rc, lb, rb) in dots.items():
        config[key] = {
            "lhs_contracting_dimensions": [str(lc)],
            "rhs_contracting_dimensions": [str(rc)],
            "lhs_batch_dimensions": [str(i) for i in lb],
            "rhs_batch_dimensions": [str(i) for i in rb],
        }
    config["dropout_rate"] = params["dropout_rate"]
    config["seed"] = params["seed"]
    config["sliding_window_length"] = params["sliding_window_length"] or 0
    config["max_seg_per_batch"] = 1
    config["is_paged_attention"] = False
    return json.dumps({"operation_queue_id": "0", "cudnn_fmha_backend_config": config})


def _layouts(orders):
    return ir.ArrayAttr.get(
        [
            ir.DenseElementsAttr.get(
                np.asarray(o, np.int64), type=ir.IndexType.get(), shape=(len(o),)
            )
            for o in orders
        ]
    )


def _row_major(ndim):
    return list(range(ndim - 1, -1, -1))


def _cudnn_call(ctx, target, operands, results, result_orders, config):
    """The custom call; returns its results but the workspace."""
    workspace = ir.RankedTensorType.get([0], ir.IntegerType.get_unsigned(8))
    i32 = ir.IntegerType.get_signless(32)
    op = hlo.CustomCallOp(
        [*(ctx.ir_type(a) for a in results), workspace],
        list(operands),
        call_target_name=ir.StringAttr.get(target),
        has_side_effect=ir.BoolAttr.get(False),
        backend_config=ir.StringAttr.get(config),
        api_version=ir.IntegerAttr.get(i32, 2),
        called_computations=ir.ArrayAttr.get([]),
        operand_layouts=_layouts([_row_major(a.ndim) for a in ctx.avals_in]),
        result_layouts=_layouts([*result_orders, [0]]),
    )
    return list(op.results)[:-1]


def _bnth(aval):
    B, T, N, H = aval.shape
    return ShapedArray((B, N, T, H), aval.dtype)


def _stats(q):
    B, T, N, _ = q.shape
    return ShapedArray((B, N, T), np.dtype(np.float32))


# ---------------------------------------------------------------- forward

fwd_p = Primitive("dot_product_attention_fwd_wrapper")
fwd_p.multiple_results = True


def _fwd_abstract_eval(q, k, v, *, is_training, **_):
    return [q, _stats(q)] if is_training else [q]


def _fwd_lowering(ctx, q, k, v, **params):
    q_aval, k_aval, _ = ctx.avals_in
    results, orders = [_bnth(q_aval)], [_BTNH_AS_BNTH]
    if params["is_training"]:
        results.append(_stats(q_aval))
        orders.append(_row_major(3))
    config = _backend_config(q_aval, k_aval, params, _FWD_DOTS)
    outs = _cudnn_call(ctx, "__cudnn$fmhaSoftmax", [q, k, v], results, orders, config)
    return [hlo.transpose(outs[0], _TO_BTNH), *outs[1:]]


fwd_p.def_abstract_eval(_fwd_abstract_eval)
fwd_p.def_lowering(_fwd_lowering, "cuda")
def_standard_impl(fwd_p)


# ---------------------------------------------------------------- backward

bwd_p = Primitive("dot_product_attention_bwd_wrapper")
bwd_p.multiple_results = True


def _bwd_lowering(ctx, q, k, v, stats, ct, out, **params):
    q_aval, k_aval, v_aval = ctx.avals_in[:3]
    results = [_bnth(q_aval), _bnth(k_aval), _bnth(v_aval)]
    config = _backend_config(q_aval, k_aval, params, _BWD_DOTS)
    grads = _cudnn_call(
        ctx, "__cudnn$fmhaSoftmaxBackward", [q, k, v, stats, ct, out], results,
        [_BTNH_AS_BNTH] * 3, config,
    )  # fmt: skip
    return [hlo.transpose(g, _TO_BTNH) for g in grads]


bwd_p.def_abstract_eval(lambda q, k, v, stats, ct, out, **_: [q, k, v])
bwd_p.def_lowering(_bwd_lowering, "cuda")
def_standard_impl(bwd_p)


# ---------------------------------------------------------------- vmap


def _batched(prim):
    """Under ``vmap`` the mapped axis joins the batch axis B of every operand."""

    def rule(axis_data, vals, dims, **params):
        vals = [
            batching.bdim_at_front(v, d, axis_data.size) for v, d in zip(vals, dims, strict=True)
        ]
        merged = [lax.reshape(v, (v.shape[0] * v.shape[1], *v.shape[2:])) for v in vals]
        outs = prim.bind(*merged, **params)
        n = axis_data.size
        outs = [lax.reshape(o, (n, o.shape[0] // n, *o.shape[1:])) for o in outs]
        return outs, [0] * len(outs)

    prim.def_batching(rule)


_batched(fwd_p)
_batched(bwd_p)


# ---------------------------------------------------------------- the function


def _params(scale, mask_type, sliding_window_length):
    return dict(
        dropout_rate=0.0,
        layout=0,
        mask_type=mask_type,
        scale=scale,
        seed=42,
        sliding_window_length=sliding_window_length,
        variadic_args=(False, False),
    )


@functools.partial(custom_vjp, nondiff_argnums=(3, 4, 5))
def _attention(q, k, v, scale, mask_type, window):
    return fwd_p.bind(q, k, v, is_training=False, **_params(scale, mask_type, window))[0]


def _attention_fwd(q, k, v, scale, mask_type, window):
    out, stats = fwd_p.bind(q, k, v, is_training=True, **_params(scale, mask_type, window))
    return out, (q, k, v, stats, out)


def _attention_bwd(scale, mask_type, window, residuals, ct):
    q, k, v, stats, out = residuals
    return tuple(bwd_p.bind(q, k, v, stats, ct, out, **_params(scale, mask_type, window)))


_attention.defvjp(_attention_fwd, _attention_bwd)


def cudnn_dot_product_attention(query, key, value, *, scale, mask_type, sliding_window_length):
    """Attention of BTNH ``query``, ``key``, ``value`` by cuDNN's fused kernel (one
    key/value head per query head, float16 or bfloat16)."""
    dtype = np.dtype(query.dtype)
    if dtype not in _ELEMENT_TYPE:
        raise NotImplementedError(f"cuDNN attention takes float16 or bfloat16, got {dtype}")
    head = query.shape[-1]
    if head > 256 or head % 8:
        raise NotImplementedError(
            f"The head dim must be <= 256 and a multiple of 8, but got {head}."
        )
    if query.shape[2] != key.shape[2]:
        raise NotImplementedError(
            "lamina: cuDNN attention with fewer key/value heads than query heads is not built"
        )
    return _attention(query, key, value, float(scale), mask_type, sliding_window_length)
