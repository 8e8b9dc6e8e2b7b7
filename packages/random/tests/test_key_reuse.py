"""The key-reuse checker (``jax_debug_key_reuse``): which uses of typed keys JAX 0.10.2
refuses, eagerly and under jit, and its messages (recorded from JAX 0.10.2)."""

import re

import numpy as np
import pytest

import lamina.random as random
from lamina import lax
from lamina.interpreters import KeyReuseError, config, debug_key_reuse, grad, jit, key_reuse, vmap


@pytest.fixture(autouse=True)
def checking():
    assert config.jax_debug_key_reuse is False
    config.update("jax_debug_key_reuse", True)
    try:
        yield
    finally:
        config.update("jax_debug_key_reuse", False)


def _raises(message):
    return pytest.raises(KeyReuseError, match=re.escape(message))


PASSED = "Previously-consumed key passed to jit-compiled function at index 0"


def test_eager_sampling_consumes_the_key():
    k = random.key(0)
    random.uniform(k)
    with _raises(PASSED):
        random.uniform(k)
    k = random.key(0)
    random.split(k)
    with _raises("Previously-consumed key passed to random_split at index 0"):
        random.split(k)


def test_what_does_not_consume():
    k = random.key(0)
    random.fold_in(k, 1)
    random.fold_in(k, 2)
    random.key_data(k)
    random.uniform(random.clone(k))
    random.uniform(k)  # the first consuming use
    with _raises(PASSED):
        random.uniform(k)
    # Raw keys are wrapped afresh at every use.
    raw = random.PRNGKey(0)
    random.uniform(raw)
    random.uniform(raw)


def test_keys_from_split_are_consumed_one_by_one():
    ks = random.split(random.key(0), 3)
    random.uniform(ks[0])
    random.uniform(ks[1])
    with _raises("Previously-consumed key passed to slice at index 0"):
        random.uniform(ks[0])


def test_jitted_calls_check_and_consume():
    k = random.key(1)
    identity = jit(lambda k: k)
    draw = jit(lambda k: random.uniform(k))
    identity(k)
    draw(k)
    with _raises(PASSED):
        draw(k)
    with _raises(PASSED):
        grad(lambda x: x * random.uniform(k))(1.0)


@pytest.mark.parametrize(
    "fun, message",
    [
        (
            lambda k: random.uniform(k) + random.uniform(k),
            "In jit, argument 0 is already consumed.",
        ),
        (
            lambda k: random.uniform(random.split(k)[0]) * 2 + random.uniform(random.split(k)[1]),
            "In random_split, argument 0 is already consumed.",
        ),
        (
            lambda k: lax.cond(True, random.uniform, lambda k: 0.0, k) + random.uniform(k),
            "In jit, argument 0 is already consumed.",
        ),
        (
            lambda k: lax.scan(lambda c, _: (c, random.uniform(k)), 0, None, length=3)[1],
            "scan body function leads to key reuse when repeatedly executed, because key "
            "constants are repeatedly consumed:",
        ),
        (
            lambda k: lax.while_loop(
                lambda c: c[0] < 3, lambda c: (c[0] + 1, random.uniform(k)), (0, 0.0)
            ),
            "while_loop body function leads to key reuse when repeatedly executed:",
        ),
    ],
)
def test_reuse_inside_jit_is_found_when_tracing(fun, message):
    with _raises(message):
        jit(fun)(random.key(0))


def test_index_reuse_inside_jit():
    def f(k):
        ks = random.split(k, 3)
        return random.uniform(ks[0]) + random.uniform(ks[0])

    with _raises("In slice, argument 0 is already consumed."):
        jit(f)(random.key(0))


@pytest.mark.parametrize(
    "fun",
    [
        lambda k: lax.scan(
            lambda k, _: (lambda a, b: (a, random.uniform(b)))(*random.split(k)), k, None, length=3
        )[1],
        lambda k: random.uniform(random.fold_in(k, 1)) + random.uniform(random.fold_in(k, 2)),
        lambda k: random.uniform(random.clone(k)) + random.uniform(k),
        lambda k: (random.key_data(k), random.uniform(k)),
        lambda k: (lambda ks: random.uniform(ks[0]) + random.uniform(ks[1]))(random.split(k, 3)),
        lambda k: random.gamma(k, 2.0),
    ],
)
def test_single_uses_inside_jit_pass(fun):
    jit(fun)(random.key(0))


def test_eager_cond_and_vmap():
    k = random.key(0)
    lax.cond(True, random.uniform, lambda k: 0.0, k)
    with _raises("Previously-consumed key passed to cond at index 1"):
        lax.cond(True, random.uniform, lambda k: 0.0, k)
    with _raises(PASSED):
        vmap(lambda k: random.uniform(k) + random.uniform(k))(random.split(random.key(0), 2))


@pytest.mark.parametrize(
    "fun, arg, expected",
    [
        (lambda k: (random.split(k)[0], k), random.key(0),
         "KeyReuseSignature(Sink(0), Source(0), Forward(0, 1))"),
        (lambda k: (random.uniform(k), random.key(1), random.fold_in(k, 2)), random.key(0),
         "KeyReuseSignature(Sink(0), Source(1), Source(2))"),
        (lambda k: random.split(k, 3)[1:], random.key(0), "KeyReuseSignature(Sink(0), Source(0))"),
        (lambda ks: random.uniform(ks[1]), random.split(random.key(0), 3),
         "KeyReuseSignature(Sink(0, [False  True False]),)"),
    ],
)  # fmt: skip
def test_function_signatures(fun, arg, expected):
    # Signatures recorded from JAX 0.10.2 (jax.experimental.key_reuse).
    assert repr(key_reuse.function_type_signature(fun, arg)) == expected


def test_signatures():
    assert repr(key_reuse.KeyReuseSignature(key_reuse.Sink(0))) == "KeyReuseSignature(Sink(0),)"
    mask = key_reuse.Sink(0, np.array([True, False]))
    assert repr(mask) == "Sink(0, [ True False])"
    with pytest.raises(ValueError, match="immutable"):
        mask.idx = 1
    key_reuse.check_key_reuse(lambda k: random.uniform(k), random.key(0))
    with _raises("In jit, argument 0 is already consumed."):
        key_reuse.check_key_reuse(lambda k: random.uniform(k) + random.uniform(k), random.key(0))


def test_off_by_default_and_context_manager():
    config.update("jax_debug_key_reuse", False)
    k = random.key(0)
    random.uniform(k)
    random.uniform(k)
    with debug_key_reuse(True):
        random.uniform(k)  # keys used while unchecked are not marked
        with _raises(PASSED):
            random.uniform(k)
