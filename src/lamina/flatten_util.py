"""`lamina.flatten_util`: a pytree of arrays as one flat vector (`jax.flatten_util`)."""

from __future__ import annotations

import numpy as np

import lamina.numpy as jnp
from lamina import lax
from lamina.ir import dtypes
from lamina.ir.tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


class Unravel:
    """Rebuilds the pytree from a flat vector: each chunk reshaped and cast back to its
    leaf's dtype. Hashable and comparable, so it can be a static argument of ``jit``."""

    def __init__(self, treedef, shapes, leaf_dtypes, flat_dtype):
        self.treedef = treedef
        self.shapes = tuple(shapes)
        self.leaf_dtypes = tuple(leaf_dtypes)
        self.flat_dtype = flat_dtype
        self.sizes = tuple(int(np.prod(s, dtype=np.int64)) for s in self.shapes)

    def _key(self):
        return (self.treedef, self.shapes, self.leaf_dtypes, self.flat_dtype)

    def __eq__(self, other):
        return isinstance(other, Unravel) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __call__(self, flat):
        if np.dtype(dtypes.dtype(flat)) != self.flat_dtype:
            raise TypeError(
                f"unravel function given array of dtype {dtypes.dtype(flat)}, but expected "
                f"dtype {self.flat_dtype}"
            )
        total = sum(self.sizes)
        if np.shape(flat) != (total,):
            raise ValueError(
                f"unravel function given an array of shape {np.shape(flat)}, but the pytree "
                f"it was made for holds {total} values: expected shape ({total},)"
            )
        leaves, start = [], 0
        for size, shape, dtype in zip(self.sizes, self.shapes, self.leaf_dtypes, strict=True):
            chunk = lax.slice(flat, (start,), (start + size,))
            leaves.append(_cast(lax.reshape(chunk, shape), dtype))
            start += size
        return tree_unflatten(self.treedef, leaves)


def _cast(x, dtype):
    if dtypes.issubdtype(x.dtype, np.complexfloating) and not dtypes.issubdtype(
        dtype, np.complexfloating
    ):
        x = lax.real(x)  # the imaginary parts of real leaves are zero
    return lax.convert_element_type(x, dtype)


def ravel_pytree(pytree):
    """``(flat, unravel)``: the leaves of ``pytree`` raveled and concatenated into one
    1-D array of their promoted dtype, and the function that turns such a vector back
    into the pytree (each leaf in its own shape and dtype)."""
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        flat_dtype = np.dtype(dtypes.canonicalize_dtype(np.float32))
        return jnp.zeros(0, flat_dtype), Unravel(treedef, (), (), flat_dtype)
    leaves = [jnp.asarray(leaf) for leaf in leaves]
    leaf_dtypes = [np.dtype(leaf.dtype) for leaf in leaves]
    flat_dtype = np.dtype(jnp.result_type(*leaf_dtypes))
    parts = [jnp.ravel(lax.convert_element_type(leaf, flat_dtype)) for leaf in leaves]
    flat = jnp.concatenate(parts) if len(parts) > 1 else parts[0]
    return flat, Unravel(treedef, [leaf.shape for leaf in leaves], leaf_dtypes, flat_dtype)
