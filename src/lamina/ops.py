"""`lamina.ops`: JAX's segment reductions (`jax.ops`).

``segment_<op>(data, segment_ids, num_segments)`` combines the rows of ``data`` whose
``segment_ids`` are equal: row ``i`` of ``data`` goes to segment ``segment_ids[i]``.
Ids outside ``[0, num_segments)`` are dropped (``mode=None``, FILL_OR_DROP) and a
segment that receives nothing holds the operation's identity for the dtype (0, 1, the
lowest or the highest value). Each is one scatter of lax into an array filled with the
identity; ``bucket_size`` scatters the rows in chunks of that many into a separate row
of partial results each, then combines the partial results.
"""

import operator

import lamina.numpy as jnp
from lamina import lax

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _lowest(dtype):
    """The identity of max for ``dtype``: -inf for inexact, the minimum for integers."""
    if dtype == jnp.bool_:
        return False
    if jnp.issubdtype(dtype, jnp.inexact):
        return -float("inf")
    return jnp.iinfo(dtype).min


def _highest(dtype):
    """The identity of min for ``dtype``: +inf for inexact, the maximum for integers."""
    if dtype == jnp.bool_:
        return True
    if jnp.issubdtype(dtype, jnp.inexact):
        return float("inf")
    return jnp.iinfo(dtype).max


def _num_segments(num_segments, segment_ids) -> int:
    """``num_segments`` as a Python int; by default one more than the largest id, which
    needs concrete ids (under ``jit`` it raises ConcretizationTypeError)."""
    if num_segments is None:
        num_segments = int(jnp.max(segment_ids)) + 1
    num_segments = operator.index(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    return num_segments


def _segment_reduce(
    name: str,
    scatter_op,
    identity,
    combine,
    data,
    segment_ids,
    num_segments,
    indices_are_sorted,
    unique_indices,
    bucket_size,
    mode,
):
    jnp.check_arraylike(name, data, segment_ids)
    mode = lax.GatherScatterMode.from_any(mode)
    data = jnp.asarray(data)
    segment_ids = jnp.asarray(segment_ids)
    if not jnp.issubdtype(segment_ids.dtype, jnp.integer):
        raise TypeError(
            f"Indexer must have integer or boolean type, got indexer with type {segment_ids.dtype}"
        )
    num_segments = _num_segments(num_segments, segment_ids)
    window = data.shape[1:]
    # Row i of the ids addresses the window data[i]: data broadcasts to ids' shape plus
    # the window, as `x.at[segment_ids].op(data)` does.
    updates_shape = segment_ids.shape + window
    if data.shape != updates_shape:
        try:
            ok = jnp.broadcast_shapes(data.shape, updates_shape) == updates_shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(
                f"Incompatible types for broadcasting: input type={data.dtype}"
                f"[{','.join(map(str, data.shape))}] and requested type={data.dtype}"
                f"[{','.join(map(str, updates_shape))}]"
            )
        data = jnp.broadcast_to(data, updates_shape)
    fill = identity(data.dtype)
    id_dims = segment_ids.ndim
    if bucket_size is None:
        out = jnp.full((num_segments, *window), fill, data.dtype)
        dnums = lax.ScatterDimensionNumbers(
            update_window_dims=tuple(range(id_dims, id_dims + len(window))),
            inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,),
        )
        return scatter_op(
            out,
            segment_ids[..., None],
            data,
            dnums,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
        )
    # Chunks of bucket_size ids (in their flattened order) each fill a row of partial
    # results, which `combine` then folds over.
    size = segment_ids.size
    num_buckets = -(-size // bucket_size)
    buckets = lax.iota(segment_ids.dtype, size).reshape(segment_ids.shape) // bucket_size
    out = jnp.full((num_buckets, num_segments, *window), fill, data.dtype)
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(range(id_dims, id_dims + len(window))),
        inserted_window_dims=(0, 1),
        scatter_dims_to_operand_dims=(0, 1),
    )
    indices = jnp.stack([buckets, segment_ids], axis=-1)
    out = scatter_op(
        out,
        indices,
        data,
        dnums,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
    )
    return combine(out, axis=0).astype(data.dtype)


def segment_sum(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    """The sum of each segment of ``data``; empty segments are 0.

    ``num_segments`` defaults to ``max(segment_ids) + 1`` (concrete ids only, so pass it
    under ``jit``); ``indices_are_sorted`` and ``unique_indices`` are promises passed
    to the scatter; ``bucket_size`` reduces in chunks of that many rows; ``mode`` is a
    ``lax.GatherScatterMode`` (default FILL_OR_DROP: out-of-range ids are dropped).
    """
    return _segment_reduce(
        "segment_sum", lax.scatter_add, lambda dtype: 0, jnp.sum,
        data, segment_ids, num_segments, indices_are_sorted, unique_indices,
        bucket_size, mode,
    )  # fmt: skip


def segment_prod(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    """The product of each segment of ``data``; empty segments are 1. Arguments as
    :func:`segment_sum`; reverse-mode gradients need ``unique_indices=True``, as JAX's.
    """
    return _segment_reduce(
        "segment_prod", lax.scatter_mul, lambda dtype: 1, jnp.prod,
        data, segment_ids, num_segments, indices_are_sorted, unique_indices,
        bucket_size, mode,
    )  # fmt: skip


def segment_max(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    """The maximum of each segment of ``data``; empty segments are -inf for inexact
    dtypes and the lowest value for integers. Arguments as :func:`segment_sum`."""
    return _segment_reduce(
        "segment_max", lax.scatter_max, _lowest, jnp.max,
        data, segment_ids, num_segments, indices_are_sorted, unique_indices,
        bucket_size, mode,
    )  # fmt: skip


def segment_min(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    """The minimum of each segment of ``data``; empty segments are +inf for inexact
    dtypes and the highest value for integers. Arguments as :func:`segment_sum`."""
    return _segment_reduce(
        "segment_min", lax.scatter_min, _highest, jnp.min,
        data, segment_ids, num_segments, indices_are_sorted, unique_indices,
        bucket_size, mode,
    )  # fmt: skip
