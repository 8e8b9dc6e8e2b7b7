"""The rules of every registered primitive: which transformations each one lacks.

Every primitive of the assembled library registers its rules through ir's rule tables
(``Primitive.def_*``). This file records, per kind of rule, the primitives that have
none, with the reason; a rule that appears or disappears changes the inventory and fails
here, so a missing rule is a decision written down, not an accident. Transpose rules
exist only for linear primitives, so for them the inventory lists who has one.
"""

import pytest

import lamina  # registers every layer's primitives
import lamina.experimental.checkify
import lamina.export
import lamina.nn
import lamina.numpy
import lamina.pallas
import lamina.random
import lamina.scipy
import lamina.sharding  # noqa: F401
from lamina.ir import (
    abstract_eval_rules,
    batching_rules,
    collective_rules,
    default_registry,
    impl_rules,
    jvp_rules,
    lowering_rules,
    transpose_rules,
)

_COLLECTIVES = "a collective over a named axis: vmap runs it through its collective rule"
_NAMED_AXIS = "only meaningful inside a named-axis context (shard_map, with the sharding layer)"
_TOKENS = "tokens and effects carry no differentiable value"
_NO_DERIVATIVE = "no derivative is defined for it (grad raises, naming the primitive)"
_REFS = (
    "a mutable array reference operation: discharged (lamina.ir.discharge_rules) before lowering"
)

WITHOUT = {
    "jvp": {
        "after_all": _TOKENS,
        "create_token": _TOKENS,
        "psend": _TOKENS,
        "precv": _TOKENS,
        "dce_sink": _TOKENS,
        "empty": "creates uninitialised memory; it has no inputs to differentiate",
        "platform_index": "takes no operands; an integer of the lowering platform",
        "dot_product_attention_fwd_wrapper": "differentiated by its custom_vjp (cuDNN's backward)",
        "dot_product_attention_bwd_wrapper": "the backward of a custom_vjp; not differentiated",
        "iota_2x32_shape": "integer index generator",
        "lu_pivots_to_permutation": "integer permutation",
        "rng_uniform": "random numbers; no derivative",
        "composite": "differentiated through its decomposition by the caller",
        "call_exported": "differentiated by the custom_vjp around it, with the exported VJP",
        "pmax": _NO_DERIVATIVE,
        "pmin": _NO_DERIVATIVE,
        "select_and_scatter": _NO_DERIVATIVE,
        "nextafter": _NO_DERIVATIVE,
        "zeta": _NO_DERIVATIVE,
        "igamma_grad_a": _NO_DERIVATIVE,
        "cholesky_update": _NO_DERIVATIVE,
        "geqrf": _NO_DERIVATIVE,
        "householder_product": _NO_DERIVATIVE,
        "ormqr": _NO_DERIVATIVE,
        "hessenberg": _NO_DERIVATIVE,
        "schur": _NO_DERIVATIVE,
        "tridiagonal": _NO_DERIVATIVE,
        "atomic_rmw": "as in JAX, atomics in Pallas kernels have no derivative",
        "atomic_cas": "as in JAX, atomics in Pallas kernels have no derivative",
    },
    "batching": {
        "all_gather": _COLLECTIVES,
        "all_to_all": _COLLECTIVES,
        "axis_index": _COLLECTIVES,
        "ppermute": _COLLECTIVES,
        "ragged_all_to_all": _COLLECTIVES,
        "reduce_scatter": _COLLECTIVES,
        "psend": _TOKENS,
        "precv": _TOKENS,
        "composite": "vmapped through its decomposition by the caller",
        "empty": "creates uninitialised memory; it has no inputs to batch",
        "iota_2x32_shape": "takes no array operands",
        "platform_index": "takes no operands; the same on every element",
        "rng_uniform": "stateful random numbers; no batching rule",
        "cholesky_update": "no batching rule yet (vmap raises, naming the primitive)",
        "select_and_scatter": "no batching rule yet (vmap raises, naming the primitive)",
        "linear_call": "none in JAX either (vmap raises, naming the primitive)",
        **{
            name: "only inside Pallas kernels, which vmap batches whole (a new grid axis)"
            for name in ("masked_load", "masked_swap", "atomic_rmw", "atomic_cas")
        },
    },
    "lowering": {
        **{
            name: _REFS
            for name in ("addupdate", "empty_ref", "free_ref", "freeze", "get", "new_ref", "swap")
        },
        "ragged_all_to_all": _NAMED_AXIS,
        **{name: _REFS for name in ("masked_load", "masked_swap", "atomic_rmw", "atomic_cas")},
    },
}

# The linear primitives: the ones with a transpose rule.
WITH_TRANSPOSE = {
    *("add", "add_any", "sub", "neg", "mul", "div", "conj", "real", "imag", "complex"),
    *("convert_element_type", "reduce_precision", "copy", "device_put", "select_n"),
    *("broadcast_in_dim", "reshape", "squeeze", "transpose", "rev", "pad", "concatenate"),
    *("slice", "dynamic_slice", "dynamic_update_slice", "gather", "split", "stack"),
    *("unstack", "tile", "reduce_sum", "reduce_window_sum", "cumsum", "fft", "dot_general"),
    *("conv_general_dilated", "triangular_solve", "tridiagonal_solve", "custom_linear_solve"),
    *("scatter", "scatter-add", "scatter-mul", "scatter-sub", "select_and_gather_add"),
    *(
        "select_and_scatter_add",
        "psum",
        "psum_invariant",
        "pvary",
        "all_gather",
        "all_to_all",
        "ppermute",
    ),
    *("ragged_all_to_all", "reduce_scatter", "cond", "while", "scan", "jit", "remat2"),
    *("custom_jvp_call", "custom_vjp_call", "custom_lin", "name", "optimization_barrier"),
    *("sharding_constraint", "reshard", "stage", "linear_call", "shard_map"),
    # as JAX, remat_opt's transpose raises that higher-order AD is not supported
    "remat_opt",
    # references: tangent references are transposed into cotangent references
    *("new_ref", "empty_ref", "freeze", "get", "swap", "addupdate"),
    # callbacks: as JAX, pure/io raise that they have no transpose, debug ones pass None
    *("pure_callback", "io_callback", "debug_callback", "debug_print"),
}

TABLES = {"jvp": jvp_rules, "batching": batching_rules, "lowering": lowering_rules}


def _primitives():
    return [default_registry.lookup(name) for name in default_registry.names()]


def test_the_library_registers_its_primitives():
    names = set(default_registry.names())
    assert {"add", "dot_general", "scan", "cond", "gather", "threefry2x32"} <= names


@pytest.mark.parametrize("primitive", _primitives(), ids=str)
def test_every_primitive_evaluates_abstractly_and_concretely(primitive):
    assert primitive in abstract_eval_rules, f"{primitive} has no abstract evaluation rule"
    assert primitive in impl_rules, f"{primitive} has no evaluation rule"


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_missing_rules_are_the_recorded_ones(kind):
    table = TABLES[kind]
    missing = {p.name for p in _primitives() if p not in table}
    recorded = set(WITHOUT[kind])
    assert missing == recorded, (
        f"primitives without a {kind} rule changed: newly missing "
        f"{sorted(missing - recorded)}, newly defined {sorted(recorded - missing)}; define "
        f"the rule, or record the primitive and the reason in WITHOUT[{kind!r}]"
    )


def test_collectives_batch_through_their_collective_rules():
    for name, _ in WITHOUT["batching"].items():
        if WITHOUT["batching"][name] == _COLLECTIVES:
            assert default_registry.lookup(name) in collective_rules, name


def test_transpose_rules_are_exactly_the_linear_primitives():
    have = {p.name for p in _primitives() if p in transpose_rules}
    assert have == WITH_TRANSPOSE, (
        f"transpose rules changed: new {sorted(have - WITH_TRANSPOSE)}, gone "
        f"{sorted(WITH_TRANSPOSE - have)}; update WITH_TRANSPOSE"
    )
