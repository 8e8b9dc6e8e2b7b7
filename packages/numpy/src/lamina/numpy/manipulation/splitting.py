"""Splitting arrays into pieces: ``split``, ``array_split``, ``hsplit``, ``vsplit``,
``dsplit`` and ``unstack``."""

from __future__ import annotations

import itertools

from lamina import lax
from lamina.numpy.base.arguments import canonicalize_axis
from lamina.numpy.base.static_values import as_array, concrete_value
from lamina.numpy.manipulation.static import axis_error, shape_of

__all__ = ["array_split", "dsplit", "hsplit", "split", "unstack", "vsplit"]


def _piece_sizes(fun_name, size: int, indices_or_sections, even: bool) -> list[int]:
    """The sizes of the pieces: ``sections`` pieces as equal as allowed (exactly equal
    for ``split``), or the stretches between the split points."""
    points = concrete_value(indices_or_sections, f"in jax.numpy.{fun_name} argument 1")
    if points.ndim == 0:
        sections = int(points)
        if sections <= 0:
            raise ValueError(f"number of sections must be larger than 0, got {sections}")
        if even and size % sections:
            raise ValueError(
                f"array split does not result in an equal division: rest is {size % sections}"
            )
        small, extra = divmod(size, sections)
        return [small + 1] * extra + [small] * (sections - extra)
    bounds = [0, *(int(p) for p in points.reshape(-1)), size]
    sizes = [b - a for a, b in itertools.pairwise(bounds)]
    if any(s < 0 for s in sizes):
        raise ValueError(
            f"Sizes passed to split must be nonnegative, got {sizes}: split points must "
            f"be increasing and within the axis size {size}."
        )
    return sizes


def _split(fun_name, ary, indices_or_sections, axis, even):
    x = as_array(fun_name, ary)
    ndim = len(shape_of(x))
    if not -ndim <= axis < ndim:
        raise axis_error(axis, ndim)
    axis %= ndim
    sizes = _piece_sizes(fun_name, shape_of(x)[axis], indices_or_sections, even)
    return list(lax.split(x, sizes, axis))


def split(ary, indices_or_sections, axis=0):
    """``ary`` cut along ``axis`` into ``indices_or_sections`` equal pieces, or at the
    given (increasing) split points; a list of arrays."""
    return _split("split", ary, indices_or_sections, axis, even=True)


def array_split(ary, indices_or_sections, axis=0):
    """Like :func:`split`, but a number of sections need not divide the axis: the
    first pieces get one element more."""
    return _split("array_split", ary, indices_or_sections, axis, even=False)


def hsplit(ary, indices_or_sections):
    """:func:`split` along axis 1 (axis 0 for 1-D arrays)."""
    x = as_array("hsplit", ary)
    return _split("hsplit", x, indices_or_sections, 1 if len(shape_of(x)) > 1 else 0, True)


def vsplit(ary, indices_or_sections):
    """:func:`split` along axis 0."""
    return _split("vsplit", ary, indices_or_sections, 0, even=True)


def dsplit(ary, indices_or_sections):
    """:func:`split` along axis 2."""
    return _split("dsplit", ary, indices_or_sections, 2, even=True)


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple of arrays without that axis."""
    x = as_array("unstack", x)
    axis = canonicalize_axis(axis, len(shape_of(x)))
    return tuple(lax.unstack(x, axis))
