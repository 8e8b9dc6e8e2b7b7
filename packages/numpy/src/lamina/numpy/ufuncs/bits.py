"""Bitwise and logical elementwise functions of lamina.numpy: the bodies of the
bitwise and logical ufuncs, inversion, shifts, bit counts, and the integer functions
``gcd`` and ``lcm`` (Euclid's algorithm in a ``while_loop``)."""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.numpy.base.arguments import (
    aval_of,
    check_arraylike,
    promote_args_numeric,
    promote_dtypes,
)
from lamina.numpy.base.shaping import broadcast_to
from lamina.numpy.ufuncs.operands import (
    checked_promote,
    compare,
    const_like,
    full_like,
    is_bool,
    is_integer,
    is_unsigned,
    jitted,
    select,
)

__all__ = [
    "bitwise_count", "bitwise_invert", "bitwise_left_shift", "bitwise_not",
    "bitwise_right_shift", "gcd", "invert", "lcm", "left_shift", "logical_not",
    "right_shift",
]  # fmt: skip


@jitted
def bitwise_and(x, y, /):
    """Elementwise bitwise and (logical and for bools)."""
    return lax.bitwise_and(*checked_promote("bitwise_and", x, y))


@jitted
def bitwise_or(x, y, /):
    """Elementwise bitwise or (logical or for bools)."""
    return lax.bitwise_or(*checked_promote("bitwise_or", x, y))


@jitted
def bitwise_xor(x, y, /):
    """Elementwise bitwise exclusive or."""
    return lax.bitwise_xor(*checked_promote("bitwise_xor", x, y))


def to_bool(x):
    """Non-zero as true."""
    return x if is_bool(x) else compare(lax.ne, x, const_like(x, 0))


@jitted
def logical_and(x, y, /):
    """Elementwise truth of ``x and y`` (non-zero is true)."""
    return lax.bitwise_and(*map(to_bool, checked_promote("logical_and", x, y)))


@jitted
def logical_or(x, y, /):
    """Elementwise truth of ``x or y`` (non-zero is true)."""
    return lax.bitwise_or(*map(to_bool, checked_promote("logical_or", x, y)))


@jitted
def logical_xor(x, y, /):
    """Elementwise truth of ``bool(x) != bool(y)``."""
    return lax.bitwise_xor(*map(to_bool, checked_promote("logical_xor", x, y)))


@jitted
def logical_not(x, /):
    """Elementwise truth of ``not x``."""
    return lax.bitwise_not(to_bool(checked_promote("logical_not", x)[0]))


def _inverter(name):
    def fun(x, /):
        return lax.bitwise_not(checked_promote(name, x)[0])

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = "Elementwise bitwise not (``~x``; logical not for bools)."
    return jitted(fun)


invert = _inverter("invert")
bitwise_not = _inverter("bitwise_not")
bitwise_invert = _inverter("bitwise_invert")


@jitted
def left_shift(x, y, /):
    """Elementwise ``x << y`` (bools become integers)."""
    return lax.shift_left(*promote_args_numeric("left_shift", x, y))


@jitted
def bitwise_left_shift(x, y, /):
    """Alias of ``jnp.left_shift``."""
    return lax.shift_left(*promote_args_numeric("bitwise_left_shift", x, y))


@jitted
def right_shift(x1, x2, /):
    """Elementwise ``x1 >> x2``: arithmetic for signed, logical for unsigned integers."""
    x1, x2 = promote_args_numeric("right_shift", x1, x2)
    shift = lax.shift_right_logical if is_unsigned(x1) else lax.shift_right_arithmetic
    return shift(x1, x2)


@jitted
def bitwise_right_shift(x1, x2, /):
    """Alias of ``jnp.right_shift``."""
    check_arraylike("bitwise_right_shift", x1, x2)
    return right_shift(x1, x2)


@jitted
def bitwise_count(x, /):
    """Number of 1 bits in ``|x|``, as uint8."""
    (x,) = promote_args_numeric("bitwise_count", x)
    magnitude = x if is_unsigned(x) else lax.abs(x)
    return lax.convert_element_type(lax.population_count(magnitude), np.uint8)


def _integer_pair(name, x1, x2):
    check_arraylike(name, x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    if not is_integer(x1):
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers.")
    shape = np.broadcast_shapes(aval_of(x1).shape, aval_of(x2).shape)
    return broadcast_to(x1, shape), broadcast_to(x2, shape)


def _magnitude(x):
    return x if is_unsigned(x) else lax.abs(x)


def _euclid(a, b):
    """gcd of non-negative ``a`` and ``b`` elementwise: steps of Euclid's algorithm on
    every element until all remainders are 0."""

    def not_done(state):
        _, divisor = state
        nonzero = lax.ne(divisor, const_like(divisor, 0))
        return lax.reduce_or(nonzero, tuple(range(aval_of(nonzero).ndim)))

    def step(state):
        big, small = state
        nonzero = lax.ne(small, const_like(small, 0))
        safe_small = select(nonzero, small, const_like(small, 1))
        remainder = select(nonzero, lax.rem(big, safe_small), full_like(small, 0))
        big, small = select(nonzero, small, big), remainder
        swap = lax.lt(big, small)
        return select(swap, small, big), select(swap, big, small)

    result, _ = lax.while_loop(not_done, step, (a, b))
    return result


@jitted
def gcd(x1, x2):
    """Elementwise greatest common divisor of integers (``gcd(0, 0) == 0``)."""
    x1, x2 = _integer_pair("gcd", x1, x2)
    return _euclid(_magnitude(x1), _magnitude(x2))


@jitted
def lcm(x1, x2):
    """Elementwise least common multiple of integers (0 if either is 0)."""
    x1, x2 = _integer_pair("lcm", x1, x2)
    x1, x2 = _magnitude(x1), _magnitude(x2)
    divisor = _euclid(x1, x2)
    is_zero = lax.eq(divisor, const_like(divisor, 0))
    safe = select(is_zero, const_like(divisor, 1), divisor)
    return select(is_zero, full_like(divisor, 0), lax.mul(x1, lax.div(x2, safe)))
