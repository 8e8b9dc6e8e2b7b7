"""`lamina.custom_batching`: user-defined batching rules (`jax.custom_batching`).

``custom_vmap`` (from lamina-interpreters) runs a rule of the user's under ``vmap``;
``sequential_vmap`` is the rule that maps the function over the batch with
``lax.map``, one element at a time.
"""

from lamina import lax
from lamina.interpreters import custom_vmap
from lamina.ir import tree_util

__all__ = ["custom_vmap", "sequential_vmap"]


def sequential_vmap(f):
    """``f`` as a ``custom_vmap`` function whose ``vmap`` is a loop (``lax.map``) over
    the batch: for functions that cannot batch themselves. Every output is batched."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        flags = tree_util.tree_leaves(in_batched)
        leaves, tree = tree_util.tree_flatten(list(args))
        mapped = [x for x, b in zip(leaves, flags, strict=True) if b]

        def one(mapped_slice):
            it = iter(mapped_slice)
            merged = [next(it) if b else x for x, b in zip(leaves, flags, strict=True)]
            return f(*tree_util.tree_unflatten(tree, merged))

        out = lax.map(one, mapped)
        return out, tree_util.tree_map(lambda _: True, out)

    return f
