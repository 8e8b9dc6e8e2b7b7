"""``map``: a function applied along the leading axis of its arguments, as a ``scan``
without a carry (in vmapped blocks with ``batch_size``)."""

from __future__ import annotations

from lamina.interpreters import vmap
from lamina.ir import reshard_to, tree_util
from lamina.lax.base.primitives import reshape
from lamina.lax.base.reshaping import concatenate
from lamina.lax.base.reshaping import slice as lax_slice
from lamina.lax.control_flow import bodies
from lamina.lax.control_flow.scan import scan

__all__ = ["map"]


def map(f, xs, *, batch_size=None):
    """``f`` applied to each slice of ``xs`` along its leading axis, as a ``scan``."""
    if batch_size is not None:
        return _batched_map(f, xs, batch_size)
    _, ys = scan(lambda _, x: ((), f(x)), (), xs)
    return ys


def _unsplit(x):
    """``x`` resharded with no dimension split, and its type's sharding (``x`` itself
    and ``None`` when its type carries none)."""
    s = bodies.abstractify(x).type_sharding
    if s is None:
        return x, None
    return reshard_to(x, s.update(spec=type(s.spec)(*[None] * len(s.spec)))), s


def _split_again(x, s, lead: int):
    """``x`` resharded as ``s`` says, behind ``lead`` new leading dimensions."""
    if s is None:
        return x
    return reshard_to(x, s.update(spec=type(s.spec)(*[None] * lead, *s.spec)))


def _batched_map(f, xs, batch_size):
    """``map`` in blocks of ``batch_size`` (``f`` vmapped over each block); the
    remainder that does not fill a block is one more vmapped call, as in JAX. Over
    explicit mesh axes each block and the remainder are cut unsplit and resharded."""
    leaves = tree_util.tree_leaves(xs)
    n = bodies.abstractify(leaves[0]).shape[0] if leaves else 0
    blocks, rest = divmod(n, batch_size)

    def cut(x, start, stop):
        shape = bodies.abstractify(x).shape
        return lax_slice(x, (start, *[0] * (len(shape) - 1)), (stop, *shape[1:]))

    def split(x):
        shape = bodies.abstractify(x).shape
        x, s = _unsplit(x)
        head = cut(x, 0, blocks * batch_size) if rest else x
        return _split_again(reshape(head, (blocks, batch_size, *shape[1:])), s, 1)

    def remainder(x):
        x, s = _unsplit(x)
        return _split_again(cut(x, blocks * batch_size, n), s, 0)

    scanned = tree_util.tree_map(split, xs) if blocks else None
    tail = tree_util.tree_map(remainder, xs) if rest else None
    ys = None
    if blocks:
        _, ys = scan(lambda _, x: ((), vmap(f)(x)), (), scanned)
    tail = vmap(f)(tail) if rest else None
    if ys is not None:
        ys = tree_util.tree_map(lambda y: reshape(y, (blocks * batch_size, *y.shape[2:])), ys)
    if not rest:
        return ys
    if ys is None:
        return tail
    return tree_util.tree_map(lambda a, b: concatenate([a, b], 0), ys, tail)
