"""`lamina.experimental.pallas`: the Pallas kernel language (`jax.experimental.pallas`),
which lives in the lamina.pallas layer."""

import lamina.numpy  # noqa: F401  (kernels compute with the array operators it installs)
from lamina.pallas import *  # noqa: F403
from lamina.pallas import __all__  # noqa: F401
