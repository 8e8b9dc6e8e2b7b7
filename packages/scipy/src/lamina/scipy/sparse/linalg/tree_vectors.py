"""Vector arithmetic on pytrees of arrays: the vectors the Krylov solvers work with."""

from __future__ import annotations

import operator
from functools import partial

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import Array
from lamina.ir.tree_util import Partial, tree_leaves, tree_map

HIGHEST = lax.Precision.HIGHEST


def dot(a, b):
    return jnp.dot(a, b, precision=HIGHEST)


def vdot_real_part(x, y):
    """The real part of `vdot(x, y)`, leaving out the cross terms of real and imaginary
    parts, so the result is real."""
    result = jnp.vdot(x.real, y.real, precision=HIGHEST)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        result += jnp.vdot(x.imag, y.imag, precision=HIGHEST)
    return result


def vdot_real_tree(x, y):
    return sum(tree_leaves(tree_map(vdot_real_part, x, y)))


def vdot_tree(x, y):
    return sum(tree_leaves(tree_map(partial(jnp.vdot, precision=HIGHEST), x, y)))


def norm(x):
    leaves = tree_leaves(x)
    return jnp.sqrt(sum(vdot_real_part(leaf, leaf) for leaf in leaves))


def scale(scalar, tree):
    return tree_map(partial(operator.mul, scalar), tree)


def add(x, y):
    return tree_map(operator.add, x, y)


def sub(x, y):
    return tree_map(operator.sub, x, y)


def result_dtype(tree):
    return jnp.result_type(*tree_leaves(tree))


@Partial
def identity(x):
    return x


def as_linear_map(f):
    """`f` as a function computing `f @ x`: a callable as it is, else a square matrix."""
    if callable(f):
        return f
    if isinstance(f, (np.ndarray, Array)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return partial(dot, f)
    if hasattr(f, "__matmul__"):
        shape = getattr(f, "shape", None)
        if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")
