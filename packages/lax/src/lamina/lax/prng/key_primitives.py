"""The primitives on typed PRNG keys (dtypes ``key<fry>``, ``key<rbg>``, ...), as JAX
0.10.2 has them:

=====================================  ============================================
``random_seed[impl] seeds``            integer seeds -> keys of the same shape
``random_bits[bit_width shape] keys``  ``uint{bit_width}[*keys.shape, *shape]``
``random_split[shape] keys``           ``key[*keys.shape, *shape]``
``random_fold_in keys msgs``           keys with ``uint32`` data folded in
``random_wrap[impl] data``             ``uint32[..., *key_shape]`` data -> keys
``random_unwrap keys``                 keys -> their ``uint32[..., *key_shape]`` data
``random_clone keys``                  the same keys (for JAX's key-reuse checker)
=====================================  ============================================

Each acts on every key of its operand: lowered as the operation of the keys'
implementation (:class:`.key_types.PRNGImpl`) on one key's physical data, mapped with
``vmap`` over the key array's shape, as JAX maps it (a scalar operand beside a key array
is not mapped; that matters for the implementations built on ``rng_bit_generator``,
whose batching draws for the whole batch from the first key). Outputs are integers or
keys, so their tangents are zero (``float0``).
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import (
    ArrayImpl,
    ad,
    apply_extended,
    batching,
    lower_on_physical,
    physical_value,
    put_on_device,
    vmap,
)
from lamina.ir import (
    Primitive,
    ShapedArray,
    broadcasting_spec,
    declare_param,
    dtypes,
    physical_aval,
    spec_of,
)
from lamina.lax.base.operands import aval_of, broadcasting_shape
from lamina.lax.base.reshaping import squeeze
from lamina.lax.prng.key_types import PRNG_IMPLS_BY_TAG, KeyTy, PRNGKeyArray

__all__ = [
    "random_bits",
    "random_bits_p",
    "random_clone",
    "random_clone_p",
    "random_fold_in",
    "random_fold_in_p",
    "random_seed",
    "random_seed_p",
    "random_split",
    "random_split_p",
    "random_unwrap",
    "random_unwrap_p",
    "random_wrap",
    "random_wrap_p",
]

_U32 = np.dtype(np.uint32)


def _read_impl(text: str):
    """The implementation a printed ``impl=fry`` names (the text itself if lamina has no
    implementation of that tag)."""
    return PRNG_IMPLS_BY_TAG.get(text, text)


def _key_primitive(name: str, abstract_eval, lower_one, impl=None) -> Primitive:
    """A primitive on key arrays. ``lower_one(impl, *physical operands, **params)``
    computes it for operands of one element each (one key's data, a scalar seed) with
    the PRNG implementation ``impl``; it is mapped over the operands' logical shapes.
    ``lower_one=None``: the primitive is the identity on physical data."""
    prim = Primitive(name)
    prim.def_abstract_eval(abstract_eval)

    def lowering(ctx, *args, **params):
        if lower_one is None:
            return list(args)
        prng_impl = params.get("impl") or ctx.avals_in[0].dtype.impl

        def per_key(*xs):
            return [lower_one(prng_impl, *xs, **params)]

        shapes = [a.shape for a in ctx.avals_in]
        mapped = _map_over_keys(per_key, *shapes)
        return lower_on_physical(ctx, mapped, *args, name=f"{name} lowering")

    prim.def_lowering(lowering)
    if impl is None:

        def impl(*args, **params):
            return apply_extended(prim, args, params)

    prim.def_impl(impl)
    ad.zero_jvp(prim)
    return prim


def _map_over_keys(fun, *shapes):
    """``fun`` of one element per operand, mapped over operands of logical ``shapes``
    (one, or two broadcasting ones): a scalar operand beside an array is not mapped, and
    along an axis of size 1 in one operand only the other is mapped."""
    if len(shapes) == 1 or not shapes[1]:
        for _ in shapes[0]:
            fun = vmap(fun) if len(shapes) == 1 else vmap(fun, in_axes=(0, None))
        return fun
    if not shapes[0]:
        for _ in shapes[1]:
            fun = vmap(fun, in_axes=(None, 0))
        return fun
    for size1, size2 in reversed(list(zip(*shapes, strict=True))):
        fun = vmap(fun) if size1 == size2 else _unmap_singleton(fun, left=size1 == 1)
    return fun


def _unmap_singleton(fun, left: bool):
    """``fun`` mapped over the leading axis of one operand, the other's size-1 leading
    axis dropped (the left one's if ``left``)."""

    def mapped(x, y):
        if left:
            return vmap(fun, in_axes=(None, 0))(squeeze(x, (0,)), y)
        return vmap(fun, in_axes=(0, None))(x, squeeze(y, (0,)))

    return mapped


def _key_impl_of(aval, name: str):
    if not isinstance(aval.dtype, KeyTy):
        raise TypeError(f"{name} expects a typed PRNG key array, got {aval.str_short()}")
    return aval.dtype._impl


def _keys_first_rule(prim):
    """Batching rule for a primitive of one key operand whose results lead with the
    keys' shape: the batch axis goes first."""

    def rule(axis_data, vals, dims, **params):
        (keys,), (d,) = vals, dims
        return prim.bind(batching.moveaxis(keys, d, 0), **params), 0

    batching.batching_rules[prim] = rule


# ---------------------------------------------------------------- random_seed


def _seed_abstract_eval(seeds, *, impl):
    if not dtypes.issubdtype(seeds.dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seeds.str_short()}")
    return ShapedArray(seeds.shape, KeyTy(impl))


random_seed_p = _key_primitive(
    "random_seed", _seed_abstract_eval, lambda prng, seed, *, impl: prng.seed(seed)
)
batching.defvectorized(random_seed_p)
declare_param(random_seed_p, "impl", _read_impl)
random_seed_p.def_sharding(lambda seeds, *, impl: spec_of(seeds))


def random_seed(seeds, impl):
    return random_seed_p.bind(seeds, impl=impl)


# ---------------------------------------------------------------- random_bits


def _bits_abstract_eval(keys, *, bit_width, shape):
    _key_impl_of(keys, "random_bits")
    if bit_width not in (8, 16, 32, 64):
        raise TypeError(f"random_bits got invalid bit width {bit_width}")
    return ShapedArray((*keys.shape, *shape), np.dtype(f"uint{bit_width}"))


random_bits_p = _key_primitive(
    "random_bits",
    _bits_abstract_eval,
    lambda prng, key, *, bit_width, shape: prng.random_bits(key, bit_width, shape),
)
_keys_first_rule(random_bits_p)
# Over explicit mesh axes: the keys' dimensions keep their splits, the new ones have none.
random_bits_p.def_sharding(lambda keys, *, bit_width, shape: spec_of(keys) + (None,) * len(shape))


def random_bits(keys, bit_width: int, shape):
    """``uint{bit_width}[*keys.shape, *shape]`` random bits of each key."""
    return random_bits_p.bind(keys, bit_width=int(bit_width), shape=tuple(shape))


# ---------------------------------------------------------------- random_split


def _split_abstract_eval(keys, *, shape):
    _key_impl_of(keys, "random_split")
    return ShapedArray((*keys.shape, *shape), keys.dtype)


random_split_p = _key_primitive(
    "random_split", _split_abstract_eval, lambda prng, key, *, shape: prng.split(key, shape)
)
_keys_first_rule(random_split_p)
random_split_p.def_sharding(lambda keys, *, shape: spec_of(keys) + (None,) * len(shape))


def random_split(keys, shape):
    """``key[*keys.shape, *shape]``: new keys from each key."""
    return random_split_p.bind(keys, shape=tuple(shape))


# ---------------------------------------------------------------- random_fold_in


def _fold_in_abstract_eval(keys, msgs):
    _key_impl_of(keys, "random_fold_in")
    if msgs.dtype != _U32:
        raise TypeError(f"random_fold_in expects uint32 data, got {msgs.str_short()}")
    shape = broadcasting_shape("random_fold_in", [keys.shape, msgs.shape])
    return ShapedArray(shape, keys.dtype)


random_fold_in_p = _key_primitive(
    "random_fold_in", _fold_in_abstract_eval, lambda prng, key, msg: prng.fold_in(key, msg)
)
batching.defbroadcasting(random_fold_in_p)
random_fold_in_p.def_sharding(
    lambda keys, msgs: broadcasting_spec(keys, msgs, name="random_fold_in")
)


def random_fold_in(keys, msgs):
    return random_fold_in_p.bind(keys, msgs)


# ---------------------------------------------------------------- wrap, unwrap, clone


def _wrap_abstract_eval(data, *, impl):
    n = len(impl.key_shape)
    if data.dtype != _U32 or tuple(data.shape[data.ndim - n :]) != impl.key_shape:
        raise TypeError(
            "random_wrap expects uint32 key data of shape (..., "
            f"{', '.join(map(str, impl.key_shape))}), got {data.str_short()}"
        )
    return ShapedArray(data.shape[: data.ndim - n], KeyTy(impl))


def _wrap_impl(data, *, impl):
    _wrap_abstract_eval(aval_of(data), impl=impl)
    if not isinstance(data, ArrayImpl):  # host data goes to the device first
        data = put_on_device(data)
    return PRNGKeyArray(impl, data)


random_wrap_p = _key_primitive("random_wrap", _wrap_abstract_eval, None, impl=_wrap_impl)
declare_param(random_wrap_p, "impl", _read_impl)
random_wrap_p.def_sharding(lambda data, *, impl: spec_of(data)[: data.ndim - len(impl.key_shape)])


def _wrap_batching_rule(axis_data, vals, dims, *, impl):
    (data,), (d,) = vals, dims
    return random_wrap_p.bind(batching.moveaxis(data, d, 0), impl=impl), 0


batching.batching_rules[random_wrap_p] = _wrap_batching_rule


def random_wrap(data, impl):
    return random_wrap_p.bind(data, impl=impl)


def _unwrap_abstract_eval(keys):
    _key_impl_of(keys, "random_unwrap")
    return physical_aval(keys)


random_unwrap_p = _key_primitive(
    "random_unwrap", _unwrap_abstract_eval, None, impl=lambda keys: physical_value(keys)
)
batching.defvectorized(random_unwrap_p)
random_unwrap_p.def_sharding(lambda keys: spec_of(keys) + (None,) * len(keys.dtype._impl.key_shape))


def random_unwrap(keys):
    return random_unwrap_p.bind(keys)


def _clone_impl(keys):
    if isinstance(keys, PRNGKeyArray):
        return PRNGKeyArray(keys._impl, keys._base_array)
    return keys


random_clone_p = _key_primitive(
    "random_clone",
    lambda keys: keys,  # raw keys too, as JAX's
    None,
    impl=_clone_impl,
)
batching.defvectorized(random_clone_p)


def random_clone(keys):
    return random_clone_p.bind(keys)
