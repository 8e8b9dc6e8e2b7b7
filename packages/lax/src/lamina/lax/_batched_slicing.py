"""vmap of dynamic_slice and dynamic_update_slice whose start indices are batched: each
example slices at its own position, which is a gather (or a scatter) with clamped
indices, as in JAX."""

from __future__ import annotations

from lamina.interpreters import batching
from lamina.lax.base.primitives import broadcast_in_dim
from lamina.lax.base.reshaping import concatenate


def _index_matrix(axis_data, indices, index_dims):
    """The start indices as one ``(batch, n)`` array."""

    size = axis_data.size
    columns = [
        broadcast_in_dim(batching.bdim_at_front(i, d, size), (size, 1), (0,))
        if d is not batching.not_mapped
        else broadcast_in_dim(i, (size, 1), ())
        for i, d in zip(indices, index_dims, strict=True)
    ]
    return concatenate(columns, 1)


def batched_index_dynamic_slice(axis_data, vals, dims, slice_sizes):
    from lamina.lax._gather import GatherDimensionNumbers, GatherScatterMode, gather

    x, *indices = vals
    xd, *index_dims = dims
    index_matrix = _index_matrix(axis_data, indices, index_dims)
    n = len(indices)
    if xd is batching.not_mapped:
        dnums = GatherDimensionNumbers(
            offset_dims=tuple(range(1, n + 1)),
            collapsed_slice_dims=(),
            start_index_map=tuple(range(n)),
        )
        sizes = slice_sizes
    else:
        x = batching.moveaxis(x, xd, 0)
        dnums = GatherDimensionNumbers(
            offset_dims=tuple(range(1, n + 1)),
            collapsed_slice_dims=(),
            start_index_map=tuple(range(1, n + 1)),
            operand_batching_dims=(0,),
            start_indices_batching_dims=(0,),
        )
        sizes = (1, *slice_sizes)
    return gather(
        x,
        index_matrix,
        dnums,
        sizes,
        unique_indices=False,
        indices_are_sorted=False,
        mode=GatherScatterMode.CLIP,
    )


def batched_index_dynamic_update_slice(axis_data, vals, dims):
    from lamina.lax._gather import GatherScatterMode
    from lamina.lax._scatter import ScatterDimensionNumbers, scatter

    x, update, *indices = vals
    xd, ud, *index_dims = dims
    size = axis_data.size
    index_matrix = _index_matrix(axis_data, indices, index_dims)
    n = len(indices)
    x = batching.bdim_at_front(x, xd, size)
    update = batching.bdim_at_front(update, ud, size)
    dnums = ScatterDimensionNumbers(
        update_window_dims=tuple(range(1, n + 1)),
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=tuple(range(1, n + 1)),
        operand_batching_dims=(0,),
        scatter_indices_batching_dims=(0,),
    )
    return scatter(
        x,
        index_matrix,
        update,
        dnums,
        indices_are_sorted=True,
        unique_indices=True,
        mode=GatherScatterMode.CLIP,
    )
