"""lamina.scipy.stats's distributions against scipy.stats: every function of every
distribution module, in and out of the support and at edge parameters, in float32 and
in float64 (x64); where JAX 0.10.2 deliberately differs from SciPy (its own values for
invalid parameters, nan inputs and the ends of some quantile functions) against values
recorded from JAX 0.10.2 (data/jax_stats_edges.json). Each dtype's cases run in one
jitted call."""

import inspect
import json
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as osp_stats

from lamina import numpy as jnp
from lamina.interpreters import enable_x64, eval_shape, jit, vmap
from lamina.interpreters.test_util import check_grads
from lamina.scipy import stats

EDGES = json.loads((Path(__file__).parent / "data" / "jax_stats_edges.json").read_text())

X = [-3.0, -1.0, -0.5, 0.0, 0.2, 0.5, 0.9, 1.0, 1.5, 3.0, 7.0, np.nan]
K = [-1.0, 0.0, 1.0, 2.0, 3.0, 4.5, 5.0, 10.0, np.nan]
Q = [-0.1, 0.0, 1e-3, 0.1, 0.5, 0.9, 0.999, 1.0, 1.1, np.nan]

# distribution -> parameter sets: shape parameters, then loc and scale (where the
# module takes them); the later sets reach edges: negative loc, invalid parameters,
# degenerate n. Each function takes all sets at once, as a broadcast trailing axis.
CONTINUOUS = {
    "beta": [
        (2.0, 3.0, 0.0, 1.0),
        (0.5, 0.5, -1.0, 3.0),
        (-1.0, 2.0, 0.0, 1.0),
        (2.0, 3.0, 0.0, -1.0),
    ],
    "cauchy": [(0.0, 1.0), (1.0, 2.0)],
    "chi2": [(3.0, 0.0, 1.0), (1.0, -1.0, 2.0), (0.5, 0.0, 1.0)],
    "expon": [(0.0, 1.0), (0.5, 2.0)],
    "gamma": [(2.0, 0.0, 1.0), (0.5, -1.0, 2.0)],
    "gennorm": [(1.0,), (2.5,)],
    "gumbel_l": [(0.0, 1.0), (1.0, 2.0), (0.0, -1.0)],
    "gumbel_r": [(0.0, 1.0), (1.0, 2.0), (0.0, -1.0)],
    "laplace": [(0.0, 1.0), (1.0, 2.0)],
    "logistic": [(0.0, 1.0), (1.0, 2.0)],
    "norm": [(0.0, 1.0), (1.0, 2.0)],
    "pareto": [(2.0, 0.0, 1.0), (1.5, -1.0, 2.0)],
    "t": [(3.0, 0.0, 1.0), (1.5, 1.0, 2.0)],
    "truncnorm": [
        (-1.0, 2.0, 0.0, 1.0),
        (0.5, 3.0, 1.0, 2.0),
        (2.0, 1.0, 0.0, 1.0),
        (-5.0, -3.0, 0.0, 1.0),
    ],
    "uniform": [(0.0, 1.0), (-1.0, 3.0)],
    "vonmises": [(1.0,), (5.0,), (-1.0,)],
    "wrapcauchy": [(0.3,), (0.9,), (1.2,)],
}
DISCRETE = {
    "bernoulli": [(0.3, 0.0), (1.2, 0.0)],
    "betabinom": [(5.0, 2.0, 3.0, 0.0), (0.0, 2.0, 3.0, 0.0), (5.0, -1.0, 3.0, 0.0)],
    "binom": [(5.0, 0.3, 0.0), (0.0, 0.3, 0.0), (5.0, 1.0, 0.0), (5.0, 0.0, 0.0)],
    "geom": [(0.3, 0.0), (0.3, 1.0)],
    "nbinom": [(5.0, 0.3, 0.0), (2.5, 0.6, 1.0)],
    "poisson": [(2.0, 0.0), (0.0, 0.0), (3.0, 1.0)],
}
FUNCTIONS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf", "logpmf", "pmf")


def _cases():
    """(key, distribution, function, argument name, parameter columns) for every
    function of every module above; a function without loc (bernoulli.cdf) gets the
    shape parameters alone."""
    cases = []
    for table, points in ((CONTINUOUS, "X"), (DISCRETE, "K")):
        for name, param_sets in table.items():
            module = getattr(stats, name)
            for fn in FUNCTIONS:
                if not hasattr(module, fn):
                    continue
                arg = "Q" if fn in ("ppf", "isf") else points
                n_params = len(inspect.signature(getattr(module, fn)).parameters) - 1
                columns = [np.array(col) for col in zip(*param_sets, strict=True)][:n_params]
                cases.append((f"{name}.{fn}", name, fn, arg, columns))
    return cases


CASES = _cases()


def _in_float64_run(case):
    """Whether a case runs in float64 too: the log functions and quantiles, and the
    plain function where the module has no log form (the rest are exp of these)."""
    _, name, fn, _, _ = case
    return (
        fn.startswith("log")
        or fn in ("ppf", "isf")
        or not hasattr(getattr(stats, name), "log" + fn)
    )


def _values(cases, inputs):
    return {
        key: getattr(getattr(stats, name), fn)(
            inputs[arg][:, None], *(c.astype(inputs[arg].dtype) for c in cols)
        )
        for key, name, fn, arg, cols in cases
    }


def _expected(key, name, fn, arg, columns, dtype):
    """SciPy's values, with JAX's recorded ones where JAX differs from SciPy."""
    with np.errstate(all="ignore"):
        want = getattr(getattr(osp_stats, name), fn)(np.array(globals()[arg])[:, None], *columns)
    for i in range(want.shape[1]):
        for index, value in EDGES[dtype].get(f"{key}.{i}", []):
            want[index, i] = float(value)
    return want


# Float32 tolerances: SciPy computes in float64, and the incomplete gamma and beta
# functions and the tails of log_ndtr lose a few more bits in float32.
TOLERANCE = {"float32": 2e-4, "float64": 1e-9}


def _check(cases, dtype):
    inputs = {name: np.array(globals()[name], dtype) for name in ("X", "K", "Q")}
    got = jit(partial(_values, cases))(inputs)
    bad = []
    tol = TOLERANCE[dtype]
    for case in cases:
        key = case[0]
        value = got[key]
        assert value.dtype == np.dtype(dtype), (key, value.dtype)
        want = _expected(*case, dtype)
        if not np.allclose(np.asarray(value), want, rtol=tol, atol=tol, equal_nan=True):
            bad.append((key, np.asarray(value), want))
    assert not bad, bad[:3]


def test_every_function_matches_scipy_float32():
    _check(CASES, "float32")


def test_every_function_matches_scipy_float64():
    with enable_x64():
        _check([c for c in CASES if _in_float64_run(c)], "float64")


def test_multivariate_distributions_match_scipy():
    alpha = np.array([1.5, 2.0, 3.0], np.float32)
    # Columns are points; the last is off the simplex.
    points = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.5, 0.6, -0.1]], np.float32).T
    counts = np.array([[1, 2, 3], [0, 0, 6], [1, 1, 1]])
    probs = np.array([0.2, 0.3, 0.5], np.float32)
    mean = np.array([0.0, 0.5, -0.5], np.float32)
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]], np.float32)
    x = np.array([[0.1, -0.2, 0.3], [1.0, 2.0, -1.0]], np.float32)

    def values(points, counts, mean, cov, x):
        return {
            "dirichlet": stats.dirichlet.logpdf(points, alpha),
            "dirichlet_implied_last": stats.dirichlet.pdf(points[:2], alpha),
            "multinomial": stats.multinomial.logpmf(counts, 6, probs),
            "multinomial_pmf": stats.multinomial.pmf(counts[0], 6, probs),
            "mvn": stats.multivariate_normal.logpdf(x, mean, cov),
            "mvn_pdf": stats.multivariate_normal.pdf(x, mean, cov),
            "mvn_batched_cov": stats.multivariate_normal.logpdf(
                x[:, None], mean, cov * np.array([[[1.0]], [[2.0]]], np.float32)
            ),
            "mvn_scalar_cov": stats.multivariate_normal.logpdf(x, mean, 2.0),
            "mvn_scalar": stats.multivariate_normal.logpdf(x[0], 0.5, 2.0),
            "entropy": stats.poisson.entropy(
                np.array([0.0, 0.5, 3.0, 9.9, 10.0, 50.0, 99.0, 100.0, 500.0], np.float32)
            ),
        }

    got = jit(values)(points, counts, mean, cov, x)
    on_simplex = points[:, :2]
    want = {
        "dirichlet": np.append(osp_stats.dirichlet.logpdf(on_simplex, alpha), -np.inf),
        "dirichlet_implied_last": np.append(osp_stats.dirichlet.pdf(on_simplex, alpha), 0.0),
        # JAX compares the total of every count (all rows together) with n.
        "multinomial": [-np.inf] * 3,
        "multinomial_pmf": osp_stats.multinomial.pmf(counts[0], 6, probs),
        "mvn": osp_stats.multivariate_normal.logpdf(x, mean, cov),
        "mvn_pdf": osp_stats.multivariate_normal.pdf(x, mean, cov),
        "mvn_batched_cov": np.stack(
            [osp_stats.multivariate_normal.logpdf(x, mean, cov * s) for s in (1, 2)], 1
        ),
        "mvn_scalar_cov": osp_stats.multivariate_normal.logpdf(x, mean, 2.0),
        "mvn_scalar": osp_stats.norm.logpdf(x[0], 0.5, np.sqrt(2.0)),
        "entropy": [
            osp_stats.poisson.entropy(mu)
            for mu in (0.0, 0.5, 3.0, 9.9, 10.0, 50.0, 99.0, 100.0, 500.0)
        ],
    }
    for key, value in want.items():
        assert got[key].dtype == np.float32, key
        np.testing.assert_allclose(got[key], value, rtol=2e-5, atol=1e-6, err_msg=key)
    rows = stats.multinomial.logpmf(counts[:1], 6, probs)
    np.testing.assert_allclose(rows, osp_stats.multinomial.logpmf(counts[:1], 6, probs), rtol=2e-5)


def test_promotion_and_weak_types():
    # Python scalars give weakly typed float32, integer arrays the default float (as JAX).
    out = eval_shape(stats.norm.logpdf, 1.0)
    assert out.dtype == np.float32 and out.weak_type
    assert eval_shape(stats.poisson.pmf, np.array([2, 3], np.int32), 3).dtype == np.float32
    assert eval_shape(stats.t.logpdf, np.array([1.0], np.float16), 3).dtype == np.float16
    with enable_x64():
        assert eval_shape(stats.norm.cdf, np.float32(0.5), 1.0).dtype == np.float32
        assert eval_shape(stats.norm.cdf, np.array([1, 2])).dtype == np.float64
        # ppf is in the default float dtype whatever q's is (as JAX's).
        assert eval_shape(stats.norm.ppf, np.float32(0.5)).dtype == np.float64
    np.testing.assert_allclose(jit(stats.norm.isf)(0.3), -osp_stats.norm.ppf(0.3), rtol=1e-6)


def test_vmap_and_eager_match_the_jitted_values():
    x = np.linspace(-2.0, 3.0, 5, dtype=np.float32)
    loc = np.array([0.0, 1.0, -1.0, 0.5, 2.0], np.float32)
    got = vmap(stats.norm.logpdf, in_axes=(0, 0, None))(x, loc, 2.0)
    np.testing.assert_allclose(got, osp_stats.norm.logpdf(x, loc, 2.0), rtol=1e-6)
    got = vmap(stats.gamma.cdf, in_axes=(None, 0))(x, np.array([0.5, 2.0], np.float32))
    want = osp_stats.gamma.cdf(x[None], np.array([[0.5], [2.0]]))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    means = np.array([[0.0, 0.0], [1.0, -1.0], [0.5, 2.0]], np.float32)
    cov = np.array([[1.0, 0.2], [0.2, 0.5]], np.float32)
    got = vmap(stats.multivariate_normal.logpdf, in_axes=(None, 0, None))(
        means[0] + 0.3, means, cov
    )
    want = [osp_stats.multivariate_normal.logpdf(means[0] + 0.3, m, cov) for m in means]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    got = vmap(stats.truncnorm.logpdf, in_axes=(0, None, None))(x, -1.0, 2.0)
    np.testing.assert_allclose(got, osp_stats.truncnorm.logpdf(x, -1.0, 2.0), rtol=1e-5)


def test_gradients():
    def logpdfs(x, shape):
        return jnp.stack(
            [
                stats.norm.logpdf(x, 0.3, shape),
                stats.gamma.logpdf(x, shape),
                stats.beta.logpdf(x / 3, shape, 2.5),
                stats.t.logpdf(x, shape, 0.5, 1.5),
                stats.truncnorm.logpdf(x, -0.5, shape),
                stats.vonmises.logpdf(x, shape),
                stats.gumbel_r.logsf(x, 0.2, shape),
                stats.logistic.logpdf(x, 0.1, shape),
                stats.multivariate_normal.logpdf(
                    jnp.stack([x, shape]), jnp.zeros(2), jnp.eye(2) * 2
                ),
            ]
        )

    with enable_x64():
        check_grads(jit(logpdfs), (1.3, 1.7), order=1, modes=("fwd", "rev"))
        check_grads(jit(stats.gamma.cdf), (1.3, 1.7), order=1, modes=("rev",))


def test_bad_arguments_raise_jax_errors():
    # Messages recorded from JAX 0.10.2.
    with pytest.raises(
        ValueError, match=r"`alpha` must be one-dimensional; got alpha.shape=\(3, 1\)"
    ):
        stats.dirichlet.logpdf(np.ones(3) / 3, np.ones((3, 1)))
    with pytest.raises(
        ValueError, match="`x` must have either the same number of entries as `alpha`"
    ):
        stats.dirichlet.logpdf(np.ones(5) / 5, np.ones(3))
    with pytest.raises(
        ValueError, match=r"x and n must be of integer type; got x\.dtype=float32, n\.dtype=float32"
    ):
        stats.multinomial.logpmf(np.array([1.0, 2.0], np.float32), 3, np.array([0.5, 0.5]))
    with pytest.raises(
        NotImplementedError, match=r"allow_singular argument of multivariate_normal\.logpdf"
    ):
        stats.multivariate_normal.logpdf(np.ones(2), np.zeros(2), np.eye(2), allow_singular=True)
    with pytest.raises(ValueError, match=r"multivariate_normal\.logpdf got incompatible shapes"):
        stats.multivariate_normal.logpdf(np.ones(2), np.zeros(2), np.eye(3))
    with pytest.raises(TypeError, match=r"norm\.logpdf requires ndarray or scalar arguments"):
        stats.norm.logpdf([1.0, 2.0])
    with pytest.raises(TypeError, match="takes 2 positional arguments but 3 were given"):
        stats.bernoulli.cdf(1.0, 0.3, 1.0)
