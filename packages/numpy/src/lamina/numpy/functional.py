"""Functions that build array functions from others: ``vectorize`` (NumPy's
generalized ufuncs, on ``vmap``), ``apply_along_axis`` and ``apply_over_axes``."""

from __future__ import annotations

import functools
import re

import lamina.lax as lax
from lamina.interpreters import vmap
from lamina.numpy.base.arguments import aval_of, canonicalize_axis, check_arraylike, to_array

__all__ = ["apply_along_axis", "apply_over_axes", "vectorize"]

_NAME = r"\w+"
_CORE_DIMS = rf"\((?:{_NAME}(?:,{_NAME})*)?\)"
_CORE_DIMS_LIST = rf"{_CORE_DIMS}(?:,{_CORE_DIMS})*"
_SIGNATURE = re.compile(rf"^{_CORE_DIMS_LIST}->{_CORE_DIMS_LIST}$")


def _parse_signature(signature: str) -> tuple[list[tuple], list[tuple]]:
    """The core dimension names of each input and each output of a gufunc signature
    such as ``"(m,n),(n)->(m)"``."""
    if not _SIGNATURE.match(signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    inputs, outputs = signature.split("->")
    return (
        [tuple(re.findall(_NAME, arg)) for arg in re.findall(_CORE_DIMS, inputs)],
        [tuple(re.findall(_NAME, arg)) for arg in re.findall(_CORE_DIMS, outputs)],
    )


def _record_sizes(sizes: dict, shape, core_dims, context: str, *, is_input: bool) -> None:
    if is_input and len(shape) < len(core_dims):
        raise ValueError(
            f"input with shape {shape!r} does not have enough dimensions for all core "
            f"dimensions {core_dims!r} {context}"
        )
    if not is_input and len(shape) != len(core_dims):
        raise ValueError(
            f"output shape {shape!r} does not match core dimensions {core_dims!r} {context}"
        )
    core_shape = shape[len(shape) - len(core_dims) :]
    for name, size in zip(core_dims, core_shape, strict=True):
        if sizes.setdefault(name, size) != size:
            raise ValueError(
                f"inconsistent size for core dimension {name!r}: {size!r} vs "
                f"{sizes[name]!r} {context}"
            )


def _checking_outputs(func, sizes: dict, output_core_dims, context: str):
    """``func`` checked to return arrays with the signature's output core dims."""

    def checked(*args):
        out = func(*args)
        if len(output_core_dims) > 1 and not isinstance(out, tuple):
            raise TypeError(
                f"output must be a tuple when multiple outputs are expected, got: {out!r}\n"
                f"{context}"
            )
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) != len(output_core_dims):
            raise TypeError(
                f"wrong number of output arguments: expected {len(output_core_dims)}, got "
                f"{len(outs)} {context}"
            )
        found = dict(sizes)
        for value, core_dims in zip(outs, output_core_dims, strict=True):
            _record_sizes(found, aval_of(to_array(value)).shape, core_dims, context,
                          is_input=False)  # fmt: skip
        return out

    return checked


def _without_excluded(func, excluded, args, kwargs):
    """``func`` with the excluded positional and keyword arguments bound, and the
    arguments left to vectorize over."""
    if not excluded:
        return func, args, kwargs
    fixed_args = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int))
                  if i < len(args)]  # fmt: skip
    fixed_kwargs = {k: v for k, v in kwargs.items() if k in excluded}
    free_args = [a for i, a in enumerate(args) if i not in excluded]
    free_kwargs = {k: v for k, v in kwargs.items() if k not in excluded}

    def bound(*args, **kwargs):
        args = list(args)
        for i, value in fixed_args:
            args.insert(i, value)
        return func(*args, **kwargs, **fixed_kwargs)

    return bound, free_args, free_kwargs


def _vectorized_call(pyfunc, excluded, signature, args, kwargs):
    context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
    func, args, kwargs = _without_excluded(pyfunc, excluded, args, kwargs)
    if kwargs:  # keyword arguments are broadcast with the positional ones
        names = list(kwargs)
        positional = len(args)
        inner = func

        def func(*all_args):
            return inner(
                *all_args[:positional], **dict(zip(names, all_args[positional:], strict=True))
            )

        args = [*args, *kwargs.values()]
    if signature is not None:
        input_core_dims, output_core_dims = _parse_signature(signature)
    else:
        input_core_dims, output_core_dims = [()] * len(args), None
    none_positions = {i for i, a in enumerate(args) if a is None}
    if none_positions:
        if any(input_core_dims[i] != () for i in none_positions if i < len(input_core_dims)):
            raise ValueError(f"Cannot pass None at locations {none_positions} with {signature=}")
        func, args, _ = _without_excluded(func, none_positions, args, {})
        input_core_dims = [d for i, d in enumerate(input_core_dims) if i not in none_positions]
    check_arraylike("vectorize", *args)
    args = [to_array(a) for a in args]
    if len(args) != len(input_core_dims):
        raise TypeError(
            f"wrong number of positional arguments: expected {len(input_core_dims)}, got "
            f"{len(args)} {context}"
        )
    sizes: dict = {}
    loop_shapes = []
    for arg, core_dims in zip(args, input_core_dims, strict=True):
        shape = aval_of(arg).shape
        _record_sizes(sizes, shape, core_dims, context, is_input=True)
        loop_shapes.append(shape[: len(shape) - len(core_dims)])
    loop_shape = lax.broadcast_shapes(*loop_shapes) if loop_shapes else ()
    if output_core_dims is not None:
        func = _checking_outputs(func, sizes, output_core_dims, context)
    return _map_loop_dims(func, args, loop_shapes, loop_shape)


def _map_loop_dims(func, args, loop_shapes, loop_shape):
    """``func`` mapped with ``vmap`` over each loop dimension some argument has with a
    size other than 1; the loop dimensions nobody has are size-1 axes of the result."""
    filled = [(1,) * (len(loop_shape) - len(s)) + s for s in loop_shapes]
    squeezed = [
        lax.squeeze(arg, [i for i, size in enumerate(s) if size == 1])
        for arg, s in zip(args, loop_shapes, strict=True)
    ]
    mapped, size_one_dims = func, []
    for dim in reversed(range(len(loop_shape))):
        in_axes = tuple(None if s[dim] == 1 else 0 for s in filled)
        if all(axis is None for axis in in_axes):
            size_one_dims.append(dim)
        else:
            mapped = vmap(mapped, in_axes=in_axes)
    result = mapped(*squeezed)
    if not size_one_dims:
        return result
    if isinstance(result, tuple):
        return tuple(lax.expand_dims(r, sorted(size_one_dims)) for r in result)
    return lax.expand_dims(result, sorted(size_one_dims))


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """``pyfunc`` made to map over leading axes, like ``numpy.vectorize``, via ``vmap``.

    Without ``signature``, ``pyfunc`` sees scalars; with a gufunc ``signature`` such as
    ``"(m,n),(n)->(m)"`` it sees arrays with those core dimensions, and the leading
    (loop) dimensions of the arguments broadcast. ``excluded`` names positional indices
    or keyword names passed through unchanged.
    """
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError(
            "jax.numpy.vectorize can only exclude integer or string arguments, but "
            f"excluded={excluded!r}"
        )
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        return _vectorized_call(pyfunc, excluded, signature, args, kwargs)

    return wrapped


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to every 1-D slice of ``arr`` along ``axis`` (``vmap`` over
    the other axes); what it returns replaces that axis."""
    check_arraylike("apply_along_axis", arr)
    arr = to_array(arr)
    ndim = aval_of(arr).ndim
    axis = canonicalize_axis(axis, ndim)

    def func(x):
        return func1d(x, *args, **kwargs)

    for i in range(1, ndim - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in turn, each result of one rank fewer
    given its axis back as size 1."""
    check_arraylike("apply_over_axes", a)
    a = to_array(a)
    for axis in axes:
        b = to_array(func(a, axis))
        b_ndim, a_ndim = aval_of(b).ndim, aval_of(a).ndim
        if b_ndim == a_ndim:
            a = b
        elif b_ndim == a_ndim - 1:
            a = lax.expand_dims(b, (axis,))
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a
