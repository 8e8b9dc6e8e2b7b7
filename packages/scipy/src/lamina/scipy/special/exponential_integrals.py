"""The exponential integrals ``expi`` (Ei), ``expn`` (E_n) and ``exp1`` (E_1), after
Cephes' ei.c and expn.c: rational approximations of Ei on ranges of x for x > 0,
and for E_n a power series (x <= 1), a continued fraction (x > 1) or, for n >= 5000,
an asymptotic expansion."""

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import custom_jvp, jit
from lamina.ir import dtypes
from lamina.scipy.special.elementwise_loops import elementwise_while
from lamina.scipy.special.polynomials import rational

__all__ = ["exp1", "expi", "expn"]

_EULER = float(np.euler_gamma)

# Ei(x) = euler + log(x) + x P(x)/Q(x) on (0, 2]
_EI_SMALL = (
    [
        -5.350447357812542947283e0,
        2.185049168816613393830e2,
        -4.176572384826693777058e3,
        5.541176756393557601232e4,
        -3.313381331178144034309e5,
        1.592627163384945414220e6,
    ],
    [
        1.0,
        -5.250547959112862969197e1,
        1.259616186786790571525e3,
        -1.756549581973534652631e4,
        1.493062117002725991967e5,
        -7.294949239640527645655e5,
        1.592627163384945429726e6,
    ],
)
# Ei(x) = exp(x)/x (1 + w P(w)/Q(w)), w = 1/x, on (2, 4], (4, 8], ..., (32, 64], > 64
_EI_RANGES = [
    (
        [
            1.981808503259689673238e-2,
            -1.271645625984917501326e0,
            -2.088160335681228318920e0,
            2.755544509187936721172e0,
            -4.409507048701600257171e-1,
            4.665623805935891391017e-2,
            -1.545042679673485262580e-3,
            7.059980605299617478514e-5,
        ],
        [
            1.0,
            1.476498670914921440652e0,
            5.629177174822436244827e-1,
            1.699017897879307263248e-1,
            2.291647179034212017463e-2,
            4.450150439728752875043e-3,
            1.727439612206521482874e-4,
            3.953167195549672482304e-5,
        ],
    ),
    (
        [
            -1.373215375871208729803e0,
            -7.084559133740838761406e-1,
            1.580806855547941010501e0,
            -2.601500427425622944234e-1,
            2.994674694113713763365e-2,
            -1.038086040188744005513e-3,
            4.371064420753005429514e-5,
            2.141783679522602903795e-6,
        ],
        [
            1.0,
            8.585231423622028380768e-1,
            4.483285822873995129957e-1,
            7.687932158124475434091e-2,
            2.449868241021887685904e-2,
            8.832165941927796567926e-4,
            4.590952299511353531215e-4,
            -4.729848351866523044863e-6,
            2.665195537390710170105e-6,
        ],
    ),
    (
        [
            -2.106934601691916512584e0,
            1.732733869664688041885e0,
            -2.423619178935841904839e-1,
            2.322724180937565842585e-2,
            2.372880440493179832059e-4,
            -8.343219561192552752335e-5,
            1.363408795605250394881e-5,
            -3.655412321999253963714e-7,
            1.464941733975961318456e-8,
            6.176407863710360207074e-10,
        ],
        [
            1.0,
            -2.298062239901678075778e-1,
            1.105077041474037862347e-1,
            -1.566542966630792353556e-2,
            2.761106850817352773874e-3,
            -2.089148012284048449115e-4,
            1.708528938807675304186e-5,
            -4.459311796356686423199e-7,
            1.394634930353847498145e-8,
            6.150865933977338354138e-10,
        ],
    ),
    (
        [
            -2.458119367674020323359e-1,
            -1.483382253322077687183e-1,
            7.248291795735551591813e-2,
            -1.348315687380940523823e-2,
            1.342775069788636972294e-3,
            -7.942465637159712264564e-5,
            2.644179518984235952241e-6,
            -4.239473659313765177195e-8,
        ],
        [
            1.0,
            -1.044225908443871106315e-1,
            -2.676453128101402655055e-1,
            9.695000254621984627876e-2,
            -1.601745692712991078208e-2,
            1.496414899205908021882e-3,
            -8.462452563778485013756e-5,
            2.728938403476726394024e-6,
            -4.239462431819542051337e-8,
        ],
    ),
    (
        [
            1.212561118105456670844e-1,
            -5.823133179043894485122e-1,
            2.348887314557016779211e-1,
            -3.040034318113248237280e-2,
            1.510082146865190661777e-3,
            -2.523137095499571377122e-5,
        ],
        [
            1.0,
            -1.002252150365854016662e0,
            2.928709694872224144953e-1,
            -3.337004338674007801307e-2,
            1.560544881127388842819e-3,
            -2.523137093603234562648e-5,
        ],
    ),
    (
        [
            -7.657847078286127362028e-1,
            6.886192415566705051750e-1,
            -2.132598113545206124553e-1,
            3.346107552384193813594e-2,
            -3.076541477344756050249e-3,
            1.747119316454907477380e-4,
            -6.103711682274170530369e-6,
            1.218032765428652199087e-7,
            -1.086076102793290233007e-9,
        ],
        [
            1.0,
            -1.888802868662308731041e0,
            1.066691687211408896850e0,
            -2.751915982306380647738e-1,
            3.930852688233823569726e-2,
            -3.414684558602365085394e-3,
            1.866844370703555398195e-4,
            -6.345146083130515357861e-6,
            1.239754287483206878024e-7,
            -1.086076102793126632978e-9,
        ],
    ),
]


def _expi_positive(x):
    """Ei for x > 0; the last range also takes what no range holds (0, nan)."""
    result = x * rational(*_EI_SMALL, x) + _EULER + lax.log(x)
    in_range = (x > 0) & (x <= 2)
    for i, (num, den) in enumerate(_EI_RANGES):
        w = 1.0 / x
        value = lax.exp(x) * w * (w * rational(num, den, w) + 1.0)
        if i + 1 < len(_EI_RANGES):
            inside = (x > 2.0 ** (i + 1)) & (x <= 2.0 ** (i + 2))
        else:
            inside = ~in_range
        result = lax.select(inside, value, result)
        in_range = in_range | inside
    return result


@custom_jvp
@jit
def expi(x):
    """The exponential integral Ei(x), the principal value of the integral of
    ``exp(t)/t`` from -inf to x, for real x."""
    (x,) = jnp.promote_args_inexact("expi", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("expi does not support complex-valued inputs.")
    negative = x < 0
    return lax.select(negative, -exp1(-x), _expi_positive(x))


@expi.defjvp
@jit
def _expi_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return expi(x), lax.exp(x) / x * x_dot


def _expn_series(n, x, active):
    """E_n by its power series (Cephes, x <= 1), iterated where ``active``."""
    eps = float(dtypes.finfo(x.dtype).eps)
    one = lax.full_like(x, 1.0)
    zero = lax.full_like(x, 0.0)

    # psi(n) = -euler + sum_{i < n} 1/i, less log(x)
    psi, _ = elementwise_while(
        lambda s: active & (s[1] < n),
        lambda s: (s[0] + 1.0 / s[1], s[1] + 1.0),
        (-_EULER - lax.log(x), one),
    )
    is_one = n == 1.0
    n_safe = lax.select(is_one, lax.full_like(n, 2.0), n)
    ans = lax.select(is_one, zero, 1.0 / (1.0 - n_safe))
    z = -x

    def body(s):
        xk, yk, pk, ans, _ = s
        xk = xk + 1.0
        yk = yk * z / xk
        pk = pk + 1.0
        ans = ans + lax.select(pk != 0, yk / pk, zero)
        t = lax.select(ans != 0, lax.abs(yk / ans), one)
        return xk, yk, pk, ans, t

    _, _, _, ans, _ = elementwise_while(
        lambda s: active & (x > 0) & (s[4] > eps),
        body,
        (zero, one, 1.0 - n, ans, lax.full_like(x, np.inf)),
    )
    return lax.pow(z, n - 1.0) * psi / lax.exp(lax.lgamma(n)) - ans


def _expn_continued_fraction(n, x, active):
    """E_n by its continued fraction (Cephes, x > 1), rescaled when it grows, iterated
    where ``active``."""
    eps = float(dtypes.finfo(x.dtype).eps)
    big = 1.44115188075855872e17
    one = lax.full_like(x, 1.0)

    def body(s):
        k, pkm2, qkm2, pkm1, qkm1, ans, _, r = s
        k = k + 1.0
        odd = lax.rem(k, lax.full_like(k, 2.0)) == 1.0
        yk = lax.select(odd, one, x)
        xk = lax.select(odd, n + (k - 1.0) / 2.0, k / 2.0)
        pk = pkm1 * yk + pkm2 * xk
        qk = qkm1 * yk + qkm2 * xk
        nonzero = qk != 0
        r = lax.select(nonzero, pk / qk, r)
        t = lax.select(nonzero, lax.abs((ans - r) / r), one)
        ans = lax.select(nonzero, r, ans)
        pkm2, qkm2, pkm1, qkm1 = pkm1, qkm1, pk, qk
        rescale = lax.abs(pk) > big
        pkm2, qkm2, pkm1, qkm1 = (lax.select(rescale, v / big, v) for v in (pkm2, qkm2, pkm1, qkm1))
        return k, pkm2, qkm2, pkm1, qkm1, ans, t, r

    init = (one, one, x, one, x + n, 1.0 / (x + n), lax.full_like(x, np.inf), lax.full_like(x, 0.0))
    state = elementwise_while(lambda s: active & (x > 0) & (s[6] > eps), body, init)
    return state[5] * lax.exp(-x)


def _expn_large_order(n, x):
    """E_n for n >= 5000: the first terms of its asymptotic expansion in n."""
    xk = x + n
    yk = 1.0 / (xk * xk)
    ans = yk * n * (6.0 * x * x - 8.0 * n * x + n * n)
    ans = yk * (ans + n * (n - 2.0 * x))
    ans = yk * (ans + n)
    return (ans + 1.0) * lax.exp(-x) / xk


def _expn_values(n, x):
    """The last case that holds gives the value (as ``jnp.piecewise`` picks), the
    series where none does; each loop runs only where its case is taken (elsewhere the
    continued fraction could take very long, for tiny x)."""
    n_one_safe = lax.select(n == 1.0, n + n, n)
    conds = [
        (n < 0) | (x < 0),
        (x == 0) & (n < 2),
        (x == 0) & (n >= 2),
        (n == 0) & (x >= 0),
        n >= 5000,
        x > 1,
    ]
    taken, later = [], jnp.zeros(x.shape, bool)
    for cond in reversed(conds):
        taken.insert(0, cond & ~later)
        later = later | cond
    values = [
        lax.full_like(x, np.nan),
        lax.full_like(x, np.inf),
        1.0 / n_one_safe,
        lax.exp(-x) / x,
        _expn_large_order(n, x),
        _expn_continued_fraction(n, x, taken[5]),
    ]
    result = _expn_series(n, x, ~later)
    for cond, value in zip(taken, values, strict=True):
        result = lax.select(cond, value, result)
    return result


@jit
def _expn_broadcast(n, x):
    n, x = jnp.broadcast_arrays(n, x)
    return _expn_values(n, x)


def _expn_impl(n, x):
    n, x = jnp.promote_args_inexact("expn", n, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("expn does not support complex-valued inputs.")
    return _expn_broadcast(n, x)


@custom_jvp
def _expn(n, x):
    return _expn_impl(n, x)


def _expn_jvp(primals, tangents):
    n, x = primals
    _, x_dot = tangents
    return _expn(n, x), -x_dot * _expn(n - 1.0, x)


_expn.defjvp(_expn_jvp)


def expn(n, x):
    """The generalized exponential integral E_n(x), the integral of
    ``exp(-x t) / t^n`` for t from 1 to inf, for real n and x (nan for n < 0 or x < 0)."""
    return _expn(*jnp.promote_args_inexact("expn", n, x))


def exp1(x):
    """The exponential integral E_1(x), for real x."""
    (x,) = jnp.promote_args_inexact("exp1", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("exp1 does not support complex-valued inputs.")
    return expn(1, x)
