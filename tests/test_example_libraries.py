"""lamina.example_libraries (stax and optimizers) against values recorded from JAX 0.10.2
(data/example_libraries.json) and against NumPy.

The table CASES is what was recorded: each entry builds a network with stax, initializes
it from a fixed key and applies or trains it with ``jax`` (lamina here, JAX when
recording); results must be bit-identical. The NumPy tests check each optimizer's update
rule written out by hand.
"""

import json
import pathlib

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina import random
from lamina.example_libraries import optimizers, stax

RECORDED = json.loads(
    (pathlib.Path(__file__).parent / "data" / "example_libraries.json").read_text()
)
F32 = np.float32
X = (np.sin(np.arange(24, dtype=F32) * 1.3) * 2).reshape(6, 4)
Y = np.eye(3, dtype=F32)[[0, 1, 2, 1, 0, 2]]
IMAGES = (np.cos(np.arange(2 * 6 * 6 * 2, dtype=F32) * 0.7)).reshape(2, 6, 6, 2)
IMAGE_LABELS = np.eye(3, dtype=F32)[[2, 0]]

OPTIMIZERS = {
    "sgd": lambda: optimizers.sgd(0.1),
    "momentum": lambda: optimizers.momentum(0.1, mass=0.9),
    "nesterov": lambda: optimizers.nesterov(0.1, mass=0.9),
    "adagrad": lambda: optimizers.adagrad(0.1),
    "rmsprop": lambda: optimizers.rmsprop(0.01),
    "rmsprop_momentum": lambda: optimizers.rmsprop_momentum(0.01),
    "adam": lambda: optimizers.adam(0.01),
    "adamax": lambda: optimizers.adamax(0.01),
    "sm3": lambda: optimizers.sm3(0.1),
    "sgd_exponential_decay": lambda: optimizers.sgd(optimizers.exponential_decay(0.1, 2, 0.5)),
    "adam_piecewise": lambda: optimizers.adam(optimizers.piecewise_constant([1], [0.01, 0.001])),
}


def mlp():
    return stax.serial(stax.Dense(8), stax.Relu, stax.Dense(3), stax.LogSoftmax)


def cnn():
    return stax.serial(
        stax.Conv(4, (3, 3), padding="SAME"),
        stax.BatchNorm(),
        stax.Relu,
        stax.MaxPool((2, 2), strides=(2, 2)),
        stax.Flatten,
        stax.Dense(3),
        stax.LogSoftmax,
    )


def train(net, make_optimizer, x, y, steps=3, jit_step=True):
    """``steps`` steps of ``make_optimizer()`` on the cross-entropy of ``net``, jitted
    or (for sm3, whose state holds the parameters' shape) with only the gradient jitted."""
    init_fun, apply_fun = net
    _, params = init_fun(random.key(0), x.shape)
    opt_init, opt_update, get_params = make_optimizer()

    def loss(params):
        return -jnp.mean(jnp.sum(apply_fun(params, x) * y, axis=1))

    def step(i, state):
        return opt_update(i, grad(get_params(state)), state)

    grad = jax.grad(loss) if jit_step else jax.jit(jax.grad(loss))
    step = jax.jit(step) if jit_step else step
    state = opt_init(params)
    for i in range(steps):
        state = step(i, state)
    return get_params(state)


def init_and_apply(layer, shape, x, **kwargs):
    """The output shape, parameters and outputs of ``layer`` on ``x``."""
    init_fun, apply_fun = layer
    out_shape, params = init_fun(random.key(1), shape)
    return {"shape": out_shape, "params": params, "out": apply_fun(params, x, **kwargs)}


def x_of(*shape):
    return (np.sin(np.arange(np.prod(shape), dtype=F32) * 0.9) * 1.5).reshape(shape)


def schedules():
    steps = np.arange(8)
    made = {
        "constant": optimizers.constant(0.5),
        "exponential_decay": optimizers.exponential_decay(0.1, 3, 0.5),
        "inverse_time_decay": optimizers.inverse_time_decay(0.1, 3, 0.5),
        "inverse_time_staircase": optimizers.inverse_time_decay(0.1, 3, 0.5, staircase=True),
        "polynomial_decay": optimizers.polynomial_decay(0.1, 5, 0.01, power=2.0),
        "piecewise_constant": optimizers.piecewise_constant([2, 5], [1.0, 0.5, 0.1]),
    }
    return {name: [jnp.asarray(s(i), F32) for i in steps] for name, s in made.items()}


CASES = {
    "mlp_init_apply": lambda: init_and_apply(mlp(), (-1, 4), X),
    "mlp_init_rbg": lambda: mlp()[0](random.key(0, impl="rbg"), (-1, 4)),
    "cnn_init_apply": lambda: init_and_apply(cnn(), IMAGES.shape, IMAGES),
    "cnn_train_adam": lambda: train(cnn(), OPTIMIZERS["adam"], IMAGES, IMAGE_LABELS, steps=2),
    **{
        f"mlp_train_{name}": (lambda m=m, j=name != "sm3": train(mlp(), m, X, Y, jit_step=j))
        for name, m in OPTIMIZERS.items()
    },
    "conv_nchw": lambda: init_and_apply(
        stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 2), strides=(1, 2)),
        (2, 2, 5, 5),
        x_of(2, 2, 5, 5),
    ),
    "conv_transpose": lambda: init_and_apply(
        stax.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME"),
        (1, 3, 3, 2),
        x_of(1, 3, 3, 2),
    ),
    "conv1d_transpose": lambda: init_and_apply(
        stax.Conv1DTranspose(3, (2,)), (2, 4, 1), x_of(2, 4, 1)
    ),
    "batchnorm_center_axis0": lambda: init_and_apply(
        stax.BatchNorm(axis=0, scale=False, beta_init=jax.nn.initializers.normal()),
        (5, 3),
        x_of(5, 3),
    ),
    "batchnorm_scale": lambda: init_and_apply(
        stax.BatchNorm(axis=(0,), center=False, gamma_init=jax.nn.initializers.uniform()),
        (4, 3),
        x_of(4, 3),
    ),
    "max_pool_nchw": lambda: init_and_apply(
        stax.MaxPool((2, 2), padding="SAME", spec="NCHW"), (1, 2, 3, 3), x_of(1, 2, 3, 3)
    ),
    "sum_pool": lambda: init_and_apply(stax.SumPool((2,), strides=(1,)), (2, 4, 3), x_of(2, 4, 3)),
    "avg_pool_same": lambda: init_and_apply(
        stax.AvgPool((3, 3), strides=(2, 2), padding="SAME"), (1, 5, 5, 2), x_of(1, 5, 5, 2)
    ),
    "avg_pool_spec": lambda: init_and_apply(
        stax.AvgPool((2, 2), padding="SAME", spec="NCHW"), (1, 1, 3, 3), x_of(1, 1, 3, 3)
    ),
    "elementwise": lambda: [
        layer[1]((), x_of(2, 3))
        for layer in (
            stax.Tanh,
            stax.Relu,
            stax.Exp,
            stax.LogSoftmax,
            stax.Softmax,
            stax.Softplus,
            stax.Sigmoid,
            stax.Elu,
            stax.LeakyRelu,
            stax.Selu,
            stax.Gelu,
            stax.Identity,
            stax.elementwise(jnp.clip, min=-0.5, max=0.5),
        )
    ],
    "dropout": lambda: init_and_apply(stax.Dropout(0.7), (3, 4), x_of(3, 4), rng=random.key(3)),
    "dropout_test_mode": lambda: init_and_apply(
        stax.Dropout(0.7, mode="test"), (3, 4), x_of(3, 4), rng=random.key(3)
    ),
    "fan_out_parallel_sum": lambda: init_and_apply(
        stax.serial(
            stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity), stax.FanInSum, stax.Tanh
        ),
        (2, 3),
        x_of(2, 3),
    ),
    "fan_in_concat_dropout_serial": lambda: init_and_apply(
        stax.serial(
            stax.FanOut(3),
            stax.parallel(stax.Dense(2), stax.Dropout(0.5), stax.Identity),
            stax.FanInConcat(axis=1),
        ),
        (2, 3),
        x_of(2, 3),
        rng=random.key(5),
    ),
    "shape_dependent": lambda: init_and_apply(
        stax.shape_dependent(lambda shape: stax.Dense(shape[-1] * 2)), (2, 3), x_of(2, 3)
    ),
    "flatten": lambda: init_and_apply(stax.Flatten, (2, 3, 2), x_of(2, 3, 2)),
    "schedules": schedules,
    "clip_grads": lambda: {
        "norm": optimizers.l2_norm({"a": X, "b": [Y]}),
        "clipped": optimizers.clip_grads({"a": X, "b": [Y]}, 2.0),
        "kept": optimizers.clip_grads([Y], 100.0),
    },
}


def encode(tree):
    """Every leaf of ``tree`` (lists, tuples, dicts of arrays and ints) with its dtype,
    shape and exact contents (floats as bit patterns); ints and None as they are."""
    if isinstance(tree, dict):
        return {k: encode(v) for k, v in sorted(tree.items())}
    if isinstance(tree, (list, tuple, zip)):
        return [encode(v) for v in tree]
    if tree is None or isinstance(tree, (int, np.integer)):
        return None if tree is None else int(tree)  # shapes: Python or NumPy ints
    x = np.asarray(tree)
    if x.dtype.kind == "f":
        bits = x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])
        return {"dtype": str(x.dtype), "shape": list(x.shape), "bits": bits.ravel().tolist()}
    return {"dtype": str(x.dtype), "shape": list(x.shape), "values": x.ravel().tolist()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    assert encode(CASES[name]()) == RECORDED[name]


# ---------------------------------------------------------------- optimizers against NumPy

GRADS = [np.array([[0.5, -1.0, 0.0], [2.0, 0.25, -0.75]], F32) * (k + 1) for k in range(3)]
X0 = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]], F32)


def numpy_steps(name):
    """Three steps on X0 with GRADS, each update rule written out in float64."""
    x = X0.astype(np.float64)
    a, b = np.zeros_like(x), np.zeros_like(x)
    rows, cols = np.zeros(x.shape[0]), np.zeros(x.shape[1])
    for i, g in enumerate(GRADS):
        g = g.astype(np.float64)
        if name == "sgd":
            x = x - 0.1 * g
        elif name in ("momentum", "nesterov"):
            a = 0.9 * a + g
            x = x - 0.1 * (a if name == "momentum" else 0.9 * a + g)
        elif name == "adagrad":
            a = a + g**2
            scaled = np.where(a > 0, g / np.sqrt(np.where(a > 0, a, 1)), 0)
            b = 0.1 * scaled + 0.9 * b
            x = x - 0.1 * b
        elif name == "rmsprop":
            a = 0.9 * a + 0.1 * g**2
            x = x - 0.01 * g / np.sqrt(a + 1e-8)
        elif name == "rmsprop_momentum":
            a = 0.9 * a + 0.1 * g**2
            b = 0.9 * b + 0.01 * g / np.sqrt(a + 1e-8)
            x = x - b
        elif name == "adam":
            a = 0.1 * g + 0.9 * a
            b = 0.001 * g**2 + 0.999 * b
            m_hat, v_hat = a / (1 - 0.9 ** (i + 1)), b / (1 - 0.999 ** (i + 1))
            x = x - 0.01 * m_hat / (np.sqrt(v_hat) + 1e-8)
        elif name == "adamax":
            a = 0.1 * g + 0.9 * a
            b = np.maximum(0.999 * b, np.abs(g))
            x = x - 0.01 / (1 - 0.9 ** (i + 1)) * a / (b + 1e-8)
        elif name == "sm3":
            accum = np.minimum(rows[:, None], cols[None, :]) + g**2
            scaled = np.where(accum > 0, g / np.sqrt(np.where(accum > 0, accum, 1)), 0)
            a = 0.1 * scaled + 0.9 * a
            x = x - 0.1 * a
            rows, cols = accum.max(1), accum.max(0)
    return x


@pytest.mark.parametrize(
    "name",
    [
        "sgd",
        "momentum",
        "nesterov",
        "adagrad",
        "rmsprop",
        "rmsprop_momentum",
        "adam",
        "adamax",
        "sm3",
    ],
)
def test_optimizer_updates_match_numpy(name):
    opt_init, opt_update, get_params = OPTIMIZERS[name]()
    state = opt_init({"w": X0})
    for i, g in enumerate(GRADS):
        state = opt_update(i, {"w": g}, state)
    np.testing.assert_allclose(get_params(state)["w"], numpy_steps(name), rtol=2e-6, atol=2e-6)


def test_sm3_keeps_scalar_shapes():
    opt_init, opt_update, get_params = optimizers.sm3(0.5)
    state = opt_init(np.float32(2.0))
    state = opt_update(0, np.float32(4.0), state)
    out = get_params(state)
    assert out.shape == () and np.isclose(out, 2.0 - 0.5 * 0.1 * 1.0)


def test_optimizer_state_is_a_pytree_and_packs():
    opt_init, _, get_params = optimizers.adam(0.1)
    params = {"a": np.ones(2, F32), "b": (np.zeros(3, F32), np.full((), 2.0, F32))}
    state = opt_init(params)
    assert isinstance(state, optimizers.OptimizerState)
    # Its leaves are the per-array states: (x, m, v) for each of the three arrays.
    assert len(jax.tree.leaves(state)) == 9
    unpacked = optimizers.unpack_optimizer_state(state)
    assert isinstance(unpacked["a"], optimizers.JoinPoint)
    repacked = optimizers.pack_optimizer_state(unpacked)
    assert repacked.tree_def == state.tree_def and repacked.subtree_defs == state.subtree_defs
    jax.tree.map(np.testing.assert_array_equal, get_params(repacked), params)
    # The state passes through jit as a pytree.
    doubled = jax.jit(lambda s: jax.tree.map(lambda x: 2 * x, s))(state)
    np.testing.assert_array_equal(get_params(doubled)["a"], [2.0, 2.0])


def test_optimizer_errors():
    opt_init, opt_update, _ = optimizers.sgd(0.1)
    state = opt_init({"a": np.ones(2, F32)})
    with pytest.raises(TypeError, match="did not match the parameter tree structure"):
        opt_update(0, {"b": np.ones(2, F32)}, state)
    with pytest.raises(TypeError):
        optimizers.make_schedule(np.ones(2))
    with pytest.raises(ValueError, match="boundaries length must be one shorter"):
        optimizers.piecewise_constant([1, 2], [1.0, 2.0])
    with pytest.raises(ValueError, match="must be sequences"):
        optimizers.piecewise_constant(1, [1.0, 2.0])
    with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
        stax.Dropout(0.5)[1]((), np.ones(2, F32))


def test_optimizer_functions_keep_their_names():
    opt = optimizers.momentum(0.1, 0.9)
    assert isinstance(opt, optimizers.Optimizer)
    assert [f.__name__ for f in opt] == ["init", "update", "get_params"]
    assert optimizers.momentum.__name__ == "momentum"
