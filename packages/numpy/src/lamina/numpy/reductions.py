"""Reductions of jax.numpy: ``sum``, ``prod``, ``max``/``min`` (and ``amax``/``amin``),
``all``/``any``, ``mean``, ``var``/``std``, ``ptp``, ``count_nonzero``, ``argmax``/
``argmin``, their NaN-ignoring variants, and the cumulative reductions. The code lives
in the private modules ``_reductions_basic`` (folding and arg-reductions),
``_reductions_moments`` (variance, standard deviation, NaN-ignoring reductions) and
``_reductions_cumulative``.
"""

from lamina.numpy._reductions_basic import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    count_nonzero,
    max,
    mean,
    min,
    nanargmax,
    nanargmin,
    prod,
    ptp,
    sum,
)
from lamina.numpy._reductions_cumulative import (
    cumprod,
    cumsum,
    cumulative_prod,
    cumulative_sum,
    nancumprod,
    nancumsum,
)
from lamina.numpy._reductions_moments import (
    nanmax,
    nanmean,
    nanmin,
    nanprod,
    nanstd,
    nansum,
    nanvar,
    std,
    var,
)

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "max",
    "mean",
    "min",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nanstd",
    "nansum",
    "nanvar",
    "prod",
    "ptp",
    "std",
    "sum",
    "var",
]
