"""grad, vjp, jvp and vmap take and return pytrees of every kind: tuples, lists, dicts
(sorted by key), namedtuples, None, OrderedDicts, registered classes and dataclasses."""

import collections
import dataclasses

import numpy as np

import lamina as jax
from lamina import lax

rng = np.random.default_rng(7)
Pair = collections.namedtuple("Pair", ["weight", "bias"])


@jax.tree_util.register_pytree_node_class
class Scaled:
    def __init__(self, value, scale_name):
        self.value, self.scale_name = value, scale_name

    def tree_flatten(self):
        return (self.value,), self.scale_name

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], aux)


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Layer:
    kernel: object
    offset: object
    label: str = dataclasses.field(metadata={"static": True}, default="dense")


def vec(n):
    return rng.standard_normal(n).astype(np.float32)


def make_params():
    return {
        "pair": Pair(vec(3), vec(3)),
        "list": [vec(2), (vec(2), None)],
        "ordered": collections.OrderedDict([("z", vec(1)), ("a", vec(1))]),
        "scaled": Scaled(vec(4), "half"),
        "layer": Layer(vec(3), vec(3)),
    }


def loss(p):
    """A scalar whose gradient w.r.t. each leaf is known: sum(cos(leaf)) * leaf weights."""
    terms = [
        lax.reduce_sum(lax.mul(p["pair"].weight, p["pair"].bias), (0,)),
        lax.reduce_sum(lax.sin(p["list"][0]), (0,)),
        lax.reduce_sum(lax.mul(p["list"][1][0], p["list"][1][0]), (0,)),
        lax.reduce_sum(lax.exp(p["ordered"]["z"]), (0,)),
        lax.reduce_sum(lax.mul(p["ordered"]["a"], 3.0), (0,)),
        lax.reduce_sum(lax.tanh(p["scaled"].value), (0,)),
        lax.reduce_sum(lax.mul(p["layer"].kernel, p["layer"].offset), (0,)),
    ]
    total = terms[0]
    for t in terms[1:]:
        total = lax.add(total, t)
    return total


def expected_grad(p):
    return {
        "pair": Pair(p["pair"].bias, p["pair"].weight),
        "list": [np.cos(p["list"][0]), (2 * p["list"][1][0], None)],
        "ordered": collections.OrderedDict(
            [("z", np.exp(p["ordered"]["z"])), ("a", np.full(1, 3.0, np.float32))]
        ),
        "scaled": Scaled(1 - np.tanh(p["scaled"].value) ** 2, "half"),
        "layer": Layer(p["layer"].offset, p["layer"].kernel),
    }


def assert_trees_close(got, want):
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-6)


def test_grad_of_every_pytree_kind():
    params = make_params()
    want = expected_grad(params)
    assert_trees_close(jax.grad(loss)(params), want)
    assert_trees_close(jax.jit(jax.grad(loss))(params), want)
    assert jax.grad(loss)(params)["scaled"].scale_name == "half"
    assert jax.grad(loss)(params)["layer"].label == "dense"


def test_vjp_and_jvp_with_pytree_outputs():
    params = make_params()

    def spread(p):
        return {"w": lax.sin(p["pair"].weight), "rest": [Scaled(p["scaled"].value, "s"), None]}

    out, pullback = jax.vjp(spread, params)
    cotangent = {"w": np.ones(3, np.float32), "rest": [Scaled(np.ones(4, np.float32), "s"), None]}
    (grads,) = pullback(cotangent)
    np.testing.assert_allclose(grads["pair"].weight, np.cos(params["pair"].weight), rtol=1e-6)
    np.testing.assert_allclose(grads["scaled"].value, np.ones(4), rtol=1e-6)
    np.testing.assert_array_equal(grads["pair"].bias, np.zeros(3))
    assert out["rest"][0].scale_name == "s"

    tangents = jax.tree_util.tree_map(np.ones_like, params)
    _, tangent_out = jax.jvp(spread, (params,), (tangents,))
    np.testing.assert_allclose(tangent_out["w"], np.cos(params["pair"].weight), rtol=1e-6)


def test_per_example_grads_over_a_pytree_batch():
    params = make_params()
    batch = jax.tree_util.tree_map(lambda x: np.stack([x, 2 * x, -x]), params)
    grads = jax.vmap(jax.grad(loss))(batch)
    for i, scale in enumerate((1.0, 2.0, -1.0)):
        one = jax.tree_util.tree_map(lambda x, s=scale: x * np.float32(s), params)
        got = jax.tree_util.tree_map(lambda g, i=i: np.asarray(g)[i], grads)
        assert_trees_close(got, expected_grad(one))
