"""``jnp.ufunc``: functions with NumPy's ufunc methods (``reduce``, ``accumulate``,
``outer``, ``at``, ``reduceat``), ``jnp.frompyfunc`` to make one from a Python function
built on lax/jnp operations, and the ufunc objects of jax.numpy (``jnp.add``,
``jnp.multiply``, ``jnp.maximum``, ``jnp.logical_and``, ``jnp.logaddexp``, ...).

The built-in ufuncs reduce with lax reductions (``add.reduce`` is a ``reduce_sum``)
and update with lax scatters (``add.at``); any other binary ufunc reduces, accumulates
and updates in a loop over the elements, in order."""

from __future__ import annotations

import functools
import operator

import numpy as np
from lamina import lax
from lamina.interpreters import jit, vmap
from lamina.ir import dtypes
from lamina.numpy.base.arguments import (
    aval_of,
    canonicalize_axes,
    canonicalize_axis,
    check_arraylike,
    to_array,
)
from lamina.numpy.ufuncs import binary as _binary
from lamina.numpy.ufuncs import bits as _bits
from lamina.numpy.ufuncs import log_sum_exp as _logaddexp
from lamina.numpy.ufuncs.method_loops import (
    accumulate_by_scan,
    at_by_scan,
    at_by_scatter,
    call_elementwise,
    reduce_by_loop,
    reduceat_by_loop,
)
from lamina.numpy.ufuncs.method_reductions import FAST_ACCUMULATE, FAST_REDUCE

__all__ = [
    "add", "bitwise_and", "bitwise_or", "bitwise_xor", "frompyfunc", "logaddexp",
    "logaddexp2", "logical_and", "logical_or", "logical_xor", "maximum", "minimum",
    "multiply", "negative", "subtract", "ufunc",
]  # fmt: skip

_AT_INPLACE_MESSAGE = """\
Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like
np.ufunc.at(). Instead, you can pass inplace=False and capture the result; e.g.
>>> arr = jnp.add.at(arr, ind, val, inplace=False)
"""


def _static_axis(axis):
    if isinstance(axis, list):
        return tuple(axis)
    return axis


def _canonical_dtype(dtype, where):
    if dtype is None:
        return None
    return dtypes.check_and_canonicalize_user_dtype(dtype, where)


class ufunc:
    """A function that acts elementwise, with NumPy's ufunc methods.

    ``func`` takes ``nin`` arrays and returns ``nout``; ``identity`` is what
    ``reduce`` starts from (None: the first element). ``call``, ``reduce``,
    ``accumulate``, ``at`` and ``reduceat`` replace the generic implementations (which
    loop over elements) with faster ones."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None,
                 reduce=None, accumulate=None, at=None, reduceat=None):  # fmt: skip
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        self._props = {
            "func": func,
            "nin": operator.index(nin),
            "nout": operator.index(nout),
            "nargs": operator.index(nargs or nin),
            "identity": identity,
            "call": call,
            "reduce": reduce,
            "accumulate": accumulate,
            "at": at,
            "reduceat": reduceat,
        }

    _func = property(lambda self: self._props["func"])
    nin = property(lambda self: self._props["nin"])
    nout = property(lambda self: self._props["nout"])
    nargs = property(lambda self: self._props["nargs"])
    identity = property(lambda self: self._props["identity"])

    def _key(self):
        return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other) -> bool:
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        check_arraylike(self.__name__, *args)
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        call = self._props["call"]
        if call is None:
            return _call_elementwise_jit(self, *args)
        return call(*args)

    def _check_binary(self, method):
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """Fold ``a`` with this function over ``axis`` (an int, a tuple, or None for
        every axis), from ``initial`` (default: the identity) where ``where`` holds."""
        check_arraylike(f"{self.__name__}.reduce", a)
        self._check_binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if initial is not None:
            check_arraylike(f"{self.__name__}.reduce", initial)
        if where is not None:
            check_arraylike(f"{self.__name__}.reduce", where)
            if self.identity is None and initial is None:
                raise ValueError(
                    f"reduction operation {self.__name__!r} does not have an identity, so to "
                    "use a where mask one has to specify 'initial'."
                )
            if aval_of(where).dtype != np.bool_:
                raise ValueError(
                    f"where argument must have dtype=bool; got dtype={aval_of(where).dtype}"
                )
        dtype = _canonical_dtype(dtype, f"{self.__name__}.reduce")
        return _reduce_jit(self, a, axis=_static_axis(axis), dtype=dtype,
                           keepdims=bool(keepdims), initial=initial, where=where)  # fmt: skip

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """Running results of this function along ``axis``."""
        self._check_binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        check_arraylike(f"{self.__name__}.accumulate", a)
        dtype = _canonical_dtype(dtype, f"{self.__name__}.accumulate")
        return _accumulate_jit(self, a, axis=_static_axis(axis), dtype=dtype)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """``a`` with this function applied at ``indices`` (``a[indices] = f(a[indices],
        b)``, repeated indices applied repeatedly). Needs ``inplace=False``: JAX arrays
        are immutable."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE_MESSAGE)
        args = () if b is None else (b,)
        check_arraylike(f"{self.__name__}.at", a, *args)
        return _at_jit(self, a, indices, *args)

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions of the slices ``a[indices[i]:indices[i+1]]`` along ``axis``."""
        self._check_binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        check_arraylike(f"{self.__name__}.reduceat", a, indices)
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        dtype = _canonical_dtype(dtype, f"{self.__name__}.reduceat")
        return _reduceat_jit(self, a, indices, axis=operator.index(axis), dtype=dtype)

    def outer(self, A, B, /):
        """This function of every pair of elements: shape ``A.shape + B.shape``."""
        self._check_binary("outer")
        check_arraylike(f"{self.__name__}.outer", A, B)
        return _outer_jit(self, A, B)


def _call_elementwise(self, *args):
    return call_elementwise(self._func, args)


def _reduce(self, a, axis, dtype, keepdims, initial, where):
    a = to_array(a)
    custom = self._props["reduce"]
    if custom is not None:
        return custom(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)
    return reduce_by_loop(self, a, _axes(axis, a), dtype, keepdims, initial, where)


def _axes(axis, a):
    ndim = aval_of(a).ndim
    if axis is None or isinstance(axis, tuple):
        return canonicalize_axes(axis, ndim)
    return (canonicalize_axis(axis, ndim),)


def _accumulate(self, a, axis, dtype):
    custom = self._props["accumulate"]
    if custom is not None:
        return custom(a, axis=axis, dtype=dtype)
    if axis is None or isinstance(axis, tuple):
        raise ValueError("accumulate does not allow multiple axes")
    a = to_array(a)
    return accumulate_by_scan(self, a, canonicalize_axis(axis, aval_of(a).ndim), dtype)


def _at(self, a, indices, *args):
    custom = self._props["at"]
    if custom is not None:
        return custom(a, indices, *args)
    return at_by_scan(self, a, indices, args)


def _reduceat(self, a, indices, axis, dtype):
    custom = self._props["reduceat"]
    if custom is not None:
        return custom(a, indices, axis=axis, dtype=dtype)
    a = to_array(a)
    return reduceat_by_loop(self, a, indices, canonicalize_axis(axis, aval_of(a).ndim), dtype)


def _outer(self, A, B):
    A, B = to_array(A), to_array(B)
    shape_a, shape_b = aval_of(A).shape, aval_of(B).shape
    flat_a = lax.reshape(A, (int(np.prod(shape_a)),))
    flat_b = lax.reshape(B, (int(np.prod(shape_b)),))
    table = vmap(vmap(self, (None, 0)), (0, None))(flat_a, flat_b)
    return lax.reshape(table, (*shape_a, *shape_b))


_call_elementwise_jit = jit(_call_elementwise, static_argnums=(0,))
_reduce_jit = jit(_reduce, static_argnums=(0,), static_argnames=("axis", "dtype", "keepdims"))
_accumulate_jit = jit(_accumulate, static_argnums=(0,), static_argnames=("axis", "dtype"))
_at_jit = jit(_at, static_argnums=(0,))
_reduceat_jit = jit(_reduceat, static_argnums=(0,), static_argnames=("axis", "dtype"))
_outer_jit = jit(_outer, static_argnums=(0,))


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ``jnp.ufunc`` from ``func``, a function of ``nin`` scalars returning ``nout``
    values, written with jnp/lax operations; its call broadcasts and maps ``func``
    over the elements."""
    return ufunc(func, nin, nout, identity=identity)


# ---------------------------------------------------------------- built-in ufuncs


def _fast_reduce(name):
    internal = FAST_REDUCE[name]

    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        a = to_array(a)
        return internal(a, _axes(axis, a), dtype, keepdims, initial, where)

    return reduce


def _fast_accumulate(name):
    internal = FAST_ACCUMULATE[name]

    def accumulate(a, axis=0, dtype=None):
        a = to_array(a)
        if isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        if axis is not None:
            axis = canonicalize_axis(axis, aval_of(a).ndim)
        return internal(a, axis, dtype)

    return accumulate


def _builtin(body, nin, identity=None, *, scatter=False, accumulate=False):
    name = body.__name__
    return ufunc(
        body,
        nin=nin,
        nout=1,
        name=name,
        identity=identity,
        call=body,
        reduce=_fast_reduce(name) if name in FAST_REDUCE else None,
        accumulate=_fast_accumulate(name) if accumulate else None,
        at=functools.partial(_scatter_at, name) if scatter else None,
    )


def _scatter_at(name, a, indices, b=None):
    return at_by_scatter(_BY_NAME[name], a, indices, b)


add = _builtin(_binary.add, 2, 0, scatter=True, accumulate=True)
subtract = _builtin(_binary.subtract, 2, None, scatter=True)
multiply = _builtin(_binary.multiply, 2, 1, scatter=True, accumulate=True)
maximum = _builtin(_binary.maximum, 2, None, scatter=True)
minimum = _builtin(_binary.minimum, 2, None, scatter=True)
negative = _builtin(_binary.negative, 1)
bitwise_and = _builtin(_bits.bitwise_and, 2, -1)
bitwise_or = _builtin(_bits.bitwise_or, 2, 0)
bitwise_xor = _builtin(_bits.bitwise_xor, 2, 0)
logical_and = _builtin(_bits.logical_and, 2, True)
logical_or = _builtin(_bits.logical_or, 2, False)
logical_xor = _builtin(_bits.logical_xor, 2, False)
logaddexp = _builtin(_logaddexp.logaddexp, 2, -np.inf)
logaddexp2 = _builtin(_logaddexp.logaddexp2, 2, -np.inf)

_BY_NAME = {u.__name__: u for u in (add, subtract, multiply, maximum, minimum)}
