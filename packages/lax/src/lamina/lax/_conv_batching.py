"""vmap of ``conv_general_dilated``: the batch axis is folded into an axis the
convolution already has, so one convolution computes every example.

- both operands batched: the kernels stack along the output features and the inputs
  along the input features, as that many more feature groups (or, with batch groups,
  the inputs stack along the batch as more batch groups);
- only the input batched: the examples join the input's batch axis;
- only the kernel batched: the kernels join the output features (inside each group
  when there are groups, which must stay outermost).
"""

from __future__ import annotations

from lamina.lax.convolution import (
    conv_general_dilated_p,
    reshape_axis_into,
    reshape_axis_out_of,
)


def _batched_conv(axis_data, vals, dims, *, dimension_numbers, feature_group_count,
                  batch_group_count, **params):  # fmt: skip
    (lhs, rhs), (lhs_bdim, rhs_bdim) = vals, dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    size = axis_data.size

    def conv(new_lhs, new_rhs, features=feature_group_count, batches=batch_group_count):
        return conv_general_dilated_p.bind(
            new_lhs,
            new_rhs,
            dimension_numbers=dimension_numbers,
            feature_group_count=features,
            batch_group_count=batches,
            **params,
        )

    if lhs_bdim is not None and rhs_bdim is not None:
        if batch_group_count > 1:
            new_lhs = reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
            features, batches = feature_group_count, batch_group_count * size
        else:
            new_lhs = reshape_axis_into(lhs_bdim, lhs_spec[1], lhs)
            features, batches = feature_group_count * size, batch_group_count
        new_rhs = reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv(new_lhs, new_rhs, features, batches)
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]

    if lhs_bdim is not None:
        if batch_group_count == 1:
            new_lhs = reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
        else:  # the batch groups stay outermost in the batch axis
            new_lhs = reshape_axis_out_of(
                lhs_spec[0] + int(lhs_bdim <= lhs_spec[0]), batch_group_count, lhs
            )
            new_lhs = reshape_axis_into(
                lhs_bdim + int(lhs_spec[0] < lhs_bdim), lhs_spec[0] + 1, new_lhs
            )
            new_lhs = reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
        out = conv(new_lhs, rhs)
        return reshape_axis_out_of(out_spec[0], size, out), out_spec[0]

    if feature_group_count == 1 and batch_group_count == 1:
        new_rhs = reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv(lhs, new_rhs)
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]

    # Groups must stay outermost in the output features: split them out, put the batch
    # inside each group, then merge back (and undo the same on the output).
    groups = max(feature_group_count, batch_group_count)
    new_rhs = reshape_axis_out_of(rhs_spec[0] + int(rhs_bdim <= rhs_spec[0]), groups, rhs)
    new_rhs = reshape_axis_into(rhs_bdim + int(rhs_spec[0] < rhs_bdim), rhs_spec[0] + 1, new_rhs)
    new_rhs = reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = conv(lhs, new_rhs)
    out = reshape_axis_out_of(out_spec[1], groups, out)
    out = reshape_axis_out_of(out_spec[1] + 1, size, out)
    out = reshape_axis_into(out_spec[1], out_spec[1] + 1, out)
    return out, out_spec[1]


conv_general_dilated_p.def_batching(_batched_conv)
