"""Shape plumbing on lax alone, for the folders that may not import the public
shape functions of :mod:`lamina.numpy.manipulation`: flattening, moving axes, and
broadcasting by NumPy's rules (size-1 axes squeezed away, then one
``broadcast_in_dim``). Part of the base tier: every folder may import it; it imports
only ``base.arguments``."""

from __future__ import annotations

import math

from lamina import lax
from lamina.ir import canonicalize_dim
from lamina.numpy.base.arguments import aval_of, canonicalize_axis, to_array

__all__ = ["broadcast_arrays", "broadcast_to", "moveaxis", "ravel"]


def ravel(x):
    """``x`` (made an array) flattened to one axis; a 1-d array is returned as it is."""
    x = to_array(x)
    shape = aval_of(x).shape
    return x if len(shape) == 1 else lax.reshape(x, (math.prod(shape),))


def moveaxis(x, source, destination):
    """``x`` (made an array) with axes ``source`` moved to positions ``destination``
    (ints, or sequences of ints of the same length), the other axes keeping their order,
    as ``jnp.moveaxis``; ``x`` itself where nothing moves."""
    x = to_array(x)
    ndim = aval_of(x).ndim
    if not isinstance(source, (tuple, list)):
        source, destination = (source,), (destination,)
    source = [canonicalize_axis(a, ndim) for a in source]
    destination = [canonicalize_axis(a, ndim) for a in destination]
    order = [d for d in range(ndim) if d not in source]
    for dst, src in sorted(zip(destination, source, strict=True)):
        order.insert(dst, src)
    if order == list(range(ndim)):
        return x
    return lax.transpose(x, tuple(order))


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` by NumPy's rules (leading axes added, size-1 axes
    stretched): ``x`` itself (not converted) when it has that shape already, else its
    size-1 axes that stretch squeezed away and one ``broadcast_in_dim``. ValueError when
    it cannot be broadcast."""
    shape = tuple(map(canonicalize_dim, shape))
    old = aval_of(x).shape
    if old == shape:
        return x
    lead = len(shape) - len(old)
    if lead < 0 or any(o not in (1, n) for o, n in zip(old, shape[lead:], strict=True)):
        raise ValueError(f"Incompatible shapes for broadcasting: {old} and requested shape {shape}")
    kept = [i for i, (o, n) in enumerate(zip(old, shape[lead:], strict=True)) if o == n]
    squeezed = lax.reshape(x, tuple(old[i] for i in kept)) if len(kept) != len(old) else x
    return lax.broadcast_in_dim(squeezed, shape, tuple(lead + i for i in kept))


def broadcast_arrays(*xs):
    """The ``xs`` made arrays and broadcast to their common shape (dtypes unchanged)."""
    xs = [to_array(x) for x in xs]
    shapes = {aval_of(x).shape for x in xs}
    if len(shapes) == 1:  # the common case: nothing to broadcast
        return xs
    shape = lax.broadcast_shapes(*shapes)
    return [broadcast_to(x, shape) for x in xs]
