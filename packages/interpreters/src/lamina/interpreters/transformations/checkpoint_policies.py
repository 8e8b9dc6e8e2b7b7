"""What ``checkpoint`` may save: policies, and ``checkpoint_name`` to name values for them.

A policy is called as ``policy(primitive, *input_avals, **params)`` for each equation
whose output the backward pass needs, and says whether that output may be saved (a
*residual*, kept from the forward pass) or must be recomputed (a bool, or one of
:mod:`.checkpoint_markers`) from saved values. The
names and behaviour are JAX's (``jax.checkpoint_policies``). The interpreters layer
knows no lax primitive, so dots are recognised by primitive name (``dot_general``,
``conv_general_dilated``).

``checkpoint_name(x, name)`` is the identity on values; it binds the ``name`` primitive
so that name-based policies can refer to ``x``.
"""

from __future__ import annotations

import types

from lamina.interpreters.transformations import batching
from lamina.interpreters.transformations.checkpoint_markers import (
    Offloadable,
    Recompute,
    Saveable,
)
from lamina.ir import Primitive, tree_util

__all__ = [
    "checkpoint_dots",
    "checkpoint_dots_with_no_batch_dims",
    "checkpoint_name",
    "checkpoint_policies",
    "dots_saveable",
    "dots_with_no_batch_dims_saveable",
    "everything_saveable",
    "name_p",
    "nothing_saveable",
    "offload_dot_with_no_batch_dims",
    "save_and_offload_only_these_names",
    "save_any_names_but_these",
    "save_anything_except_these_names",
    "save_from_both_policies",
    "save_only_these_names",
]

# --------------------------------------------------------------------------- name

name_p = Primitive("name")


def checkpoint_name(x, name):
    """``x`` (an array or a pytree of them) unchanged, named ``name`` for the
    name-based policies of ``checkpoint``."""
    return tree_util.tree_map(lambda leaf: name_p.bind(leaf, name=name), x)


def _name_jvp(primals, tangents, *, name):
    # Only the primal is named: a policy saving the name saves the value itself.
    (x,), (t,) = primals, tangents
    return name_p.bind(x, name=name), t


def _name_transpose(ct, x, *, name):
    return [ct]


def _name_batching(axis_data, vals, dims, *, name):
    return name_p.bind(vals[0], name=name), dims[0]


name_p.def_impl(lambda x, *, name: x)
name_p.def_abstract_eval(lambda x, *, name: x)
name_p.def_lowering(lambda ctx, x, *, name: [x])
name_p.def_jvp(_name_jvp)
name_p.def_transpose(_name_transpose)
batching.batching_rules[name_p] = _name_batching


# --------------------------------------------------------------------------- policies

_DOT_PRIMITIVES = frozenset({"dot_general", "conv_general_dilated"})


def everything_saveable(*_, **__) -> bool:
    """Save every value the backward pass needs, as if ``checkpoint`` were not used."""
    return True


def nothing_saveable(*_, **__) -> bool:
    """Save only the inputs of the checkpointed function; recompute everything else
    (the policy of ``checkpoint`` without one)."""
    return False


def dots_saveable(prim, *_, **__) -> bool:
    """Save the results of matrix multiplications and convolutions only."""
    return getattr(prim, "name", None) in _DOT_PRIMITIVES


def dots_with_no_batch_dims_saveable(prim, *_, **params) -> bool:
    """Save the results of ``dot_general`` without batch dimensions only."""
    if getattr(prim, "name", None) != "dot_general":
        return False
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


def save_anything_except_these_names(*names_not_to_save):
    """Save any value except those named (with ``checkpoint_name``) one of these."""
    excluded = frozenset(names_not_to_save)

    def policy(prim, *_, **params):
        if prim is name_p:
            return params["name"] not in excluded
        return True

    return policy


def save_any_names_but_these(*names_not_to_save):
    """Save only named values, except those named one of these."""
    excluded = frozenset(names_not_to_save)

    def policy(prim, *_, **params):
        return prim is name_p and params["name"] not in excluded

    return policy


def save_only_these_names(*names_which_can_be_saved):
    """Save only the values named one of these."""
    allowed = frozenset(names_which_can_be_saved)

    def policy(prim, *_, **params):
        return prim is name_p and params["name"] in allowed

    return policy


def save_from_both_policies(policy_1, policy_2):
    """Save what either policy saves (both must return bools)."""

    def policy(prim, *args, **params):
        out1 = policy_1(prim, *args, **params)
        out2 = policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError(
                f"The return value of the policies should be a boolean. Got: {out1} and "
                f"{out2}. Please write a custom policy function directly, rather than "
                "using this helper function."
            )
        return out1 or out2

    return policy


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """Like ``dots_with_no_batch_dims_saveable``, but the dots are offloaded from
    memory kind ``offload_src`` to ``offload_dst``."""

    def policy(prim, *args, **params):
        if dots_with_no_batch_dims_saveable(prim, *args, **params):
            return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute

    return policy


def save_and_offload_only_these_names(
    *, names_which_can_be_saved, names_which_can_be_offloaded, offload_src, offload_dst
):
    """Like ``save_only_these_names``, but the values named in
    ``names_which_can_be_offloaded`` are offloaded instead of recomputed."""
    saved = set(names_which_can_be_saved)
    offloaded = set(names_which_can_be_offloaded)
    both = saved & offloaded
    if both:
        raise ValueError(
            "The names should be exclusive and should not intersect in "
            "`names_which_can_be_saved` and `names_which_can_be_offloaded`. Got "
            f"names_which_can_be_saved={saved}, names_which_can_be_offloaded={offloaded} "
            f"and the intersection={both}"
        )

    def policy(prim, *_, **params):
        if prim is name_p and params["name"] in saved:
            return Saveable
        if prim is name_p and params["name"] in offloaded:
            return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute

    return policy


checkpoint_dots = dots_saveable
checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable

checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=checkpoint_dots,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=checkpoint_dots_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
)
