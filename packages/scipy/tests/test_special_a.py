"""lamina.scipy.special, part A (gamma and beta families, incomplete gamma and beta,
zeta, error and normal functions, Bessel i0/i1, entropy, logistic, Box-Cox,
combinatorics, logsumexp/softmax): values against SciPy in float32 and float64 (tails,
poles and the ends of domains included), JAX 0.10.2's values where it differs from
SciPy, derivatives by check_grads, jit and vmap, and JAX's errors for bad input."""

import numpy as np
import pytest
import scipy.special as osp

import lamina.interpreters as api
import lamina.numpy as jnp
import lamina.scipy.special as sp
from lamina.interpreters import enable_x64
from lamina.interpreters.test_util import check_grads

# Arguments reaching into tails, near poles and past the ends of domains.
X = np.array([-1e3, -20.5, -10.5, -3.5, -2.2, -0.5, -1e-6, 0.0, 1e-30, 1e-6, 0.3, 0.5, 1.0])
X = np.concatenate([X, [1.5, 2.0, 7.9, 8.1, 30.0, 170.0, 1e3, 1e7, np.inf, -np.inf, np.nan]])
P = np.array([0.0, 1e-30, 1e-10, 1e-14, 0.01, 0.1, 0.135, 0.5, 0.865, 0.99, 1 - 1e-7, 1.0])
A = np.array([0.1, 0.5, 1.0, 3.0, 10.0, 100.0])[:, None]
XA = np.array([0.0, 0.1, 0.5, 1.0, 3.0, 10.0, 90.0, 100.0, 120.0, 1e4])[None, :]
# Large, close a and x, where float32's igamma keeps only about 2 digits (as XLA's does
# in JAX).
A_LARGE = np.array([1e3, 1e4, 1e4, 3e4])
X_LARGE = np.array([1e3 + 30, 1e4 - 100, 1e4 + 1, 3e4 + 200])
FINITE = X[np.isfinite(X)]
A2 = np.array([0.2, 1.0, 3.5, 10.0, 200.0, 3e7])

# name: (lamina function, SciPy function, arguments, float32 rtol, float64 rtol[, atol
# for float32 and float64, where values cancel to about 0]). Where JAX's values differ
# from SciPy's (gammaln(-inf), digamma(0), rel_entr of nan) the inputs leave them out;
# test_values_where_jax_differs_from_scipy checks those. JAX's betaln (so beta) takes
# cdflib's large-b branch without its small-a refinement: 1e-7 relative in float64.
CASES = {
    "gammaln": (sp.gammaln, osp.gammaln, (X[~np.isneginf(X)],), 2e-5, 1e-13, 1e-6, 1e-15),
    "gamma": (sp.gamma, osp.gamma, (X[X < 171],), 2e-4, 1e-12),
    "gammasgn": (sp.gammasgn, osp.gammasgn, (X,), 0, 0),
    "digamma": (sp.digamma, osp.digamma, (FINITE[FINITE != 0],), 2e-5, 1e-12),
    "erf": (sp.erf, osp.erf, (X,), 1e-6, 1e-15),
    "erfc": (sp.erfc, osp.erfc, (X,), 1e-5, 1e-13),
    "erfinv": (sp.erfinv, osp.erfinv, (2 * P - 1,), 1e-5, 5e-12),
    "ndtr": (sp.ndtr, osp.ndtr, (X,), 1e-5, 1e-13),
    "ndtri": (sp.ndtri, osp.ndtri, (P,), 1e-5, 1e-14),
    "log_ndtr": (sp.log_ndtr, osp.log_ndtr, (X,), 1e-5, 5e-11, 0, 1e-16),
    "i0": (sp.i0, osp.i0, (X[np.abs(X) < 80],), 1e-5, 3e-14),
    "i0e": (sp.i0e, osp.i0e, (X,), 1e-6, 3e-14),
    "i1": (sp.i1, osp.i1, (X[np.abs(X) < 80],), 1e-5, 3e-14),
    "i1e": (sp.i1e, osp.i1e, (X,), 1e-6, 3e-14),
    "expit": (sp.expit, osp.expit, (X,), 1e-6, 1e-15),
    "logit": (sp.logit, osp.logit, (P,), 1e-5, 1e-14),
    "entr": (sp.entr, osp.entr, (X,), 1e-6, 1e-15),
    "factorial": (sp.factorial, osp.factorial, (np.abs(X[np.abs(X) < 30]),), 1e-4, 1e-12),
    "gammainc": (sp.gammainc, osp.gammainc, (A, XA), 1e-4, 1e-11),
    "gammaincc": (sp.gammaincc, osp.gammaincc, (A, XA), 1e-4, 1e-11, 1e-30, 1e-300),
    "gammainc_large": (sp.gammainc, osp.gammainc, (A_LARGE, X_LARGE), 2e-2, 1e-9),
    "gammaincc_large": (sp.gammaincc, osp.gammaincc, (A_LARGE, X_LARGE), 2e-2, 1e-9),
    "betainc": (sp.betainc, osp.betainc, (A2[:, None], A2[None, :4], 0.3), 1e-4, 1e-11),
    "betaln": (sp.betaln, osp.betaln, (A2[:, None], A2[None, :]), 1e-5, 3e-7, 1e-6, 1e-15),
    "beta": (sp.beta, osp.beta, (A2[:4, None], np.array([-2.5, 0.5, 3.0, 7.5])), 1e-5, 5e-6),
    "poch": (sp.poch, osp.poch, (np.array([[-2.5], [0.5], [3.0]]), [0.0, 1.0, 2.25]), 1e-5, 1e-13),
    "comb": (
        sp.comb,
        osp.comb,
        (np.array([[-1.0], [0.0], [5.0], [30.0]]), [-1.0, 0, 2, 6]),
        1e-5,
        1e-12,
    ),
    "xlogy": (sp.xlogy, osp.xlogy, (X[:, None], X[None, ::4]), 1e-6, 1e-15),
    "xlog1py": (sp.xlog1py, osp.xlog1py, (X[:, None], X[None, ::4]), 1e-6, 1e-15),
    "rel_entr": (
        sp.rel_entr,
        osp.rel_entr,
        (X[:20, None], X[None, :20:3]),
        1e-6,
        1e-15,
        3e-5,
        1e-13,
    ),
    "kl_div": (sp.kl_div, osp.kl_div, (X[:20, None], X[None, :20:3]), 1e-6, 1e-14, 3e-5, 1e-13),
    "boxcox": (sp.boxcox, osp.boxcox, (A2[:, None], [-2.0, 0.0, 1e-3, 0.5, 3.0]), 1e-5, 1e-13),
    "boxcox1p": (sp.boxcox1p, osp.boxcox1p, (X[5:15, None], [-2.0, 0.0, 1e-3, 0.5]), 1e-5, 1e-13),
    "zeta": (
        sp.zeta,
        osp.zeta,
        ([[1.5], [2.0], [4.0], [10.0]], [0.5, 1.0, 2.0, 10.0]),
        1e-5,
        1e-13,
    ),
    "multigammaln": (
        lambda a: sp.multigammaln(a, 3),
        lambda a: osp.multigammaln(a, 3),
        (np.array([1.5, 2.0, 7.25, 100.0]),),
        1e-5,
        1e-13,
    ),
}


def _grouped(dtype):
    """Every case's arguments as ``dtype``, and one jitted call computing all of them
    (one compilation for the whole table)."""
    args = {name: tuple(np.asarray(a, dtype) for a in c[2]) for name, c in CASES.items()}
    everything = api.jit(lambda args: {n: CASES[n][0](*a) for n, a in args.items()})
    return args, everything(args)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_against_scipy(dtype):
    with enable_x64(dtype == np.float64):
        args, got = _grouped(dtype)
    failures = []
    for name, (_, reference, _, *tolerances) in CASES.items():
        want = reference(*(a.astype(np.float64) for a in args[name]))
        assert got[name].dtype == dtype, name
        rtol32, rtol64, atol32, atol64 = [*tolerances, 0, 0][:4]
        rtol, atol = (rtol32, atol32) if dtype == np.float32 else (rtol64, atol64)
        if dtype == np.float32:  # what float32 cannot hold is compared as it rounds
            with np.errstate(over="ignore"):
                want = want.astype(np.float32).astype(np.float64)
        try:
            np.testing.assert_allclose(got[name], want, rtol=rtol, atol=atol, err_msg=name)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


def test_extreme_values_float64():
    with enable_x64():
        # log_ndtr deep in the left tail (the asymptotic series) and the right one.
        x = np.array([-1e5, -1e3, -40.0, -20.5, -19.5, 7.0, 9.0, 37.0])
        # (Near x = -20 the third-order series keeps 11 digits; below 8, log(ndtr) keeps
        # absolute, not relative, accuracy: both as in JAX.)
        np.testing.assert_allclose(sp.log_ndtr(x), osp.log_ndtr(x), rtol=5e-11, atol=1e-16)
        # ndtri in both tails, below exp(-32) too.
        p = np.array([1e-300, 1e-100, 1e-15, np.exp(-33.0), 1 - 1e-15])
        np.testing.assert_allclose(sp.ndtri(p), osp.ndtri(p), rtol=1e-13)
        # gammainc/gammaincc for large, close a and x.
        a = np.array([1e3, 1e5, 1e7, 1e7])
        x = np.array([1e3 + 30, 1e5 - 300, 1e7 + 1e3, 1e7 - 5e3])
        np.testing.assert_allclose(sp.gammainc(a, x), osp.gammainc(a, x), rtol=5e-8)
        np.testing.assert_allclose(sp.gammaincc(a, x), osp.gammaincc(a, x), rtol=5e-8)
        # betaln of large arguments (gammaln differences would cancel).
        a, b = np.array([1e7, 0.5, 30.0]), np.array([3e7, 1e9, 1e12])
        np.testing.assert_allclose(sp.betaln(a, b), osp.betaln(a, b), rtol=1e-13)
        # gammaln near its zeros (absolute accuracy there) and of huge arguments.
        x = np.array([1 + 1e-10, 2 - 1e-10, 1e300])
        np.testing.assert_allclose(sp.gammaln(x), osp.gammaln(x), rtol=1e-14, atol=1e-14)


def test_values_where_jax_differs_from_scipy():
    nan, inf = np.nan, np.inf
    # Recorded from JAX 0.10.2 (float32).
    np.testing.assert_array_equal(sp.xlogy(0.0, 0.0), 0.0)
    np.testing.assert_array_equal(sp.xlogy(0.0, nan), nan)
    np.testing.assert_array_equal(sp.xlog1py(0.0, -1.0), 0.0)
    np.testing.assert_array_equal(
        sp.ndtri(np.array([0.0, 1.0, -0.1, 1.1, 0.5], np.float32)), [-inf, inf, nan, nan, 0.0]
    )
    # gammaln is log|Gamma|, finite between the poles; loggamma is nan for real x <= 0.
    np.testing.assert_allclose(sp.gammaln(-2.5), -0.0562439, rtol=1e-5)
    np.testing.assert_array_equal(sp.loggamma(np.array([-2.5, -1.0, 0.0])), [nan, nan, nan])
    np.testing.assert_array_equal(sp.gamma(np.array([-2.0, 0.0, -0.0])), [nan, inf, -inf])
    # SciPy: -inf, -inf, nan, nan.
    np.testing.assert_array_equal(sp.gammaln(-inf), inf)
    np.testing.assert_array_equal(sp.digamma(0.0), nan)
    np.testing.assert_array_equal(sp.rel_entr(nan, 1.0), inf)
    np.testing.assert_array_equal(sp.kl_div(1.0, nan), nan)
    # polygamma: a negative order is nan, orders 0 and 1 are digamma and trigamma.
    got = sp.polygamma(np.array([-1, 0, 1, 2]), 2.5)
    np.testing.assert_allclose(got, [nan, 0.7031568, 0.49035776, -0.23620412], rtol=1e-5)
    assert got.dtype == np.float32 and got.weak_type
    # zeta at its pole and below the domain of q.
    got = sp.zeta(np.array([2.0, 1.0, 0.5]), 1.0)
    np.testing.assert_allclose(got, [1.644934, inf, nan], rtol=1e-6)
    # factorial of negative numbers is 0; of non-integers the gamma function.
    got = sp.factorial(np.array([-1.0, 3.0, 4.5]))
    np.testing.assert_allclose(got, [0.0, 6.0000052, 52.342876], rtol=1e-6)
    np.testing.assert_allclose(sp.comb(5, 2, repetition=True), 15.000008, rtol=1e-6)
    np.testing.assert_array_equal(sp.logit(np.array([0.0, 1.0])), [-inf, inf])


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_gamma_and_loggamma(dtype):
    z = np.array([1 + 1j, -2.5 + 0.5j, -2.5 - 0.5j, 0.5 - 3j, 10 + 10j, -10.2 + 1e-3j, 3.5 + 0j])
    rtol = 1e-4 if dtype == np.complex64 else 1e-12
    with enable_x64(dtype == np.complex128):
        z = z.astype(dtype)
        got_gamma, got_loggamma = api.jit(lambda z: (sp.gamma(z), sp.loggamma(z)))(z)
        assert got_gamma.dtype == dtype and got_loggamma.dtype == dtype
        np.testing.assert_allclose(got_gamma, osp.gamma(z.astype(np.complex128)), rtol=rtol)
        np.testing.assert_allclose(
            got_loggamma, osp.loggamma(z.astype(np.complex128)), rtol=rtol, atol=rtol
        )
        poles = np.array([0j, -3 + 0j, complex(np.nan, 1.0)], dtype)
        assert np.isnan(sp.gamma(poles)).all() and np.isnan(sp.loggamma(poles)).all()


def test_bernoulli_and_axis_functions():
    np.testing.assert_allclose(sp.bernoulli(20), osp.bernoulli(20), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(sp.bernoulli(1), [1.0, -0.5])
    x = np.array([[0.5, -1.0, 3.0], [2.0, 1e3, -np.inf]], np.float32)
    np.testing.assert_allclose(sp.softmax(x), osp.softmax(x), rtol=1e-6)
    np.testing.assert_allclose(sp.softmax(x, axis=1), osp.softmax(x, axis=1), rtol=1e-6)
    np.testing.assert_allclose(sp.log_softmax(x, axis=0), osp.log_softmax(x, axis=0), rtol=1e-6)
    np.testing.assert_allclose(sp.log_softmax(x), osp.log_softmax(x), rtol=1e-6)
    np.testing.assert_allclose(sp.logsumexp(x, axis=1), osp.logsumexp(x, axis=1), rtol=1e-6)
    b = np.array([1.0, -2.0, 0.5], np.float32)
    got, sign = sp.logsumexp(x, axis=1, b=b, return_sign=True)
    want, want_sign = osp.logsumexp(x, axis=1, b=b, return_sign=True)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(sign, want_sign)
    # The same function object as jax.nn's (which lamina.nn takes from lamina.numpy).
    assert sp.logsumexp is jnp.logsumexp


def _one_argument(x):
    """Every one-argument function, each on ``x`` moved into its domain."""
    return jnp.stack(
        [
            sp.gammaln(x),
            sp.digamma(x),
            sp.polygamma(2, x),
            sp.multigammaln(x + 1, 2),
            sp.entr(x),
            sp.logit(x / 5),
            sp.expit(x - 2),
            sp.erfinv(x / 5),
            sp.erfc(x - 2),
            sp.ndtri(x / 5),
            sp.i0(x - 2) + sp.i0e(x - 2),
            sp.i1(x - 2) + sp.i1e(x - 2),
            sp.logsumexp(x, b=np.array([1.0, 2.0, 0.5])) + sp.softmax(x, axis=0),
        ]
    )


def _two_arguments(x, y):
    """Every two-argument function, on ``x`` and ``y`` moved into its domain."""
    return jnp.stack(
        [
            sp.betaln(x, 3 * y),
            sp.gammainc(x, y),
            sp.gammaincc(x, y),
            sp.zeta(x + 1.5, y),
            sp.poch(x, y),
            sp.xlogy(x, y),
            sp.xlog1py(x, y),
            sp.rel_entr(x, y),
            sp.kl_div(x, y),
            sp.boxcox(x, y - 2),
            sp.boxcox1p(x, y - 2),
        ]
    )


def test_gradients():
    x, y = np.array([0.3, 1.7, 4.5]), np.array([4.5, 1.2, 0.4])
    with enable_x64():
        check_grads(api.jit(_one_argument), (x,), order=1, rtol=1e-4)
        check_grads(api.jit(_two_arguments), (x, y), order=1, rtol=1e-4)
        # betainc has no derivative in a and b (JAX's error is tested below).
        check_grads(api.jit(lambda p: sp.betainc(x, y, p)), (x / 5,), order=1, rtol=1e-4)
        check_grads(api.jit(sp.log_ndtr), (np.array([-30.0, -12.0, -1.0, 2.0, 9.0]),), order=2)
        z = np.array([0.3 + 0.2j, -2.5 + 1j])
        check_grads(api.jit(sp.gamma), (z,), order=1)
        # loggamma's step loop has dynamic bounds: forward mode only, as in JAX.
        check_grads(api.jit(sp.loggamma), (z,), order=1, modes=["fwd"])


def test_custom_derivatives_at_the_edges():
    # Recorded from JAX 0.10.2: finite where the formula's derivative is not.
    dx, dy = api.vmap(api.grad(sp.xlogy, (0, 1)))(jnp.array([0.0, 1, 2]), jnp.array([0.0, 1, 3]))
    np.testing.assert_allclose(dx, [-np.inf, 0.0, 1.0986123], rtol=1e-6)
    np.testing.assert_allclose(dy, [np.nan, 1.0, 0.6666667], rtol=1e-6)
    grad_log_ndtr = api.vmap(api.grad(sp.log_ndtr))(jnp.array([-100.0, -15.0, 0.0, 10.0, 50.0]))
    np.testing.assert_allclose(
        grad_log_ndtr, [99.98103, 15.066114, 0.7978846, 7.694605e-23, 0.0], rtol=1e-5
    )
    grad_entr = api.vmap(api.grad(sp.entr))(jnp.array([0.0, 0.5, 2.0]))
    np.testing.assert_allclose(grad_entr, [np.inf, -0.30685282, -1.6931472], rtol=1e-6)


def test_jit_vmap_and_dtypes():
    x = np.linspace(0.1, 5.0, 6, dtype=np.float32).reshape(2, 3)
    n = np.array([0, 1, 3])
    got = api.jit(api.vmap(sp.polygamma, in_axes=(None, 0)))(n, x)
    np.testing.assert_allclose(got, osp.polygamma(n, x), rtol=1e-5)
    got = api.vmap(lambda a, x: sp.gammainc(a, x) + sp.log_ndtr(x), in_axes=(0, None))(x, x[0])
    want = osp.gammainc(x, x[0]) + osp.log_ndtr(x[0])
    np.testing.assert_allclose(got, want, rtol=1e-5)
    # Integers become the default float; Python scalars stay weakly typed.
    assert sp.gammaln(np.arange(3)).dtype == np.float32
    assert sp.erf(0.5).weak_type and sp.xlogy(2, 3).weak_type and sp.logit(0.3).weak_type
    assert not sp.ndtri(0.5).weak_type and not sp.gamma(2).weak_type
    assert sp.expit(np.array([1], np.float16)).dtype == np.float16
    with enable_x64():
        assert sp.gammaln(np.arange(3)).dtype == np.float64


def test_errors():
    with pytest.raises(NotImplementedError, match=r"^factorial with exact=True$"):
        sp.factorial(3, exact=True)
    with pytest.raises(ValueError, match=r"must be of integer type\. Got dtype float32"):
        sp.polygamma(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="Riemann zeta function not implemented"):
        sp.zeta(2.0)
    for f in (sp.ndtr, sp.ndtri):
        with pytest.raises(TypeError, match=r"x.dtype=int32 is not supported, see docstring"):
            f(np.array([1, 2], np.int32))
    with pytest.raises(TypeError, match=r"^x.dtype=int32 is not supported.$"):
        sp.log_ndtr(1)
    with pytest.raises(TypeError, match=r"series_order must be a Python integer\."):
        sp.log_ndtr(1.0, series_order=2.0)
    with pytest.raises(ValueError, match=r"series_order must be non-negative\."):
        sp.log_ndtr(1.0, series_order=-1)
    with pytest.raises(ValueError, match=r"series_order must be <= 30\."):
        sp.log_ndtr(1.0, series_order=31)
    with pytest.raises(ValueError, match=r"n must be a non-negative integer\."):
        sp.bernoulli(-1)
    with pytest.raises(api.ConcretizationTypeError, match="Argument n of bernoulli"):
        api.jit(sp.bernoulli)(3)
    with pytest.raises(api.ConcretizationTypeError, match="d argument of multigammaln"):
        api.jit(lambda d: sp.multigammaln(2.0, d))(2)
    for f, name in [(sp.gammasgn, "gammasgn"), (sp.entr, "entr")]:
        with pytest.raises(ValueError, match=rf"{name} does not support complex-valued inputs\."):
            f(1j)
    for f, name in [(sp.beta, "beta"), (sp.kl_div, "kl_div"), (sp.rel_entr, "rel_entr")]:
        with pytest.raises(ValueError, match=rf"^{name} does not support complex-valued inputs\."):
            f(1j, 2.0)
    with pytest.raises(ValueError, match=r"^jnp\.poch does not support complex-valued inputs\."):
        sp.poch(1j, 2.0)
    with pytest.raises(ValueError, match=r"^betainc does not support complex-valued inputs\."):
        sp.betainc(1j, 2.0, 0.5)
    with pytest.raises(ValueError, match=r"^polygamma does not support complex-valued inputs\."):
        sp.polygamma(1, 1j)
    with pytest.raises(TypeError, match="lgamma does not accept dtype complex64"):
        sp.gammaln(1j)
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b not"):
        api.grad(sp.betainc)(1.0, 2.0, 0.5)
    with pytest.raises(TypeError, match=r"softmax\(\) takes 1 positional argument"):
        sp.softmax(np.arange(3.0), -1)
