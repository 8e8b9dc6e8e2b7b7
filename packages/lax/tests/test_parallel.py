"""Collectives with vmap semantics against NumPy over the mapped axis, JAX 0.10.2's
recorded results and printed Jaxprs, gradients, and the unbound-name errors."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import grad, jit, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(11)
xs = rng.standard_normal((4, 3)).astype(np.float32)


def mapped(f, in_axes=0):
    return vmap(f, in_axes=in_axes, axis_name="i")


@pytest.mark.parametrize(
    "collective,reference",
    [(lax.psum, np.sum), (lax.pmax, np.max), (lax.pmin, np.min), (lax.pmean, np.mean)],
    ids=["psum", "pmax", "pmin", "pmean"],
)
@pytest.mark.parametrize("in_axis", [0, 1])
def test_reductions_over_the_mapped_axis(collective, reference, in_axis):
    data = xs if in_axis == 0 else np.ascontiguousarray(xs.T)
    out = mapped(lambda x: collective(x, "i"), in_axes=in_axis)(data)
    want = np.broadcast_to(reference(xs, axis=0), xs.shape)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)


def test_unbatched_operands_and_axis_size():
    np.testing.assert_array_equal(mapped(lambda x: lax.psum(1, "i"))(xs), [4, 4, 4, 4])
    sizes = mapped(lambda x: x * 0 + lax.axis_size("i"))(np.ascontiguousarray(xs[:, 0]))
    np.testing.assert_array_equal(np.asarray(sizes), [4, 4, 4, 4])
    np.testing.assert_allclose(mapped(lambda x: lax.psum(2.0, "i") + x)(xs), xs + 8)
    np.testing.assert_allclose(np.asarray(lax.psum(xs, (0,))), xs.sum(0), rtol=1e-6)


def test_axis_index_over_one_and_two_names():
    np.testing.assert_array_equal(mapped(lambda x: lax.axis_index("i"))(xs), [0, 1, 2, 3])
    both = vmap(vmap(lambda x: lax.axis_index(("i", "j")), axis_name="j"), axis_name="i")
    np.testing.assert_array_equal(both(np.zeros((2, 3))), [[0, 1, 2], [3, 4, 5]])
    total = vmap(vmap(lambda x: lax.psum(x, ("i", "j")), axis_name="j"), axis_name="i")
    np.testing.assert_allclose(np.asarray(total(xs)), np.full(xs.shape, xs.sum()), rtol=1e-5)


def test_gradient_of_psum_under_vmap_is_jaxs():
    # JAX 0.10.2: vmap(grad(lambda x: psum(x, 'i')), axis_name='i')(arange(3.)) == [3, 3, 3]
    out = mapped(grad(lambda x: lax.psum(x, "i")))(np.arange(3.0, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(out), [3.0, 3.0, 3.0])


def test_printed_jaxprs_match_jax():
    text = str(make_jaxpr(mapped(lambda x: lax.psum(x, "i")))(np.arange(3.0, dtype=np.float32)))
    assert text == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[] = psum[axes=(0,) axis_index_groups=None] a\n"
        "    c:f32[3] = broadcast_in_dim b\n"
        "  in (c,) }"
    )
    inner = jit(lambda z: lax.psum(z, "i") + lax.axis_index("i"))
    staged = str(make_jaxpr(lambda x: mapped(inner)(x))(np.arange(3.0, dtype=np.float32)))
    assert "psum[axes=(0,) axis_index_groups=None] a" in staged
    assert "iota[dimension=0 dtype=int32 shape=(3,) sharding=None]" in staged


def test_unbound_axis_names_raise_jaxs_errors():
    with pytest.raises(NameError, match="unbound axis name: j"):
        lax.psum(xs, "j")
    with pytest.raises(NameError, match="Found an unbound axis name: j"):
        jit(lambda x: lax.psum(x, "j"))(xs)
    with pytest.raises(NameError, match="unbound axis name: j"):
        mapped(lambda x: lax.psum(x, "j"))(xs)


def test_all_gather_and_psum_scatter():
    gathered = mapped(lambda x: lax.all_gather(x, "i"))(xs)
    np.testing.assert_array_equal(np.asarray(gathered), np.broadcast_to(xs, (4, 4, 3)))
    along1 = mapped(lambda x: lax.all_gather(x, "i", axis=1))(xs)
    np.testing.assert_array_equal(np.asarray(along1), np.broadcast_to(xs.T, (4, 3, 4)))
    tiled = mapped(lambda x: lax.all_gather(x, "i", tiled=True))(xs)
    np.testing.assert_array_equal(np.asarray(tiled), np.broadcast_to(xs.reshape(-1), (4, 12)))
    square = rng.standard_normal((4, 4)).astype(np.float32)
    scattered = mapped(lambda x: lax.psum_scatter(x, "i"))(square)
    np.testing.assert_allclose(np.asarray(scattered), square.sum(0), rtol=1e-6)
    wide = rng.standard_normal((4, 8)).astype(np.float32)
    scattered = mapped(lambda x: lax.psum_scatter(x, "i", tiled=True))(wide)
    np.testing.assert_allclose(np.asarray(scattered), wide.sum(0).reshape(4, 2), rtol=1e-6)


def test_all_to_all_ppermute_and_friends():
    square = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    np.testing.assert_array_equal(
        np.asarray(mapped(lambda x: lax.all_to_all(x, "i", 0, 0))(square)), square.T
    )
    cube = np.arange(4 * 2 * 4, dtype=np.float32).reshape(4, 2, 4)
    out = mapped(lambda x: lax.all_to_all(x, "i", 1, 0))(cube)
    want = np.stack([np.stack([cube[j, :, i] for j in range(4)]) for i in range(4)])
    np.testing.assert_array_equal(np.asarray(out), want)
    perm = [(0, 1), (1, 2), (2, 3)]
    shifted = mapped(lambda x: lax.ppermute(x, "i", perm))(xs)
    np.testing.assert_array_equal(np.asarray(shifted), np.concatenate([np.zeros((1, 3)), xs[:3]]))
    shuffled = mapped(lambda x: lax.pshuffle(x, "i", [3, 2, 1, 0]))(xs)
    np.testing.assert_array_equal(np.asarray(shuffled), xs[::-1])
    broadcast = mapped(lambda x: lax.pbroadcast(x, "i", 2))(xs)
    np.testing.assert_array_equal(np.asarray(broadcast), np.broadcast_to(xs[2], xs.shape))
    with pytest.raises(ValueError, match="unique"):
        mapped(lambda x: lax.ppermute(x, "i", [(0, 1), (2, 1)]))(xs)


@pytest.mark.parametrize(
    "body",
    [
        lambda x: lax.psum(lax.sin(x), "i") * x,
        lambda x: lax.reduce_sum(lax.all_gather(x, "i") * lax.cos(x), (0,)),
        lambda x: lax.ppermute(x * x, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
        lambda x: lax.all_to_all(lax.broadcast_in_dim(x, (4, 3), (1,)), "i", 0, 1),
    ],
    ids=["psum", "all_gather", "ppermute", "all_to_all"],
)
def test_gradients_through_collectives(body):
    check_grads(mapped(body), (xs,), order=1, modes=("fwd", "rev"))
