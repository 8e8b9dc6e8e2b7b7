"""The PRNG implementations other than the default: ``rbg`` and ``unsafe_rbg`` (keys of
``uint32[4]`` on XLA's bit generator) and Threefry with ``jax_threefry_partitionable``
off, against values recorded from JAX 0.10.2 on CPU (data/random_impls.json): key data,
split, fold_in, bits, the samplers, under jit and vmap, must be bit-identical.

The table CASES is what was recorded: each entry calls ``random`` (lamina.random here,
jax.random when recording) with a typed key of the implementation.
"""

import json
import pathlib

import numpy as np
import pytest

import lamina.random as random
from lamina.interpreters import config, enable_x64, jit, vmap

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "random_impls.json").read_text())
SEEDS = (0, 42)
F32 = np.float32
P5 = np.array([0.1, 0.2, 0.3, 0.2, 0.2], F32)
IMPLS = ("rbg", "unsafe_rbg", "threefry2x32")


def _data(keys):
    return random.key_data(keys)


CASES = {
    "key": lambda R, k: _data(k),
    "split_3": lambda R, k: _data(R.split(k, 3)),
    "split_2x2": lambda R, k: _data(R.split(k, (2, 2))),
    "fold_in_17": lambda R, k: _data(R.fold_in(k, 17)),
    "fold_in_max": lambda R, k: _data(R.fold_in(k, np.uint32(0xFFFFFFFF))),
    "split_then_fold": lambda R, k: _data(R.fold_in(R.split(k)[1], 5)),
    "bits_u32_5": lambda R, k: R.bits(k, (5,)),
    "bits_u8_2x3": lambda R, k: R.bits(k, (2, 3), np.uint8),
    "bits_u16_5": lambda R, k: R.bits(k, (5,), np.uint16),
    "bits_u8_odd": lambda R, k: R.bits(k, (7,), np.uint8),
    "bits_empty": lambda R, k: R.bits(k, (0,)),
    "uniform_7": lambda R, k: R.uniform(k, (7,)),
    "uniform_f16_range": lambda R, k: R.uniform(k, (2, 3), np.float16, -2.0, 3.0),
    "normal_3x4": lambda R, k: R.normal(k, (3, 4)),
    "normal_c64": lambda R, k: R.normal(k, (3,), np.complex64),
    "randint_0_10": lambda R, k: R.randint(k, (8,), 0, 10),
    "randint_u8_256": lambda R, k: R.randint(k, (6,), 0, 256, np.uint8),
    "bernoulli": lambda R, k: R.bernoulli(k, 0.3, (10,)),
    "exponential": lambda R, k: R.exponential(k, (5,)),
    "gumbel": lambda R, k: R.gumbel(k, (5,)),
    "truncated_normal": lambda R, k: R.truncated_normal(k, -1.0, 2.0, (6,)),
    "permutation_int": lambda R, k: R.permutation(k, 10),
    "permutation_2d": lambda R, k: R.permutation(k, np.arange(12, dtype=np.int32).reshape(3, 4), 1),
    "choice_p": lambda R, k: R.choice(k, 5, (6,), p=P5),
    "choice_noreplace": lambda R, k: R.choice(k, 10, (4,), replace=False),
    "categorical": lambda R, k: R.categorical(
        k, np.log(np.array([0.1, 0.2, 0.7], F32)), shape=(6,)
    ),
    "gamma": lambda R, k: R.gamma(k, np.array([0.1, 0.5, 1.0, 3.0], F32)),
    "beta": lambda R, k: R.beta(k, 2.0, 3.0, (4,)),
    "binomial": lambda R, k: R.binomial(k, 50.0, 0.3, (4,)),
    "multinomial": lambda R, k: R.multinomial(k, 20.0, np.array([0.2, 0.3, 0.5], F32)),
    "dirichlet": lambda R, k: R.dirichlet(k, np.array([0.5, 1.0, 2.0], F32), (2,)),
    "t": lambda R, k: R.t(k, 3.0, (5,)),
    "ball": lambda R, k: R.ball(k, 3, p=1.5, shape=(2,)),
    # Through jit and vmap: a batch of keys draws through the batched bit generator.
    "jit_normal": lambda R, k: jit(lambda k: R.normal(k, (4,)))(k),
    "vmap_uniform": lambda R, k: vmap(lambda k: R.uniform(k, (2,)))(R.split(k, 3)),
    "vmap_split": lambda R, k: _data(vmap(R.split)(R.split(k, 3))),
    "vmap_fold_in_keys": lambda R, k: _data(vmap(lambda k: R.fold_in(k, 3))(R.split(k, 3))),
    "vmap_fold_in_data": lambda R, k: _data(
        vmap(lambda d: R.fold_in(k, d))(np.arange(3, dtype=np.uint32))
    ),
    "vmap_fold_in_both": lambda R, k: _data(
        vmap(R.fold_in)(R.split(k, 3), np.arange(3, dtype=np.uint32))
    ),
    "vmap_permutation": lambda R, k: vmap(lambda k: R.permutation(k, 5))(R.split(k, 2)),
}
# Recorded with jax_enable_x64 on as well.
X64_CASES = {
    "bits_u64": lambda R, k: R.bits(k, (3,), np.uint64),
    "uniform_f64": lambda R, k: R.uniform(k, (4,), np.float64),
    "randint_i64": lambda R, k: R.randint(k, (4,), 0, 2**40, np.int64),
}


def encode(x) -> dict:
    """dtype, shape and exact contents (floats as their bit patterns)."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        x = np.stack([x.real, x.imag], -1)
    if x.dtype.kind == "f":
        bits = x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])
        return {"dtype": str(x.dtype), "shape": list(x.shape), "bits": bits.ravel().tolist()}
    return {"dtype": str(x.dtype), "shape": list(x.shape), "values": x.ravel().tolist()}


def record_name(impl, name, seed, x64=False):
    mode = "threefry_original" if impl == "threefry2x32" else impl
    return f"{mode}/{'x64/' if x64 else ''}{name}/{seed}"


def _run(impl, name, table, x64):
    for seed in SEEDS:
        got = table[name](random, random.key(seed, impl=impl))
        assert encode(got) == RECORDED[record_name(impl, name, seed, x64)], (impl, name, seed)


@pytest.fixture
def threefry_original():
    config.update("jax_threefry_partitionable", False)
    try:
        yield
    finally:
        config.update("jax_threefry_partitionable", True)


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(impl, name):
    _run(impl, name, CASES, x64=False)


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
@pytest.mark.parametrize("name", sorted(X64_CASES))
def test_matches_jax_x64(impl, name):
    with enable_x64(True):
        _run(impl, name, X64_CASES, x64=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_threefry_original_scheme_matches_jax(threefry_original, name):
    _run("threefry2x32", name, CASES, x64=False)


@pytest.mark.parametrize("name", sorted(X64_CASES))
def test_threefry_original_scheme_matches_jax_x64(threefry_original, name):
    with enable_x64(True):
        _run("threefry2x32", name, X64_CASES, x64=True)


@pytest.fixture
def restore_config():
    names = (
        "jax_default_prng_impl",
        "jax_legacy_prng_key",
        "jax_enable_custom_prng",
        "jax_threefry_partitionable",
    )
    saved = {name: getattr(config, name) for name in names}
    try:
        yield
    finally:
        for name, value in saved.items():
            config.update(name, value)


def test_keys_print_and_name_their_implementation():
    # Printed forms recorded from JAX 0.10.2.
    k = random.key(1, impl="rbg")
    assert repr(k) == "Array((), dtype=key<rbg>) overlaying:\n[0 1 0 1]"
    assert str(k.dtype) == "key<rbg>" and k.itemsize == 16
    assert random.key_impl(k) == "rbg" and k.dtype == random.key_dtype("rbg")
    u = random.wrap_key_data(np.arange(4, dtype=np.uint32), impl="unsafe_rbg")
    assert repr(u) == "Array((), dtype=key<urbg>) overlaying:\n[0 1 2 3]"
    assert random.key_impl(u) == "unsafe_rbg"
    two = random.wrap_key_data(np.arange(8, dtype=np.uint32).reshape(2, 4), dtype=k.dtype)
    assert repr(two) == "Array((2,), dtype=key<rbg>) overlaying:\n[[0 1 2 3]\n [4 5 6 7]]"
    assert random.key_data(random.split(k, (2, 3))).shape == (2, 3, 4)
    assert k.dtype != random.key_dtype("unsafe_rbg") != random.key_dtype()


def test_default_implementation_option(restore_config):
    config.update("jax_default_prng_impl", "rbg")
    raw = random.PRNGKey(0)
    assert raw.dtype == np.uint32 and raw.shape == (4,)
    assert random.key_impl(raw) == "rbg" and str(random.key_dtype()) == "key<rbg>"
    assert str(random.key(0).dtype) == "key<rbg>"
    # Raw keys are read as keys of the default implementation.
    np.testing.assert_array_equal(
        random.uniform(raw, (3,)), random.uniform(random.key(0, impl="rbg"), (3,))
    )
    with pytest.raises(
        TypeError, match=r"expected key_data.shape to end with \(4,\); got shape=\(2,\)"
    ):
        random.uniform(np.zeros(2, np.uint32))
    with pytest.raises(ValueError, match="new enum value must be in"):
        config.update("jax_default_prng_impl", "mt19937")


def test_partitionable_option_switches_threefry_schemes(restore_config):
    # key_data(split(key(0), 3))[0] under both values, recorded from JAX 0.10.2; eager
    # and jitted calls follow the option as it is when they run.
    assert config.jax_threefry_partitionable is True
    key = random.key(0)
    first = jit(lambda k: random.key_data(random.split(k, 3))[0])
    for value, want in ((True, [1797259609, 2579123966]), (False, [2467461003, 428148500])):
        config.update("jax_threefry_partitionable", value)
        np.testing.assert_array_equal(random.key_data(random.split(key, 3))[0], want)
        np.testing.assert_array_equal(first(key), want)


LEGACY = (
    "Legacy uint32 key array passed as key to jax.random function. Please create keys "
    "using jax.random.key(). If use of a raw key array was intended, set "
    'jax_legacy_prng_key="allow".'
)


@pytest.mark.parametrize(
    "call",
    [
        lambda: random.uniform(random.PRNGKey(0)),
        lambda: random.split(random.PRNGKey(0)),
        lambda: random.fold_in(random.PRNGKey(0), 1),
        lambda: random.key_data(random.PRNGKey(0)),
        lambda: random.key_impl(random.PRNGKey(0)),
    ],
)
def test_legacy_key_option(restore_config, call):
    assert config.jax_legacy_prng_key == "allow"
    config.update("jax_legacy_prng_key", "warn")
    with pytest.warns(UserWarning) as record:
        call()
    assert [str(w.message) for w in record] == [LEGACY]
    config.update("jax_legacy_prng_key", "error")
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == LEGACY
    # Making raw keys, or typed keys from them, is no legacy use.
    random.wrap_key_data(random.PRNGKey(0))
    with pytest.raises(ValueError, match="is not a valid LegacyPrngKeyState"):
        config.update("jax_legacy_prng_key", "sometimes")


def test_custom_prng_option_makes_typed_keys(restore_config):
    config.update("jax_enable_custom_prng", True)
    assert repr(random.PRNGKey(0)) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    with pytest.warns(FutureWarning, match="Raw arrays as random keys to jax.random functions"):
        keys = random.split(np.zeros(2, np.uint32))
    # Recorded from JAX 0.10.2: typed keys come back for raw ones.
    assert repr(keys) == (
        "Array((2,), dtype=key<fry>) overlaying:\n"
        "[[1797259609 2579123966]\n [ 928981903 3453687069]]"
    )


def test_poisson_needs_threefry_keys():
    with pytest.raises(
        NotImplementedError, match="only implemented for the threefry2x32 RNG, not rbg"
    ):
        random.poisson(random.key(0, impl="rbg"), 3.0)
    with pytest.raises(ValueError, match='"philox4x32" is not available in lamina'):
        random.key(0, impl="philox4x32")
