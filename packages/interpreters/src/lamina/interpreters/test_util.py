"""Numerical checks of derivatives, as ``jax.test_util``: ``check_jvp`` compares a JVP
with central differences along one random direction, ``check_vjp`` a VJP with them
through inner products, and ``check_grads`` both, to any order.

Tolerances follow JAX: a number, or a dict by dtype merged over a per-dtype default, and
both grow with the number of elements compared.
"""

from __future__ import annotations

import functools
import inspect
import operator

import numpy as np

from lamina.interpreters.transformations.ad import jvp
from lamina.interpreters.transformations.reverse import linearize, vjp
from lamina.ir import dtypes, tree_util

__all__ = [
    "EPS",
    "check_grads",
    "check_jvp",
    "check_vjp",
    "numerical_jvp",
    "recorded_parameters",
    "signature_parameters",
]

EPS = 1e-4
"""The default step of the central differences."""

# The dtype a Python scalar stands for here, whatever the x64 mode.
_PYTHON_SCALAR_DTYPES = {
    bool: np.dtype(np.bool_),
    int: np.dtype(np.int64),
    float: np.dtype(np.float64),
    complex: np.dtype(np.complex128),
}

# 8-bit floats with a 3- or 2-bit mantissa, and the coarsest ones (4-bit, exponent-only).
_FLOAT8 = (
    dtypes.float8_e3m4,
    dtypes.float8_e4m3,
    dtypes.float8_e4m3b11fnuz,
    dtypes.float8_e4m3fn,
    dtypes.float8_e4m3fnuz,
    dtypes.float8_e5m2,
    dtypes.float8_e5m2fnuz,
)
_COARSEST_FLOATS = (dtypes.float4_e2m1fn, dtypes.float8_e8m0fnu)
# Both tolerance tables give these the same tolerances.
_TINY_FLOAT_TOLERANCE = {
    **{np.dtype(t): 1e0 for t in _COARSEST_FLOATS},
    **{np.dtype(t): 1e-1 for t in _FLOAT8},
}

# Tolerance of an exact comparison, by dtype: used for dtypes a tolerance dict lacks.
_EXACT_TOLERANCE = {
    dtypes.float0: 0,
    np.dtype(np.bool_): 0,
    **{np.dtype(t): 0 for t in (*dtypes.SIGNED_DTYPES, *dtypes.UNSIGNED_DTYPES)},
    **_TINY_FLOAT_TOLERANCE,
    np.dtype(dtypes.bfloat16): 1e-2,
    np.dtype(np.float16): 1e-3,
    np.dtype(np.float32): 1e-6,
    np.dtype(np.float64): 1e-15,
    np.dtype(np.complex64): 1e-6,
    np.dtype(np.complex128): 1e-15,
}

# Floating dtypes NumPy cannot compare closely: compared in float32.
_NARROW_FLOATS = (*_COARSEST_FLOATS, *_FLOAT8, dtypes.bfloat16)

_GRADIENT_TOLERANCE = {
    **_TINY_FLOAT_TOLERANCE,
    np.dtype(dtypes.bfloat16): 1e-1,
    np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-5,
}


def _dtype(x) -> np.dtype:
    if hasattr(x, "dtype"):
        return x.dtype
    scalar = _PYTHON_SCALAR_DTYPES.get(type(x))
    return scalar if scalar is not None else np.asarray(x).dtype


def _is_python_scalar(x) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


# ---------------------------------------------------------------------------------------
# Closeness
# ---------------------------------------------------------------------------------------


def _tolerance(dtype, tol) -> float:
    """The tolerance for values of ``dtype``: ``tol`` itself if a number, else its entry
    for the canonical dtype (an exact comparison's tolerance where it has none)."""
    if tol is None:
        tol = {}
    if not isinstance(tol, dict):
        return tol
    by_dtype = {np.dtype(key): value for key, value in tol.items()}
    dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
    return by_dtype.get(dtype, _EXACT_TOLERANCE[dtype])


def _comparable(x: np.ndarray) -> np.ndarray:
    if x.dtype in _NARROW_FLOATS:
        return x.astype(np.float32)
    if x.dtype in dtypes.SUBBYTE_INT_DTYPES:
        return x.astype(np.int8 if dtypes.iinfo(x.dtype).min < 0 else np.uint8)
    return x


def _assert_leaf_close(a, b, atol, rtol, err_msg):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    atol = max(_tolerance(a.dtype, atol), _tolerance(b.dtype, atol)) * a.size
    rtol = max(_tolerance(a.dtype, rtol), _tolerance(b.dtype, rtol)) * b.size
    if a.dtype == b.dtype == dtypes.float0:
        np.testing.assert_array_equal(a, b, err_msg=err_msg)
        return
    # A zero tolerance leaves NumPy's default in place.
    given = {name: value for name, value in (("atol", atol), ("rtol", rtol)) if value}
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(_comparable(a), _comparable(b), err_msg=err_msg, **given)


def _check_close(xs, ys, atol, rtol, err_msg):
    """Every leaf of ``xs`` close to the same leaf of ``ys``, the tolerances scaled by
    the leaf's size."""
    check = functools.partial(_assert_leaf_close, atol=atol, rtol=rtol, err_msg=err_msg)
    tree_util.tree_map(check, xs, ys)


def _check_dtypes_match(xs, ys):
    def check(x, y):
        if dtypes.x64_enabled():
            assert _dtype(x) == _dtype(y)
        else:
            assert dtypes.canonicalize_dtype(_dtype(x)) == dtypes.canonicalize_dtype(_dtype(y))

    tree_util.tree_map(check, xs, ys)


def _with_defaults(tol):
    """A user's tolerance (None, a number, or a dict keyed by anything ``np.dtype``
    takes) over the default gradient tolerances."""
    if tol is None:
        return _GRADIENT_TOLERANCE
    if not isinstance(tol, dict):
        return tol
    return {**_GRADIENT_TOLERANCE, **{np.dtype(key): value for key, value in tol.items()}}


def _message(err_msg: str, what: str) -> str:
    return f"{err_msg} {what}" if err_msg else what


# ---------------------------------------------------------------------------------------
# Arithmetic on trees of NumPy values, each result in its first operand's dtype
# ---------------------------------------------------------------------------------------


def _in_dtype_of_first(op):
    def apply(*xs):
        out = np.array(op(*xs), dtype=_dtype(xs[0]))
        return out.item() if all(_is_python_scalar(x) for x in xs) else out

    return apply


def _times(tree, factor):
    """Each leaf times ``factor``, computed in the leaf's dtype."""

    def leaf(x):
        dtype = _dtype(x)
        out = np.multiply(x, np.array(factor, dtype=dtype), dtype=dtype)
        return out.item() if _is_python_scalar(x) else out

    return tree_util.tree_map(leaf, tree)


def _difference(xs, ys):
    """``x - y`` leafwise in the dtype of ``x``, where equal values (``inf`` and ``inf``
    too) give exactly zero."""

    def leaf(x, y):
        dtype = _dtype(x)
        x, y = np.asarray(x), np.asarray(y)
        with np.errstate(invalid="ignore"):
            return np.where(np.equal(x, y), np.array(0, dtype), np.subtract(x, y, dtype=dtype))

    return tree_util.tree_map(leaf, xs, ys)


def _conj(tree):
    return tree_util.tree_map(_in_dtype_of_first(np.conj), tree)


def _inner_product(xs, ys):
    """``Re(sum(conj(x) * y))`` over all leaves."""

    def leaf(x, y):
        return np.real(np.dot(np.ravel(np.conj(x)), np.ravel(y)))

    return tree_util.tree_reduce(np.add, tree_util.tree_map(leaf, xs, ys))


def _rand_like(rng: np.random.RandomState, x):
    """Standard normal values shaped and typed like ``x`` (complex parts drawn real
    first), a Python scalar for a Python scalar."""
    shape, dtype = np.shape(x), _dtype(x)
    out = np.asarray(rng.randn(*shape), dtype=dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        out = out + dtype.type(1j) * np.asarray(rng.randn(*shape), dtype=dtype)
    return out.item() if _is_python_scalar(x) else out


def numerical_jvp(f, primals, tangents, eps=EPS):
    """``(f(x + eps t) - f(x - eps t)) / (2 eps)``, each step in the dtype of its
    values; ``primals`` and ``tangents`` are sequences of the same structure."""
    step = _times(tangents, eps)
    forward = f(*tree_util.tree_map(_in_dtype_of_first(operator.add), primals, step))
    backward = f(*tree_util.tree_map(_in_dtype_of_first(operator.sub), primals, step))
    return _times(_difference(forward, backward), 0.5 / eps)


# ---------------------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------------------


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Checks ``f_jvp`` (usually ``functools.partial(jvp, f)``) at ``args`` against
    central differences of ``f`` along one random tangent; raises ``AssertionError``."""
    atol, rtol = _with_defaults(atol), _with_defaults(rtol)
    rng = np.random.RandomState(0)
    tangents = tree_util.tree_map(functools.partial(_rand_like, rng), args)
    out, out_tangent = f_jvp(args, tangents)
    _check_dtypes_match(out, out_tangent)
    want_out = f(*args)
    _check_dtypes_match(out, want_out)
    want_tangent = numerical_jvp(f, args, tangents, eps=eps)
    _check_close(out, want_out, atol, rtol, _message(err_msg, "primal"))
    _check_close(out_tangent, want_tangent, atol, rtol, _message(err_msg, "tangent"))


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Checks ``f_vjp`` (usually ``functools.partial(vjp, f)``) at ``args``: for random
    ``t`` and ``ct``, ``<t, J^T ct>`` against ``<J t, ct>`` with ``J t`` from central
    differences of ``f``; raises ``AssertionError``."""
    atol, rtol = _with_defaults(atol), _with_defaults(rtol)
    rand_like = functools.partial(_rand_like, np.random.RandomState(0))
    out, pullback = f_vjp(*args)
    _check_close(out, f(*args), atol, rtol, _message(err_msg, "primal"))
    tangents = tree_util.tree_map(rand_like, args)
    out_tangent = numerical_jvp(f, args, tangents, eps=eps)
    cotangents = tree_util.tree_map(rand_like, out)
    in_cotangents = _conj(pullback(_conj(cotangents)))
    got = _inner_product(tangents, in_cotangents)
    want = _inner_product(out_tangent, cotangents)
    _check_close(got, want, atol, rtol, _message(err_msg, "cotangent projection"))


def _jvp_by_linearize(f, primals, tangents):
    out, f_lin = linearize(f, *primals)
    return out, f_lin(*tangents)


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Checks the derivatives of ``f`` at ``args`` up to ``order`` against central
    differences: by ``jvp`` (mode ``"fwd"``), ``vjp`` (``"rev"``) or ``linearize``
    (``"lin"``); each higher order checks the derivative function of the order below."""
    args = tuple(args)
    eps = eps or EPS

    def check(f, args, order, of=""):
        if "fwd" in modes:
            msg = f"JVP of {of}" if of else "JVP"
            check_jvp(f, functools.partial(jvp, f), args, atol, rtol, eps, msg)
            if order > 1:
                check(functools.partial(jvp, f), (args, args), order - 1, msg)
        if "rev" in modes:
            msg = f"VJP of {of}" if of else "VJP"
            check_vjp(f, functools.partial(vjp, f), args, atol, rtol, eps, msg)
            if order > 1:

                def pulled_back_output(*primals):
                    out, pullback = vjp(f, *primals)
                    return pullback(out)

                check(pulled_back_output, args, order - 1, msg)
        if "lin" in modes:
            msg = f"LIN of {of}" if of else "LIN"
            check_jvp(f, functools.partial(_jvp_by_linearize, f), args, atol, rtol, eps, msg)
            if order > 1:
                check(functools.partial(_jvp_by_linearize, f), (args, args), order - 1, msg)

    check(f, args, order)


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    return [*parts, current.strip()] if current.strip() else parts


def recorded_parameters(signature_text: str) -> list[tuple[str, str | None]]:
    """``(name, default text or None)`` of each parameter of a signature as
    ``str(inspect.signature(f))`` prints it (the API surfaces recorded from JAX), with
    ``*``/``**`` prefixes and a bare ``*`` kept, positional-only markers dropped."""
    inside = signature_text.split(" -> ")[0].strip()[1:-1]
    out = []
    for part in _split_top_level(inside):
        if part == "/":
            continue
        head, _, default = part.partition(" = ") if " = " in part else part.partition("=")
        out.append((head.split(":")[0].strip(), default.strip() or None))
    return out


def signature_parameters(fun) -> list[tuple[str, object]]:
    """``(name, default)`` of each parameter of ``fun`` (``inspect.Parameter.empty``
    where it has none), in the order and form ``recorded_parameters`` gives (a bare
    ``*`` before the first keyword-only one)."""
    out, star_seen = [], False
    for p in inspect.signature(fun).parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star_seen:
            out.append(("*", inspect.Parameter.empty))
        star_seen = star_seen or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        out.append((prefix + p.name, p.default))
    return out
