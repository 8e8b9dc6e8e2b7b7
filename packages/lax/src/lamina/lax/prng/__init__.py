"""PRNG keys in lax: the Threefry-2x32 hash, the implementations on XLA's bit generator
(``rbg``, ``unsafe_rbg``), the key dtypes (``key<fry>``, ...) and typed key arrays, the
primitives on keys (``random_seed``, ``random_bits``, ``random_split``,
``random_fold_in``, ``random_wrap``, ``random_unwrap``, ``random_clone``), their indexing,
the structural lax primitives that accept keys, and typed keys from key data.

Tiers, bottom to top: :mod:`.threefry` (the hash and the raw-key operations),
:mod:`.rbg` (the raw-key operations of ``rbg`` and ``unsafe_rbg``), :mod:`.key_indexing`
(NumPy indexing of concrete key arrays), :mod:`.key_types` (implementations, the key
dtypes, ``PRNGKeyArray``), :mod:`.key_primitives`, :mod:`.key_structural` (lax's
structural primitives on keys), :mod:`.key_data` and :mod:`.key_reuse` (the key-reuse
signatures of lax's primitives).
The samplers of ``jax.random`` are built on these in lamina-random.
"""

from lamina.lax.prng import (  # noqa: F401  (registrations: key-reuse signatures, structural ops)
    key_reuse,
    key_structural,
)
from lamina.lax.prng.key_data import check_key_data, check_prng_key, is_typed_key, wrap_key_data
from lamina.lax.prng.key_primitives import *  # noqa: F403
from lamina.lax.prng.key_primitives import __all__ as _PRIMITIVE_NAMES
from lamina.lax.prng.key_types import (
    PRNG_IMPLS,
    RBG,
    THREEFRY,
    UNSAFE_RBG,
    KeyTy,
    PRNGImpl,
    PRNGKeyArray,
    PRNGSpec,
    default_prng_impl,
    key_dtype,
    resolve_prng_impl,
)
from lamina.lax.prng.threefry import threefry2x32_p, threefry_2x32

__all__ = [  # the key primitives and their functions, then the rest
    *_PRIMITIVE_NAMES,
    "PRNG_IMPLS",
    "RBG",
    "THREEFRY",
    "UNSAFE_RBG",
    "KeyTy",
    "PRNGImpl",
    "PRNGKeyArray",
    "PRNGSpec",
    "check_key_data",
    "check_prng_key",
    "default_prng_impl",
    "is_typed_key",
    "key_dtype",
    "resolve_prng_impl",
    "threefry2x32_p",
    "threefry_2x32",
    "wrap_key_data",
]
