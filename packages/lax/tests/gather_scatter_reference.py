"""NumPy references for XLA's gather and scatter (loops over index vectors), and the
dimension-number forms the tests use."""

from __future__ import annotations

import numpy as np

from lamina import lax


def _start(operand_shape, index_vector, batch_index, index_map, op_batch, idx_batch):
    start = [0] * len(operand_shape)
    for k, d in enumerate(index_map):
        start[d] = int(index_vector[k])
    for od, idim in zip(op_batch, idx_batch, strict=True):
        start[od] = batch_index[idim]
    return start


def _in_bounds(start, sizes, shape, index_map) -> bool:
    return all(0 <= start[d] <= shape[d] - sizes[d] for d in index_map)


def _clamp(start, sizes, shape, index_map):
    out = list(start)
    for d in index_map:
        out[d] = min(max(start[d], 0), shape[d] - sizes[d])
    return out


def np_gather(operand, indices, dn, slice_sizes, mode="clip", fill_value=None):
    operand, indices = np.asarray(operand), np.asarray(indices)
    batch_shape = indices.shape[:-1]
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offset_sizes = [s for d, s in enumerate(slice_sizes) if d not in dropped]
    rank = len(batch_shape) + len(dn.offset_dims)
    sizes, batches = iter(offset_sizes), iter(batch_shape)
    out_shape = [next(sizes) if i in dn.offset_dims else next(batches) for i in range(rank)]
    out = np.empty(out_shape, operand.dtype)
    for b in np.ndindex(*batch_shape):
        start = _start(operand.shape, indices[b], b, dn.start_index_map,
                       dn.operand_batching_dims, dn.start_indices_batching_dims)  # fmt: skip
        ok = _in_bounds(start, slice_sizes, operand.shape, dn.start_index_map)
        start = _clamp(start, slice_sizes, operand.shape, dn.start_index_map)
        window = operand[tuple(
            s if d in dropped else slice(s, s + n)
            for d, (s, n) in enumerate(zip(start, slice_sizes, strict=True))
        )]  # fmt: skip
        if mode == "fill" and not ok:
            window = np.full(window.shape, _fill(operand.dtype, fill_value))
        bi = iter(b)
        out[tuple(slice(None) if i in dn.offset_dims else next(bi) for i in range(rank))] = window
    return out


def _fill(dtype, fill_value):
    if fill_value is not None:
        return fill_value
    if np.issubdtype(dtype, np.inexact):
        return np.nan
    if dtype == np.bool_:
        return True
    info = np.iinfo(dtype)
    return info.min if np.issubdtype(dtype, np.signedinteger) else info.max


COMBINE = {
    "scatter": lambda old, new: new,
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
}


def np_scatter(kind, operand, indices, updates, dn, mode="fill"):
    out = np.array(operand, copy=True)
    indices, updates = np.asarray(indices), np.asarray(updates)
    inserted = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_of = iter(dn.update_window_dims)
    sizes = [1 if d in inserted else updates.shape[next(window_of)] for d in range(out.ndim)]
    for b in np.ndindex(*indices.shape[:-1]):
        start = _start(out.shape, indices[b], b, dn.scatter_dims_to_operand_dims,
                       dn.operand_batching_dims, dn.scatter_indices_batching_dims)  # fmt: skip
        if mode == "clip":
            start = _clamp(start, sizes, out.shape, dn.scatter_dims_to_operand_dims)
        elif not all(0 <= s <= n - w for s, w, n in zip(start, sizes, out.shape, strict=True)):
            continue
        bi = iter(b)
        window = updates[tuple(
            slice(None) if i in dn.update_window_dims else next(bi) for i in range(updates.ndim)
        )]  # fmt: skip
        target = tuple(
            s if d in inserted else slice(s, s + n)
            for d, (s, n) in enumerate(zip(start, sizes, strict=True))
        )
        out[target] = COMBINE[kind](out[target], window)
    return out


def G(offset, collapsed, index_map, op_batch=(), idx_batch=()):
    return lax.GatherDimensionNumbers(offset, collapsed, index_map, op_batch, idx_batch)


def to_scatter(dn):
    return lax.ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims,
    )


# (name, operand shape, indices shape (last: index vector), dnums, slice_sizes)
FORMS = [
    ("rows x[idx]", (5, 3), (4, 1), G((1,), (0,), (0,)), (1, 3)),
    ("columns x[:, idx]", (3, 5), (4, 1), G((0,), (1,), (1,)), (3, 1)),
    ("points x[i, j]", (4, 5), (6, 2), G((), (0, 1), (0, 1)), (1, 1)),
    ("points, swapped map", (4, 5), (6, 2), G((), (0, 1), (1, 0)), (1, 1)),
    ("windows", (6, 7), (3, 2), G((1, 2), (), (0, 1)), (2, 3)),
    ("2-d index batch", (5, 3), (2, 3, 1), G((2,), (0,), (0,)), (1, 3)),
    ("take_along_axis", (3, 5), (3, 4, 1), G((), (1,), (1,), (0,), (0,)), (1, 1)),
    ("batched windows", (2, 6, 3), (4, 2, 1), G((2, 3), (), (1,), (0,), (1,)), (1, 2, 3)),
]


def random_indices(rng, operand_shape, indices_shape, dn, slice_sizes, *, spread=0):
    """In-bounds start indices (``spread`` widens the range past both ends)."""
    idx = np.empty(indices_shape, np.int32)
    for k, d in enumerate(dn.start_index_map):
        hi = operand_shape[d] - slice_sizes[d]
        idx[..., k] = rng.integers(-spread, hi + 1 + spread, indices_shape[:-1])
    return idx


def unique_indices(operand_shape, indices_shape, dn, slice_sizes):
    """Distinct in-bounds start indices (for overwriting scatters), or None."""
    starts = [range(operand_shape[d] - slice_sizes[d] + 1) for d in dn.start_index_map]
    grid = np.stack(np.meshgrid(*starts, indexing="ij"), -1).reshape(-1, len(starts))
    n = int(np.prod(indices_shape[:-1]))
    if (
        dn.start_indices_batching_dims
        or len(grid) < n
        or any(slice_sizes[d] > 1 for d in dn.start_index_map)
    ):
        return None
    picks = np.random.default_rng(1).permutation(len(grid))[:n]
    return grid[picks].reshape(indices_shape).astype(np.int32)
