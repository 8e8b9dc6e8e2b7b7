"""lamina.scipy.optimize: `jax.scipy.optimize` (`minimize` by BFGS or L-BFGS).

`line_search`, the strong-Wolfe search the minimizers use, is reachable here too but is
not part of JAX's public names."""

from lamina.scipy.optimize.minimization import OptimizeResults, minimize
from lamina.scipy.optimize.wolfe_search import line_search as line_search

__all__ = ["OptimizeResults", "minimize"]


def __dir__():
    return list(__all__)
