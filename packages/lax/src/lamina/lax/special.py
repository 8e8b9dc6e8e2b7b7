"""Special functions: erf, erfc, erf_inv, lgamma, digamma, polygamma, igamma and friends,
betainc, Bessel functions, zeta.
"""

__all__: list[str] = []
