"""`lamina.ops`: the segment reductions of `jax.ops` against a Python loop, with JAX's
identities, dtypes, modes, bucketing, transformations and errors."""

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina import lax, ops
from lamina.test_util import check_grads

NAMES = ["segment_max", "segment_min", "segment_prod", "segment_sum"]

# The Python reductions and the identity of an empty segment for a NumPy dtype.
COMBINE = {
    "segment_sum": lambda a, b: a + b,
    "segment_prod": lambda a, b: a * b,
    "segment_max": max,
    "segment_min": min,
}


def identity(name, dtype):
    dtype = np.dtype(dtype)
    if name == "segment_sum":
        return 0
    if name == "segment_prod":
        return 1
    if dtype == np.bool_:
        return name == "segment_min"
    if np.issubdtype(dtype, np.inexact):
        return -np.inf if name == "segment_max" else np.inf
    info = np.iinfo(dtype)
    return info.min if name == "segment_max" else info.max


def reference(name, data, ids, num_segments, clip=False):
    """The loop: row i goes to segment ids[i]; out-of-range ids are dropped (or clipped)."""
    data = np.asarray(data)
    out = np.full((num_segments, *data.shape[1:]), identity(name, data.dtype), data.dtype)
    for row, seg in zip(data, np.asarray(ids), strict=True):
        if clip:
            seg = min(max(seg, 0), num_segments - 1)
        if 0 <= seg < num_segments:
            out[seg] = np.vectorize(COMBINE[name])(out[seg], row)
    return out


def test_names_match_jax():
    assert sorted(ops.__all__) == NAMES
    assert jax.ops is ops


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.uint8, np.float16])
def test_values_against_a_loop(name, dtype):
    rng = np.random.default_rng(0)
    data = rng.integers(1, 5, size=(9, 2)).astype(dtype)
    ids = np.array([0, 3, 3, -1, 1, 7, 0, 3, 5], np.int32)  # -1 and 7: dropped
    out = getattr(ops, name)(data, ids, 6)
    assert out.dtype == dtype and out.shape == (6, 2)
    np.testing.assert_array_equal(np.asarray(out), reference(name, data, ids, 6))


@pytest.mark.parametrize("name", NAMES)
def test_default_num_segments_is_max_id_plus_one(name):
    data = np.arange(1.0, 7.0, dtype=np.float32)
    ids = np.array([0, 0, 2, 5, -1, 1])
    out = getattr(ops, name)(data, ids)
    assert out.shape == (6,)
    np.testing.assert_array_equal(np.asarray(out), reference(name, data, ids, 6))


@pytest.mark.parametrize(
    ("name", "dtype", "want"),
    [
        ("segment_max", np.float32, -np.inf),
        ("segment_min", np.float32, np.inf),
        ("segment_max", np.int32, np.iinfo(np.int32).min),
        ("segment_min", np.int32, np.iinfo(np.int32).max),
        ("segment_max", np.uint8, 0),
        ("segment_min", np.uint8, 255),
        ("segment_max", np.int8, -128),
        ("segment_max", jnp.bfloat16, -np.inf),
        ("segment_sum", np.float32, 0),
        ("segment_prod", np.int32, 1),
    ],
)
def test_empty_segments_hold_the_identity(name, dtype, want):
    out = getattr(ops, name)(jnp.ones(3, dtype), jnp.array([0, 1, 1]), 3)
    assert out.dtype == dtype
    assert np.asarray(out)[2] == want


def test_bool_and_complex():
    mask = jnp.array([True, False, True, True, False, True])
    ids = jnp.array([0, 0, 2, 5, -1, 1])
    np.testing.assert_array_equal(np.asarray(ops.segment_max(mask, ids, 4)), [1, 1, 1, 0])
    np.testing.assert_array_equal(np.asarray(ops.segment_min(mask, ids, 4)), [0, 1, 1, 1])
    z = jnp.ones(3, jnp.complex64)
    out = ops.segment_sum(z, jnp.array([0, 1, 1]), 3)
    assert out.dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(out), [1, 2, 0])
    # Recorded from JAX 0.10.2: an empty complex segment holds -inf+0j / inf+0j.
    assert complex(ops.segment_max(z, jnp.array([0, 1, 1]), 3)[2]) == complex(-np.inf, 0)
    assert complex(ops.segment_min(z, jnp.array([0, 1, 1]), 3)[2]) == complex(np.inf, 0)


@pytest.mark.parametrize("name", NAMES)
def test_weak_types_are_dropped(name):
    assert not getattr(ops, name)(2.0, 0, 3).weak_type
    assert not getattr(ops, name)(2.0 * jnp.ones(3), jnp.array([0, 1, 1]), 2).weak_type
    # Python scalars take the default dtypes.
    assert getattr(ops, name)(2, 0, 3).dtype == np.int32


@pytest.mark.parametrize("name", NAMES)
def test_data_with_trailing_dims_and_scalars(name):
    data = np.arange(24, dtype=np.float32).reshape(6, 2, 2) - 10
    ids = np.array([1, 0, 1, 2, 2, 1])
    out = getattr(ops, name)(data, ids, 3)
    np.testing.assert_array_equal(np.asarray(out), reference(name, data, ids, 3))
    scalar = getattr(ops, name)(jnp.float32(4.0), jnp.array(1), 2)
    np.testing.assert_array_equal(np.asarray(scalar), [identity(name, np.float32), 4.0])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bucket_size", [1, 2, 3, 4, 100])
def test_bucket_size_gives_the_same_values(name, bucket_size):
    data = np.arange(1.0, 11.0, dtype=np.float32)
    ids = np.array([0, 0, 1, 1, 2, 2, 3, 3, 3, 0])
    out = getattr(ops, name)(data, ids, 5, bucket_size=bucket_size)
    np.testing.assert_allclose(np.asarray(out), reference(name, data, ids, 5), rtol=1e-6)
    small = getattr(ops, name)(np.ones(5, np.int8), ids[:5], 3, bucket_size=2)
    assert small.dtype == np.int8


@pytest.mark.parametrize("name", NAMES)
def test_modes(name):
    data = np.arange(1.0, 5.0, dtype=np.float32)
    ids = np.array([0, 3, 9, 1])
    f = getattr(ops, name)
    want_drop = reference(name, data, ids, 3)
    want_clip = reference(name, data, ids, 3, clip=True)
    np.testing.assert_array_equal(np.asarray(f(data, ids, 3)), want_drop)
    np.testing.assert_array_equal(np.asarray(f(data, ids, 3, mode="fill")), want_drop)
    np.testing.assert_array_equal(np.asarray(f(data, ids, 3, mode="drop")), want_drop)
    np.testing.assert_array_equal(np.asarray(f(data, ids, 3, mode="clip")), want_clip)
    clip = lax.GatherScatterMode.CLIP
    np.testing.assert_array_equal(np.asarray(f(data, ids, 3, mode=clip)), want_clip)


@pytest.mark.parametrize("name", NAMES)
def test_sorted_and_unique_promises(name):
    data = np.array([3.0, 1.0, 4.0, 1.5], np.float32)
    ids = np.array([0, 1, 2, 3])
    f = getattr(ops, name)
    out = f(data, ids, 4, indices_are_sorted=True, unique_indices=True)
    np.testing.assert_array_equal(np.asarray(out), data)
    text = str(jax.make_jaxpr(lambda d: f(d, ids, 4, indices_are_sorted=True))(data))
    assert "indices_are_sorted=True" in text
    assert "mode=GatherScatterMode.FILL_OR_DROP" in text


@pytest.mark.parametrize("name", NAMES)
def test_jit_needs_num_segments_and_matches_eager(name):
    f = getattr(ops, name)
    data = np.arange(1.0, 7.0, dtype=np.float32)
    ids = np.array([2, 0, 2, 1, 1, 4])
    jitted = jax.jit(lambda d, i: f(d, i, 5, bucket_size=4))
    np.testing.assert_array_equal(np.asarray(jitted(data, ids)), np.asarray(f(data, ids, 5)))
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda d, i: f(d, i))(data, ids)
    # A concrete num_segments may be an array.
    assert f(data, ids, jnp.array(5)).shape == (5,)


@pytest.mark.parametrize("name", NAMES)
def test_vmap_against_a_loop(name):
    f = getattr(ops, name)
    rng = np.random.default_rng(1)
    data = rng.normal(size=(3, 5)).astype(np.float32)
    ids = np.array([[0, 1, 1, 2, 3], [3, 3, -1, 0, 0], [2, 2, 2, 2, 2]])
    out = jax.vmap(lambda d, i: f(d, i, 4))(data, ids)
    want = np.stack([reference(name, d, i, 4) for d, i in zip(data, ids, strict=True)])
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    # data batched, ids shared
    out = jax.vmap(lambda d: f(d, ids[0], 4), in_axes=1, out_axes=1)(data.T)
    np.testing.assert_allclose(np.asarray(out), np.stack([reference(name, d, ids[0], 4) for d in data]).T, rtol=1e-6)  # fmt: skip # noqa: E501


def test_gradients():
    ids = jnp.array([0, 2, 2, 1])
    x = jnp.array([1.0, 3.0, 2.0, 5.0])
    check_grads(lambda a: ops.segment_sum(a, ids, 3), (x,), order=2, modes=["fwd", "rev"])
    check_grads(lambda a: ops.segment_sum(a, ids, 3, bucket_size=3), (x,), order=2)
    check_grads(lambda a: ops.segment_max(a, ids, 3), (x,), order=1, modes=["fwd", "rev"])
    check_grads(lambda a: ops.segment_min(a, ids, 3, bucket_size=2), (x,), order=1)
    unique = jnp.array([0, 2, 1, 3])
    check_grads(lambda a: ops.segment_prod(a, unique, 4, unique_indices=True), (x,), order=1)
    # Tied maxima share the gradient (recorded from JAX 0.10.2).
    grad = jax.grad(lambda a: ops.segment_max(a, jnp.array([0, 0, 1]), 2).sum())
    np.testing.assert_array_equal(np.asarray(grad(jnp.array([1.0, 1.0, 2.0]))), [0.5, 0.5, 1])


def test_segment_prod_gradient_needs_unique_indices():
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
        jax.grad(lambda a: ops.segment_prod(a, jnp.array([0, 0, 1]), 2).sum())(jnp.ones(3))


@pytest.mark.parametrize("name", NAMES)
def test_errors(name):
    f = getattr(ops, name)
    with pytest.raises(TypeError, match=f"{name} requires ndarray or scalar arguments"):
        f([1, 2, 3], [0, 1, 1], 2)
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type"):
        f(jnp.ones(3), jnp.array([0.0, 1, 1]), 2)
    with pytest.raises(ValueError, match=r"num_segments must be non-negative\."):
        f(jnp.ones(3), jnp.array([0, 1, 1]), -1)
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        f(jnp.ones(3), jnp.array([0, 1, 1]), 2.5)
    with pytest.raises(ValueError, match='Unknown gather mode "foo"'):
        f(jnp.ones(3), jnp.array([0, 1, 1]), 2, mode="foo")
    msg = r"Incompatible types for broadcasting: input type=float32\[3,2\] and requested type="
    with pytest.raises(ValueError, match=msg + r"float32\[2,2\]"):
        f(jnp.ones((3, 2)), jnp.array([0, 1]), 2)
    with pytest.raises(ZeroDivisionError):
        f(jnp.ones(3), jnp.array([0, 1, 1]), 2, bucket_size=0)
    if name in ("segment_sum", "segment_prod"):
        with pytest.raises(TypeError, match="does not accept dtype bool"):
            f(jnp.ones(3, bool), jnp.array([0, 1, 1]), 2)
