"""Dawson's integral ``dawsn``, from the rational approximations of Cody, Paciorek and
Thacher (1970) as Cephes tabulates them, on three ranges of ``|x|``."""

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import custom_jvp, jit
from lamina.ir import dtypes
from lamina.scipy.special.polynomials import rational

__all__ = ["dawsn"]

# |x| < 3.25: x P(x^2) / Q(x^2)
_SMALL_NUM = [
    1.13681498971755972054e-11,
    8.49262267667473811108e-10,
    1.94434204175553054283e-8,
    9.53151741254484363489e-7,
    3.07828309874913200438e-6,
    3.52513368520288738649e-4,
    -8.50149846724410912031e-4,
    4.22618223005546594270e-2,
    -9.17480371773452345351e-2,
    9.99999999999999994612e-1,
]
_SMALL_DEN = [
    2.40372073066762605484e-11,
    1.48864681368493396752e-9,
    5.21265281010541664570e-8,
    1.27258478273186970203e-6,
    2.32490249820789513991e-5,
    3.25524741826057911661e-4,
    3.48805814657162590916e-3,
    2.79448531198828973716e-2,
    1.58874241960120565368e-1,
    5.74918629489320327824e-1,
    1.00000000000000000539e0,
]
# 3.25 <= |x| < 6.25: (1 + t P(t) / Q(t)) / (2x), t = 1/x^2
_MIDDLE_NUM = [
    5.08955156417900903354e-1,
    -2.44754418142697847934e-1,
    9.41512335303534411857e-2,
    -2.18711255142039025206e-2,
    3.66207612329569181322e-3,
    -4.23209114460388756528e-4,
    3.59641304793896631888e-5,
    -2.14640351719968974225e-6,
    9.10010780076391431042e-8,
    -2.40274520828250956942e-9,
    3.59233385440928410398e-11,
]
_MIDDLE_DEN = [
    1.00000000000000000000e0,
    -6.31839869873368190192e-1,
    2.36706788228248691528e-1,
    -5.31806367003223277662e-2,
    8.48041718586295374409e-3,
    -9.47996768486665330168e-4,
    7.81025592944552338085e-5,
    -4.55875153252442634831e-6,
    1.89100358111421846170e-7,
    -4.91324691331920606875e-9,
    7.18466403235734541950e-11,
]
# |x| >= 6.25: the same form with other coefficients
_LARGE_NUM = [
    -5.90592860534773254987e-1,
    6.29235242724368800674e-1,
    -1.72858975380388136411e-1,
    1.64837047825189632310e-2,
    -4.86827613020462700845e-4,
]
_LARGE_DEN = [
    1.00000000000000000000e0,
    -2.69820057197544900361e0,
    1.73270799045947845857e0,
    -3.93708582281939493482e-1,
    3.44278924041233391079e-2,
    -9.73655226040941223894e-4,
]


def _tail(ax, inside, num, den):
    """``(1 + t P(t)/Q(t)) / (2|x|)`` where ``inside``, 1 elsewhere (no inf/inf)."""
    safe = lax.select(inside, ax, lax.full_like(ax, 1.0))
    t = 1.0 / lax.square(safe)
    return (0.5 / safe) * (1.0 + t * rational(num, den, t))


@jit
def _dawsn_real(x):
    ax = lax.abs(x)
    small = ax < 3.25
    middle = (ax >= 3.25) & (ax < 6.25)
    s = lax.select(small, ax, lax.full_like(ax, 1.0))
    near = s * rational(_SMALL_NUM, _SMALL_DEN, lax.square(s))
    far = lax.select(
        middle,
        _tail(ax, middle, _MIDDLE_NUM, _MIDDLE_DEN),
        _tail(ax, ax >= 6.25, _LARGE_NUM, _LARGE_DEN),
    )
    return lax.sign(x) * lax.select(small, near, far)


@custom_jvp
def _dawsn(x):
    if x.dtype in (np.float32, np.float64):
        return _dawsn_real(x)
    return _dawsn_real(x.astype(np.float32)).astype(x.dtype)


_dawsn.defjvps(lambda g, ans, x: g * (1.0 - 2.0 * x * ans))


def dawsn(x):
    """Dawson's integral ``exp(-x^2) * integral_0^x exp(t^2) dt``, for real ``x``."""
    (x,) = jnp.promote_args_inexact("dawsn", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("dawsn does not support complex-valued inputs.")
    return _dawsn(x)
