"""Arrays from functions, buffers, strings and files, and back: ``fromfunction``,
``frombuffer``, ``fromstring``, ``fromfile``, ``fromiter``, ``load``, ``save`` and
``savez``.

Reading and writing happen on the host through NumPy, as in JAX. ``fromfile`` and
``fromiter`` raise NotImplementedError exactly as JAX's do: reading a file or consuming
an iterator is a side effect that transformations would silently repeat or drop.
"""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.interpreters import vmap
from lamina.ir import dtypes
from lamina.numpy.creation.conversion import asarray
from lamina.numpy.creation.filled import canonical_shape

__all__ = [
    "frombuffer",
    "fromfile",
    "fromfunction",
    "fromiter",
    "fromstring",
    "load",
    "save",
    "savez",
]

# JAX re-exports NumPy's writers: they read arrays through ``__array__``.
save = np.save
savez = np.savez


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function`` evaluated at every index of an array of ``shape``: it is called,
    vectorized with ``vmap``, with one scalar index per axis (as values of ``dtype``)
    and the keyword arguments ``kwargs``."""
    shape = canonical_shape(shape, "fromfunction")
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "fromfunction")

    def at_index(*index):
        return function(*index, **kwargs)

    mapped = at_index
    for axis in reversed(range(len(shape))):
        in_axes = tuple(0 if i == axis else None for i in range(len(shape)))
        mapped = vmap(mapped, in_axes=in_axes)
    return mapped(*(lax.iota(dtype, size) for size in shape))


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """The bytes of ``buffer`` read as a 1-D array of ``dtype`` (on the host)."""
    return asarray(np.frombuffer(buffer, dtype=np.dtype(dtype), count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    """The numbers written in ``string``, separated by ``sep``, as a 1-D array."""
    return asarray(np.fromstring(string, dtype=np.dtype(dtype), count=count, sep=sep))


def fromfile(*args, **kwargs):
    """Not provided, as in JAX: use ``jnp.asarray(np.fromfile(...))``."""
    raise NotImplementedError(
        "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for "
        "use with JIT and other JAX transformations. Consider using "
        "jnp.asarray(np.fromfile(...)) instead, although care should be taken if "
        "np.fromfile is used within a jax transformations because of its potential "
        "side-effect of consuming the file object; for more information see "
        "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions"
    )


def fromiter(*args, **kwargs):
    """Not provided, as in JAX: use ``jnp.asarray(np.fromiter(...))``."""
    raise NotImplementedError(
        "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for "
        "use with JIT and other JAX transformations. Consider using "
        "jnp.asarray(np.fromiter(...)) instead, although care should be taken if "
        "np.fromiter is used within a jax transformations because of its potential "
        "side-effect of consuming the iterable object; for more information see "
        "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions"
    )


def load(file, *args, **kwargs):
    """``np.load``, with a ``.npy`` array of a numeric dtype returned as a lamina array.
    NumPy writes bfloat16 arrays as 2-byte void records; they are read back as
    bfloat16. ``.npz`` archives and non-numeric arrays come back as NumPy objects."""
    out = np.load(file, *args, **kwargs)
    if not isinstance(out, np.ndarray):
        return out
    if out.dtype == np.dtype("V2"):
        out = out.view(dtypes.bfloat16)
    if out.dtype not in dtypes.ALL_DTYPES:
        return out
    return asarray(out)
