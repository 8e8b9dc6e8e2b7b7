"""lamina.scipy.stats.gaussian_kde against scipy.stats.gaussian_kde (densities,
integrals, bandwidths, weights), its resampling against draws recorded from JAX 0.10.2
for the same key, its pytree behaviour and its errors."""

import dataclasses

import numpy as np
import pytest
import scipy.stats as osp_stats

from lamina import lax
from lamina.interpreters import jit
from lamina.ir import tree_util
from lamina.scipy import stats

DATA = np.array([[0.1, 0.5, 1.2, 2.0, -0.3, 0.9], [1.0, 0.2, 0.4, 1.1, 0.3, -0.5]], np.float32)
WEIGHTS = np.array([1, 2, 1, 3, 1, 2], np.float32)
POINTS = np.array([[0.0, 0.5, 1.0, 3.0], [0.2, 0.1, 0.4, -1.0]], np.float32)
BANDWIDTHS = {
    "scott": ("scott", "scott"),
    "silverman": ("silverman", "silverman"),
    "scalar": (0.7, 0.7),
    "callable": (lambda kde: kde.neff**-0.3, lambda kde: kde.neff**-0.3),
}


@pytest.mark.parametrize("bandwidth", sorted(BANDWIDTHS))
def test_densities_and_integrals_match_scipy(bandwidth):
    ours, theirs = BANDWIDTHS[bandwidth]
    other_data = DATA[:, :4] + 0.1

    @jit
    def values(data, weights, points, other):
        kde = stats.gaussian_kde(data, ours, weights)
        kde1 = stats.gaussian_kde(data[0], ours)
        return {
            "evaluate": kde.evaluate(points),
            "call": kde(points),
            "pdf": kde.pdf(points),
            "logpdf": kde.logpdf(points),
            "covariance": kde.covariance,
            "inv_cov": kde.inv_cov,
            "neff": kde.neff,
            "gaussian": kde.integrate_gaussian(points[:, 0], np.eye(2, dtype=np.float32) * 0.5),
            "kde": kde.integrate_kde(stats.gaussian_kde(other)),
            "kde_reversed": stats.gaussian_kde(other).integrate_kde(kde),
            "evaluate_1d": kde1.evaluate(points[0]),
            "box_1d": kde1.integrate_box_1d(-0.5, 1.0),
        }

    got = values(DATA, WEIGHTS, POINTS, other_data)
    kde = osp_stats.gaussian_kde(DATA.astype(np.float64), theirs, WEIGHTS)
    kde1 = osp_stats.gaussian_kde(DATA[0].astype(np.float64), theirs)
    want = {
        "evaluate": kde.evaluate(POINTS),
        "call": kde(POINTS),
        "pdf": kde.pdf(POINTS),
        "logpdf": kde.logpdf(POINTS),
        "covariance": kde.covariance,
        "inv_cov": kde.inv_cov,
        "neff": kde.neff,
        "gaussian": kde.integrate_gaussian(POINTS[:, 0], np.eye(2) * 0.5),
        "kde": kde.integrate_kde(osp_stats.gaussian_kde(other_data)),
        "kde_reversed": kde.integrate_kde(osp_stats.gaussian_kde(other_data)),
        "evaluate_1d": kde1.evaluate(POINTS[0]),
        "box_1d": kde1.integrate_box_1d(-0.5, 1.0),
    }
    for key, value in want.items():
        assert got[key].dtype == np.float32, key
        np.testing.assert_allclose(got[key], value, rtol=2e-5, atol=1e-6, err_msg=key)


def test_resample_draws_jax_samples():
    # Recorded from JAX 0.10.2 (gaussian_kde(...).resample with the same keys).
    raw_key = np.array([0, 3], np.uint32)
    kde = stats.gaussian_kde(DATA, weights=WEIGHTS)
    np.testing.assert_allclose(
        kde.resample(raw_key, (5,)),
        [
            [
                -0.39293062686920166,
                0.8683360815048218,
                1.7970402240753174,
                0.37702614068984985,
                3.1926803588867188,
            ],
            [
                -0.8961309194564819,
                -0.37215733528137207,
                0.5402393937110901,
                -0.9535163044929504,
                1.656038522720337,
            ],
        ],
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        stats.gaussian_kde(DATA[0], "silverman").resample(raw_key), [-0.281474769115448], rtol=1e-5
    )
    typed_key = lax.random_wrap(np.array([0, 7], np.uint32), impl=lax.resolve_prng_impl(None))
    samples = stats.gaussian_kde(DATA[0]).resample(typed_key, (3,))
    np.testing.assert_allclose(
        samples, [[0.36067408323287964, 1.7390824556350708, -0.454374223947525]], rtol=1e-5
    )
    # JAX's resample transposes the noise, so shapes of more than one axis fail to add.
    with pytest.raises(TypeError, match="add got incompatible shapes for broadcasting"):
        stats.gaussian_kde(DATA[0]).resample(typed_key, (2, 3))


def test_resample_statistics():
    kde = stats.gaussian_kde(DATA, weights=WEIGHTS)
    samples = kde.resample(np.array([0, 11], np.uint32), (4000,))
    assert samples.shape == (2, 4000) and samples.dtype == np.float32
    samples = np.asarray(samples, np.float64)
    weights = WEIGHTS / WEIGHTS.sum()
    mean = DATA @ weights
    # Mixture covariance: the weighted data covariance (biased) plus the kernel's.
    centered = DATA - mean[:, None]
    spread = (centered * weights) @ centered.T + np.asarray(kde.covariance)
    np.testing.assert_allclose(samples.mean(1), mean, atol=0.05)
    np.testing.assert_allclose(np.cov(samples), spread, atol=0.06)


def test_is_a_frozen_pytree():
    kde = stats.gaussian_kde(DATA, weights=WEIGHTS)
    leaves, treedef = tree_util.tree_flatten(kde)
    assert [leaf.shape for leaf in leaves] == [(), (2, 6), (6,), (2, 2), (2, 2)]
    rebuilt = tree_util.tree_unflatten(treedef, leaves)
    assert isinstance(rebuilt, stats.gaussian_kde) and (rebuilt.d, rebuilt.n) == (2, 6)
    np.testing.assert_allclose(
        jit(lambda k, p: k.logpdf(p))(kde, POINTS), kde.logpdf(POINTS), rtol=1e-6
    )
    doubled = jit(lambda k: tree_util.tree_map(lambda x: 2 * x, k))(kde)
    np.testing.assert_allclose(doubled.dataset, 2 * DATA)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'neff'"):
        kde.neff = 1.0
    assert repr(kde).startswith("gaussian_kde(neff=")


def test_bad_arguments_raise_jax_errors():
    # Messages recorded from JAX 0.10.2.
    one_d = stats.gaussian_kde(DATA[0])
    two_d = stats.gaussian_kde(DATA)
    with pytest.raises(ValueError, match=r"`dataset` input should have multiple elements\."):
        stats.gaussian_kde(np.ones(1))
    with pytest.raises(NotImplementedError, match="gaussian_kde does not support complex data"):
        stats.gaussian_kde(np.ones(3) * 1j)
    with pytest.raises(
        ValueError, match=r"`bw_method` should be 'scott', 'silverman', a scalar, or a callable\."
    ):
        stats.gaussian_kde(DATA[0], bw_method="foo")
    with pytest.raises(ValueError, match="`weights` input should be of length n"):
        stats.gaussian_kde(DATA[0], weights=np.ones(3))
    with pytest.raises(ValueError, match=r"`weights` input should be one-dimensional\."):
        stats.gaussian_kde(np.arange(4.0), weights=np.ones((2, 2)))
    with pytest.raises(ValueError, match="points have dimension 3, dataset has dimension 2"):
        two_d.evaluate(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"integrate_box_1d\(\) only handles 1D pdfs"):
        two_d.integrate_box_1d(0.0, 1.0)
    with pytest.raises(NotImplementedError, match="only 1D box integrations are supported"):
        one_d.integrate_box(0.0, 1.0)
    with pytest.raises(
        NotImplementedError, match="dynamically changing the bandwidth method is not supported"
    ):
        one_d.set_bandwidth()
    with pytest.raises(ValueError, match="mean does not have dimension 1"):
        one_d.integrate_gaussian(np.ones(2), np.eye(1))
    with pytest.raises(ValueError, match="KDEs are not the same dimensionality"):
        one_d.integrate_kde(two_d)
    with pytest.raises(
        NotImplementedError, match="gaussian_kde does not support complex coordinates"
    ):
        one_d.evaluate(np.ones(2) * 1j)
    # A (d,) point is read as one point (recorded from JAX 0.10.2).
    np.testing.assert_allclose(two_d.evaluate(np.ones(2)), two_d.evaluate(np.ones((2, 1))))
