"""``jax.interpreters.batching``: JAX's API for batching rules.

lamina's batching rules are JAX's "fancy" ones, ``rule(axis_data, vals, dims, **params)
-> (out, out_dim)``, so ``fancy_primitive_batchers`` writes straight into
``lamina.ir.batching_rules`` and reads every primitive's rule. ``primitive_batchers[p] =
rule`` takes JAX's plain form ``rule(vals, dims, **params)`` and
``axis_primitive_batchers[p] = rule`` the form ``rule(axis_size, axis_name, spmd_name,
vals, dims, **params)``; both register an adapter, and read back the rule set.
``defvectorized``, ``defbroadcasting`` and ``defreducer`` register the usual rules.

``register_vmappable(data_type, spec_type, axis_size_type, to_elt, from_elt,
make_iota)`` makes ``vmap`` map values of a custom type by its handlers, as JAX's does:
``to_elt(cont, get_idx, x, spec)`` gives the element the mapped function sees
(``cont(part, spec)`` maps a part, ``get_idx()`` is the element's index),
``from_elt(cont, axis_size, elt, spec)`` rebuilds an output (``cont(axis_size, part,
spec)``); instances of ``spec_type`` are valid ``in_axes`` / ``out_axes`` leaves.
``unregister_vmappable`` removes nothing, as in JAX. Names imported ``as`` themselves
are not JAX's: lamina's other layers use them.
"""

from __future__ import annotations

from lamina.interpreters.core.rule_registries import RuleRegistry
from lamina.interpreters.transformations.batching import (
    AxisData as AxisData,
)
from lamina.interpreters.transformations.batching import (
    BatchTrace as BatchTrace,
)
from lamina.interpreters.transformations.batching import (
    BatchTracer as BatchTracer,
)
from lamina.interpreters.transformations.batching import (
    axis_env as axis_env,
)
from lamina.interpreters.transformations.batching import (
    axis_frame as axis_frame,
)
from lamina.interpreters.transformations.batching import (
    batch_flat as batch_flat,
)
from lamina.interpreters.transformations.batching import (
    batch_jaxpr as batch_jaxpr,
)
from lamina.interpreters.transformations.batching import (
    bdim_at_front,
    broadcast,
    defbroadcasting,
    defreducer,
    defvectorized,
    register_vmappable,
)
from lamina.interpreters.transformations.batching import (
    broadcast_batched as broadcast_batched,
)
from lamina.interpreters.transformations.batching import (
    elementwise_rule as elementwise_rule,
)
from lamina.interpreters.transformations.batching import (
    is_vmappable as is_vmappable,
)
from lamina.interpreters.transformations.batching import (
    matchaxis as matchaxis,
)
from lamina.interpreters.transformations.batching import (
    moveaxis as moveaxis,
)
from lamina.interpreters.transformations.batching import (
    not_mapped as not_mapped,
)
from lamina.interpreters.transformations.batching import (
    shape_of as shape_of,
)
from lamina.interpreters.transformations.batching import (
    shape_ops as shape_ops,
)
from lamina.interpreters.transformations.batching import (
    vectorized_rule as vectorized_rule,
)
from lamina.interpreters.transformations.batching import (
    vmap as vmap,
)
from lamina.ir import Primitive
from lamina.ir import batching_rules as batching_rules

__all__ = [
    "axis_primitive_batchers",
    "bdim_at_front",
    "broadcast",
    "defbroadcasting",
    "defreducer",
    "defvectorized",
    "fancy_primitive_batchers",
    "primitive_batchers",
    "register_vmappable",
    "unregister_vmappable",
]


def _unbatched(p: Primitive, vals, params):
    out = p.bind(*vals, **params)
    return (out, [not_mapped] * len(out)) if p.multiple_results else (out, not_mapped)


def _from_plain(p: Primitive, rule):
    def fancy(axis_data, vals, dims, **params):
        if all(d is not_mapped for d in dims):
            return _unbatched(p, vals, params)
        return rule(vals, dims, **params)

    return fancy


def _from_axis(p: Primitive, rule):
    def fancy(axis_data, vals, dims, **params):
        return rule(axis_data.size, axis_data.name, axis_data.spmd_name, vals, dims, **params)

    return fancy


fancy_primitive_batchers = RuleRegistry(batching_rules)
primitive_batchers = RuleRegistry(batching_rules, _from_plain, reads_table=False)
axis_primitive_batchers = RuleRegistry(batching_rules, _from_axis, reads_table=False)


def unregister_vmappable(data_type: type) -> None:
    """Kept for JAX's API; as in JAX it removes nothing."""
    del data_type
