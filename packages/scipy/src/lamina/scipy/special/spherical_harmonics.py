"""Spherical harmonics ``sph_harm_y`` from the orthonormalized associated Legendre
functions (with the Condon-Shortley phase), built degree by degree with the standard
three-term recurrence in a scan."""

import math

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import ConcretizationTypeError, Tracer, jit

__all__ = ["sph_harm_y"]


def _recurrence_tables(n_max: int):
    """For each degree l (rows) and order m (columns): the coefficients of
    ``x P_{l-1}^m`` and ``P_{l-2}^m`` (m < l), and of ``sqrt(1-x^2) P_{l-1}^{l-1}``."""
    l = np.arange(n_max + 1, dtype=np.float64)[:, None]
    m = np.arange(n_max + 1, dtype=np.float64)[None, :]
    below = m < l
    with np.errstate(divide="ignore", invalid="ignore"):
        c_prev = np.sqrt((4 * l * l - 1) / (l * l - m * m))
        c_prev2 = np.sqrt(
            np.maximum((2 * l + 1) * ((l - 1) ** 2 - m * m) / ((2 * l - 3) * (l * l - m * m)), 0)
        )
        c_diag = -np.sqrt(1 + 0.5 / l[:, 0])
    return np.where(below, c_prev, 0), np.where(below, c_prev2, 0), np.where(l[:, 0] > 0, c_diag, 0)


def normalized_legendre(n_max: int, x):
    """The orthonormalized P_l^m(x), shaped (order m, degree l, len(x))."""
    c_prev, c_prev2, c_diag = (t.astype(x.dtype) for t in _recurrence_tables(n_max))
    orders = np.arange(n_max + 1)[:, None]
    sine = lax.sqrt(1.0 - x * x)
    first = jnp.zeros((n_max + 1, x.shape[0]), x.dtype).at[0].set(0.5 / math.sqrt(math.pi))

    def step(carry, row):
        prev, prev2 = carry
        l, a, b, diag = row
        general = a[:, None] * x * prev - b[:, None] * prev2
        shifted = jnp.concatenate([jnp.zeros_like(prev[:1]), prev[:-1]]) * (diag * sine)
        new = jnp.where(orders < l, general, jnp.where(orders == l, shifted, 0.0))
        return (new, prev), new

    rows = (jnp.arange(1, n_max + 1), c_prev[1:], c_prev2[1:], c_diag[1:])
    _, rest = lax.scan(step, (first, jnp.zeros_like(first)), rows)
    by_degree = jnp.concatenate([first[None], rest])
    return jnp.transpose(by_degree, (1, 0, 2))


@jit(static_argnums=(4,))
def _sph_harm(n, m, theta, phi, n_max):
    legendre = normalized_legendre(n_max, jnp.cos(theta))
    value = legendre.at[jnp.abs(m), n, jnp.arange(len(n))].get(mode="clip")
    angle = jnp.abs(m) * phi
    harmonic = lax.complex(value * jnp.cos(angle), value * jnp.sin(angle))
    return jnp.where(m < 0, (-1.0) ** jnp.abs(m) * jnp.conjugate(harmonic), harmonic)


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonics Y_n^m(theta, phi), theta the polar and phi the azimuthal
    angle, for 1-D ``n``, ``m`` (|m| <= n). ``n_max`` (static; by default ``max(n)``)
    bounds the degree: larger ``n`` are clipped to it. ``diff_n`` is not supported."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported."
        )
    if jnp.isscalar(theta):
        theta = jnp.array([theta])
    if n_max is None:
        n_max = jnp.max(n)
    if isinstance(n_max, Tracer):
        raise ConcretizationTypeError(
            n_max,
            "The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically specified "
            "to use `sph_harm` within JAX transformations.",
        )
    return _sph_harm(n, m, theta, phi, int(n_max))
