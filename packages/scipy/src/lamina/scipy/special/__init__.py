"""lamina.scipy.special: JAX's special functions (`jax.scipy.special`)."""

from lamina.scipy.special.bessel import bessel_jn
from lamina.scipy.special.confluent_hypergeometric import hyp1f1
from lamina.scipy.special.dawson import dawsn
from lamina.scipy.special.dilogarithm import spence
from lamina.scipy.special.exponential_integrals import exp1, expi, expn
from lamina.scipy.special.faddeeva import erfcx, wofz
from lamina.scipy.special.fresnel import fresnel
from lamina.scipy.special.gauss_hypergeometric import hyp2f1
from lamina.scipy.special.owens_t import owens_t
from lamina.scipy.special.sine_cosine_integrals import sici
from lamina.scipy.special.spherical_harmonics import sph_harm_y
