"""Special functions lowered to CHLO or built from lax arithmetic: erf, erfc, erf_inv,
lgamma, digamma, polygamma, zeta and the exponentially scaled Bessel functions.

The incomplete gamma and beta functions live in :mod:`.gamma`. Each primitive
accepts floating dtypes only; the algorithmic ones compute float16/bfloat16 in float32.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad, batching, trace_to_jaxpr
from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import chlo
from lamina.ir import ShapedArray, def_elementwise_sharding, dtypes
from lamina.lax.base.operands import (
    FLOAT,
    broadcasting_shape,
    check_dtype,
    check_same_dtypes,
    standard_primitive,
)
from lamina.lax.base.primitives import abs as abs_  # primitives: zero/clean derivatives at 0
from lamina.lax.base.primitives import (
    add,
    broadcast_in_dim,
    div,
    exp,
    gt,
    le,
    max,
    mul,
    neg,
    reciprocal,
    select_n,
    sign,
    sqrt,
    square,
    sub,
)

__all__ = [
    "bessel_i0e",
    "bessel_i0e_p",
    "bessel_i1e",
    "bessel_i1e_p",
    "digamma",
    "digamma_p",
    "erf",
    "erf_inv",
    "erf_inv_p",
    "erf_p",
    "erfc",
    "erfc_p",
    "lgamma",
    "lgamma_p",
    "polygamma",
    "polygamma_p",
    "zeta",
    "zeta_p",
]

FLOATING = (FLOAT,)


def const(value, like):
    """``value`` as a scalar of ``like``'s dtype (a literal when traced)."""
    return np.array(value, dtypes.dtype(like))


def inline(ctx, fun, values, avals):
    """Lower ``fun`` (lax operations on operands of types ``avals``, returning a list)
    in place on the MLIR ``values``; returns its MLIR results and their avals."""
    closed, _ = trace_to_jaxpr(lambda *xs: list(fun(*xs)), avals)
    avals_out = [o.aval.update(weak_type=False) for o in closed.jaxpr.outvars]
    return ctx.call(closed, list(values), inline=True), avals_out


def lower_elementwise(ctx, emit, *args):
    """Lowering by ``emit(ctx, values, aval)``, which computes the result from MLIR
    ``values`` of type ``aval`` each.

    Operands are first broadcast to the result's shape; float16 and bfloat16 are
    computed in float32, as the series and continued fractions need its range."""
    out_aval = ctx.avals_out[0]
    args = ctx.broadcast_to(list(args))
    dtype = np.dtype(out_aval.dtype)
    compute = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
    aval = ShapedArray(out_aval.shape, compute)
    narrow = ShapedArray(out_aval.shape, dtype)
    if compute != dtype:
        args = [mb.convert(a, narrow, aval) for a in args]
    out = emit(ctx, args, aval)
    if compute != dtype:
        out = mb.convert(out, aval, narrow)
    return [out]


def lower_traced(ctx, fun, *args):
    """Lowering by ``fun``, written with lax operations (see :func:`lower_elementwise`)."""

    def emit(ctx, values, aval):
        return inline(ctx, lambda *xs: [fun(*xs)], values, [aval] * len(values))[0][0]

    return lower_elementwise(ctx, emit, *args)


def special_primitive(name: str, arity: int, lowering):
    """An elementwise primitive on floating operands of one dtype (scalars and size-1
    axes stretch, as for lax's binary arithmetic)."""

    def abstract_eval(*args):
        shape = broadcasting_shape(name, [a.shape for a in args])
        for i, a in enumerate(args):
            check_dtype(name, a.dtype, FLOATING, position=i if arity > 1 else None)
        check_same_dtypes(name, args)
        return ShapedArray(shape, args[0].dtype, weak_type=all(a.weak_type for a in args))

    prim = standard_primitive(name, abstract_eval, lowering)
    if arity == 1:
        batching.defvectorized(prim)
        def_elementwise_sharding(prim)
    else:
        batching.defbroadcasting(prim)
        def_elementwise_sharding(prim)
    return prim


def _chlo(op_name: str):
    def lowering(ctx, *args):
        return [getattr(chlo, op_name)(*ctx.broadcast_to(list(args)))]

    return lowering


erf_p = special_primitive("erf", 1, _chlo("erf"))
erfc_p = special_primitive("erfc", 1, _chlo("erfc"))
erf_inv_p = special_primitive("erf_inv", 1, _chlo("erf_inv"))
lgamma_p = special_primitive("lgamma", 1, _chlo("lgamma"))
digamma_p = special_primitive("digamma", 1, _chlo("digamma"))
bessel_i1e_p = special_primitive("bessel_i1e", 1, _chlo("bessel_i1e"))
zeta_p = special_primitive("zeta", 2, _chlo("zeta"))
polygamma_p = special_primitive("polygamma", 2, _chlo("polygamma"))


def erf(x):
    """Elementwise error function: 2/sqrt(pi) times the integral of exp(-t**2) on [0, x]."""
    return erf_p.bind(x)


def erfc(x):
    """Elementwise complementary error function: 1 - erf(x), accurate for large x."""
    return erfc_p.bind(x)


def erf_inv(x):
    """Elementwise inverse of the error function on (-1, 1)."""
    return erf_inv_p.bind(x)


def lgamma(x):
    """Elementwise natural logarithm of the absolute value of the gamma function."""
    return lgamma_p.bind(x)


def digamma(x):
    """Elementwise digamma function: the derivative of lgamma."""
    return digamma_p.bind(x)


def polygamma(m, x):
    """Elementwise polygamma function: the ``m``-th derivative of digamma at ``x``."""
    return polygamma_p.bind(m, x)


def zeta(x, q):
    """Elementwise Hurwitz zeta function: the sum over n >= 0 of (n + q) ** -x."""
    return zeta_p.bind(x, q)


def bessel_i1e(x):
    """Elementwise exponentially scaled modified Bessel function of order one:
    exp(-|x|) * I1(x)."""
    return bessel_i1e_p.bind(x)


def bessel_i0e(x):
    """Elementwise exponentially scaled modified Bessel function of order zero:
    exp(-|x|) * I0(x)."""
    return bessel_i0e_p.bind(x)


# ------------------------------------------------------------------ bessel_i0e

# Chebyshev series of i0e, fitted here (numpy's chebinterpolate against a float64
# reference) on two pieces: x in [0, 8] as a function of t = x/4 - 1, and x > 8 as
# sqrt(x) * i0e(x), a function of u = 16/x - 1. Both reach float64 precision.
_I0E_NEAR = (
    0.338397637204738, -0.3046826723431984, 0.17162090152220877, -0.09490109704804763,
    0.049305284239670726, -0.02373741480589947, 0.01054646039459497, -0.004324309995050604,
    0.001639475616941414, -0.0005763755745386845, 0.00018850288509610267,
    -5.754195010112698e-05, 1.6448448071324346e-05, -4.416738359000075e-06,
    1.117387539923647e-06, -2.6707938605945767e-07, 6.046995115749354e-08,
    -1.3000250828224376e-08, 2.659824733480016e-09, -5.189803348975325e-10,
    9.67591562428538e-11, -1.726913056998569e-11, 2.9562860096429434e-12,
    -4.865314500485901e-13, 7.793765632868599e-14, -1.2593101165033919e-14,
)  # fmt: skip
_I0E_FAR = (
    0.4022452055070544, 0.0033691164782556986, 6.889758346913876e-05, 2.89137052083277e-06,
    2.0489185890936162e-07, 2.2666689888928283e-08, 3.3962319968697597e-09,
    4.940602260639082e-10, 1.188908997293292e-11, -3.149915883682297e-11,
    -1.3215739613769984e-11, -1.7941426122547456e-12, 7.180268966205938e-13,
    3.8529734958103743e-13, 1.5237724276806476e-14, -4.150013666048835e-14,
    -9.499952907665588e-15, 3.796962744218036e-15, 1.9253695859866584e-15,
)  # fmt: skip


def chebyshev(coefficients, t):
    """The Chebyshev series sum c_k T_k(t), by Clenshaw's recurrence."""
    later = nearer = mul(t, const(0, t))
    two_t = add(t, t)
    for c in reversed(coefficients[1:]):
        later, nearer = nearer, add(sub(mul(two_t, nearer), later), const(c, t))
    return add(sub(mul(t, nearer), later), const(coefficients[0], t))


def full_like(value, x):
    """``value`` in ``x``'s shape and dtype (select_n needs cases of one shape)."""
    shape = x.aval.shape if hasattr(x, "aval") else np.shape(x)
    if not shape:
        return const(value, x)
    return broadcast_in_dim(const(value, x), shape, ())


def _i0e(x):
    ax = abs_(x)
    near = chebyshev(_I0E_NEAR, sub(div(ax, const(4, x)), const(1, x)))
    safe = max(ax, const(8, x))  # keeps 16/x finite where the far piece is not used
    far = div(chebyshev(_I0E_FAR, sub(div(const(16, x), safe), const(1, x))), sqrt(safe))
    return select_n(le(ax, const(8, x)), far, near)


bessel_i0e_p = special_primitive("bessel_i0e", 1, lambda ctx, x: lower_traced(ctx, _i0e, x))


# ------------------------------------------------------------------ derivatives


def _bessel_i1e_jvp(t, ans, x):
    # i1e' = i0e - i1e * (sign(x) + 1/x); the limit at 0 is 1/2.
    eps = np.finfo(dtypes.dtype(x)).eps
    not_tiny = gt(abs_(x), const(eps, x))
    safe = select_n(not_tiny, full_like(eps, x), x)
    slope = sub(bessel_i0e(safe), mul(ans, add(sign(safe), reciprocal(safe))))
    return mul(t, select_n(not_tiny, full_like(0.5, x), slope))


def _polygamma_m_jvp(t, ans, m, x):
    raise ValueError("polygamma gradient with respect to m is not supported")


ad.defjvp2(erf_p, lambda t, ans, x: mul(const(2 / np.sqrt(np.pi), x), mul(t, exp(neg(square(x))))))
ad.defjvp2(
    erfc_p, lambda t, ans, x: mul(const(-2 / np.sqrt(np.pi), x), mul(t, exp(neg(square(x)))))
)
ad.defjvp2(erf_inv_p, lambda t, ans, x: mul(const(np.sqrt(np.pi) / 2, x), mul(t, exp(square(ans)))))
ad.defjvp2(lgamma_p, lambda t, ans, x: mul(t, digamma(x)))
ad.defjvp2(digamma_p, lambda t, ans, x: mul(t, polygamma(const(1, x), x)))
ad.defjvp2(polygamma_p, _polygamma_m_jvp,
          lambda t, ans, m, x: mul(t, polygamma(add(m, const(1, m)), x)))  # fmt: skip
ad.defjvp2(bessel_i0e_p, lambda t, ans, x: mul(t, sub(bessel_i1e(x), mul(sign(x), ans))))
ad.defjvp2(bessel_i1e_p, _bessel_i1e_jvp)
