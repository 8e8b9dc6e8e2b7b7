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
from lamina.interpreters import enable_x64, grad, jit, vmap
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
