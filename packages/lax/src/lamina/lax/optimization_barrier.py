"""``optimization_barrier``: an identity that XLA may not move computations across."""

from __future__ import annotations

from lamina.interpreters import ad
from lamina.interpreters.mlir import hlo
from lamina.ir import tree_util
from lamina.lax.base.operands import standard_primitive

__all__ = [
    "optimization_barrier",
    "optimization_barrier_p",
]


# ---------------------------------------------------------------- optimization_barrier


def _barrier_lowering(ctx, *operands):
    return list(hlo.OptimizationBarrierOp(list(operands)).results) if operands else []


optimization_barrier_p = standard_primitive(
    "optimization_barrier", lambda *avals: list(avals), _barrier_lowering
)
optimization_barrier_p.multiple_results = True


def _barrier_jvp(primals, tangents):
    # Separate barriers: one over primals alone keeps them known under partial
    # evaluation (a joint one would make them depend on the tangents).
    primals_out = optimization_barrier_p.bind(*primals)
    live = iter(optimization_barrier_p.bind(*[t for t in tangents if type(t) is not ad.Zero]))
    return primals_out, [t if type(t) is ad.Zero else next(live) for t in tangents]


def _barrier_transpose(cts, *operands):
    live = [type(c) is not ad.Zero for c in cts]
    outs = iter(optimization_barrier_p.bind(*[c for c in cts if type(c) is not ad.Zero]))
    return [next(outs) if nz else c for nz, c in zip(live, cts, strict=True)]


optimization_barrier_p.def_jvp(_barrier_jvp)
optimization_barrier_p.def_transpose(_barrier_transpose)
optimization_barrier_p.def_batching(
    lambda axis_data, vals, dims: (optimization_barrier_p.bind(*vals), list(dims))
)


def optimization_barrier(operand, /):
    """``operand`` (a pytree) unchanged, with XLA kept from moving computations across
    this point (for example, from merging a recomputation into the forward pass)."""
    leaves, tree = tree_util.tree_flatten(operand)
    return tree_util.tree_unflatten(tree, optimization_barrier_p.bind(*leaves))
