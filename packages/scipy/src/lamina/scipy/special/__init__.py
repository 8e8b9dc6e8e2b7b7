"""lamina.scipy.special: JAX's ``jax.scipy.special``, the special functions of SciPy on
lax's primitives. ``logsumexp`` is the same function as ``lamina.nn.logsumexp``."""

# ruff: noqa: F401  (the names are re-exported)
from lamina.numpy import logsumexp
from lamina.scipy.special.bernoulli import bernoulli
from lamina.scipy.special.beta import beta, betainc, betaln
from lamina.scipy.special.box_cox import boxcox, boxcox1p
from lamina.scipy.special.combinatorics import comb, factorial, poch
from lamina.scipy.special.entropy import entr, kl_div, rel_entr, xlog1py, xlogy
from lamina.scipy.special.error_function import erf, erfc, erfinv
from lamina.scipy.special.gamma import (
    digamma,
    gamma,
    gammaln,
    gammasgn,
    loggamma,
    multigammaln,
    polygamma,
)
from lamina.scipy.special.incomplete_gamma import gammainc, gammaincc
from lamina.scipy.special.logistic import expit, logit
from lamina.scipy.special.modified_bessel import i0, i0e, i1, i1e
from lamina.scipy.special.normal import log_ndtr, ndtr, ndtri
from lamina.scipy.special.softmax import log_softmax, softmax
from lamina.scipy.special.zeta import zeta
