"""The methods and properties of ``jax.Array`` on lamina arrays and tracers
(``x.sum()``, ``x.reshape(2, 3)``, ``x.T``, ``x[i]``, ``x.at[i].set(v)``, ...), with
JAX's signatures.

Most methods call the ``lamina.numpy`` function of the same name, taken from the
module that defines it (``reductions.folding``, ``manipulation.shapes``, ...).
:func:`install_array_methods` puts them on concrete arrays (jaxlib's ``ArrayImpl``)
and in the method table of tracers.
"""

from __future__ import annotations

from lamina.interpreters import device_put, set_array_attribute, tracing
from lamina.numpy.array_methods import methods as impl
from lamina.numpy.base.arguments import from_jax_array, is_arraylike
from lamina.numpy.contractions import outer_and_diagonal, products
from lamina.numpy.indexing.subscripting import getitem
from lamina.numpy.manipulation import repetition, shapes
from lamina.numpy.reductions import cumulative, folding, moments
from lamina.numpy.selection import choosing, searching, sorting, taking
from lamina.numpy.ufuncs import floating

__all__: list[str] = []


# ------------------------------------------------------------------ reductions


def all(self, axis=None, out=None, keepdims=False, *, where=None):
    return folding.all(self, axis=axis, out=out, keepdims=keepdims, where=where)


def any(self, axis=None, out=None, keepdims=False, *, where=None):
    return folding.any(self, axis=axis, out=out, keepdims=keepdims, where=where)


def argmax(self, axis=None, out=None, keepdims=None):
    return folding.argmax(self, axis=axis, out=out, keepdims=keepdims)


def argmin(self, axis=None, out=None, keepdims=None):
    return folding.argmin(self, axis=axis, out=out, keepdims=keepdims)


def max(self, axis=None, out=None, keepdims=False, initial=None, where=None):
    return folding.max(self, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def min(self, axis=None, out=None, keepdims=False, initial=None, where=None):
    return folding.min(self, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    return folding.mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)


def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):  # fmt: skip
    return folding.prod(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                    initial=initial, where=where, promote_integers=promote_integers)  # fmt: skip


def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):  # fmt: skip
    return folding.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                   initial=initial, where=where, promote_integers=promote_integers)  # fmt: skip


def ptp(self, axis=None, out=None, keepdims=False):
    return folding.ptp(self, axis=axis, out=out, keepdims=keepdims)


def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):  # fmt: skip
    return moments.std(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                   where=where, correction=correction)  # fmt: skip


def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):  # fmt: skip
    return moments.var(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                   where=where, correction=correction)  # fmt: skip


def cumsum(self, axis=None, dtype=None, out=None):
    return cumulative.cumsum(self, axis=axis, dtype=dtype, out=out)


def cumprod(self, axis=None, dtype=None, out=None):
    return cumulative.cumprod(self, axis=axis, dtype=dtype, out=out)


def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return outer_and_diagonal.trace(
        self, offset=offset, axis1=axis1, axis2=axis2, dtype=dtype, out=out
    )


# ------------------------------------------------------------------ shapes


def reshape(self, *args, order="C", out_sharding=None):
    """``x.reshape(2, 3)`` or ``x.reshape((2, 3))``."""
    shape = args[0] if len(args) == 1 else args
    return shapes.reshape(self, shape, order=order, out_sharding=out_sharding)


def ravel(self, order="C", *, out_sharding=None):
    return shapes.ravel(self, order, out_sharding=out_sharding)


def flatten(self, order="C", *, out_sharding=None):
    return shapes.ravel(self, order, out_sharding=out_sharding)


def transpose(self, *args):
    """``x.transpose()``, ``x.transpose(1, 0)`` or ``x.transpose((1, 0))``."""
    axes = None if args in ((), (None,)) else (args[0] if len(args) == 1 else args)
    return shapes.transpose(self, axes)


def swapaxes(self, axis1, axis2):
    return shapes.swapaxes(self, axis1, axis2)


def squeeze(self, axis=None):
    return shapes.squeeze(self, axis)


def diagonal(self, offset=0, axis1=0, axis2=1):
    return outer_and_diagonal.diagonal(self, offset, axis1, axis2)


def repeat(self, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    return repetition.repeat(self, repeats, axis, total_repeat_length=total_repeat_length,
                       out_sharding=out_sharding)  # fmt: skip


# ------------------------------------------------------------------ selection and sorting


def argpartition(self, kth, axis=-1):
    return sorting.argpartition(self, kth, axis)


def argsort(self, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    return sorting.argsort(self, axis, kind=kind, order=order, stable=stable,
                        descending=descending)  # fmt: skip


def sort(self, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    return sorting.sort(self, axis, kind=kind, order=order, stable=stable, descending=descending)


def searchsorted(self, v, side="left", sorter=None, *, method="scan"):
    return searching.searchsorted(self, v, side=side, sorter=sorter, method=method)


def choose(self, choices, out=None, mode="raise"):
    return choosing.choose(self, choices, out=out, mode=mode)


def compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
    return choosing.compress(condition, self, axis, size=size, fill_value=fill_value, out=out)


def nonzero(self, *, fill_value=None, size=None):
    return choosing.nonzero(self, size=size, fill_value=fill_value)


def take(self, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):  # fmt: skip
    return taking.take(self, indices, axis=axis, out=out, mode=mode,
                    unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                    fill_value=fill_value)  # fmt: skip


# ------------------------------------------------------------------ arithmetic


def clip(self, min=None, max=None):
    return floating.clip(self, min=min, max=max)


def round(self, decimals=0, out=None):
    return floating.round(self, decimals, out)


def dot(self, b, *, precision=None, preferred_element_type=None):
    return products.dot(self, b, precision=precision, preferred_element_type=preferred_element_type)


def matmul_operator(self, other):
    if not is_arraylike(other):
        return NotImplemented
    return products.matmul(self, from_jax_array(other))


def rmatmul_operator(self, other):
    if not is_arraylike(other):
        return NotImplemented
    return products.matmul(from_jax_array(other), self)


def to_device(self, device, *, stream=None):
    return device_put(self, device)


# ------------------------------------------------------------------ the tables

_METHODS = {
    f.__name__: f
    for f in (
        all, any, argmax, argmin, max, min, mean, prod, sum, ptp, std, var, cumsum, cumprod,
        trace, reshape, ravel, flatten, transpose, swapaxes, squeeze, diagonal, repeat,
        argpartition, argsort, sort, searchsorted, choose, compress, nonzero, take, clip,
        round, dot, to_device,
    )
}  # fmt: skip
_METHODS.update(
    astype=impl.astype,
    view=impl.view,
    byteswap=impl.byteswap,
    conj=impl.conj,
    conjugate=impl.conjugate,
    copy=impl.copy,
    __getitem__=getitem,
    __setitem__=impl.setitem,
    __contains__=impl.contains,
    __copy__=impl.copy_protocol,
    __deepcopy__=impl.deepcopy_protocol,
    __round__=impl.round_protocol,
    __hex__=impl.hex_protocol,
    __oct__=impl.oct_protocol,
    __matmul__=matmul_operator,
    __rmatmul__=rmatmul_operator,
)

_PROPERTIES = {
    "T": impl.transpose_property,
    "mT": impl.matrix_transpose_property,
    "real": impl.real_property,
    "imag": impl.imag_property,
    "at": impl.at_property,
    "flat": impl.flat_property,
    "itemsize": lambda self: self.dtype.itemsize,
    "__numpy_dtype__": lambda self: self.dtype,
}

_CONCRETE_ONLY_PROPERTIES = {
    "device_buffer": impl.device_buffer_property,
    "device_buffers": impl.device_buffers_property,
}

# Concrete arrays have their own (reading the value); traced ones need these.
_TRACER_ONLY_METHODS = {
    "item": impl.traced_item,
    "tolist": impl.traced_tolist,
    "tobytes": impl.traced_tobytes,
    "_unstack": impl.unstack,
}


def install_array_methods(namespace) -> None:
    """Put the methods and properties on concrete arrays and in the tracers' table;
    ``namespace`` (lamina.numpy) is what ``__array_namespace__`` answers."""
    for name, method in {**_METHODS, **impl.namespace_methods(namespace)}.items():
        tracing.array_methods[name] = method
        set_array_attribute(name, method)
    for name, getter in _PROPERTIES.items():
        tracing.array_methods[name] = property(getter)
        set_array_attribute(name, property(getter))
    for name, getter in _CONCRETE_ONLY_PROPERTIES.items():
        set_array_attribute(name, property(getter))
    tracing.array_methods.update(_TRACER_ONLY_METHODS)
