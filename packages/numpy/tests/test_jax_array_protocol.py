"""The ``__jax_array__`` protocol as JAX 0.10.2 has it: the array operators and the
explicit conversions (``asarray``, ``array``, and the functions JAX runs outside
``jit``, such as ``zeros_like`` and ``transpose``) convert an object defining it; every
other function refuses it with JAX's ValueError. Which function does which was recorded
from JAX 0.10.2 (data/jax_array_protocol.json: each jax.numpy function called with one
such object)."""

import inspect
import json
from pathlib import Path

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina import lax
from lamina.interpreters import grad, jit, vmap


def _takes_one_argument(name: str) -> bool:
    """Whether ``jnp.<name>(x)`` is a complete call (JAX's signatures, which lamina's
    match: test_api_surface.py)."""
    params = inspect.signature(getattr(jnp, name)).parameters.values()
    required = [
        p
        for p in params
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return len(required) <= 1


RECORDED = {
    name: outcome
    for name, outcome in json.loads(
        (Path(__file__).parent / "data" / "jax_array_protocol.json").read_text()
    ).items()
    if _takes_one_argument(name)
}
MESSAGE = (
    "Triggering __jax_array__() during abstractification is no longer supported. To avoid "
    "this error, either explicitly convert your object using jax.numpy.array(), or "
    "register your object as a pytree."
)
VALUE = np.arange(6, dtype=np.float32).reshape(2, 3)


class Wrapper:
    """Holds a value and converts to an array only through ``__jax_array__`` (as a flax
    ``Variable`` or an equinox wrapper does)."""

    def __init__(self, value):
        self.value = value

    def __jax_array__(self):
        return jnp.asarray(self.value)


def _same(got, want):
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        assert np.asarray(g).dtype == np.asarray(w).dtype


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


@pytest.mark.parametrize("name", sorted(n for n, v in RECORDED.items() if v == "converts"))
def test_functions_that_convert(name):
    f = getattr(jnp, name)
    _same(f(Wrapper(VALUE)), f(jnp.asarray(VALUE)))


@pytest.mark.parametrize("name", sorted(n for n, v in RECORDED.items() if v == "refuses"))
def test_functions_that_refuse(name):
    with pytest.raises(ValueError) as info:
        getattr(jnp, name)(Wrapper(VALUE))
    assert str(info.value) == MESSAGE


@pytest.mark.parametrize(
    "op",
    [
        lambda a, w: a + w,
        lambda a, w: w + a,
        lambda a, w: a * w,
        lambda a, w: w - a,
        lambda a, w: a / w,
        lambda a, w: a**w,
        lambda a, w: a.T @ w,
        lambda a, w: w @ a.T,
        lambda a, w: a < w,
        lambda a, w: a == w,
    ],
)
def test_operators_convert(op):
    a = jnp.ones((2, 3)) + 1
    _same(op(a, Wrapper(VALUE)), op(a, jnp.asarray(VALUE)))


def test_operators_convert_inside_transformations():
    w = Wrapper(VALUE)
    x = jnp.ones((2, 3))
    np.testing.assert_array_equal(jit(lambda x: x + w)(x), VALUE + 1)
    np.testing.assert_array_equal(vmap(lambda r: r * w)(x), np.broadcast_to(VALUE, (2, 2, 3)))
    np.testing.assert_array_equal(grad(lambda x: (x * w).sum())(x), VALUE)


def test_jit_and_lax_refuse_the_object_as_an_argument():
    w = Wrapper(VALUE)
    for call in (lambda: jit(lambda a: a)(w), lambda: lax.add(w, w), lambda: jnp.sin(w)):
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == MESSAGE


def test_array_and_asarray_convert_nested_objects():
    np.testing.assert_array_equal(jnp.array([Wrapper(VALUE[0]), Wrapper(VALUE[1])]), VALUE)
    assert jnp.asarray(Wrapper(VALUE)).dtype == np.float32
