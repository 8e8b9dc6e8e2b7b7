"""The sine and cosine integrals ``sici``, after Cephes' sici.c: rational
approximations for |x| <= 4, auxiliary functions f and g for 4 < |x| <= 1e9, and their
leading terms beyond."""

import math

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import custom_jvp, jit
from lamina.ir import dtypes
from lamina.scipy.special.polynomials import horner, rational

__all__ = ["sici"]

_EULER = float(np.euler_gamma)
_HALF_PI = math.pi / 2

_SI_NUM = [
    -8.39167827910303881427e-11,
    4.62591714427012837309e-8,
    -9.75759303843632795789e-6,
    9.76945438170435310816e-4,
    -4.13470316229406538752e-2,
    1.00000000000000000302e0,
]
_SI_DEN = [
    2.03269266195951942049e-12,
    1.27997891179943299903e-9,
    4.41827842801218905784e-7,
    9.96412122043875552487e-5,
    1.42085239326149893930e-2,
    9.99999999999999996984e-1,
]
_CI_NUM = [
    2.02524002389102268789e-11,
    -1.35249504915790756375e-8,
    3.59325051419993077021e-6,
    -4.74007206873407909465e-4,
    2.89159652607555242092e-2,
    -1.00000000000000000080e0,
]
_CI_DEN = [
    4.07746040061880559506e-12,
    3.06780997581887812692e-9,
    1.23210355685883423679e-6,
    3.17442024775032769882e-4,
    5.10028056236446052392e-2,
    4.00000000000000000080e0,
]
# f and g on 4 < x < 8 ...
_F4_NUM = [
    4.23612862892216586994e0,
    5.45937717161812843388e0,
    1.62083287701538329132e0,
    1.67006611831323023771e-1,
    6.81020132472518137426e-3,
    1.08936580650328664411e-4,
    5.48900223421373614008e-7,
]
_F4_DEN = [
    1.0,
    8.16496634205391016773e0,
    7.30828822505564552187e0,
    1.86792257950184183883e0,
    1.78792052963149907262e-1,
    7.01710668322789753610e-3,
    1.10034357153915731354e-4,
    5.48900252756255700982e-7,
]
_G4_NUM = [
    8.71001698973114191777e-2,
    6.11379109952219284151e-1,
    3.97180296392337498885e-1,
    7.48527737628469092119e-2,
    5.38868681462177273157e-3,
    1.61999794598934024525e-4,
    1.97963874140963632189e-6,
    7.82579040744090311069e-9,
]
_G4_DEN = [
    1.0,
    1.64402202413355338886e0,
    6.66296701268987968381e-1,
    9.88771761277688796203e-2,
    6.22396345441768420760e-3,
    1.73221081474177119497e-4,
    2.02659182086343991969e-6,
    7.82579218933534490868e-9,
]
# ... and on x >= 8
_F8_NUM = [
    4.55880873470465315206e-1,
    7.13715274100146711374e-1,
    1.60300158222319456320e-1,
    1.16064229408124407915e-2,
    3.49556442447859055605e-4,
    4.86215430826454749482e-6,
    3.20092790091004902806e-8,
    9.41779576128512936592e-11,
    9.70507110881952024631e-14,
]
_F8_DEN = [
    1.0,
    9.17463611873684053703e-1,
    1.78685545332074536321e-1,
    1.22253594771971293032e-2,
    3.58696481881851580297e-4,
    4.92435064317881464393e-6,
    3.21956939101046018377e-8,
    9.43720590350276732376e-11,
    9.70507110881952025725e-14,
]
_G8_NUM = [
    6.97359953443276214934e-1,
    3.30410979305632063225e-1,
    3.84878767649974295920e-2,
    1.71718239052347903558e-3,
    3.48941165502279436777e-5,
    3.47131167084116673800e-7,
    1.70404452782044526189e-9,
    3.85945925430276600453e-12,
    3.14040098946363334640e-15,
]
_G8_DEN = [
    1.0,
    1.68548898811011640017e0,
    4.87852258695304967486e-1,
    4.67913194259625806320e-2,
    1.90284426674399523638e-3,
    3.68475504442561108162e-5,
    3.57043223443740838771e-7,
    1.72693748966316146736e-9,
    3.87830166023954706752e-12,
    3.14040098946363335242e-15,
]


def _small(x):
    t = x * x
    si = x * rational(_SI_NUM, _SI_DEN, t)
    ci = _EULER + lax.log(x) + t * rational(_CI_NUM, _CI_DEN, t)
    zero = x == 0
    return lax.select(zero, lax.full_like(x, 0.0), si), lax.select(
        zero, lax.full_like(x, -np.inf), ci
    )


def _auxiliary(x):
    z = 1.0 / (x * x)
    below8 = x < 8.0
    f = lax.select(
        below8,
        horner(_F4_NUM, z) / (x * horner(_F4_DEN, z)),
        horner(_F8_NUM, z) / (x * horner(_F8_DEN, z)),
    )
    g = lax.select(below8, z * rational(_G4_NUM, _G4_DEN, z), z * rational(_G8_NUM, _G8_DEN, z))
    s, c = lax.sin(x), lax.cos(x)
    return _HALF_PI - f * c - g * s, f * s - g * c


def _leading(x):
    inf = jnp.isposinf(x)
    si = lax.select(inf, lax.full_like(x, _HALF_PI), _HALF_PI - lax.cos(x) / x)
    ci = lax.select(inf, lax.full_like(x, 0.0), lax.sin(x) / x)
    return si, ci


@custom_jvp
@jit
def sici(x):
    """The sine integral Si(x) and cosine integral Ci(x), for real x (Ci is
    nan for x = -inf and takes log|x| for negative x, as Cephes)."""
    (x,) = jnp.promote_args_inexact("sici", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    ax = lax.abs(x)
    si_small, ci_small = _small(ax)
    si_mid, ci_mid = _auxiliary(ax)
    si_big, ci_big = _leading(ax)
    small = ax <= 4
    mid = (ax > 4) & (ax <= 1e9)
    si = lax.select(small, si_small, lax.select(mid, si_mid, si_big))
    ci = lax.select(small, ci_small, lax.select(mid, ci_mid, ci_big))
    return lax.sign(x) * si, lax.select(jnp.isneginf(x), lax.full_like(x, np.nan), ci)


@sici.defjvp
@jit
def _sici_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return sici(x), (jnp.sinc(x / math.pi) * x_dot, lax.cos(x) / x * x_dot)
