"""``device_put`` inside traced code: the ``device_put`` primitive (JAX's
``device_put_p``, re-exported by ``lamina.lax``).

Outside a trace ``device_put`` moves buffers directly (:mod:`.transfer`, which also
gives this primitive its impl rule, the same move). Under ``jit``, ``grad`` or ``vmap``
a placement request becomes an equation: in the compiled program a sharding over
several devices becomes a layout constraint (XLA's ``@Sharding`` custom call), anything
else keeps the value as it is. Differentiation puts tangents where their primals go;
the transpose puts cotangents back where the primals came from, always as a copy, as
JAX does.
"""

from __future__ import annotations

from jaxlib import xla_client

from lamina.interpreters.core.tangents import Zero
from lamina.interpreters.jaxprs import key_reuse
from lamina.interpreters.jaxprs import mlir_builders as mb
from lamina.interpreters.runtime.sharding import Sharding, sharding_with_new_dim
from lamina.ir import Primitive, spec_placement, typed_result

__all__ = ["device_put_p", "traced_device_put"]

REUSE_INPUT = xla_client.ArrayCopySemantics.REUSE_INPUT
ALWAYS_COPY = xla_client.ArrayCopySemantics.ALWAYS_COPY

device_put_p = Primitive("device_put")
device_put_p.multiple_results = True
# Keys pass through (for jax_debug_key_reuse).
key_reuse.key_reuse_signatures[device_put_p] = key_reuse.dynamic_key_reuse_signature(
    lambda eqn: key_reuse.KeyReuseSignature(
        *(key_reuse.Forward(i, i) for i in range(len(eqn.invars)))
    )
)


def _jvp(primals, tangents, *, devices, srcs, copy_semantics):
    outs = device_put_p.bind(*primals, devices=devices, srcs=srcs, copy_semantics=copy_semantics)
    live = [i for i, t in enumerate(tangents) if not isinstance(t, Zero)]
    moved = device_put_p.bind(
        *(tangents[i] for i in live),
        devices=tuple(devices[i] for i in live),
        srcs=tuple(srcs[i] for i in live),
        copy_semantics=tuple(copy_semantics[i] for i in live),
    ) if live else []  # fmt: skip
    out_tangents = list(tangents)
    for i, t in zip(live, moved, strict=True):
        out_tangents[i] = t
    return outs, out_tangents


def _transpose(cts, *xs, devices, srcs, copy_semantics):
    del xs, devices, copy_semantics
    live = [i for i, ct in enumerate(cts) if not isinstance(ct, Zero)]
    moved = device_put_p.bind(
        *(cts[i] for i in live),
        devices=tuple(srcs[i] for i in live),
        srcs=tuple(None for _ in live),
        copy_semantics=tuple(ALWAYS_COPY for _ in live),
    ) if live else []  # fmt: skip
    out = list(cts)
    for i, ct in zip(live, moved, strict=True):
        out[i] = ct
    return out


def _batching(axis_data, vals, dims, *, devices, **params):
    del axis_data
    devices = tuple(
        sharding_with_new_dim(s, x.ndim - 1, d) if _partitioned(s) and d is not None else s
        for s, x, d in zip(devices, vals, dims, strict=True)
    )
    return device_put_p.bind(*vals, devices=devices, **params), list(dims)


def _partitioned(target) -> bool:
    """A sharding over several devices (a type's sharding, over an abstract mesh, is
    left to XLA)."""
    if not isinstance(target, Sharding) or target.num_devices <= 1:
        return False
    mesh = getattr(target, "mesh", None)
    return mesh is None or getattr(mesh, "abstract_mesh", None) is not mesh


def _lowering(ctx, *xs, devices, **_):
    return [
        mb.sharding_op(x, aval, target._to_xla_hlo_sharding(aval.ndim))
        if _partitioned(target)
        else x
        for x, aval, target in zip(xs, ctx.avals_out, devices, strict=True)
    ]


def _abstract_eval(*xs, devices, **_):
    """Each value as it is, typed by its target when that is over Explicit mesh axes."""
    return [typed_result(x, d) for x, d in zip(xs, devices, strict=True)]


device_put_p.def_abstract_eval(_abstract_eval)
device_put_p.def_lowering(_lowering)
device_put_p.def_jvp(_jvp)
device_put_p.def_transpose(_transpose)
device_put_p.def_batching(_batching)


def traced_device_put(leaves: list, device) -> list:
    """``leaves`` (some traced) placed on ``device`` by one ``device_put`` equation."""
    n = len(leaves)
    device = spec_placement(device) or device  # a PartitionSpec: over the mesh in force
    # typed values record where they come from: their cotangents go back there
    srcs = tuple(getattr(getattr(x, "aval", None), "type_sharding", None) for x in leaves)
    return device_put_p.bind(
        *leaves,
        devices=(device,) * n,
        srcs=srcs,
        copy_semantics=(REUSE_INPUT,) * n,
    )
