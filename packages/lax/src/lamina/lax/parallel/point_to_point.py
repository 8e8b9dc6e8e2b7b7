"""One-sided point-to-point collectives, ``psend`` and ``precv`` (XLA's Send and Recv).

JAX 0.10.2 lowers them only for GPUs inside manually sharded programs; on CPU their
lowering raises ``NotImplementedError``, and lamina does the same (its compiled
programs are single-device CPU programs until the sharding layer lands). They carry an
effect, so an unused ``psend`` is not removed from a program as dead code.
"""

from __future__ import annotations

from lamina.ir import (
    Effect,
    Primitive,
    ShapedArray,
    abstract_token,
    control_flow_allowed_effects,
    lowerable_effects,
    tree_util,
)
from lamina.lax.parallel.collectives import axis_names, check_axes_bound

__all__ = ["precv", "psend"]


class SingleSideCollectiveEffect(Effect):
    def __eq__(self, other):
        return isinstance(other, SingleSideCollectiveEffect)

    def __hash__(self):
        return hash(SingleSideCollectiveEffect)

    def __repr__(self):
        return "one-sided communication"


single_side_collective_effect = SingleSideCollectiveEffect()
lowerable_effects.add_type(SingleSideCollectiveEffect)
control_flow_allowed_effects.add_type(SingleSideCollectiveEffect)


def _p2p_primitive(name: str, abstract_eval) -> Primitive:
    prim = Primitive(name)
    prim.effectful = True

    def impl(*args, axis_name, **params):
        check_axes_bound(axis_name, name, staged=True)  # eager calls go through jit in JAX
        raise NotImplementedError(f"{name} is currently only implemented on GPUs")

    def checked(*avals, axis_name, **params):
        check_axes_bound(axis_name, name, staged=True)
        return abstract_eval(*avals, **params), {single_side_collective_effect}

    def lowering(ctx, *args, **params):
        raise NotImplementedError(f"{name} is currently only implemented on GPUs")

    prim.def_impl(impl)
    prim.def_abstract_eval(checked)
    prim.def_lowering(lowering)
    return prim


psend_p = _p2p_primitive("psend", lambda x, *, perm: abstract_token)
precv_p = _p2p_primitive("precv", lambda token, *, out_shape, perm: out_shape)


def _perm(perm):
    return tuple(tuple(int(i) for i in pair) for pair in perm)


def psend(x, axis_name, perm):
    """Send each leaf of ``x`` along ``axis_name`` by the ``(source, destination)``
    pairs of ``perm``; returns a token ordering a matching ``precv``."""
    names = axis_names(axis_name)
    return tree_util.tree_map(lambda leaf: psend_p.bind(leaf, axis_name=names, perm=_perm(perm)), x)


def precv(token, out_shape, axis_name, perm):
    """Receive an array of ``out_shape`` (shape and dtype) sent by ``psend`` along
    ``axis_name`` by the pairs of ``perm``, after ``token``."""
    return precv_p.bind(
        token,
        out_shape=ShapedArray(tuple(out_shape.shape), out_shape.dtype),
        axis_name=axis_names(axis_name),
        perm=_perm(perm),
    )
