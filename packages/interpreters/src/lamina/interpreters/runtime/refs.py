"""``Ref``: a mutable reference to an array, outside any trace.

A ``Ref`` holds an array (``_buf``) that operations on the reference replace: reading
``ref[idx]`` slices it, ``ref[idx] = v`` and ``ref[idx] += v`` put a new array in its
place. Its type is an ``AbstractRef`` (``Ref{f32[3]}``). A jitted call taking a ``Ref``
(as an argument or a constant) passes its array in and stores the final value back
(:mod:`.executables`). Indexing is installed by lax in ``tracing.ref_methods``, the same
table that tracers of type ``AbstractRef`` use, and ``isinstance(x, Ref)`` holds for
those tracers too.
"""

from __future__ import annotations

from lamina.interpreters.core.tracing import Tracer, ref_methods
from lamina.ir import AbstractRef

__all__ = ["Ref", "is_ref_value"]


class _RefMeta(type):
    def __instancecheck__(cls, instance):
        return super().__instancecheck__(instance) or (
            isinstance(instance, Tracer) and type(instance.aval) is AbstractRef
        )


def _method(name: str):
    def method(self, *args, **kwargs):
        impl = ref_methods.get(name)
        if impl is None:
            raise TypeError(f"mutable array references do not support '{name.strip('_')}' yet")
        return impl(self, *args, **kwargs)

    method.__name__ = name
    return method


class Ref(metaclass=_RefMeta):
    """A mutable array reference (``jax.Ref``); made by ``new_ref``."""

    __slots__ = ("__weakref__", "_aval", "_buf")

    def __init__(self, aval: AbstractRef, buf):
        if not isinstance(aval, AbstractRef):
            raise TypeError(f"Ref needs an AbstractRef, got {aval!r}")
        self._aval = aval
        self._buf = buf

    aval = property(lambda self: self._aval)
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)
    sharding = property(lambda self: self._buf.sharding)
    committed = property(lambda self: True)

    __getitem__ = _method("__getitem__")
    __setitem__ = _method("__setitem__")
    addupdate = _method("addupdate")

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def unsafe_buffer_pointer(self):
        return self._buf.unsafe_buffer_pointer()

    @property
    def at(self):
        raise NotImplementedError("Ref.at is not supported (as in JAX 0.10.2)")

    def __repr__(self):
        return "Ref" + repr(self._buf)[len("Array") :]

    __str__ = __repr__


def is_ref_value(x) -> bool:
    """Whether ``x`` is a concrete ``Ref`` (not a tracer)."""
    return type(x) is Ref
