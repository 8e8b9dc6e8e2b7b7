"""softmax, log_softmax, logsumexp, logmeanexp, standardize and one_hot (and gradients
of the differentiable ones) against values recorded from JAX 0.10.2: each case in
data/functions_jax.json is a Python expression over ``nn``, ``jnp``, ``np`` and ``jax``,
evaluated here with lamina in place of JAX. The inputs hold the cases where only exact
agreement tells: -inf and +inf entries, huge finite values, fully masked rows, negative
weighted sums, complex input, out-of-range one_hot indices."""

import json
import pathlib
import warnings

import numpy as np
import pytest

import lamina.interpreters as api
import lamina.nn as nn
import lamina.numpy as jnp

CASES = json.loads((pathlib.Path(__file__).parent / "data" / "functions_jax.json").read_text())
_SPECIAL = {None: np.nan, "inf": np.inf, "-inf": -np.inf}


def _values(raw):
    return np.array([_SPECIAL.get(v, v) if not isinstance(v, float) else v for v in raw])


def _check(got, want, weak):
    if isinstance(want, list):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w, k in zip(got, want, weak, strict=True):
            _check(g, w, k)
        return
    assert str(got.dtype) == want["dtype"]
    assert list(got.shape) == want["shape"]
    assert bool(getattr(got, "weak_type", False)) == weak
    got = np.asarray(got)
    if "real" in want:
        expected = _values(want["real"]) + 1j * _values(want["imag"])
    else:
        expected = _values(want["values"])
    np.testing.assert_allclose(
        got.ravel().astype(expected.dtype), expected, rtol=2e-6, atol=1e-6, equal_nan=True
    )


@pytest.mark.parametrize("case", CASES, ids=[c["expr"][:60] for c in CASES])
def test_matches_recorded_jax(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # one_hot of float input
        scope = {"nn": nn, "jnp": jnp, "np": np, "jax": api}
        # One compiled program per case; results keep their weak types through jit.
        got = api.jit(lambda: eval(case["expr"], scope))()
    _check(got, case["out"], case["weak"])
