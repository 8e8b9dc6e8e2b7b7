"""Operators on arrays and tracers (``x * 2 + 1``, ``x < y``, ``-x``, ``a @ b``), with
NumPy's broadcasting and JAX's type promotion, as ``jax.numpy`` applies them.

Installed on concrete arrays with ``set_array_attribute`` and on tracers through
``tracing.array_methods`` when ``lamina.lax`` is imported.

Promotion follows ``lamina.ir.dtypes.result_type`` (weak types included): a Python
scalar takes the array's dtype (``x * 2`` with ``x`` float32 is ``mul x 2.0:f32[]``), and
an array whose dtype changes is converted with ``convert_element_type``. Ranks are
matched as ``jax.numpy`` does: when two non-scalar operands differ in rank, the lower
one gets leading dimensions of size 1 (``broadcast_in_dim``); lax's own broadcasting
does the rest.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
from jaxlib.xla_client import ArrayImpl

from lamina.interpreters import (
    Tracer,
    config,
    device_put_value,
    host_transfer_watch,
    jit,
    scalar_array,
    set_array_attribute,
    tracing,
)
from lamina.ir import dtypes, filter_traceback, register_boundary
from lamina.lax.base import primitives as prims
from lamina.lax.base.filling import broadcast_shapes
from lamina.lax.base.operands import aval_of
from lamina.lax.base.primitives import broadcast_in_dim, reshape, to_dtype
from lamina.lax.dot.dot_general import dot_general

__all__ = ["install_operators", "promote_args"]

_PY_SCALARS = (int, float, complex, bool)
_weak_scalars: dict = {}  # (type, repr, dtype) -> weakly typed device scalar


_MISSING = object()
_as_python: dict = {}  # (scalar type, dtype, x64) -> the Python type abstracted as dtype


def _python_type_for(typ, dtype):
    key = (typ, dtype, dtypes.x64_enabled())
    py = _as_python.get(key, _MISSING)
    if py is _MISSING:
        py = None
        for candidate in (int, float, complex):
            if dtypes.dtype(candidate(0)) == dtype:
                # complex cannot become a real number exactly: leave it to NumPy
                py = None if (typ is complex and candidate is not complex) else candidate
                break
        _as_python[key] = py
    return py


def _weak_scalar(x, dtype):
    """A Python scalar as a weakly typed value of ``dtype``: a Python number when that
    is the scalar's own default dtype (so it prints as the literal ``2.0:f32[]``), else
    a weakly typed device scalar."""
    py = _python_type_for(type(x), dtype)
    if py is not None:
        return py(x)
    key = (type(x), repr(x), dtype)
    cached = None if host_transfer_watch.on else _weak_scalars.get(key)
    if cached is None:
        cached = device_put_value(np.asarray(x).astype(dtype), weak_type=True, dtype=dtype)
        if len(_weak_scalars) < 512:
            _weak_scalars[key] = cached
    return cached


def promote_args(fun_name: str, *args):
    """``args`` converted to their common dtype and broadcast to a common rank."""
    avals = [aval_of(x) for x in args]
    try:
        dtype, weak = dtypes.result_type(*avals, return_weak_type_flag=True)
    except ValueError:
        _check_for_prng_keys(fun_name, avals)
        raise
    out = []
    for x, aval in zip(args, avals, strict=True):
        if type(x) in _PY_SCALARS:
            out.append(_weak_scalar(x, dtype) if aval.dtype != dtype else x)
        elif aval.dtype != dtype or aval.weak_type != weak:
            out.append(to_dtype(x, dtype, weak_type=weak))
        else:
            out.append(x)
    return _promote_shapes(fun_name, out, avals)


def _check_for_prng_keys(fun_name, avals):
    """JAX's error for PRNG keys mixed with other dtypes in an operation."""
    if any(dtypes.issubdtype(a.dtype, dtypes.prng_key) for a in avals):
        names = ", ".join(str(a.dtype) for a in avals)
        raise TypeError(f"{fun_name} does not accept dtypes {names}.")


def _promote_shapes(fun_name, args, avals):
    ranks = {a.ndim for a in avals if a.ndim}
    if len(ranks) < 2:  # same ranks: the lax operation itself reports a mismatch (TypeError)
        return args
    if config.jax_numpy_rank_promotion != "allow":
        _rank_promotion_warning_or_error(fun_name, avals)
    _check_broadcastable(fun_name, avals)
    ndim = max(ranks)
    out = []
    for x, aval in zip(args, avals, strict=True):
        if 0 < aval.ndim < ndim:
            lead = ndim - aval.ndim
            x = broadcast_in_dim(x, (1,) * lead + aval.shape, tuple(range(lead, ndim)))
        out.append(x)
    return out


def _rank_promotion_warning_or_error(fun_name, avals):
    """What ``jax_numpy_rank_promotion`` ("warn" or "raise") says of operands of different
    ranks."""
    shapes = " ".join(str(a.shape) for a in avals)
    if config.jax_numpy_rank_promotion == "warn":
        warnings.warn(
            f"Following NumPy automatic rank promotion for {fun_name} on shapes {shapes}. "
            "Set the jax_numpy_rank_promotion config option to 'allow' to disable this "
            "warning; for more information, see "
            "https://docs.jax.dev/en/latest/rank_promotion_warning.html.",
            stacklevel=4,
        )
    else:
        raise ValueError(
            f"Operands could not be broadcast together for {fun_name} on shapes {shapes} "
            "and with the config option jax_numpy_rank_promotion='raise'. For more "
            "information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html."
        )


def _check_broadcastable(fun_name, avals):
    try:
        broadcast_shapes(*(a.shape for a in avals))  # symbolic sizes too
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in avals)
        raise ValueError(f"Incompatible shapes for broadcasting: shapes=[{shapes}]") from None


# Python scalar types that take the dtype of a strongly typed array of each kind
# without promotion: the common ``x * 2`` needs no general promotion.
_SCALAR_KEEPS_KIND = {int: "iufcV", float: "fcV"}


def _scalar_fast_path(x, y):
    """``(x, y)`` ready for a lax binary op when ``y`` is a Python int or float and ``x``
    a strongly typed array whose dtype absorbs it; else None."""
    kinds = _SCALAR_KEEPS_KIND.get(type(y))
    aval = getattr(x, "aval", None)
    if kinds is None or aval is None or aval.weak_type:
        return None
    dtype = aval.dtype
    try:
        kind = dtype.kind
    except AttributeError:  # an extended dtype (PRNG keys): promote_args rejects it
        return None
    if kind not in kinds or (kind == "V" and not dtypes.issubdtype(dtype, np.inexact)):
        return None
    return _weak_scalar(y, dtype)


def _same_type(x, y) -> bool:
    """True for two arrays (or tracers) of one dtype, weak type and rank: nothing to
    promote, so the lax operation applies directly (the common ``x + y``)."""
    ax, ay = getattr(x, "aval", None), getattr(y, "aval", None)
    return (
        ax is not None
        and ay is not None
        and ax.dtype == ay.dtype
        and ax.weak_type == ay.weak_type
        and len(ax.shape) == len(ay.shape)
    )


def _binary(fun_name, op):
    def apply(x, y):
        if _same_type(x, y):
            return op(x, y)
        y2 = _scalar_fast_path(x, y)
        if y2 is not None:
            return op(x, y2)
        x2 = _scalar_fast_path(y, x)
        if x2 is not None:
            return op(x2, y)
        x, y = promote_args(fun_name, x, y)
        return op(x, y)

    apply.__name__ = fun_name
    return apply


def _logical_on_bool(arithmetic, logical):
    """On booleans, ``+`` is a logical or and ``*`` a logical and, as in JAX (XLA's
    add and multiply reject booleans)."""

    def op(x, y):
        return (logical if aval_of(x).dtype == np.bool_ else arithmetic)(x, y)

    return op


add = _binary("add", _logical_on_bool(prims.add, prims.bitwise_or))
subtract = _binary("subtract", prims.sub)
multiply = _binary("multiply", _logical_on_bool(prims.mul, prims.bitwise_and))
maximum = _binary("maximum", prims.max)
minimum = _binary("minimum", prims.min)
equal = _binary("equal", prims.eq)
not_equal = _binary("not_equal", prims.ne)
less = _binary("less", prims.lt)
less_equal = _binary("less_equal", prims.le)
greater = _binary("greater", prims.gt)
greater_equal = _binary("greater_equal", prims.ge)


def true_divide(x, y):
    """``x / y`` in an inexact dtype (integers divide to floats)."""
    if _same_type(x, y) and dtypes.issubdtype(x.aval.dtype, np.inexact):
        return prims.div(x, y)
    y2 = _scalar_fast_path(x, y)
    if y2 is not None and dtypes.issubdtype(x.aval.dtype, np.inexact):
        return prims.div(x, y2)
    avals = [aval_of(x), aval_of(y)]
    dtype, weak = dtypes.result_type(*avals, return_weak_type_flag=True)
    if not dtypes.issubdtype(dtype, np.inexact):
        dtype = dtypes.to_inexact_dtype(dtype)
        x = to_dtype(x, dtype, weak_type=weak and avals[0].weak_type)
        y = to_dtype(y, dtype, weak_type=weak and avals[1].weak_type)
    x, y = promote_args("true_divide", x, y)
    return prims.div(x, y)


def negative(x):
    if type(x) in _PY_SCALARS:
        x = promote_args("negative", x)[0]
    return prims.neg(x)


def matmul(a, b):
    """``a @ b`` for vectors and matrices."""
    a, b = promote_args_no_broadcast("matmul", a, b)
    a_aval, b_aval = aval_of(a), aval_of(b)
    if not (1 <= a_aval.ndim <= 2 and 1 <= b_aval.ndim <= 2):
        raise NotImplementedError(
            "lamina's @ handles vectors and matrices so far; use lax.dot_general for "
            f"operands of shapes {a_aval.shape} and {b_aval.shape}"
        )
    b_axis = 0 if b_aval.ndim == 1 else b_aval.ndim - 2
    if a_aval.shape[-1] != b_aval.shape[b_axis]:
        raise ValueError(
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature (n?,k),(k,m?)->(n?,m?) (size {b_aval.shape[b_axis]} is different "
            f"from {a_aval.shape[-1]})"
        )
    dims = (((a_aval.ndim - 1,), (b_axis,)), ((), ()))
    return dot_general(a, b, dims, preferred_element_type=a_aval.dtype)


def promote_args_no_broadcast(fun_name, *args):
    avals = [aval_of(x) for x in args]
    dtype, weak = dtypes.result_type(*avals, return_weak_type_flag=True)
    out = []
    for x, aval in zip(args, avals, strict=True):
        if aval.dtype != dtype or aval.weak_type != weak:
            x = to_dtype(x, dtype, weak_type=weak)
        out.append(x)
    return out


def _signed_nonzero(x):
    return dtypes.issubdtype(aval_of(x).dtype, np.signedinteger)


def _zero_of(x):
    return np.zeros((), aval_of(x).dtype)


def _check_not_complex(name, *xs):
    for x in xs:
        if dtypes.issubdtype(aval_of(x).dtype, np.complexfloating):
            raise TypeError(f"{name} does not support complex-valued inputs.")


def remainder(x, y):
    """``x % y`` as Python computes it: the result takes the sign of ``y``. An integer
    remainder by zero is 0 rather than undefined."""
    x, y = promote_args("remainder", x, y)
    _check_not_complex("remainder", x, y)
    if dtypes.issubdtype(aval_of(y).dtype, np.integer):
        y = _select_broadcast(prims.eq(y, _zero_of(y)), y, np.ones((), aval_of(y).dtype))
    r = prims.rem(x, y)
    zero = _zero_of(r)
    flip = prims.bitwise_and(prims.ne(prims.lt(r, zero), prims.lt(y, zero)), prims.ne(r, zero))
    return _select_broadcast(flip, r, prims.add(r, y))


def _select_broadcast(which, on_false, on_true):
    """``select_n`` with both cases (and ``which``) stretched to one shape."""
    shape = np.broadcast_shapes(*(aval_of(v).shape for v in (which, on_false, on_true)))
    which, on_false, on_true = (_stretch(v, shape) for v in (which, on_false, on_true))
    return prims.select_n(which, on_false, on_true)


def _stretch(x, shape):
    aval = aval_of(x)
    if aval.shape == tuple(shape):
        return x
    lead = len(shape) - aval.ndim
    dims = tuple(range(lead, len(shape)))
    squeezed = [i for i, (d, s) in enumerate(zip(aval.shape, shape[lead:], strict=True))
                if d != s]  # fmt: skip
    if squeezed:  # size-1 axes that stretch: drop them first
        keep = [i for i in range(aval.ndim) if i not in squeezed]
        x = reshape(x, tuple(aval.shape[i] for i in keep))
        dims = tuple(dims[i] for i in keep)
    return broadcast_in_dim(x, tuple(shape), dims)


def floor_divide(x, y):
    """``x // y``: the quotient rounded towards minus infinity."""
    x, y = promote_args("floor_divide", x, y)
    _check_not_complex("floor_divide", x, y)
    dtype = aval_of(x).dtype
    if dtypes.issubdtype(dtype, np.unsignedinteger) or dtype == dtypes.bool_:
        return prims.div(x, y)
    if dtypes.issubdtype(dtype, np.integer):
        zero = _zero_of(x)
        q = prims.div(x, y)
        fix = prims.bitwise_and(
            prims.ne(prims.sign(x), prims.sign(y)), prims.ne(prims.rem(x, y), zero)
        )
        return _select_broadcast(fix, q, prims.sub(q, np.ones((), dtype)))
    return _float_divmod(x, y)[0]


def _float_divmod(x, y):
    zero = _zero_of(x)
    mod = prims.rem(x, y)
    numerator = _select_broadcast(prims.eq(y, zero), prims.sub(x, mod), x)
    quotient = prims.div(numerator, y)
    fix = prims.bitwise_and(prims.ne(mod, zero), prims.ne(prims.sign(y), prims.sign(mod)))
    mod = _select_broadcast(fix, mod, prims.add(mod, y))
    quotient = _select_broadcast(fix, quotient, prims.sub(quotient, np.ones((), aval_of(x).dtype)))
    return prims.round(quotient), mod


def divmod_(x, y):
    """``divmod(x, y)``: ``(x // y, x % y)``."""
    x, y = promote_args("divmod", x, y)
    if dtypes.issubdtype(aval_of(x).dtype, np.inexact):
        _check_not_complex("divmod", x, y)
        return _float_divmod(x, y)
    return floor_divide(x, y), remainder(x, y)


def power(x, y):
    """``x ** y``: a Python integer exponent multiplies (``integer_pow``); integer arrays
    raise to integer powers by squaring; otherwise ``pow`` in the promoted dtype."""
    if type(y) is int and type(x) not in _PY_SCALARS:
        return prims.integer_pow(x, y)
    x, y = promote_args("power", x, y)
    if dtypes.issubdtype(aval_of(x).dtype, np.inexact):
        return prims.pow(x, y)
    return _integer_power(x, y)


def _integer_power(x, y):
    """Integer ``x ** y``, compiled once per operand type (the loop runs over every bit)."""
    global _integer_power_jit
    if _integer_power_jit is None:
        _integer_power_jit = jit(_integer_power_by_squaring)
    return _integer_power_jit(x, y)


_integer_power_jit = None


def _integer_power_by_squaring(x, y):
    """Integer ``x ** y`` by squaring over the bits of ``y`` (as ``jnp.power``; negative
    exponents give what the bits give)."""
    dtype = aval_of(x).dtype
    shape = np.broadcast_shapes(aval_of(x).shape, aval_of(y).shape)
    x, y = _stretch(x, shape), _stretch(y, shape)
    one = np.ones((), dtype)
    acc = _stretch(one, shape)
    bits = dtype.itemsize * 8
    for i in range(bits):
        take = prims.ne(prims.bitwise_and(y, one), _zero_of(y))
        acc = prims.select_n(take, acc, prims.mul(acc, x))
        if i < bits - 1:
            x = prims.mul(x, x)
            y = prims.shift_right_logical(y, one)
    return acc


def _bitwise(fun_name, op):
    def apply(x, y):
        x, y = promote_args(fun_name, x, y)
        return op(x, y)

    apply.__name__ = fun_name
    return apply


def right_shift(x, y):
    x, y = promote_args("right_shift", x, y)
    if dtypes.issubdtype(aval_of(x).dtype, np.unsignedinteger):
        return prims.shift_right_logical(x, y)
    return prims.shift_right_arithmetic(x, y)


def invert(x):
    if type(x) in _PY_SCALARS:
        x = promote_args("invert", x)[0]
    return prims.bitwise_not(x)


def absolute(x):
    if type(x) in _PY_SCALARS:
        x = promote_args("absolute", x)[0]
    dtype = aval_of(x).dtype
    if dtype == dtypes.bool_ or dtypes.issubdtype(dtype, np.unsignedinteger):
        return x
    return prims.abs(x)


bitwise_and = _bitwise("bitwise_and", prims.bitwise_and)
bitwise_or = _bitwise("bitwise_or", prims.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", prims.bitwise_xor)
left_shift = _bitwise("left_shift", prims.shift_left)


def _swap(f):
    return lambda x, y: f(y, x)


OPERATORS = {
    "__add__": add,
    "__radd__": _swap(add),
    "__sub__": subtract,
    "__rsub__": _swap(subtract),
    "__mul__": multiply,
    "__rmul__": _swap(multiply),
    "__truediv__": true_divide,
    "__rtruediv__": _swap(true_divide),
    "__neg__": negative,
    "__pos__": lambda x: x,
    "__eq__": equal,
    "__ne__": not_equal,
    "__lt__": less,
    "__le__": less_equal,
    "__gt__": greater,
    "__ge__": greater_equal,
    "__matmul__": matmul,
    "__rmatmul__": _swap(matmul),
    "__mod__": remainder,
    "__rmod__": _swap(remainder),
    "__floordiv__": floor_divide,
    "__rfloordiv__": _swap(floor_divide),
    "__divmod__": divmod_,
    "__rdivmod__": _swap(divmod_),
    "__pow__": power,
    "__rpow__": _swap(power),
    "__and__": bitwise_and,
    "__rand__": _swap(bitwise_and),
    "__or__": bitwise_or,
    "__ror__": _swap(bitwise_or),
    "__xor__": bitwise_xor,
    "__rxor__": _swap(bitwise_xor),
    "__lshift__": left_shift,
    "__rlshift__": _swap(left_shift),
    "__rshift__": right_shift,
    "__rrshift__": _swap(right_shift),
    "__invert__": invert,
    "__abs__": absolute,
}


_ARRAY_LIKE = (*_PY_SCALARS, Tracer, np.ndarray, np.generic)


_EAGER_SCALARS = (int, float)
_NOT_COMPILED = ("__pos__",)  # returns its operand itself


def _guard(f, name):
    """Operators return NotImplemented for operands that are not array-like, so Python
    tries the other operand's method (and ``x == "a"`` is False, not an error).

    Outside any trace, an operator on concrete arrays (and Python ints and floats, kept
    on the device once made) runs ``f`` as one jitted program: a single C++ dispatch,
    promotion and broadcasting included, as ``jax.numpy``'s jitted operators do."""
    compiled = None if name in _NOT_COMPILED else jit(f)
    # ``x ** 2``: a Python int exponent stays static (integer_pow, no transfer), as in JAX
    scalars = (float,) if name == "__pow__" else _EAGER_SCALARS
    current_trace, eval_trace = tracing.find_current_trace, tracing.eval_trace

    def method(self, *other):
        try:
            if compiled is not None and type(self) is ArrayImpl and current_trace() is eval_trace:
                if not other:
                    return compiled(self)
                if len(other) == 1:  # the common case, a binary operator
                    kind = type(other[0])
                    if kind is ArrayImpl:
                        return compiled(self, other[0])
                    if kind in scalars:
                        return compiled(self, scalar_array(other[0]))
                else:
                    operands = []
                    for o in other:
                        kind = type(o)
                        if kind is ArrayImpl:
                            operands.append(o)
                        elif kind in scalars:
                            operands.append(scalar_array(o))
                        else:
                            break
                    else:
                        return compiled(self, *operands)
            operands = []
            for o in other:
                if isinstance(o, _ARRAY_LIKE) or hasattr(o, "aval"):
                    operands.append(o)
                elif hasattr(o, "__jax_array__"):  # a flax Variable converts, as in JAX
                    operands.append(o.__jax_array__())
                else:  # left to the other operand's method
                    return NotImplemented
            return f(self, *operands)
        except Exception as e:  # an API boundary, free until something raises
            filter_traceback(e, sys._getframe())
            raise

    method.__name__ = getattr(f, "__name__", "operator")
    return method


register_boundary(_guard(None, "__pos__"))  # every operator method shares this code


def install_operators() -> None:
    for name, f in OPERATORS.items():
        method = _guard(f, name)
        tracing.array_methods[name] = method
        set_array_attribute(name, method)
