"""Reading and writing mutable array references: the ``get``, ``swap`` and
``addupdate`` primitives and ``jax.ref.get``/``set``/``swap``/``addupdate``.

Each takes the reference, (for ``swap``/``addupdate``) the value, then the operands of
its ``indexer`` param (:mod:`.indexing`); ``indexer=None`` is the whole reference.
They print as JAX prints them: ``c:f32[3] <- a[0,:]``, ``a[...] <- d``,
``e:f32[3], a[1,:] <- a[1,:], c`` (a swap whose old value is used), ``a[0,:] += c``.
Eagerly they run through dispatch on the ``Ref``'s array; staged, a discharge rule
says what they compute on arrays; their JVPs act on the tangent reference.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import (
    Zero,
    ad,
    batching,
    def_standard_impl,
    is_undefined_primal,
    ref_methods,
    shaped_abstractify,
)
from lamina.ir import (
    AbstractRef,
    AccumEffect,
    Primitive,
    ReadEffect,
    ShapedArray,
    WriteEffect,
    dtypes,
)
from lamina.lax.base.operands import aval_of
from lamina.lax.base.primitives import broadcast_in_dim, convert_element_type, iota, to_dtype
from lamina.lax.state.indexing import (
    Indexer,
    IntAxis,
    accumulate,
    make_indexer,
    read,
    write,
)

__all__: list[str] = []

get_p = Primitive("get")
get_p.effectful = True
swap_p = Primitive("swap")
swap_p.effectful = True
addupdate_p = Primitive("addupdate")
addupdate_p.effectful = True
addupdate_p.multiple_results = True


def _ref_and_indexer(ref, idx, function_name: str):
    aval = getattr(ref, "aval", None)
    if type(aval) is not AbstractRef:
        raise ValueError(f"Can only call `{function_name}` on a `Ref`: {ref}.")
    indexer, operands = make_indexer(idx, aval.shape)
    return indexer, operands


def ref_get(ref, idx=None):
    """``ref[idx]``: the array of the selected elements (``jax.ref.get``)."""
    indexer, operands = _ref_and_indexer(ref, idx, "ref_get")
    return get_p.bind(ref, *operands, indexer=indexer)


def _implicit_cast(dtype, value):
    # As JAX does: weak floats into float refs, and any integers into integer refs.
    try:
        aval = shaped_abstractify(value)
    except TypeError:
        return value
    if type(aval) is not ShapedArray or aval.dtype == dtype:
        return value
    floats = dtypes.issubdtype(dtype, np.floating) and dtypes.issubdtype(aval.dtype, np.floating)
    ints = dtypes.issubdtype(dtype, np.integer) and dtypes.issubdtype(aval.dtype, np.integer)
    if (aval.weak_type and floats) or ints:
        if dtypes.is_python_scalar(value):
            return np.asarray(value, dtype)
        return convert_element_type(value, dtype)
    return value


def ref_swap(ref, idx, value, _function_name: str = "ref_swap"):
    """Writes ``value`` at ``ref[idx]`` and returns what was there (``jax.ref.swap``)."""
    if hasattr(ref, "dtype"):
        value = _implicit_cast(ref.dtype, value)
    indexer, operands = _ref_and_indexer(ref, idx, _function_name)
    return swap_p.bind(ref, value, *operands, indexer=indexer)


def ref_set(ref, idx, value) -> None:
    """``ref[idx] = value`` (``jax.ref.set``)."""
    ref_swap(ref, idx, value, _function_name="ref_set")


def ref_addupdate(ref, idx, x) -> None:
    """``ref[idx] += x`` in one step (``jax.ref.addupdate``)."""
    indexer, operands = _ref_and_indexer(ref, idx, "ref_addupdate")
    addupdate_p.bind(ref, x, *operands, indexer=indexer)


# ---------------------------------------------------------------- abstract evaluation


def _selected_type(ref_aval, indexer: Indexer | None):
    inner = ref_aval.inner_aval
    return inner if indexer is None else inner.update(shape=indexer.result_shape())


def _get_abstract_eval(ref_aval, *idx_avals, indexer):
    if type(ref_aval) is not AbstractRef:
        raise ValueError(f"`get` must be called on `Ref` types: {ref_aval}.")
    return _selected_type(ref_aval, indexer), {ReadEffect(0)}


def _check_value(what, ref_aval, val_aval, indexer):
    expected = _selected_type(ref_aval, indexer)
    if expected.shape != val_aval.shape:
        raise ValueError(
            f"Invalid shape for `{what}`. Ref shape: {ref_aval.shape}. Expected shape: "
            f"{expected.shape}. Value shape: {val_aval.shape}. Transforms: "
            f"{() if indexer is None else (indexer,)}. "
        )
    if expected.dtype != val_aval.dtype:
        raise ValueError(
            f"Invalid dtype for `{what}`. Ref dtype: {expected.dtype}. "
            f"Value dtype: {val_aval.dtype}. "
        )
    return expected


def _swap_abstract_eval(ref_aval, val_aval, *idx_avals, indexer):
    if type(ref_aval) is not AbstractRef:
        raise ValueError(f"`swap` must be called on `Ref` types: {ref_aval}.")
    if type(val_aval) is AbstractRef:
        raise ValueError(
            "Cannot store a Ref into another Ref. Did you forget to load from it using `[...]`?"
        )
    return _check_value("swap", ref_aval, val_aval, indexer), {WriteEffect(0)}


def _addupdate_abstract_eval(ref_aval, val_aval, *idx_avals, indexer):
    if type(ref_aval) is not AbstractRef:
        raise ValueError(f"`addupdate` must be called on `Ref` types: {ref_aval}.")
    _check_value("addupdate", ref_aval, val_aval, indexer)
    return [], {AccumEffect(0)}


get_p.def_abstract_eval(_get_abstract_eval)
swap_p.def_abstract_eval(_swap_abstract_eval)
addupdate_p.def_abstract_eval(_addupdate_abstract_eval)
for _p in (get_p, swap_p, addupdate_p):
    def_standard_impl(_p)


# ---------------------------------------------------------------- printing


def _ref_text(eqn, names, n_before_idx: int) -> str:
    ref = names.use(eqn.invars[0])
    indexer = eqn.params["indexer"]
    if indexer is None:
        return ref + "[...]"
    return ref + indexer.pretty(names, eqn.invars[n_before_idx:])


def _get_pp(eqn, names) -> str:
    out = names.binder(eqn.outvars[0])
    return f"{out} <- {_ref_text(eqn, names, 1)}"


def _swap_pp(eqn, names) -> str:
    out = eqn.outvars[0]
    if names.is_unused(out):
        return f"{_ref_text(eqn, names, 2)} <- {names.use(eqn.invars[1])}"
    out_text = names.binder(out)
    ref = _ref_text(eqn, names, 2)
    return f"{out_text}, {ref} <- {ref}, {names.use(eqn.invars[1])}"


def _addupdate_pp(eqn, names) -> str:
    return f"{_ref_text(eqn, names, 2)} += {names.use(eqn.invars[1])}"


get_p.def_pp_eqn(_get_pp)
swap_p.def_pp_eqn(_swap_pp)
addupdate_p.def_pp_eqn(_addupdate_pp)


# ---------------------------------------------------------------- discharge


def _get_discharge(in_avals, out_avals, ref, *idx, indexer):
    return [None] * (1 + len(idx)), read(ref, indexer, idx)


def _of_type(x, aval):
    # A written value keeps the reference's type (a weakly typed value may be written).
    return to_dtype(x, aval.dtype, aval.weak_type) if aval_of(x).weak_type != aval.weak_type else x


def _swap_discharge(in_avals, out_avals, ref, val, *idx, indexer):
    old = read(ref, indexer, idx)
    new = _of_type(write(ref, indexer, idx, val), in_avals[0].inner_aval)
    return [new, None, *[None] * len(idx)], old


def _addupdate_discharge(in_avals, out_avals, ref, val, *idx, indexer):
    new = _of_type(accumulate(ref, indexer, idx, val), in_avals[0].inner_aval)
    return [new, None, *[None] * len(idx)], []


get_p.def_discharge(_get_discharge)
swap_p.def_discharge(_swap_discharge)
addupdate_p.def_discharge(_addupdate_discharge)


# ---------------------------------------------------------------- JVP


def _get_jvp(primals, tangents, *, indexer):
    ref, *idx = primals
    out = get_p.bind(ref, *idx, indexer=indexer)
    if type(tangents[0]) is Zero:
        return out, Zero(ad.tangent_aval(aval_of(out)))
    return out, get_p.bind(tangents[0], *idx, indexer=indexer)


def _swap_jvp(primals, tangents, *, indexer):
    ref, val, *idx = primals
    ref_t, val_t = tangents[0], tangents[1]
    out = swap_p.bind(ref, val, *idx, indexer=indexer)
    if type(ref_t) is Zero and type(val_t) is Zero:
        return out, Zero(ad.tangent_aval(aval_of(out)))
    if type(ref_t) is Zero:
        raise Exception(
            "performing a set/swap operation with a differentiated value on a "
            f"non-differentiated array reference of type {ref.aval}. Move the array "
            "reference to be an argument of the differentiated function?"
        )
    val_t = ad.instantiate_zeros(val_t)
    return out, swap_p.bind(ref_t, val_t, *idx, indexer=indexer)


def _addupdate_jvp(primals, tangents, *, indexer):
    ref, val, *idx = primals
    ref_t, val_t = tangents[0], tangents[1]
    addupdate_p.bind(ref, val, *idx, indexer=indexer)
    if type(ref_t) is Zero:
        if type(val_t) is not Zero:
            raise Exception(
                "performing an addupdate operation with a differentiated value on a "
                f"non-differentiated array reference of type {ref.aval}. Move the "
                "array reference to be an argument of the differentiated function?"
            )
    else:
        addupdate_p.bind(ref_t, ad.instantiate_zeros(val_t), *idx, indexer=indexer)
    return [], []


get_p.def_jvp(_get_jvp)
swap_p.def_jvp(_swap_jvp)
addupdate_p.def_jvp(_addupdate_jvp)


# ---------------------------------------------------------------- transpose
# The reference operand of a transposed read or write is the RefCotangent of a tangent
# reference: reads add their cotangent into it, writes take theirs out of it.


def _get_transpose(ct, ref_ct, *idx, indexer):
    if type(ct) is not Zero:
        if indexer is None:
            ref_ct.accum(ct)
        else:
            addupdate_p.bind(ref_ct.instantiate(), ct, *idx, indexer=indexer)
    return [None] * (1 + len(idx))


def _swap_transpose(ct, ref_ct, val, *idx, indexer):
    if ref_ct.ref is None and type(ct) is Zero:
        return [None] * (2 + len(idx))
    had_ref = ref_ct.ref is not None
    # The value written takes the cotangent the reference held there; the old value's
    # cotangent takes its place.
    val_ct = swap_p.bind(ref_ct.instantiate(), ad.instantiate_zeros(ct), *idx, indexer=indexer)
    val_ct = val_ct if had_ref and is_undefined_primal(val) else None
    return [None, val_ct, *[None] * len(idx)]


def _addupdate_transpose(cts, ref_ct, val, *idx, indexer):
    val_ct = None
    if ref_ct.ref is not None and is_undefined_primal(val):
        val_ct = get_p.bind(ref_ct.ref, *idx, indexer=indexer)
    return [None, val_ct, *[None] * len(idx)]


get_p.def_transpose(_get_transpose)
swap_p.def_transpose(_swap_transpose)
addupdate_p.def_transpose(_addupdate_transpose)


# ---------------------------------------------------------------- batching


def _batched_indexer(axis_data, indexer, idx, idx_dims):
    """The indexer and operands for a reference batched at axis 0, given the operands'
    batch dims; and the result's batch axis."""
    size = axis_data.size
    if indexer is None:
        return None, [], 0
    idx_batched = any(d is not batching.not_mapped for d in idx_dims)
    if not idx_batched:
        new = indexer.prepend_axis(size)
        # Where the whole batch axis lands among the result's axes.
        out_dim = len(indexer.int_shape) if new.int_axes_first() else 0
        return new, list(idx), out_dim
    if indexer.int_shape or any(type(a) is not IntAxis and a.start is None for a in indexer.axes):
        raise NotImplementedError(
            "vmap of Ref indexing with batched array indices or slice starts is not supported"
        )
    # Batched scalar indices: integer array indices of shape (size,), the batch axis
    # itself indexed by an iota, as JAX does.
    ops = [iota(np.dtype(np.int32), size)]
    for x, d in zip(idx, idx_dims, strict=True):
        if d is batching.not_mapped:
            x = broadcast_in_dim(x, (size,), ())
        ops.append(batching.moveaxis(x, d, 0) if d not in (0, batching.not_mapped) else x)
    axes = (IntAxis(), *indexer.axes)
    new = Indexer((size, *indexer.shape), axes, (size,))
    out_dim = 0
    return new, ops, out_dim


def _check_ref_dim(ref_dim):
    if ref_dim not in (0, batching.not_mapped):
        raise NotImplementedError("vmap of a Ref batched along an axis other than 0")


def _get_batching(axis_data, vals, dims, *, indexer):
    ref, *idx = vals
    ref_dim, *idx_dims = dims
    _check_ref_dim(ref_dim)
    if ref_dim is batching.not_mapped and all(d is batching.not_mapped for d in idx_dims):
        return get_p.bind(ref, *idx, indexer=indexer), batching.not_mapped
    if ref_dim is batching.not_mapped:
        raise NotImplementedError(
            "vmap of indexing an unbatched Ref with batched indices is not supported"
        )
    new, ops, out_dim = _batched_indexer(axis_data, indexer, idx, idx_dims)
    return get_p.bind(ref, *ops, indexer=new), out_dim


def _batched_value(axis_data, ref, val, val_dim, out_shape, out_dim):
    if val_dim is batching.not_mapped:
        aval = aval_of(val)
        kept = [i for i in range(len(out_shape)) if i != out_dim]
        return broadcast_in_dim(val, out_shape, tuple(kept[: aval.ndim]))
    return batching.moveaxis(val, val_dim, out_dim)


def _unbatched_ref_error(ref):
    return Exception(
        "performing a set/swap operation with vmapped value on an unbatched array "
        f"reference of type {ref.aval}. Move the array reference to be an argument "
        "to the vmapped function?"
    )


def _write_batching(prim):
    def rule(axis_data, vals, dims, *, indexer):
        ref, val, *idx = vals
        ref_dim, val_dim, *idx_dims = dims
        _check_ref_dim(ref_dim)
        if ref_dim is batching.not_mapped:
            if val_dim is batching.not_mapped and all(d is batching.not_mapped for d in idx_dims):
                out = prim.bind(ref, val, *idx, indexer=indexer)
                return out, ([] if prim.multiple_results else batching.not_mapped)
            raise _unbatched_ref_error(ref)
        new, ops, out_dim = _batched_indexer(axis_data, indexer, idx, idx_dims)
        inner = ref.aval.inner_aval
        full = inner.update(shape=(axis_data.size, *inner.shape))
        out_shape = full.shape if new is None else new.result_shape()
        val = _batched_value(axis_data, ref, val, val_dim, out_shape, out_dim)
        out = prim.bind(ref, val, *ops, indexer=new)
        return out, ([] if prim.multiple_results else out_dim)

    return rule


get_p.def_batching(_get_batching)
swap_p.def_batching(_write_batching(swap_p))
addupdate_p.def_batching(_write_batching(addupdate_p))


# ---------------------------------------------------------------- methods of references


def _getitem(ref, idx):
    return ref_get(ref, idx)


def _setitem(ref, idx, value):
    ref_set(ref, idx, value)


def _addupdate_method(ref, x, idx=()):
    ref_addupdate(ref, idx, x)


ref_methods["__getitem__"] = _getitem
ref_methods["__setitem__"] = _setitem
ref_methods["addupdate"] = _addupdate_method
