"""Products and tensor functions of jnp.linalg: ``matrix_power``, ``multi_dot``,
``tensorinv``, ``tensorsolve``, and the Array-API spellings of functions that live in
``jnp`` itself (``matmul``, ``tensordot``, ``vecdot``, ``outer``, ``cross``,
``diagonal``, ``trace``, ``matrix_transpose``)."""

from __future__ import annotations

import math
import operator

import numpy as np
from lamina import lax
from lamina.numpy.base.arguments import aval_of, check_arraylike, to_array
from lamina.numpy.contractions.einsum_notation import einsum as jnp_einsum
from lamina.numpy.contractions.outer_and_diagonal import cross as jnp_cross
from lamina.numpy.contractions.outer_and_diagonal import diagonal as jnp_diagonal
from lamina.numpy.contractions.outer_and_diagonal import outer as jnp_outer
from lamina.numpy.contractions.outer_and_diagonal import trace as jnp_trace
from lamina.numpy.contractions.products import matmul as jnp_matmul
from lamina.numpy.contractions.products import tensordot as jnp_tensordot
from lamina.numpy.contractions.products import vecdot as jnp_vecdot
from lamina.numpy.linalg._operands import as_matrix, eye_like
from lamina.numpy.linalg._operands import matmul as matrix_product
from lamina.numpy.linalg._solve import inv, solve

__all__ = [
    "cross",
    "diagonal",
    "matmul",
    "matrix_power",
    "matrix_transpose",
    "multi_dot",
    "outer",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "trace",
    "vecdot",
]


def matrix_power(a, n):
    """``a`` multiplied by itself ``n`` times (by repeated squaring); the inverse's
    power for negative ``n``; the identity for 0."""
    a = to_array(a)
    check_arraylike("jnp.linalg.matrix_power", a)
    shape = aval_of(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise TypeError(f"matrix_power requires a square matrix or batch of matrices, got {shape}")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return eye_like(a)
    if n < 0:
        a, n = inv(a), -n
    result = None
    square = a
    while n:
        if n & 1:
            result = square if result is None else matrix_product(result, square)
        n >>= 1
        if n:
            square = matrix_product(square, square)
    return result


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (the first and last may be vectors), in the
    cheapest order (opt_einsum's optimal contraction path)."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays, got {len(arrays)}")
    check_arraylike("jnp.linalg.multi_dot", *arrays)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    terms = []
    for i, x in enumerate(arrays):
        nd = aval_of(to_array(x)).ndim
        if nd == 1 and i in (0, len(arrays) - 1):
            terms.append(letters[i + 1] if i == 0 else letters[i])
        elif nd == 2:
            terms.append(letters[i] + letters[i + 1])
        else:
            raise ValueError(
                f"multi_dot: array {i} has {nd} dimensions; expected 2 (or 1 at the ends)"
            )
    out = "".join(sorted(set("".join(terms)), key=letters.index))
    out = "".join(c for c in out if "".join(terms).count(c) == 1)
    spec = ",".join(terms) + "->" + out
    return jnp_einsum(spec, *arrays, optimize="optimal", precision=precision)


def tensorinv(a, ind=2):
    """The inverse of ``a`` as a map from its trailing to its leading ``ind`` axes."""
    a = to_array(a)
    check_arraylike("jnp.linalg.tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer, got {ind}.")
    shape = aval_of(a).shape
    rows, cols = shape[:ind], shape[ind:]
    if math.prod(rows) != math.prod(cols):
        raise ValueError(
            f"tensorinv is only possible when the product of the first {ind} axes equals "
            f"that of the remaining axes; got {shape=}."
        )
    flat = lax.reshape(a, (math.prod(rows), math.prod(cols)))
    return lax.reshape(inv(flat), (*cols, *rows))


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) == b."""
    check_arraylike("jnp.linalg.tensorsolve", a, b)
    a, b = to_array(a), to_array(b)
    nd = aval_of(a).ndim
    if axes is not None:
        axes = [a_ % nd for a_ in axes]
        order = [d for d in range(nd) if d not in axes] + axes
        a = lax.transpose(a, order)
    b_shape = aval_of(b).shape
    x_shape = aval_of(a).shape[len(b_shape) :]
    flat_a = lax.reshape(a, (math.prod(b_shape), math.prod(x_shape)))
    if math.prod(b_shape) != math.prod(x_shape):
        raise ValueError(
            f"tensorsolve: the solution shape {x_shape} and b's shape {b_shape} must have "
            "the same number of elements"
        )
    return lax.reshape(solve(flat_a, lax.reshape(b, (math.prod(b_shape),))), x_shape)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    return jnp_matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None, out_sharding=None):
    del out_sharding
    return jnp_tensordot(
        x1, x2, axes=axes, precision=precision, preferred_element_type=preferred_element_type
    )


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    return jnp_vecdot(
        x1, x2, axis=axis, precision=precision, preferred_element_type=preferred_element_type
    )


def outer(x1, x2, /):
    x1, x2 = to_array(x1), to_array(x2)
    if aval_of(x1).ndim != 1 or aval_of(x2).ndim != 1:
        raise ValueError(
            f"Input arrays must be one-dimensional, but they are {x1.ndim=} {x2.ndim=}"
        )
    return jnp_outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    x1, x2 = to_array(x1), to_array(x2)
    if aval_of(x1).shape[axis] != 3 or aval_of(x2).shape[axis] != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
            f"{aval_of(x1).shape[axis]=} and {aval_of(x2).shape[axis]=}"
        )
    return jnp_cross(x1, x2, axis=axis)


def diagonal(x, /, *, offset=0):
    return jnp_diagonal(as_matrix("diagonal", x), offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    return jnp_trace(as_matrix("trace", x), offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def matrix_transpose(x, /):
    x = to_array(x)
    nd = aval_of(x).ndim
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got {nd=}")
    return lax.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


del np
