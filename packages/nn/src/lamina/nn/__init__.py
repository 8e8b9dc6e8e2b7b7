"""lamina.nn: JAX's ``jax.nn`` — activation functions (:mod:`.activations`), softmax,
logsumexp, standardize and one_hot (:mod:`.axis_functions`), ``dot_product_attention``
(:mod:`.attention`), block-scaled matrix products (:mod:`.scaled_matmul`) and the
``initializers`` submodule (:mod:`.initializers`)."""

from lamina.ir import wrap_api_functions
from lamina.nn import initializers
from lamina.nn.activations import (
    celu,
    elu,
    gelu,
    glu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    identity,
    leaky_relu,
    log1mexp,
    log_sigmoid,
    mish,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    soft_sign,
    softplus,
    sparse_plus,
    sparse_sigmoid,
    squareplus,
    swish,
    tanh,
)
from lamina.nn.attention import dot_product_attention
from lamina.nn.axis_functions import (
    log_softmax,
    logmeanexp,
    logsumexp,
    one_hot,
    softmax,
    standardize,
)
from lamina.nn.scaled_matmul import (
    get_scaled_dot_general_config,
    scaled_dot_general,
    scaled_matmul,
)

__all__ = [
    "celu",
    "dot_product_attention",
    "elu",
    "gelu",
    "get_scaled_dot_general_config",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "initializers",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "scaled_dot_general",
    "scaled_matmul",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]

wrap_api_functions(globals(), __all__)  # tracebacks stop at the user's call
