"""lamina.scipy.special: JAX's special functions (`jax.scipy.special`)."""

from lamina.numpy import logsumexp  # jax.nn's and jax.scipy.special's, one function
from lamina.scipy.special.bernoulli_numbers import bernoulli
from lamina.scipy.special.bessel import bessel_jn
from lamina.scipy.special.beta_function import beta, betainc, betaln
from lamina.scipy.special.box_cox import boxcox, boxcox1p
from lamina.scipy.special.combinatorics import comb, factorial, poch
from lamina.scipy.special.confluent_hypergeometric import hyp1f1
from lamina.scipy.special.dawson import dawsn
from lamina.scipy.special.dilogarithm import spence
from lamina.scipy.special.entropy import entr, kl_div, rel_entr, xlog1py, xlogy
from lamina.scipy.special.error_function import erf, erfc, erfinv
from lamina.scipy.special.exponential_integrals import exp1, expi, expn
from lamina.scipy.special.faddeeva import erfcx, wofz
from lamina.scipy.special.fresnel import fresnel
from lamina.scipy.special.gamma_function import (
    digamma,
    gamma,
    gammaln,
    gammasgn,
    loggamma,
    multigammaln,
    polygamma,
)
from lamina.scipy.special.gauss_hypergeometric import hyp2f1
from lamina.scipy.special.hurwitz_zeta import zeta
from lamina.scipy.special.incomplete_gamma import gammainc, gammaincc
from lamina.scipy.special.logistic import expit, logit
from lamina.scipy.special.modified_bessel import i0, i0e, i1, i1e
from lamina.scipy.special.normal import log_ndtr, ndtr, ndtri
from lamina.scipy.special.owens_t import owens_t
from lamina.scipy.special.sine_cosine_integrals import sici
from lamina.scipy.special.softmax_functions import log_softmax, softmax
from lamina.scipy.special.spherical_harmonics import sph_harm_y

__all__ = [
    "bernoulli",
    "bessel_jn",
    "beta",
    "betainc",
    "betaln",
    "boxcox",
    "boxcox1p",
    "comb",
    "dawsn",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp1",
    "expi",
    "expit",
    "expn",
    "factorial",
    "fresnel",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gammasgn",
    "hyp1f1",
    "hyp2f1",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "kl_div",
    "log_ndtr",
    "log_softmax",
    "loggamma",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "owens_t",
    "poch",
    "polygamma",
    "rel_entr",
    "sici",
    "softmax",
    "spence",
    "sph_harm_y",
    "wofz",
    "xlog1py",
    "xlogy",
    "zeta",
]
