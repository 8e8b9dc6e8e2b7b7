"""Reductions of jax.numpy: ``sum``, ``prod``, ``max``/``min`` (and ``amax``/``amin``),
``all``/``any``, ``mean``, ``var``/``std``, ``ptp``, ``count_nonzero``, ``argmax``/
``argmin``, their NaN-ignoring variants and the cumulative reductions; and what is built
on them: statistics (``average``, ``cov``, quantiles), histograms and the
signal-processing functions (``convolve``, ``diff``, ``interp``, ...)."""
