"""`lamina.example_libraries.stax`: JAX's example neural-network library.

A layer is a pair ``(init_fun, apply_fun)``: ``init_fun(rng, input_shape)`` returns the
output shape and the layer's parameters, ``apply_fun(params, inputs, **kwargs)`` the
outputs (``rng=key`` among the keyword arguments for layers that draw randomness).
Combinators (``serial``, ``parallel``, ``shape_dependent``) build layers from layers.
An example library only: small, with no state beyond the parameters.
"""

import functools
import math

import lamina.numpy as jnp
from lamina import lax, random
from lamina.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from lamina.nn.initializers import glorot_normal, normal, ones, zeros

# Names the library has always offered for these.
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

# The default initializers (one of each, made once).
_glorot_default = glorot_normal()
_normal_default = normal()
_bias_default = normal(1e-6)


# ---------------------------------------------------------------- layers with parameters


def Dense(out_dim, W_init=_glorot_default, b_init=_normal_default):
    """A fully connected layer: ``inputs @ W + b`` over the last axis."""

    def init_fun(rng, input_shape):
        w_key, b_key = random.split(rng)
        W = W_init(w_key, (input_shape[-1], out_dim))
        b = b_init(b_key, (out_dim,))
        return (*input_shape[:-1], out_dim), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape):
    # The kernel's axes in the order of its spec: 'O' the output channels, 'I' the
    # input's channels, the spatial axes from filter_shape in turn.
    lhs_spec, rhs_spec, _ = dimension_numbers
    spatial = iter(filter_shape)
    sizes = {"O": out_chan, "I": input_shape[lhs_spec.index("C")]}
    return [sizes[c] if c in sizes else next(spatial) for c in rhs_spec]


def _conv_layer(
    conv, shape_tuple, dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init
):
    """A (transposed) convolution layer with a bias broadcast along the output channels."""
    _, rhs_spec, out_spec = dimension_numbers
    strides = strides or (1,) * len(filter_shape)
    if W_init is None:
        W_init = glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape)
        output_shape = shape_tuple(input_shape, kernel_shape, strides, padding, dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        w_key, b_key = random.split(rng)
        return output_shape, (W_init(w_key, kernel_shape), b_init(b_key, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return conv(inputs, W, strides, padding) + b

    return init_fun, apply_fun


def GeneralConv(
    dimension_numbers,
    out_chan,
    filter_shape,
    strides=None,
    padding="VALID",
    W_init=None,
    b_init=_bias_default,
):
    """A convolution layer with layouts ``dimension_numbers`` = (input spec, kernel
    spec, output spec), e.g. ``('NHWC', 'HWIO', 'NHWC')``."""
    unit = (1,) * len(filter_shape)

    def conv(inputs, W, strides, padding):
        return lax.conv_general_dilated(
            inputs, W, strides, padding, unit, unit, dimension_numbers=dimension_numbers
        )

    return _conv_layer(
        conv,
        lax.conv_general_shape_tuple,
        dimension_numbers,
        out_chan,
        filter_shape,
        strides,
        padding,
        W_init,
        b_init,
    )


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(
    dimension_numbers,
    out_chan,
    filter_shape,
    strides=None,
    padding="VALID",
    W_init=None,
    b_init=_bias_default,
):
    """A transposed convolution layer with layouts ``dimension_numbers``."""

    def conv(inputs, W, strides, padding):
        return lax.conv_transpose(inputs, W, strides, padding, dimension_numbers=dimension_numbers)

    return _conv_layer(
        conv,
        lax.conv_transpose_shape_tuple,
        dimension_numbers,
        out_chan,
        filter_shape,
        strides,
        padding,
        W_init,
        b_init,
    )


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(
    axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones
):
    """Normalizes inputs to zero mean and unit variance over ``axis``, then scales by
    ``gamma`` (if ``scale``) and shifts by ``beta`` (if ``center``), parameters over
    the other axes."""
    axis = (axis,) if jnp.isscalar(axis) else axis

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        beta_key, gamma_key = random.split(rng)
        beta = beta_init(beta_key, shape) if center else ()
        gamma = gamma_init(gamma_key, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        # Parameters get size-1 axes where x was normalized.
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = gamma[expand] * z
        if center:
            z = z + beta[expand]
        return z

    return init_fun, apply_fun


# ---------------------------------------------------------------- elementwise layers


def elementwise(fun, **fun_kwargs):
    """A layer without parameters applying ``fun(inputs, **fun_kwargs)``."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


# ---------------------------------------------------------------- pooling


def _pooling_layer(reducer, init_val, rescaler=None):
    """A constructor of pooling layers reducing windows with ``reducer`` from
    ``init_val``; ``rescaler(window_shape, strides, padding)`` makes a function
    ``(outputs, inputs, spec) -> outputs`` applied last, if given."""

    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """A pooling layer over the spatial axes (all but 'N' and 'C' of ``spec``; by
        default the first and last axes are batch and channels)."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        if spec is None:
            batch_and_channels = (0, len(window_shape) + 1)
        else:
            batch_and_channels = (spec.index("N"), spec.index("C"))
        # Windows and strides of 1 along the batch and channel axes.
        window, steps = list(window_shape), list(strides)
        for i in sorted(batch_and_channels):
            window.insert(i, 1)
            steps.insert(i, 1)
        window, steps = tuple(window), tuple(steps)

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, window, steps, padding)
            unit = (1,) * len(window)
            return lax.reduce_window_shape_tuple(input_shape, window, steps, pads, unit, unit), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, window, steps, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)


def _normalize_by_window_size(dims, strides, padding):
    """A rescaler dividing window sums by the number of input elements in each window
    (padding excluded)."""

    def rescale(outputs, inputs, spec):
        if spec is None:
            batch_and_channels = (0, inputs.ndim - 1)
        else:
            batch_and_channels = (spec.index("N"), spec.index("C"))
        spatial = tuple(d for i, d in enumerate(inputs.shape) if i not in batch_and_channels)
        counts = lax.reduce_window(
            jnp.ones(spatial, dtype=inputs.dtype), 0.0, lax.add, dims, strides, padding
        )
        for i in sorted(batch_and_channels):
            counts = jnp.expand_dims(counts, i)
        return outputs / counts

    return rescale


AvgPool = _pooling_layer(lax.add, 0.0, _normalize_by_window_size)


# ---------------------------------------------------------------- shape and routing layers


def _flatten_layer():
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


# Flattens all axes but the first.
Flatten = _flatten_layer()
# Returns its inputs.
Identity = elementwise(lambda x: x)


def FanOut(num):
    """A layer returning a list of ``num`` copies of its input."""

    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum_layer():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)

    return init_fun, apply_fun


# Sums a list of inputs.
FanInSum = _fan_in_sum_layer()


def FanInConcat(axis=-1):
    """A layer concatenating a list of inputs along ``axis``."""

    def init_fun(rng, input_shape):
        first = input_shape[0]
        ax = axis % len(first)
        size = sum(shape[ax] for shape in input_shape)
        return (*first[:ax], size, *first[ax + 1 :]), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """In ``mode='train'``, keeps each input with probability ``rate`` (scaled by
    ``1 / rate``) and zeroes the rest, drawing with the key ``rng``; otherwise the
    identity."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. "
                "That is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng)` where `rng` is a PRNG key (e.g. from "
                "`jax.random.key`)."
            )
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


# ---------------------------------------------------------------- combinators


def _layer_keys(rng, n):
    return random.split(rng, n) if rng is not None else (None,) * n


def serial(*layers):
    """The layers applied one after the other. Each gets its own key: at init, split
    off the running key in turn; at apply, ``rng`` split into one per layer."""
    init_funs, apply_funs = zip(*layers, strict=False)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, layer_params = init(layer_rng, input_shape)
            params.append(layer_params)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_keys(kwargs.pop("rng", None), len(layers))
        for apply, layer_params, rng in zip(apply_funs, params, rngs, strict=False):
            inputs = apply(layer_params, inputs, rng=rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """The layers applied side by side: the i-th to the i-th of a sequence of inputs
    (often after ``FanOut``, before ``FanInSum``)."""
    init_funs, apply_funs = zip(*layers, strict=False)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(layers))
        return zip(
            *[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape, strict=False)],
            strict=False,
        )

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_keys(kwargs.pop("rng", None), len(layers))
        return [
            apply(p, x, rng=r, **kwargs)
            for apply, p, x, r in zip(apply_funs, params, inputs, rngs, strict=False)
        ]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built by ``make_layer(input_shape)`` once the input's shape is known."""

    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
