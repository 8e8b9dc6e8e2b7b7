"""`lamina.extend.random`: PRNG implementations and key primitives
(`jax.extend.random`).

A PRNG implementation (``PRNGImpl``) is the shape of its ``uint32`` key data and four
functions on one key's data: ``seed``, ``split``, ``random_bits`` and ``fold_in``. Keys
made with :func:`seed_with_impl` (or ``lamina.random.key(seed, impl=...)``) carry their
implementation in their dtype.
"""

from __future__ import annotations

from lamina import lax as _lax
from lamina import numpy as _jnp
from lamina.extend.core import primitives as _primitives
from lamina.random import key as _key

__all__ = [
    "define_prng_impl",
    "random_seed",
    "rbg_prng_impl",
    "seed_with_impl",
    "threefry2x32_p",
    "threefry_2x32",
    "threefry_prng_impl",
    "unsafe_rbg_prng_impl",
]

threefry_prng_impl = _lax.THREEFRY
rbg_prng_impl = _lax.RBG
unsafe_rbg_prng_impl = _lax.UNSAFE_RBG
threefry2x32_p = _primitives.threefry2x32_p
threefry_2x32 = _lax.threefry_2x32


def define_prng_impl(
    *, key_shape, seed, split, random_bits, fold_in, name: str = "<unnamed>", tag: str = "?"
):
    """A PRNG implementation from its key data shape and its functions on one key's
    data: ``seed(seed)``, ``split(key, shape)``, ``random_bits(key, bit_width,
    shape)``, ``fold_in(key, data)``."""
    return _lax.PRNGImpl(
        key_shape=tuple(key_shape),
        seed=seed,
        split=split,
        random_bits=random_bits,
        fold_in=fold_in,
        name=name,
        tag=tag,
    )


def random_seed(seeds, impl):
    """Keys of ``impl``, one per integer of ``seeds`` (an array's shape is kept)."""
    impl = _lax.resolve_prng_impl(impl)
    if _jnp.ndim(seeds) == 0:
        return _key(seeds, impl=impl)
    return _lax.random_seed(_jnp.asarray(seeds), impl)


def seed_with_impl(impl, seed):
    """The key of ``impl`` seeded with the integer ``seed``."""
    return random_seed(seed, impl)
