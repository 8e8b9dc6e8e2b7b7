"""lamina.scipy.special: JAX's special functions (`jax.scipy.special`)."""

from lamina.numpy import logsumexp  # noqa: F401  (jax.nn's and jax.scipy.special's)
from lamina.scipy.special.bernoulli_numbers import bernoulli  # noqa: F401
from lamina.scipy.special.beta_function import beta, betainc, betaln  # noqa: F401
from lamina.scipy.special.box_cox import boxcox, boxcox1p  # noqa: F401
from lamina.scipy.special.combinatorics import comb, factorial, poch  # noqa: F401
from lamina.scipy.special.entropy import entr, kl_div, rel_entr, xlog1py, xlogy  # noqa: F401
from lamina.scipy.special.error_function import erf, erfc, erfinv  # noqa: F401
from lamina.scipy.special.gamma_function import (  # noqa: F401
    digamma,
    gamma,
    gammaln,
    gammasgn,
    loggamma,
    multigammaln,
    polygamma,
)
from lamina.scipy.special.hurwitz_zeta import zeta  # noqa: F401
from lamina.scipy.special.incomplete_gamma import gammainc, gammaincc  # noqa: F401
from lamina.scipy.special.logistic import expit, logit  # noqa: F401
from lamina.scipy.special.modified_bessel import i0, i0e, i1, i1e  # noqa: F401
from lamina.scipy.special.normal import log_ndtr, ndtr, ndtri  # noqa: F401
from lamina.scipy.special.softmax_functions import log_softmax, softmax  # noqa: F401
