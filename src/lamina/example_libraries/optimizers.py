"""`lamina.example_libraries.optimizers`: JAX's example first-order optimizers.

An optimizer is a triple of functions, :class:`Optimizer` ``(init_fn, update_fn,
params_fn)``: ``init_fn(params)`` makes an :class:`OptimizerState`,
``update_fn(step, grads, state)`` takes one step, ``params_fn(state)`` reads the
parameters back. Parameters and gradients are any pytrees of arrays; each optimizer is
written for one array (see :func:`optimizer`). Step sizes are numbers or schedules,
functions of the step number.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import lamina as jax
import lamina.numpy as jnp

# map and zip in this module take sequences of equal lengths and return lists.
_builtin_zip = zip


def safe_zip(*args):
    return list(_builtin_zip(*args, strict=True))


def safe_map(f, *args):
    return [f(*xs) for xs in _builtin_zip(*args, strict=True)]


def unzip2(pairs):
    """Two tuples from a sequence of pairs."""
    firsts, seconds = [], []
    for a, b in pairs:
        firsts.append(a)
        seconds.append(b)
    return tuple(firsts), tuple(seconds)


map = safe_map
zip = safe_zip

# The state of an optimizer over a pytree of parameters: the flattened per-array
# states, the parameters' tree structure and each per-array state's structure. A
# pytree whose only child is ``packed_state``.
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
jax.tree_util.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]),
)

Array = Any
Params = Any  # pytrees of arrays
State = Any  # the state of one array's optimizer
Updates = Params  # gradients, shaped as the parameters
InitFn = Callable[[Params], OptimizerState]
Step = int
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]
Schedule = Callable[[Step], float]


class Optimizer(NamedTuple):
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def optimizer(opt_maker):
    """Decorator: ``opt_maker(*args, **kwargs)`` returns ``(init, update, get_params)``
    for a single array; the decorated maker returns an :class:`Optimizer` whose
    functions act on every leaf of a parameter pytree."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            leaves, tree = jax.tree.flatten(x0_tree)
            states_flat, subtrees = unzip2(map(jax.tree.flatten, [init(x) for x in leaves]))
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grads, grad_tree_def = jax.tree.flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not "
                    "match the parameter tree structure with which it was initialized: "
                    f"parameter tree {tree} and grad tree {grad_tree_def}."
                )
            states = map(jax.tree.unflatten, subtrees, states_flat)
            new_states = map(partial(update, i), grads, states)
            new_flat, new_subtrees = unzip2(map(jax.tree.flatten, new_states))
            for before, after in zip(subtrees, new_subtrees):
                if after != before:
                    raise TypeError(
                        "optimizer update function produced an output structure that did "
                        f"not match its input structure: input {before} and output {after}."
                    )
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            states = map(jax.tree.unflatten, subtrees, states_flat)
            return jax.tree.unflatten(tree, map(get_params, states))

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# ---------------------------------------------------------------- optimizers


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: ``x - step_size(i) * g``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x

    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size: Schedule, mass: float):
    """Gradient descent with momentum: velocity ``v = mass * v + g``, step along it."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """Nesterov's accelerated gradient: the step looks ahead along the velocity."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al., 2011) with momentum: gradients scaled by the inverse
    root of their accumulated squares."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        scale = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * scale) + momentum * m
        return x - step_size(i) * m, g_sq, m

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: gradients divided by a running root mean square."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp whose scaled steps accumulate with momentum."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba, 2014): bias-corrected first and second moment estimates."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax (Kingma and Ba, 2014): Adam with the infinity norm for the second moment."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        corrected = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        return x - corrected * m / (u + eps), m, u

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al., 2019): Adagrad with one accumulator per index of each axis,
    the square sums bounded by the smallest of them."""
    step_size = make_schedule(step_size)

    def along(ndim, v, axis):
        # v laid along ``axis`` of an array of ``ndim`` axes (size 1 elsewhere).
        return v[tuple(slice(None) if d == axis else None for d in range(ndim))]

    def init(x0):
        shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        accumulators = [jnp.zeros(size, dtype=x0.dtype) for size in x0.shape]
        return x0, jnp.zeros_like(x0), accumulators, shape

    def update(i, g, state):
        x, m, accumulators, shape = state
        bounds = [along(g.ndim, v, axis) for axis, v in enumerate(accumulators)]
        accum = functools.reduce(jnp.minimum, bounds) + jnp.square(g)
        scale = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * scale) + momentum * m
        x = x - step_size(i) * m
        others = [tuple(d for d in range(x.ndim) if d != axis) for axis in range(x.ndim)]
        return x, m, [accum.max(axes) for axes in others], shape

    def get_params(state):
        x, _, _, shape = state
        return x.reshape(shape)

    return init, update, get_params


# ---------------------------------------------------------------- schedules


def constant(step_size) -> Schedule:
    """The schedule giving ``step_size`` at every step."""

    def schedule(i):
        return step_size

    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """``step_size * decay_rate ** (i / decay_steps)``."""

    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """``step_size / (1 + decay_rate * i / decay_steps)``, with ``i / decay_steps``
    floored if ``staircase``."""
    if staircase:

        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))

    else:

        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From ``step_size`` to ``final_step_size`` over ``decay_steps`` steps, along
    ``(1 - i / decay_steps) ** power``; constant after."""

    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        fraction = (1 - step_num / decay_steps) ** power
        return fraction * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any):
    """``values[k]`` for steps past ``k`` of the ``boundaries`` (one value more than
    boundaries)."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule as given, or the constant schedule of a scalar."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---------------------------------------------------------------- utilities


def l2_norm(tree):
    """The Euclidean norm of all the leaves of ``tree`` together."""
    leaves, _ = jax.tree.flatten(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """``grad_tree`` scaled down to global norm ``max_norm`` if its norm is larger."""
    norm = l2_norm(grad_tree)

    def clip(g):
        return jnp.where(norm < max_norm, g, g * (max_norm / norm))

    return jax.tree.map(clip, grad_tree)


class JoinPoint:
    """Marks where a per-array state sits in an unpacked state (a leaf of the
    parameters' tree)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """``opt_state`` as a pytree shaped as the parameters, each leaf a
    :class:`JoinPoint` holding that array's state (picklable, unlike treedefs)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = map(jax.tree.unflatten, subtree_defs, states_flat)
    return jax.tree.unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree):
    """The :class:`OptimizerState` of an :func:`unpack_optimizer_state` result."""
    points, tree_def = jax.tree.flatten(marked_pytree)
    assert all(isinstance(p, JoinPoint) for p in points)
    states_flat, subtree_defs = unzip2(map(jax.tree.flatten, [p.subtree for p in points]))
    return OptimizerState(states_flat, tree_def, subtree_defs)
