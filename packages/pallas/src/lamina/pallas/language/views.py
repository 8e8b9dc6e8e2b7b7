"""``ref.at[idx]``: a view of part of a reference (``TransformedRef``).

A view keeps the reference and, per axis of it, an integer index or a slice (start,
size, stride); indexing a view composes its index with the view's. Reading and writing
a view (``view[...]``, ``view[idx] = v``) read and write the reference. Importing this
module installs ``.at`` on references being traced.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ref_methods
from lamina.lax import Slice, add, mul, ref_addupdate, ref_get, ref_set, ref_swap

__all__ = ["TransformedRef", "as_view", "resolve"]


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _offset(start, i, stride):
    if _is_int(start) and _is_int(i):
        return int(start) + int(i) * stride
    scaled = i if stride == 1 else mul(i, np.asarray(stride, np.int32))
    return scaled if _is_int(start) and start == 0 else add(start, scaled)


def _full_index(idx, ndim: int) -> tuple:
    if idx is None or idx is Ellipsis:
        idx = ()
    elif not isinstance(idx, tuple):
        idx = (idx,)
    if sum(i is Ellipsis for i in idx) > 1:
        raise ValueError("Only one ellipsis is supported.")
    if any(i is Ellipsis for i in idx):
        at = next(k for k, i in enumerate(idx) if i is Ellipsis)
        idx = (*idx[:at], *[slice(None)] * (ndim - len(idx) + 1), *idx[at + 1 :])
    if len(idx) > ndim:
        raise ValueError(f"`indices` must not be longer than `shape`: indices={idx}")
    return (*idx, *[slice(None)] * (ndim - len(idx)))


class TransformedRef:
    """A view of ``ref``: ``axes`` holds, per axis of ``ref``, an index (an int or an
    int scalar array) or a ``Slice``."""

    def __init__(self, ref, axes: tuple):
        self.ref = ref
        self.axes = axes

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.size for a in self.axes if isinstance(a, Slice))

    @property
    def dtype(self):
        return self.ref.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def compose(self, idx) -> tuple:
        """The index into the reference that ``idx`` into this view selects."""
        sliced = [a for a in self.axes if isinstance(a, Slice)]
        new = iter(_full_index(idx, len(sliced)))
        out = []
        for a in self.axes:
            if not isinstance(a, Slice):
                out.append(a)
                continue
            i = next(new)
            if isinstance(i, slice):
                i = Slice.from_slice(i, a.size)
            if isinstance(i, Slice):
                if (
                    _is_int(i.start)
                    and _is_int(i.size)
                    and (i.start + (i.size - 1) * i.stride >= a.size and i.size > 0)
                ):
                    raise ValueError(
                        f"Out of bound slice: start={i.start}, size={i.size}, "
                        f"stride={i.stride}, dim={a.size}."
                    )
                out.append(Slice(_offset(a.start, i.start, a.stride), i.size,
                                 a.stride * i.stride))  # fmt: skip
            else:
                out.append(_offset(a.start, i, a.stride))
        return tuple(out)

    @property
    def at(self):
        return _At(self)

    def __getitem__(self, idx):
        return ref_get(self.ref, self.compose(idx))

    def __setitem__(self, idx, value):
        ref_set(self.ref, self.compose(idx), value)

    def swap(self, idx, value):
        return ref_swap(self.ref, self.compose(idx), value)

    def addupdate(self, idx, value):
        ref_addupdate(self.ref, self.compose(idx), value)

    def __repr__(self):
        return f"TransformedRef(ref={self.ref}, axes={self.axes})"


def _whole(shape) -> tuple:
    return tuple(Slice(0, d, 1) for d in shape)


class _At:
    def __init__(self, ref):
        self.ref = ref

    def __getitem__(self, idx):
        if isinstance(self.ref, TransformedRef):
            return TransformedRef(self.ref.ref, self.ref.compose(idx))
        whole = TransformedRef(self.ref, _whole(self.ref.shape))
        return TransformedRef(self.ref, whole.compose(idx))


def as_view(ref) -> TransformedRef:
    """``ref`` as a view (the whole of it, for a reference)."""
    return ref if isinstance(ref, TransformedRef) else TransformedRef(ref, _whole(ref.shape))


def resolve(ref, idx=None):
    """The reference and the index into it that ``ref`` (a reference or a view) with
    ``idx`` selects."""
    if isinstance(ref, TransformedRef):
        return ref.ref, ref.compose(idx)
    return ref, idx


ref_methods["at"] = property(lambda ref: _At(ref))
