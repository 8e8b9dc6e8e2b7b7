"""lamina.random: JAX's ``jax.random``, bit-identical to JAX 0.10.2 for the same keys.

Keys are Threefry-2x32 keys: typed key arrays (``key``, dtype ``key<fry>``) or legacy raw
``uint32[2]`` keys (``PRNGKey``). The keys, their dtype and the primitives on them
(``random_bits``, ``random_split``, ...) are lax's; the samplers here draw their bits with
``random_bits`` in JAX's default "partitionable" scheme and perform JAX's operations in
JAX's order, written on lamina.numpy and lamina.lax.
"""

from lamina.ir import wrap_api_functions
from lamina.lax import key_dtype, wrap_key_data
from lamina.random.keys import PRNGKey, bits, clone, fold_in, key, key_data, key_impl, split
from lamina.random.samplers.counting import binomial, multinomial, poisson
from lamina.random.samplers.gamma import (
    ball,
    beta,
    chisquare,
    dirichlet,
    f,
    gamma,
    generalized_normal,
    loggamma,
    random_gamma_p,
    t,
)
from lamina.random.samplers.inverse_cdf import (
    cauchy,
    exponential,
    geometric,
    gumbel,
    laplace,
    logistic,
    pareto,
    rayleigh,
    triangular,
    weibull_min,
)
from lamina.random.samplers.normal import (
    double_sided_maxwell,
    lognormal,
    maxwell,
    multivariate_normal,
    normal,
    orthogonal,
    truncated_normal,
    wald,
)
from lamina.random.samplers.selection import categorical, choice, permutation
from lamina.random.samplers.uniform import bernoulli, rademacher, randint, uniform

__all__ = [
    "PRNGKey",
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "clone",
    "dirichlet",
    "double_sided_maxwell",
    "exponential",
    "f",
    "fold_in",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
    "random_gamma_p",
    "rayleigh",
    "split",
    "t",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
    "wrap_key_data",
]

wrap_api_functions(globals(), __all__)  # tracebacks stop at the user's call
