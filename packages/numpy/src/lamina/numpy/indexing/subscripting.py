"""``x[idx]`` and ``x.at[idx]`` on lamina arrays and tracers, with NumPy's indexing rules
and JAX's out-of-bounds behaviour.

Integers and slices alone take JAX's route: a static ``slice`` when every integer is
static and in bounds; else, for slices of step 1 or -1, one ``dynamic_slice`` reading
every start at run time (so checkify's index check sees an out-of-bounds ``x[5]``);
then ``rev``, ``squeeze`` and ``expand_dims`` for ``None``. Anything else (integer
arrays, other steps beside a dynamic index, ``mode="fill"``) becomes one ``gather``,
and every ``.at[idx]`` update one ``scatter``. Out-of-bounds reads are clamped (JAX's
default), out-of-bounds updates dropped, unless ``mode`` says otherwise. Boolean masks
must be concrete: the result's shape depends on them.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np
from lamina.interpreters import Tracer
from lamina.ir import auto_axes_call, dtypes, is_symbolic_dim, max_dim, tree_util
from lamina.lax import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    aval_of,
    broadcast_in_dim,
    dynamic_slice,
    expand_dims,
    gather,
    power,
    reshape,
    rev,
    scatter,
    scatter_add,
    scatter_apply,
    scatter_max,
    scatter_min,
    scatter_mul,
    scatter_sub,
    squeeze,
    to_dtype,
    true_divide,
)
from lamina.lax import slice as lax_slice
from lamina.numpy.base.arguments import check_arraylike, to_array
from lamina.numpy.indexing.gather_plans import plan_gather
from lamina.numpy.indexing.parsing import StaticInt, Window, is_traced_scalar, parse_index

__all__: list[str] = []

_BASIC_MODES = (None, GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP)


def getitem(x, idx, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None, wrap_negative_indices=True):  # fmt: skip
    """``x[idx]`` (and ``x.at[idx].get(...)``)."""
    if idx is Ellipsis or (isinstance(idx, tuple) and not idx):
        return x
    aval = aval_of(x)
    parsed = parse_index(idx, aval.shape, wrap_negative_indices)
    parsed_mode = None if mode is None else GatherScatterMode.from_any(mode)
    if not parsed.has_arrays and parsed_mode in _BASIC_MODES and not _sharded_part(x, parsed):
        out = _static_slicing(x, parsed, wrap_negative_indices, parsed_mode)
        if out is None:
            out = _dynamic_slicing(x, parsed, wrap_negative_indices)
        if out is not None:
            return out
    plan = plan_gather(parsed, wrap_negative_indices)
    if plan.is_empty:
        zero = to_dtype(np.zeros((), aval.dtype), aval.dtype, aval.weak_type)
        return broadcast_in_dim(zero, plan.out_shape, ())
    if plan.empty_axis is not None:
        raise IndexError(f"index is out of bounds for axis {plan.empty_axis} with size 0")
    operand = _expand(x, aval.shape, parsed.expanded_shape)
    dnums = GatherDimensionNumbers(plan.offset_dims, plan.collapsed_dims, plan.start_index_map)
    # Without integer arrays no element is read twice, and reads go in order (JAX's flags).
    return gather(
        operand,
        plan.indices,
        dnums,
        plan.slice_sizes,
        indices_are_sorted=indices_are_sorted or not parsed.has_arrays,
        unique_indices=unique_indices or not parsed.has_arrays,
        mode=parsed_mode,
        fill_value=fill_value,
    )


def _expand(x, shape, expanded_shape):
    """``x`` with the size-1 axes of ``None`` entries inserted (``broadcast_in_dim``, as
    ``expand_dims`` does). Matching axes left to right is enough: where it could pair
    an axis with either of two size-1 axes, both choices give the same array."""
    shape, expanded_shape = tuple(shape), tuple(expanded_shape)
    if shape == expanded_shape:
        return x
    kept, position = [], 0
    for size in shape:
        while expanded_shape[position] != size:
            position += 1
        kept.append(position)
        position += 1
    return broadcast_in_dim(x, expanded_shape, tuple(kept))


def _collapse(x, shape):
    """``x`` without the size-1 axes :func:`_expand` inserted."""
    return x if aval_of(x).shape == tuple(shape) else reshape(x, tuple(shape))


def _in_bounds(parsed, wrap) -> bool:
    """Whether every static integer addresses an element (JAX's check before it reads
    with a static slice)."""
    return all(
        0 <= (e.value if wrap else operator.index(e.given)) < size
        for e, size in zip(parsed.entries, parsed.expanded_shape, strict=True)
        if isinstance(e, StaticInt)
    )


def _sharded_part(x, parsed) -> bool:
    """Whether ``x`` is an array laid out over several devices and the index takes part
    of an axis: JAX reads that with a gather (whose sharding rule applies), not a slice."""
    sharding = None if isinstance(x, Tracer) else getattr(x, "sharding", None)
    if sharding is None or sharding.num_devices == 1:
        return False
    for entry, size in zip(parsed.entries, parsed.expanded_shape, strict=True):
        if not isinstance(entry, Window):
            return True
        if not entry.new_axis and (abs(entry.step) != 1 or entry.length != size):
            return True
    return False


def _static_slicing(x, parsed, wrap, mode):
    """Static integers and slices: a ``slice``, a ``rev`` for negative steps, then
    dropping the integer axes and inserting the ``None`` ones. None where JAX would
    not: a traced or 0-d array index, or (unless ``mode`` is clip) an integer out of
    bounds."""
    entries, shape = parsed.entries, parsed.expanded_shape
    if any(not isinstance(e, (Window, StaticInt)) or getattr(e, "is_array", False)
           for e in entries):  # fmt: skip
        return None
    if mode is not GatherScatterMode.CLIP and not _in_bounds(parsed, wrap):
        return None
    starts, limits, strides, sizes = [], [], [], []
    reversed_axes, dropped, new_axes = [], [], []
    for entry, size in zip(entries, shape, strict=True):
        if isinstance(entry, Window) and entry.new_axis:
            new_axes.append(len(starts) - len(dropped) + len(new_axes))
            continue
        axis = len(starts)
        sizes.append(size)
        if isinstance(entry, StaticInt):
            start = min(max(entry.value if wrap else operator.index(entry.given), 0), size - 1)
            starts.append(start)
            limits.append(start + 1)
            strides.append(1)
            dropped.append(axis)
            continue
        start, stop, step = entry.bounds
        if step < 0:
            first = min(size, stop + 1 + abs(start - stop - 1) % -step)
            starts.append(first)
            limits.append(max(first, start + 1))
            strides.append(-step)
            reversed_axes.append(axis)
        else:
            starts.append(start)
            limits.append(max_dim(start, stop))
            strides.append(step)
    unit = all(s == 1 for s in strides)
    if not unit or any((a, b) != (0, n) for a, b, n in zip(starts, limits, sizes, strict=True)):
        x = lax_slice(x, starts, limits, None if unit else strides)
    return _finish(x, reversed_axes, dropped, new_axes)


def _finish(x, reversed_axes, dropped, new_axes):
    if reversed_axes:
        x = rev(x, reversed_axes)
    if dropped:
        x = squeeze(x, tuple(dropped))
    if new_axes:
        x = expand_dims(x, new_axes)
    return x


def _start(entry, dtype):
    """The start index of an integer entry as JAX reads it: a lamina array (of
    ``dtype`` unless None; a static one converted on the host, as JAX folds it)."""
    if isinstance(entry, int):  # a slice's start
        return to_dtype(entry, dtype)
    if not isinstance(entry, StaticInt):
        return entry.index if dtype is None else to_dtype(entry.index, dtype)
    given = entry.given
    if isinstance(given, int):
        int_dtype = dtypes.canonicalize_dtype(np.int64)
        if not np.iinfo(int_dtype).min <= given <= np.iinfo(int_dtype).max:
            raise OverflowError(f"Python int {given} too large to convert to {int_dtype}")
        given = np.asarray(given, int_dtype)
    return to_array(np.asarray(given)) if dtype is None else to_dtype(given, dtype)


def _dynamic_slicing(x, parsed, wrap):
    """Integers (static or traced scalars) and slices of step 1 or -1: one
    ``dynamic_slice`` whose every start is read at run time (negative ones counted from
    the end when ``wrap``), then as :func:`_static_slicing`. None for other steps."""
    entries, shape = parsed.entries, parsed.expanded_shape
    starts, sizes, reversed_axes, dropped, new_axes = [], [], [], [], []
    for entry in entries:
        if isinstance(entry, Window) and entry.new_axis:
            new_axes.append(len(starts) - len(dropped) + len(new_axes))
            continue
        axis = len(starts)
        if isinstance(entry, Window):
            start, stop, step = entry.bounds
            if step not in (1, -1):
                return None
            if step < 0:
                starts.append(stop + 1)
                sizes.append(max(0, start - stop))
                reversed_axes.append(axis)
            else:
                starts.append(start)
                sizes.append(max(0, stop - start))
        elif isinstance(entry, StaticInt) or is_traced_scalar(entry):
            starts.append(entry)
            sizes.append(1)
            dropped.append(axis)
        else:
            return None
    dtype = None  # several starts share one index type
    if len(starts) > 1:
        static = [d for d in shape if not is_symbolic_dim(d)]  # symbolic sizes fit an int32
        dtype = np.int32 if max(static, default=0) < 2**31 or not dtypes.x64_enabled() else np.int64
    starts = [_start(s, dtype) for s in starts]
    x = dynamic_slice(x, starts, sizes, allow_negative_indices=wrap)
    return _finish(x, reversed_axes, dropped, new_axes)


# ------------------------------------------------------------------ x.at[idx] updates

_SCATTERS = {
    "set": scatter,
    "add": scatter_add,
    "subtract": scatter_sub,
    "multiply": scatter_mul,
    "min": scatter_min,
    "max": scatter_max,
}


def _update_values(values, dtype, shape):
    """``values`` as updates of ``dtype`` broadcast to ``shape``, with JAX's warning
    when the cast can lose information."""
    if isinstance(values, (list, tuple)):
        values = np.asarray(values)
    check_arraylike("scatter", values)
    values = to_array(values)
    aval = aval_of(values)
    if aval.dtype != dtype:
        if dtypes.result_type(dtype, aval) != dtype:
            warnings.warn(
                "scatter inputs have incompatible types: cannot safely cast value from "
                f"dtype={aval.dtype} to dtype={dtype} with "
                "jax_numpy_dtype_promotion=standard. In future JAX releases this will "
                "result in an error.",
                FutureWarning,
                stacklevel=7,  # .at[].set() caller: past _update, _laid_out, update, scatter
            )
        values = to_dtype(values, dtype, weak_type=False)
    return _broadcast_to(values, aval.shape, tuple(shape))


def _broadcast_to(values, value_shape, shape):
    if len(value_shape) > len(shape):
        raise ValueError(
            "Cannot broadcast to shape with fewer dimensions: "
            f"arr_shape={value_shape} shape={shape}"
        )
    lead = len(shape) - len(value_shape)
    for have, want in zip(value_shape, shape[lead:], strict=True):
        if have not in (1, want):
            raise ValueError(
                f"Incompatible shapes for broadcasting: the update values of shape "
                f"{value_shape} do not broadcast to the indexed shape {shape}"
            )
    if value_shape == shape:
        return values
    kept = [a for a, have in enumerate(value_shape) if have == shape[lead + a]]
    if len(kept) != len(value_shape):
        values = reshape(values, tuple(value_shape[a] for a in kept))
    return broadcast_in_dim(values, shape, tuple(lead + a for a in kept))


def scatter_update(x, idx, values, kind, *, indices_are_sorted=False, unique_indices=False,
                   mode=None, wrap_negative_indices=True, func=None):  # fmt: skip
    """``x.at[idx].<kind>(values)``: one scatter over the expanded operand."""
    check_arraylike(f"at[].{kind}", x)
    x = to_array(x)
    aval = aval_of(x)
    parsed = parse_index(idx, aval.shape, wrap_negative_indices)
    plan = plan_gather(parsed, wrap_negative_indices)
    if kind != "apply":
        values = _update_values(values, aval.dtype, plan.out_shape)
    if plan.is_empty or plan.empty_axis is not None:
        return x
    operand = _expand(x, aval.shape, parsed.expanded_shape)
    dnums = ScatterDimensionNumbers(plan.offset_dims, plan.collapsed_dims, plan.start_index_map)
    # Static integers and slices never address an element twice, and forward steps
    # address elements in order (JAX marks both too).
    static = not (parsed.has_arrays or _has_traced_scalar(parsed))
    forward = all(not isinstance(e, Window) or e.step > 0 for e in parsed.entries)
    flags = dict(
        indices_are_sorted=indices_are_sorted or (static and forward),
        unique_indices=unique_indices or static,
        mode=mode,
    )
    if kind == "apply":
        out = scatter_apply(operand, plan.indices, func, dnums, update_shape=plan.out_shape,
                            **flags)  # fmt: skip
    elif kind in ("divide", "power"):
        ones = broadcast_in_dim(np.ones((), aval.dtype), parsed.expanded_shape, ())
        factors = scatter_mul(ones, plan.indices, values, dnums, **flags)
        factors = _collapse(factors, aval.shape)
        return (true_divide if kind == "divide" else power)(x, factors)
    else:
        out = _SCATTERS[kind](operand, plan.indices, values, dnums, **flags)
    return _collapse(out, aval.shape)


def _has_traced_scalar(parsed) -> bool:
    return any(is_traced_scalar(e) for e in parsed.entries)


class _IndexUpdateHelper:
    """``x.at``: ``x.at[idx]`` names the elements an update or read applies to."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


def _laid_out(fun, array, index, out_sharding, *rest):
    """``fun(array, index, *rest)``; with ``out_sharding``, run as JAX runs it: with the
    mesh's Explicit axes made Auto, the result laid out by ``out_sharding`` (the index's
    arrays pass in as arguments)."""
    if out_sharding is None:
        return fun(array, index, *rest)
    leaves, tree = tree_util.tree_flatten(index)
    places = [i for i, leaf in enumerate(leaves) if hasattr(leaf, "aval")]

    def run(array, arrays, *rest):
        filled = list(leaves)
        for i, a in zip(places, arrays, strict=True):
            filled[i] = a
        return fun(array, tree_util.tree_unflatten(tree, filled), *rest)

    return auto_axes_call(run, out_sharding)(array, [leaves[i] for i in places], *rest)


class _IndexUpdateRef:
    """``x.at[idx]``: functional versions of ``x[idx] = v``, ``x[idx] += v``, ...; each
    returns a new array."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None, out_sharding=None, wrap_negative_indices=True):  # fmt: skip
        """``x[idx]``, with out-of-bounds indices handled as ``mode`` says ("fill":
        ``fill_value``, default NaN / the most negative integer / True)."""

        def take(array, index):
            return getitem(
                array,
                index,
                indices_are_sorted=indices_are_sorted,
                unique_indices=unique_indices,
                mode=mode,
                fill_value=fill_value,
                wrap_negative_indices=wrap_negative_indices,
            )

        return _laid_out(take, self.array, self.index, out_sharding)

    def _update(self, kind, values, indices_are_sorted, unique_indices, mode, wrap, func=None,
                out_sharding=None):  # fmt: skip
        def update(array, index, values):
            return scatter_update(
                array,
                index,
                values,
                kind,
                indices_are_sorted=indices_are_sorted,
                unique_indices=unique_indices,
                mode=mode,
                wrap_negative_indices=wrap,
                func=func,
            )

        return _laid_out(update, self.array, self.index, out_sharding, values)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):  # fmt: skip
        """``x[idx] = values``."""
        return self._update("set", values, indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices, out_sharding=out_sharding)  # fmt: skip

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):  # fmt: skip
        """``x[idx] += values`` (repeated indices accumulate)."""
        return self._update("add", values, indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices, out_sharding=out_sharding)  # fmt: skip

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 out_sharding=None, wrap_negative_indices=True):  # fmt: skip
        """``x[idx] -= values``."""
        return self._update("subtract", values, indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices, out_sharding=out_sharding)  # fmt: skip

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 out_sharding=None, wrap_negative_indices=True):  # fmt: skip
        """``x[idx] *= values``."""
        return self._update("multiply", values, indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices, out_sharding=out_sharding)  # fmt: skip

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               out_sharding=None, wrap_negative_indices=True):  # fmt: skip
        """``x[idx] /= values`` (integer arrays become floating, as ``x / y`` does)."""
        return self._update("divide", values, indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices, out_sharding=out_sharding)  # fmt: skip

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
              out_sharding=None, wrap_negative_indices=True):  # fmt: skip
        """``x[idx] **= values``."""
        return self._update("power", values, indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices, out_sharding=out_sharding)  # fmt: skip

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):  # fmt: skip
        """``x[idx] = minimum(x[idx], values)``."""
        return self._update("min", values, indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices, out_sharding=out_sharding)  # fmt: skip

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):  # fmt: skip
        """``x[idx] = maximum(x[idx], values)``."""
        return self._update("max", values, indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices, out_sharding=out_sharding)  # fmt: skip

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None,
              wrap_negative_indices=True):  # fmt: skip
        """``x[idx] = func(x[idx])``, applied once per time an element is addressed."""
        return self._update("apply", None, indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices, func)  # fmt: skip
