"""The Fresnel integrals ``fresnel``, after Cephes' fresnl.c (``fresnlf`` for single
precision): power series for x^2 < 2.5625, auxiliary functions f and g up to
x = 36974, and the leading asymptotic terms beyond."""

import math

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import custom_jvp, jit
from lamina.ir import dtypes
from lamina.scipy.special.polynomials import horner, rational

__all__ = ["fresnel"]

# Single precision (fresnlf): S = x^3 SN(x^4), C = x CN(x^4), f = 1 - u FN(u), g = t GN(u).
_F32 = dict(
    sn=[
        1.647629463788700e-9,
        -1.522754752581096e-7,
        8.424748808502400e-6,
        -3.120693124703272e-4,
        7.244727626597022e-3,
        -9.228055941124598e-2,
        5.235987735681432e-1,
    ],
    cn=[
        1.416802502367354e-8,
        -1.157231412229871e-6,
        5.387223446683264e-5,
        -1.604381798862293e-3,
        2.818489036795073e-2,
        -2.467398198317899e-1,
        9.999999760004487e-1,
    ],
    fn=[
        -1.903009855649792e12,
        1.355942388050252e11,
        -4.158143148511033e9,
        7.343848463587323e7,
        -8.732356681548485e5,
        8.560515466275470e3,
        -1.032877601091159e2,
        2.999401847870011e0,
    ],
    gn=[
        -1.860843997624650e11,
        1.278350673393208e10,
        -3.779387713202229e8,
        6.492611570598858e6,
        -7.787789623358162e4,
        8.602931494734327e2,
        -1.493439396592284e1,
        9.999841934744914e-1,
    ],
)
# Double precision: the same forms as ratios of polynomials.
_F64 = dict(
    sn=[
        -2.99181919401019853726e3,
        7.08840045257738576863e5,
        -6.29741486205862506537e7,
        2.54890880573376359104e9,
        -4.42979518059697779103e10,
        3.18016297876567817986e11,
    ],
    sd=[
        1.00000000000000000000e0,
        2.81376268889994315696e2,
        4.55847810806532581675e4,
        5.17343888770096400730e6,
        4.19320245898111231129e8,
        2.24411795645340920940e10,
        6.07366389490084639049e11,
    ],
    cn=[
        -4.98843114573573548651e-8,
        9.50428062829859605134e-6,
        -6.45191435683965050962e-4,
        1.88843319396703850064e-2,
        -2.05525900955013891793e-1,
        9.99999999999999998822e-1,
    ],
    cd=[
        3.99982968972495980367e-12,
        9.15439215774657478799e-10,
        1.25001862479598821474e-7,
        1.22262789024179030997e-5,
        8.68029542941784300606e-4,
        4.12142090722199792936e-2,
        1.00000000000000000118e0,
    ],
    fn=[
        4.21543555043677546506e-1,
        1.43407919780758885261e-1,
        1.15220955073585758835e-2,
        3.45017939782574027900e-4,
        4.63613749287867322088e-6,
        3.05568983790257605827e-8,
        1.02304514164907233465e-10,
        1.72010743268161828879e-13,
        1.34283276233062758925e-16,
        3.76329711269987889006e-20,
    ],
    fd=[
        1.00000000000000000000e0,
        7.51586398353378947175e-1,
        1.16888925859191382142e-1,
        6.44051526508858611005e-3,
        1.55934409164153020873e-4,
        1.84627567348930545870e-6,
        1.12699224763999035261e-8,
        3.60140029589371370404e-11,
        5.88754533621578410010e-14,
        4.52001434074129701496e-17,
        1.25443237090011264384e-20,
    ],
    gn=[
        5.04442073643383265887e-1,
        1.97102833525523411709e-1,
        1.87648584092575249293e-2,
        6.84079380915393090172e-4,
        1.15138826111884280931e-5,
        9.82852443688422223854e-8,
        4.45344415861750144738e-10,
        1.08268041139020870318e-12,
        1.37555460633261799868e-15,
        8.36354435630677421531e-19,
        1.86958710162783235106e-22,
    ],
    gd=[
        1.00000000000000000000e0,
        1.47495759925128324529e0,
        3.37748989120019970451e-1,
        2.53603741420338795122e-2,
        8.14679107184306179049e-4,
        1.27545075667729118702e-5,
        1.04314589657571990585e-7,
        4.60680728146520428211e-10,
        1.10273215066240270757e-12,
        1.38796531259578871258e-15,
        8.39158816283118707363e-19,
        1.86958710162783236342e-22,
    ],
)


@jit
def _sin_cos_half_pi_square(x):
    """``sin(pi x^2 / 2)`` and ``cos(pi x^2 / 2)``, reducing ``x^2 / 2`` modulo 2
    exactly: with ``s = x mod 2``, ``x^2 / 2 = s (x - s / 2) (mod 2)``."""
    x = lax.abs(x)
    s = lax.rem(x, lax.full_like(x, 2.0))
    r = lax.rem(s * (x - s / 2), lax.full_like(x, 2.0))
    pi = math.pi
    sin = lax.select(
        r < 0.5,
        lax.sin(pi * r),
        lax.select(r > 1.5, lax.sin(pi * (r - 2.0)), -lax.sin(pi * (r - 1.0))),
    )
    cos = lax.select(
        r == 0.5,
        lax.full_like(x, 0.0),
        lax.select(r < 1.0, -lax.sin(pi * (r - 0.5)), lax.sin(pi * (r - 1.5))),
    )
    return sin, cos


@jit
def _fresnel_values(xx):
    single = xx.dtype == np.float32
    k = _F32 if single else _F64
    x = lax.abs(xx)
    x2 = x * x
    t = x2 * x2
    if single:
        s_small = x * x2 * horner(k["sn"], t)
        c_small = x * horner(k["cn"], t)
    else:
        s_small = x * x2 * rational(k["sn"], k["sd"], t)
        c_small = x * rational(k["cn"], k["cd"], t)
    sin, cos = _sin_cos_half_pi_square(x)
    if single:
        c_large = s_large = lax.full_like(x, 0.5)
    else:
        c_large = 0.5 + 1 / (math.pi * x) * sin
        s_large = 0.5 - 1 / (math.pi * x) * cos
    t = math.pi * x2
    u = 1.0 / (t * t)
    t = 1.0 / t
    if single:
        f = 1.0 - u * horner(k["fn"], u)
        g = t * horner(k["gn"], u)
    else:
        f = 1.0 - u * rational(k["fn"], k["fd"], u)
        g = t * rational(k["gn"], k["gd"], u)
    t = math.pi * x
    c_mid = 0.5 + (f * sin - g * cos) / t
    s_mid = 0.5 - (f * cos + g * sin) / t
    inf = jnp.isinf(xx)
    small = x2 < 2.5625
    large = x > 36974.0
    half = lax.full_like(x, 0.5)
    s = lax.select(inf, half, lax.select(small, s_small, lax.select(large, s_large, s_mid)))
    c = lax.select(inf, half, lax.select(small, c_small, lax.select(large, c_large, c_mid)))
    negative = xx < 0.0
    return lax.select(negative, -s, s), lax.select(negative, -c, c)


@custom_jvp
def fresnel(x):
    """The Fresnel integrals S(x) and C(x), the integrals of ``sin(pi t^2 / 2)`` and
    ``cos(pi t^2 / 2)`` from 0 to x, for real x (half precision computed in float32)."""
    (xx,) = jnp.promote_args_inexact("fresnel", x)
    dtype = xx.dtype
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    if dtype in (np.float16, dtypes.bfloat16):
        xx = xx.astype(np.float32)
    elif dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"Support for {dtype} dtype is not implemented yet.")
    s, c = _fresnel_values(xx)
    return s.astype(dtype), c.astype(dtype)


@fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    sin, cos = _sin_cos_half_pi_square(x)
    return fresnel(x), (sin * x_dot, cos * x_dot)
