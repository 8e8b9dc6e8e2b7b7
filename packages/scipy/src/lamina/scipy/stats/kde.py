"""``gaussian_kde``: a Gaussian kernel density estimate, as a pytree."""

import dataclasses
from functools import partial

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit, vmap
from lamina.ir import tree_util
from lamina.lax import linalg as lax_linalg
from lamina.scipy.special import logsumexp, ndtr
from lamina.scipy.stats import sampling


def _whitened_sq_norm(chol, diff):
    """Per column of ``diff``: ``diff.T @ inv(chol @ chol.T) @ diff``."""
    z = lax_linalg.triangular_solve(chol, diff, left_side=True, lower=True)
    return jnp.sum(z * z, axis=0)


def _convolved_mass(chol, norm, target, weights, mean):
    """The weighted sum over the columns of ``target`` of the Gaussian with Cholesky
    factor ``chol`` and normalization ``norm``, centred at ``mean``."""
    arg = 0.5 * _whitened_sq_norm(chol, target - mean[:, None])
    return norm * jnp.sum(jnp.exp(-arg) * weights)


@partial(jit, static_argnums=0)
def _kernel_sums(in_log, points, values, xi, precision):
    """For each row of ``xi``: sum over rows of ``points`` of ``values`` times the
    Gaussian of ``precision`` (its log when ``in_log``)."""
    points, values, xi, precision = jnp.promote_dtypes_inexact(points, values, xi, precision)
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = lax_linalg.cholesky(precision, symmetrize_input=False)
    points, xi = jnp.dot(points, whitening), jnp.dot(xi, whitening)
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * jnp.log(2 * np.pi)

    def one_point(x):
        arg = log_norm - 0.5 * jnp.sum(jnp.square(points - x), axis=1)[:, None]
        if in_log:
            return logsumexp(jnp.log(values) + arg, axis=0)
        return jnp.sum(values * jnp.exp(arg), axis=0)

    return vmap(one_point)(xi)


@tree_util.register_pytree_node_class
class gaussian_kde:
    """Gaussian kernel density estimate of ``dataset`` (``d x n``, or ``n`` points in
    1-D), with bandwidth by ``bw_method`` ('scott', 'silverman', a scalar factor or a
    callable of the estimate) and optional point ``weights``."""

    __slots__ = ("covariance", "dataset", "inv_cov", "neff", "weights")
    _FIELDS = ("neff", "dataset", "weights", "covariance", "inv_cov")  # pytree order

    def __init__(self, dataset, bw_method=None, weights=None):
        jnp.check_arraylike("gaussian_kde", dataset)
        dataset = jnp.atleast_2d(dataset)
        if jnp.issubdtype(dataset.dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            jnp.check_arraylike("gaussian_kde", weights)
            dataset, weights = jnp.promote_dtypes_inexact(dataset, weights)
            weights = jnp.atleast_1d(weights)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (dataset,) = jnp.promote_dtypes_inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1 / jnp.sum(weights**2))
        if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
            factor = jnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
        data_cov = jnp.atleast_2d(jnp.cov(dataset, rowvar=1, bias=False, aweights=weights))
        self._set("covariance", data_cov * factor**2)
        self._set("inv_cov", jnp.linalg.inv(data_cov) / factor**2)

    def _set(self, name, value):
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name, value):
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"gaussian_kde({fields})"

    def tree_flatten(self):
        return tuple(getattr(self, name) for name in self._FIELDS), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        kde = cls.__new__(cls)
        for name, value in zip(cls._FIELDS, children, strict=True):
            kde._set(name, value)
        return kde

    @property
    def d(self):
        """Number of dimensions."""
        return self.dataset.shape[0]

    @property
    def n(self):
        """Number of data points."""
        return self.dataset.shape[1]

    def evaluate(self, points):
        """The estimated density at ``points`` (``d x m``)."""
        jnp.check_arraylike("evaluate", points)
        points = self._reshape_points(points)
        result = _kernel_sums(False, self.dataset.T, self.weights[:, None], points.T, self.inv_cov)
        return result[:, 0]

    def __call__(self, points):
        return self.evaluate(points)

    def pdf(self, x):
        """The estimated density at ``x`` (as ``evaluate``)."""
        return self.evaluate(x)

    def logpdf(self, x):
        """Log of the estimated density at ``x``."""
        jnp.check_arraylike("logpdf", x)
        x = self._reshape_points(x)
        result = _kernel_sums(True, self.dataset.T, self.weights[:, None], x.T, self.inv_cov)
        return result[:, 0]

    def _gaussian_product(self, cov):
        chol = lax_linalg.cholesky(self.covariance + cov, symmetrize_input=False)
        norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol)))
        return chol, norm

    def integrate_gaussian(self, mean, cov):
        """Integral of the estimate times the Gaussian of ``mean`` and ``cov``."""
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol, norm = self._gaussian_product(cov)
        return _convolved_mass(chol, norm, self.dataset, self.weights, mean)

    @jit
    def integrate_box_1d(self, low, high):
        """Mass of a 1-D estimate between ``low`` and ``high``."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        low = jnp.squeeze((low - self.dataset) / sigma)
        high = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (ndtr(high) - ndtr(low)))

    def integrate_kde(self, other):
        """Integral of the product of this estimate and ``other``."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol, norm = self._gaussian_product(other.covariance)
        small, large = (self, other) if self.n < other.n else (other, self)
        mass = partial(_convolved_mass, chol, norm, large.dataset, large.weights)
        return jnp.sum(vmap(mass, in_axes=1)(small.dataset) * small.weights)

    @partial(jit, static_argnames=("shape",))
    def resample(self, key, shape=()):
        """Draws of shape ``(d, *shape)`` from the estimate, with the PRNG ``key``: data
        points picked by weight, plus Gaussian noise of the kernel covariance."""
        key, _ = lax.check_prng_key("resample", key)
        index_key, noise_key = sampling.split2(key)
        index = sampling.weighted_indices(index_key, self.weights, shape)
        noise = sampling.normal(noise_key, (*shape, self.d), self.dataset.dtype)
        chol = lax_linalg.cholesky(self.covariance.astype(self.dataset.dtype))
        eps = jnp.einsum("ij,...j->...i", chol, noise).T
        return self.dataset[:, index] + eps

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not supported: only 1-D boxes are (``integrate_box_1d``)."""
        raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        """Not supported: the estimate is immutable."""
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points):
        if jnp.issubdtype(jnp.result_type(points), np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = jnp.reshape(points, (self.d, 1))
            else:
                raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points
