"""Key-reuse signatures of lax's primitives (for ``jax_debug_key_reuse``; the checker
is :mod:`lamina.interpreters.key_reuse`), as JAX 0.10.2 gives them.

Drawing bits and splitting consume a key; seeding, wrapping, cloning and folding in
make fresh keys; unwrapping and comparing leave keys alone; the structural primitives
pass keys through, slicing consumes the elements it takes, and control flow takes the
signatures of its bodies, refusing bodies that would consume a key on every iteration.
A primitive not listed here consumes every key it is given.
"""

from __future__ import annotations

from collections import defaultdict
from functools import reduce

import numpy as np

from lamina.interpreters import KeyReuseError, key_reuse
from lamina.ir import dtypes
from lamina.lax.base.primitives import (
    broadcast_in_dim_p,
    convert_element_type_p,
    copy_p,
    eq_p,
    ne_p,
    reshape_p,
)
from lamina.lax.base.reshaping import concatenate_p, slice_p, squeeze_p
from lamina.lax.control_flow.cond import cond_p
from lamina.lax.control_flow.loops import while_p
from lamina.lax.control_flow.scan import scan_p
from lamina.lax.prng.key_primitives import (
    random_bits_p,
    random_clone_p,
    random_fold_in_p,
    random_seed_p,
    random_split_p,
    random_unwrap_p,
    random_wrap_p,
)
from lamina.lax.sharding_constraint import sharding_constraint_p
from lamina.lax.slicing.dynamic_slicing import dynamic_slice_p, dynamic_update_slice_p
from lamina.lax.slicing.gather_scatter import gather_p, scatter_p

__all__: list[str] = []

KeyReuseSignature, Sink, Source, Forward = (
    key_reuse.KeyReuseSignature, key_reuse.Sink, key_reuse.Source, key_reuse.Forward
)  # fmt: skip
dynamic_key_reuse_signature = key_reuse.dynamic_key_reuse_signature
jaxpr_type_signature = key_reuse.jaxpr_type_signature
key_reuse_signatures = key_reuse.key_reuse_signatures

_FORWARD = KeyReuseSignature(Forward(0, 0))

key_reuse_signatures.update({
    random_bits_p: KeyReuseSignature(Sink(0)),
    random_split_p: KeyReuseSignature(Sink(0), Source(0)),
    random_fold_in_p: KeyReuseSignature(Source(0)),
    random_seed_p: KeyReuseSignature(Source(0)),
    random_wrap_p: KeyReuseSignature(Source(0)),
    random_clone_p: KeyReuseSignature(Source(0)),
    random_unwrap_p: KeyReuseSignature(),
    eq_p: KeyReuseSignature(),
    ne_p: KeyReuseSignature(),
    broadcast_in_dim_p: _FORWARD,
    copy_p: _FORWARD,
    convert_element_type_p: _FORWARD,
    reshape_p: _FORWARD,
    squeeze_p: _FORWARD,
    sharding_constraint_p: _FORWARD,
    dynamic_slice_p: _FORWARD,
    gather_p: _FORWARD,
    dynamic_update_slice_p: KeyReuseSignature(Sink(1), Forward(0, 0)),
    scatter_p: KeyReuseSignature(Sink(2), Forward(0, 0)),
})  # fmt: skip


def _is_key(aval) -> bool:
    return dtypes.issubdtype(aval.dtype, dtypes.prng_key)


@dynamic_key_reuse_signature
def _slice_signature(eqn):
    aval = eqn.invars[0].aval
    if not _is_key(aval):
        return _FORWARD
    params = eqn.params
    strides = params["strides"] or (1,) * aval.ndim
    taken = np.zeros(aval.shape, dtype=bool)
    taken[tuple(map(slice, params["start_indices"], params["limit_indices"], strides))] = True
    return KeyReuseSignature(Sink(0, taken), Source(0))


@dynamic_key_reuse_signature
def _concatenate_signature(eqn):
    n = len(eqn.invars)
    if n == 1:
        return _FORWARD
    return KeyReuseSignature(*(Sink(i) for i in range(n)), Source(0))


@dynamic_key_reuse_signature
def _cond_signature(eqn):
    # What some branch consumes is consumed; an output is fresh if every branch makes
    # it fresh, forwarded if every branch forwards it. Operand 0 is the index.
    signatures = [jaxpr_type_signature(b) for b in eqn.params["branches"]]
    sinks, sources = defaultdict(list), defaultdict(list)
    for sig in signatures:
        for s in sig.sinks:
            sinks[s.idx].append(s.mask)
        for s in sig.sources:
            sources[s.idx].append(s.mask)
    forwards = set.intersection(*(set(sig.forwards) for sig in signatures))
    return KeyReuseSignature(
        *(Sink(i + 1, reduce(np.logical_or, masks)) for i, masks in sinks.items()),
        *(Source(i, reduce(np.logical_and, masks)) for i, masks in sources.items()),
        *(Forward(f.in_idx + 1, f.out_idx) for f in forwards),
    )


@dynamic_key_reuse_signature
def _scan_signature(eqn):
    jaxpr = eqn.params["jaxpr"]
    num_consts, num_carry = eqn.params["num_consts"], eqn.params["num_carry"]
    signature = jaxpr_type_signature(jaxpr)
    if any(np.any(s.mask) for s in signature.sinks if s.idx < num_consts):
        raise KeyReuseError(
            "scan body function leads to key reuse when repeatedly executed, because key "
            f"constants are repeatedly consumed:\n  signature={signature!r}\n  eqn={eqn}\n"
            f"  jaxpr={jaxpr}"
        )
    carry_sinks = {s.idx - num_consts for s in signature.sinks
                   if 0 <= s.idx - num_consts < num_carry and np.any(s.mask)}  # fmt: skip
    carry_sources = {s.idx for s in signature.sources if s.idx < num_carry and np.any(s.mask)}
    if not carry_sinks <= carry_sources:
        raise KeyReuseError(
            "scan body function leads to key reuse when repeatedly executed, because "
            f"consumed inputs don't match sourced outputs:\n  signature={signature!r}\n"
            f"  eqn={eqn}\n  jaxpr={jaxpr}"
        )
    return signature


@dynamic_key_reuse_signature
def _while_signature(eqn):
    params = eqn.params
    cond_n, body_n = params["cond_nconsts"], params["body_nconsts"]
    cond_sig = jaxpr_type_signature(params["cond_jaxpr"])
    body_sig = jaxpr_type_signature(params["body_jaxpr"])
    if any(np.any(s.mask) for s in cond_sig.sinks if s.idx < cond_n):
        raise KeyReuseError(
            "while_loop cond function leads to key reuse when repeatedly executed: "
            f"  cond_signature={cond_sig!r}\n  eqn={eqn}"
        )
    if any(np.any(s.mask) for s in body_sig.sinks if s.idx < body_n):
        raise KeyReuseError(
            "while_loop body function leads to key reuse when repeatedly executed: "
            f"  body_signature={body_sig!r}\n  eqn={eqn}"
        )
    body_carry = {s.idx - body_n for s in body_sig.sinks if s.idx >= body_n}
    cond_carry = {s.idx - cond_n for s in cond_sig.sinks if s.idx >= cond_n}
    fresh = {s.idx for s in body_sig.sources}
    if not cond_carry <= fresh:
        raise KeyReuseError(
            "while_loop cond function leads to key reuse when repeatedly executed: "
            f"  cond_signature={cond_sig!r}\n  eqn={eqn}"
        )
    if not body_carry <= fresh:
        raise KeyReuseError(
            "while_loop body function leads to key reuse when repeatedly executed: "
            f"  body_signature={body_sig!r}\n  eqn={eqn}"
        )
    if body_carry & cond_carry:
        raise KeyReuseError(
            "while_loop cond and body functions both use the same key: "
            f"  cond_signature={cond_sig!r}\n  body_signature={body_sig!r}\n  eqn={eqn}"
        )
    return body_sig


key_reuse_signatures.update({
    slice_p: _slice_signature,
    concatenate_p: _concatenate_signature,
    cond_p: _cond_signature,
    scan_p: _scan_signature,
    while_p: _while_signature,
})  # fmt: skip
