"""lamina.scipy.special: JAX's special functions (`jax.scipy.special`)."""

from lamina.scipy.special.bessel import bessel_jn  # noqa: F401
from lamina.scipy.special.confluent_hypergeometric import hyp1f1  # noqa: F401
from lamina.scipy.special.dawson import dawsn  # noqa: F401
from lamina.scipy.special.dilogarithm import spence  # noqa: F401
from lamina.scipy.special.exponential_integrals import exp1, expi, expn  # noqa: F401
from lamina.scipy.special.faddeeva import erfcx, wofz  # noqa: F401
from lamina.scipy.special.fresnel import fresnel  # noqa: F401
from lamina.scipy.special.gauss_hypergeometric import hyp2f1  # noqa: F401
from lamina.scipy.special.owens_t import owens_t  # noqa: F401
from lamina.scipy.special.sine_cosine_integrals import sici  # noqa: F401
from lamina.scipy.special.spherical_harmonics import sph_harm_y  # noqa: F401
