"""A convolution straight from its definition, in NumPy: the input dilated and padded
(negative pads trim), the kernel dilated, then one product per kernel position. Inputs
are ``N, C, spatial...``, kernels ``O, I, spatial...``."""

import itertools

import numpy as np


def _dilate(x, dilation):
    shape, index = list(x.shape), [slice(None)] * x.ndim
    for k, d in enumerate(dilation):
        ax = 2 + k
        shape[ax] = 0 if x.shape[ax] == 0 else (x.shape[ax] - 1) * d + 1
        index[ax] = slice(None, None, d)
    out = np.zeros(shape, x.dtype)
    out[tuple(index)] = x
    return out


def _pad(x, padding):
    for k, (lo, hi) in enumerate(padding):
        ax = 2 + k
        widths = [(0, 0)] * x.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths)
        x = np.take(x, np.arange(max(-lo, 0), x.shape[ax] - max(-hi, 0)), axis=ax)
    return x


def _ungrouped(x, k, strides):
    out_sp = [(s - w) // st + 1 for s, w, st in zip(x.shape[2:], k.shape[2:], strides, strict=True)]
    out = np.zeros((x.shape[0], k.shape[0], *out_sp), np.result_type(x, k))
    for pos in itertools.product(*(range(w) for w in k.shape[2:])):
        window = tuple(
            slice(p, p + st * (o - 1) + 1, st)
            for p, st, o in zip(pos, strides, out_sp, strict=True)
        )
        patch = x[(slice(None), slice(None), *window)]
        out += np.einsum("nc...,oc->no...", patch, k[(slice(None), slice(None), *pos)])
    return out


def ref_conv(
    lhs,
    rhs,
    strides,
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    feature_group_count=1,
    batch_group_count=1,
):
    n = lhs.ndim - 2
    x = _pad(_dilate(lhs, lhs_dilation or (1,) * n), padding)
    k = _dilate(rhs, rhs_dilation or (1,) * n)
    out_features = k.shape[0]
    if feature_group_count > 1:
        g = feature_group_count
        cg, og = x.shape[1] // g, out_features // g
        parts = [
            _ungrouped(x[:, i * cg : (i + 1) * cg], k[i * og : (i + 1) * og], strides)
            for i in range(g)
        ]
        return np.concatenate(parts, axis=1)
    if batch_group_count > 1:
        g = batch_group_count
        nb, og = x.shape[0] // g, out_features // g
        parts = [
            _ungrouped(x[i * nb : (i + 1) * nb], k[i * og : (i + 1) * og], strides)
            for i in range(g)
        ]
        return np.concatenate(parts, axis=1)
    return _ungrouped(x, k, strides)
