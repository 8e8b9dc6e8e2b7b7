"""pmap over 8 CPU devices: the collectives against NumPy's per-device computation, and
JAX 0.10.2's behaviour and errors (recorded from JAX 0.10.2 with 8 CPU devices)."""

import inspect

import numpy as np
import pytest

from lamina.interpreters import config

# The backend must see 8 CPU devices; this runs before it starts (at collection).
config.update("jax_num_cpu_devices", 8)

from lamina import lax  # noqa: E402
from lamina.interpreters import devices, grad, jit, vmap  # noqa: E402
from lamina.sharding import AxisType, IndivisibleError, Mesh, NamedSharding, P, set_mesh  # noqa: E402
from lamina.sharding.pmap import pmap  # noqa: E402

N = 8
X = np.arange(16.0, dtype=np.float32).reshape(N, 2)
Y = np.arange(64.0, dtype=np.float32).reshape(N, N)


def per_device(fn, *xs):
    """NumPy: ``fn(i, slices_i...)`` for each device, stacked."""
    return np.stack([fn(i, *(x[i] for x in xs)) for i in range(N)])


def total(x):
    return lax.reduce_sum(x, tuple(range(len(x.shape))))


def test_eight_devices():
    assert len(devices()) == N


@pytest.mark.parametrize(
    "collective, reference",
    [
        (lax.psum, lambda i, v: X.sum(0)),
        (lax.pmean, lambda i, v: X.mean(0)),
        (lax.pmax, lambda i, v: X.max(0)),
        (lax.pmin, lambda i, v: X.min(0)),
    ],
)
def test_reductions(collective, reference):
    out = pmap(lambda v: collective(v, "i"), "i")(X)
    np.testing.assert_allclose(np.asarray(out), per_device(reference, X))


def test_reductions_of_integers_and_booleans():
    ints = np.arange(N)[::-1].copy()
    np.testing.assert_array_equal(np.asarray(pmap(lambda v: lax.pmax(v, "i"), "i")(ints)), [7] * N)
    # psum counts booleans, as int32 (recorded from JAX 0.10.2: [2] * 8).
    out = pmap(lambda v: lax.psum(v, "i"), "i")(np.arange(N) > 5)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), [2] * N)


def test_axis_index():
    out = pmap(lambda v: v + lax.psum(lax.axis_index("i"), "i") * 0 + lax.axis_index("i"), "i")
    np.testing.assert_array_equal(np.asarray(out(np.zeros(N, np.int32))), np.arange(N))


def test_all_gather():
    out = pmap(lambda v: lax.all_gather(v, "i"), "i")(X[:, 0])
    np.testing.assert_array_equal(np.asarray(out), per_device(lambda i, v: X[:, 0], X))
    tiled = pmap(lambda v: lax.all_gather(v, "i", tiled=True), "i")(X)
    np.testing.assert_array_equal(np.asarray(tiled), per_device(lambda i, v: X.reshape(-1), X))
    axis1 = pmap(lambda v: lax.all_gather(v, "i", axis=1), "i")(X)
    np.testing.assert_array_equal(np.asarray(axis1), per_device(lambda i, v: X.T, X))


def test_all_to_all():
    out = pmap(lambda v: lax.all_to_all(v, "i", 0, 0), "i")(Y)
    np.testing.assert_array_equal(np.asarray(out), Y.T)
    tiled = pmap(lambda v: lax.all_to_all(lax.reshape(v, (N, 1)), "i", 0, 1, tiled=True), "i")(Y)
    np.testing.assert_array_equal(np.asarray(tiled), Y.T[:, None, :])


def test_ppermute():
    ring = [(i, (i + 1) % N) for i in range(N)]
    out = pmap(lambda v: lax.ppermute(v, "i", ring), "i")(X)
    np.testing.assert_array_equal(np.asarray(out), np.roll(X, 1, axis=0))
    partial = pmap(lambda v: lax.ppermute(v, "i", [(0, 3), (5, 1)]), "i")(X)
    expected = np.zeros_like(X)
    expected[3], expected[1] = X[0], X[5]  # devices that receive nothing get zeros
    np.testing.assert_array_equal(np.asarray(partial), expected)


def test_psum_scatter():
    out = pmap(lambda v: lax.psum_scatter(v, "i"), "i")(Y)
    np.testing.assert_array_equal(np.asarray(out), Y.sum(0))
    tiled = pmap(lambda v: lax.psum_scatter(v, "i", tiled=True), "i")(Y)
    np.testing.assert_array_equal(np.asarray(tiled), Y.sum(0)[:, None])


def test_grad_inside_pmap():
    out = pmap(lambda v: grad(lambda w: total(lax.psum(w * w, "i")))(v), "i")(X)
    # d/dw of sum over devices of w_d^2, transposed through psum: 2 * w * N
    np.testing.assert_allclose(np.asarray(out), 2 * X * N)
    mean = pmap(grad(lambda w: lax.pmean(total(w * w * w), "i")), "i")(X)
    np.testing.assert_allclose(np.asarray(mean), 3 * X**2, rtol=1e-6)


def test_vmap_inside_pmap():
    out = pmap(lambda v: vmap(lambda e: lax.psum(e, "i") * e)(v), "i")(X)
    np.testing.assert_allclose(np.asarray(out), X.sum(0) * X)
    both = pmap(lambda v: vmap(lambda e: lax.psum(e, ("i", "j")), axis_name="j")(v), "i")(X)
    np.testing.assert_allclose(np.asarray(both), np.full_like(X, X.sum()))


def test_jit_inside_and_outside():
    inside = pmap(jit(lambda v: lax.psum(v, "i") + 1), "i")(X)
    np.testing.assert_allclose(np.asarray(inside), per_device(lambda i, v: X.sum(0) + 1, X))
    outside = jit(pmap(lambda v: lax.psum(v, "i") + 1, "i"))(X)
    np.testing.assert_allclose(np.asarray(outside), np.asarray(inside))
    g = grad(lambda v: total(pmap(lambda w: lax.psum(w * w, "i"), "i")(v)))(X)
    np.testing.assert_allclose(np.asarray(g), 2 * X * N)


def test_in_axes_out_axes_and_static():
    np.testing.assert_array_equal(np.asarray(pmap(lambda v: v * 2, in_axes=1)(X.T)), X * 2)
    bias = np.float32([10, 20])
    out = pmap(lambda a, b: a + b, in_axes=(0, None))(X, bias)
    np.testing.assert_array_equal(np.asarray(out), X + bias)
    np.testing.assert_array_equal(np.asarray(pmap(lambda v: v * 2, out_axes=1)(X)), X.T * 2)
    total = pmap(lambda v: lax.psum(v, "i"), "i", out_axes=None)(X)
    assert total.shape == (2,)
    np.testing.assert_array_equal(np.asarray(total), X.sum(0))
    scaled = pmap(lambda v, k: v * k, static_broadcasted_argnums=1)(X, 3.0)
    np.testing.assert_array_equal(np.asarray(scaled), X * 3)
    const = pmap(lambda v: 1)(X)  # recorded from JAX 0.10.2: int32, weakly typed
    assert const.dtype == np.int32 and const.weak_type
    np.testing.assert_array_equal(np.asarray(const), [1] * N)
    kw = pmap(lambda a, b: a + b)(X, b=X)
    np.testing.assert_array_equal(np.asarray(kw), X * 2)
    pair = pmap(lambda v: (v, {"m": lax.pmax(v, "i")}), "i")(X)
    np.testing.assert_array_equal(np.asarray(pair[1]["m"]), per_device(lambda i, v: X.max(0), X))


def test_output_sharding():
    # recorded from JAX 0.10.2: NamedSharding over a 1-D mesh of the axis name
    out = pmap(lambda v: v, "i")(X)
    mesh = Mesh(np.array(devices()), ("i",))
    assert out.sharding == NamedSharding(mesh, P("i"))
    assert repr(out.sharding) == (
        "NamedSharding(mesh=Mesh('i': 8, axis_types=(Auto,)), spec=P('i',), memory_kind=device)"
    )
    assert pmap(lambda v: v, "i", out_axes=1)(X).sharding == NamedSharding(mesh, P(None, "i"))
    total = pmap(lambda v: lax.psum(v, "i"), "i", out_axes=None)(X)
    assert total.sharding == NamedSharding(mesh, P())
    anonymous = pmap(lambda v: v)(X[:4]).sharding
    assert anonymous.mesh.axis_names == ("_internal_pmap_axis_name",)
    assert anonymous.mesh.shape["_internal_pmap_axis_name"] == 4


def test_output_layout():
    out = pmap(lambda v: v + 1)(X)
    assert out.shape == (N, 2)
    shards = sorted(out.addressable_shards, key=lambda s: s.device.id)
    assert [s.device for s in shards] == list(devices())
    assert shards[3].index == (slice(3, 4), slice(None))
    np.testing.assert_array_equal(np.asarray(shards[3].data), X[3:4] + 1)
    # Fewer rows than devices use the first ones; devices= picks them (JAX 0.10.2: 4..7).
    four = pmap(lambda v: v, devices=devices()[4:])(X[:4])
    assert sorted(d.id for d in four.sharding.device_set) == [4, 5, 6, 7]
    np.testing.assert_array_equal(np.asarray(four), X[:4])
    # An output fed back in is used where it lies.
    np.testing.assert_array_equal(np.asarray(pmap(lambda v: v * 2)(out)), (X + 1) * 2)


def test_lowers_to_cross_replica_collectives():
    f = pmap(lambda v: lax.ppermute(lax.psum(v, "i"), "i", [(0, 1)]) + lax.axis_index("i"), "i")
    text = f.lower(X).as_text()
    assert "mhlo.num_replicas = 8" in text
    assert "stablehlo.all_reduce" in text
    assert "replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]>" in text
    assert "stablehlo.collective_permute" in text
    assert "stablehlo.replica_id" in text
    assert "tensor<1x2xf32>" in text  # each device's slice


# ---------------------------------------------------------------- errors


def test_errors():
    with pytest.raises(ValueError, match="pmap requires at least one argument with a mapped"):
        pmap(lambda v: v, in_axes=None)(X)
    with pytest.raises(
        ValueError, match="Specified axis_size 4 doesn't match received axis_size 8"
    ):
        pmap(lambda v: v, axis_size=4)(X)
    with pytest.raises(ValueError, match="inconsistent sizes"):
        pmap(lambda a, b: a + b)(X[:4], X)
    with pytest.raises(ValueError, match="requires 16 logical devices, but only 8"):
        pmap(lambda v: v)(np.zeros((16, 2)))


def test_indivisible_errors():
    # recorded from JAX 0.10.2
    with pytest.raises(IndivisibleError) as info:
        pmap(lambda a, b: a + b)(X, X[:4])
    assert str(info.value) == (
        "Sharding NamedSharding(mesh=Mesh('_internal_pmap_axis_name': 8, axis_types=(Auto,)), "
        "spec=P('_internal_pmap_axis_name',), memory_kind=device) implies that array axis 0 "
        "is partitioned 8 times, but the dimension size is 4 (full shape: (4, 2), "
        "per-dimension tiling factors: [8, 1] should evenly divide the shape)"
    )
    with pytest.raises(IndivisibleError) as info:
        pmap(lambda v: v, "i")(np.zeros((9, 2)))
    assert str(info.value).startswith(
        "Sharding NamedSharding(mesh=Mesh('i': 8, axis_types=(Auto,)), spec=P('i',), "
        "memory_kind=device) implies that array axis 0 is partitioned 8 times, but the "
        "dimension size is 9 (full shape: (9, 2)"
    )
    with pytest.raises(IndivisibleError, match=r"spec=P\(None, 'i'\).*partitioned 4 times"):
        pmap(lambda a, b: a, "i", in_axes=(0, 1))(np.zeros((4, 2)), np.zeros((8, 3)))


def test_errors_of_bad_input():
    with pytest.raises(IndexError):  # JAX 0.10.2: IndexError
        pmap(lambda v: v)(np.float32(1))
    with pytest.raises(IndexError):
        pmap(lambda v: v, in_axes=2)(X)
    with pytest.raises(TypeError, match="Expected a callable value, got 3"):
        pmap(3)
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        pmap(lambda v, k: v, static_broadcasted_argnums=1)(X, np.ones(2))


def test_in_axes_prefix_error():
    # recorded from JAX 0.10.2
    with pytest.raises(ValueError) as info:
        pmap(lambda a, b: a, in_axes=(0,))(X, X)
    message = str(info.value)
    assert message.startswith(
        "pytree structure error: different lengths of tuple at key path\n    pmap in_axes[0]\n"
    )
    assert "must be a tree prefix of that tuple. But it was not a prefix." in message


def test_unbound_axis_name():
    # recorded from JAX 0.10.2
    with pytest.raises(
        NameError, match=r"Found an unbound axis name: j\. To fix this, please call psum"
    ):
        pmap(lambda v: lax.psum(v, "j"), "i")(X)
    with pytest.raises(NameError, match="please call psum"):
        pmap(lambda v: lax.pmax(v, "j"), "i")(X)


def test_axis_index_groups():
    # recorded from JAX 0.10.2
    halves, evens = [[0, 1, 2, 3], [4, 5, 6, 7]], [[0, 2, 4, 6], [1, 3, 5, 7]]
    out = pmap(lambda v: lax.psum(v, "i", axis_index_groups=halves), "i")(X)
    np.testing.assert_array_equal(np.asarray(out), [[12, 16]] * 4 + [[44, 48]] * 4)
    mean = pmap(lambda v: lax.pmean(v, "i", axis_index_groups=evens), "i")(X)
    np.testing.assert_array_equal(np.asarray(mean), [[6, 7], [8, 9]] * 4)
    most = pmap(lambda v: lax.pmax(v, "i", axis_index_groups=evens), "i")(X)
    np.testing.assert_array_equal(np.asarray(most), [[12, 13], [14, 15]] * 4)
    gathered = pmap(lambda v: lax.all_gather(v, "i", axis_index_groups=evens), "i")(X)
    np.testing.assert_array_equal(np.asarray(gathered), [X[0::2], X[1::2]] * 4)
    z = np.arange(32.0, dtype=np.float32).reshape(N, 4)
    scattered = pmap(lambda v: lax.psum_scatter(v, "i", axis_index_groups=evens), "i")(z)
    np.testing.assert_array_equal(np.asarray(scattered), [48, 64, 52, 68, 56, 72, 60, 76])
    exchanged = pmap(lambda v: lax.all_to_all(v, "i", 0, 0, axis_index_groups=evens), "i")(z)
    expected = [z[k % 2 :: 2, k // 2] for k in range(N)]
    np.testing.assert_array_equal(np.asarray(exchanged), expected)
    with pytest.raises(ValueError, match="axis_index_groups must be equal-sized groups"):
        pmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [2, 3]]), "i")(X)


def test_nested_pmap_raises_as_jax():
    # recorded from JAX 0.10.2: the inner pmap's mesh is not the context mesh
    x = X.reshape(4, 2, 2)
    f = pmap(pmap(lambda v: lax.psum(v, "j") + lax.psum(v, "i"), "j"), "i")
    message = (
        "The context mesh AbstractMesh('i': 4, axis_types=(Manual,), device_kind=cpu, "
        "num_cores=None, platform=cpu) should match the mesh passed to shard_map "
        "Mesh('j': 2, axis_types=(Auto,))"
    )
    with pytest.raises(ValueError) as info:
        f(x)
    assert str(info.value) == message


def test_collectives_in_control_flow_and_other_dtypes():
    # recorded from JAX 0.10.2
    def body(v):
        first = lax.index_in_dim(v, 0, keepdims=False)
        return lax.scan(lambda c, e: (lax.psum(c + e, "i"), c), first, v)[0]

    np.testing.assert_array_equal(np.asarray(pmap(body, "i")(X)), [960.0] * N)

    def branch(v):
        return lax.cond(
            lax.axis_index("i") > 3,
            lambda a: lax.psum(a, "i"),
            lambda a: lax.psum(a * 0, "i"),
            v,
        )

    np.testing.assert_array_equal(np.asarray(pmap(branch, "i")(X)), [[44.0, 48.0]] * N)
    half = pmap(lambda v: lax.psum(v, "i"), "i")(X.astype(np.float16))
    assert half.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(half), [X.sum(0)] * N)
    z = (X + 1j * X).astype(np.complex64)
    np.testing.assert_array_equal(
        np.asarray(pmap(lambda v: lax.psum(v, "i"), "i")(z)), [z.sum(0)] * N
    )
    small = pmap(lambda v: lax.pmin(v, "i"), "i")(np.arange(N, dtype=np.int8))
    assert small.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(small), [0] * N)
    sized = pmap(lambda v: v * lax.axis_size("i") + lax.psum(1, "i"), "i")(X)
    np.testing.assert_array_equal(np.asarray(sized), X * N + N)


def test_signature():
    # recorded from JAX 0.10.2 (it has no global_arg_shapes)
    params = inspect.signature(pmap).parameters
    assert list(params) == [
        "fun",
        "axis_name",
        "in_axes",
        "out_axes",
        "static_broadcasted_argnums",
        "devices",
        "backend",
        "axis_size",
        "donate_argnums",
    ]
    defaults = {k: p.default for k, p in params.items() if p.default is not p.empty}
    assert defaults == {
        "axis_name": None,
        "in_axes": 0,
        "out_axes": 0,
        "static_broadcasted_argnums": (),
        "devices": None,
        "backend": None,
        "axis_size": None,
        "donate_argnums": (),
    }
    assert params["in_axes"].kind is inspect.Parameter.KEYWORD_ONLY
    f = pmap(lambda v: v)
    assert f.__name__ == "<lambda>"


def _spec_of(a):
    return a.sharding.spec if isinstance(a.sharding, NamedSharding) else None


def test_pmap_inside_transformations_as_jit_of_shard_map():
    # recorded from JAX 0.10.2: values, and results laid out over the pmap axis
    f = pmap(lambda v: v * lax.psum(v, "i"), axis_name="i")
    out = jit(f)(X)
    np.testing.assert_allclose(np.asarray(out), X * X.sum(0))
    assert _spec_of(out) == P("i")
    g = grad(lambda v: total(f(v)))(X)
    np.testing.assert_allclose(np.asarray(g)[:3].ravel(), [112, 128, 112, 128, 112, 128])
    assert isinstance(g.sharding, NamedSharding)
    stacked = np.stack([X, X + 1])
    both = vmap(f)(stacked)
    assert both.shape == (2, N, 2) and isinstance(both.sharding, NamedSharding)
    np.testing.assert_allclose(np.asarray(both)[1], (X + 1) * (X + 1).sum(0))
    wide = np.arange(24.0, dtype=np.float32).reshape(N, 3)
    across = vmap(f, in_axes=1)(wide)
    np.testing.assert_allclose(np.asarray(across), (wide * wide.sum(0)).T)
    inner = pmap(vmap(lambda v: v * lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")(X)
    np.testing.assert_allclose(np.asarray(inner), X * X.sum())


def test_all_to_all_shapes_as_jax():
    # recorded from JAX 0.10.2: untiled, the split axis leaves and the sources stack at
    # concat_axis of the result (per device (8, 2) -> (2, 8))
    z = np.arange(8 * 8 * 2.0, dtype=np.float32).reshape(N, N, 2)
    out = pmap(lambda v: lax.all_to_all(v, "i", 0, 1), axis_name="i")(z)
    assert out.shape == (N, 2, N)
    np.testing.assert_array_equal(np.asarray(out)[1, 0], z[:, 1, 0])
    np.testing.assert_array_equal(np.asarray(out), np.transpose(z, (1, 2, 0)))
    same = jit(pmap(lambda v: lax.all_to_all(v, "i", 0, 1), axis_name="i"))(z)
    np.testing.assert_array_equal(np.asarray(same), np.asarray(out))
    tiled = pmap(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True), axis_name="i")(z)
    assert tiled.shape == (N, 1, 16)
    np.testing.assert_array_equal(np.asarray(tiled)[0, 0, :4], [0, 1, 16, 17])
    w = np.arange(8 * 2 * 8.0, dtype=np.float32).reshape(N, 2, N)
    back = pmap(lambda v: lax.all_to_all(v, "i", 1, 0), axis_name="i")(w)
    assert back.shape == (N, N, 2)
    np.testing.assert_array_equal(np.asarray(back), np.transpose(w, (2, 0, 1)))
    message = (
        "all_to_all requires the size of the mapped axis axis_name to equal "
        "x.shape[split_axis], but they are 8 and 2 respectively."
    )
    with pytest.raises(ValueError) as info:
        pmap(lambda v: lax.all_to_all(v, "i", 1, 0), axis_name="i")(z)
    assert str(info.value) == message


def test_rank_too_small_errors_as_jax():
    # recorded from JAX 0.10.2
    sharding = (
        "NamedSharding(mesh=Mesh('_internal_pmap_axis_name': 8, axis_types=(Auto,)), "
        "spec=P('_internal_pmap_axis_name',), memory_kind=device)"
    )
    message = (
        f"One of pjit arguments with pytree key path flat_args[1] is incompatible with its "
        f"sharding annotation {sharding}: Sharding {sharding} is only valid for values of "
        "rank at least 1, but was applied to a value of rank 0. For scalars the "
        "PartitionSpec should be P()"
    )
    with pytest.raises(ValueError) as info:
        pmap(lambda a, m, b: a * m + b, axis_size=N)(X, 100, X)
    assert str(info.value) == message
    with pytest.raises(IndexError, match="tuple index out of range"):
        pmap(lambda v: v)(np.float32(1))
    with pytest.raises(IndexError, match="tuple index out of range"):
        pmap(lambda v: v, in_axes=1)(np.ones(N, np.float32))
    with pytest.raises(ValueError, match="pmap requires at least one argument with a mapped"):
        pmap(lambda v: v)(3.0)
    out = pmap(lambda a, b: a * b, in_axes=(0, None))(X, 3.0)
    np.testing.assert_array_equal(np.asarray(out), X * 3)


def test_context_mesh_must_match_as_jax():
    # recorded from JAX 0.10.2: pmap is a shard_map over its own mesh

    mesh = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"), (AxisType.Auto,) * 2)
    message = (
        "The context mesh AbstractMesh('x': 2, 'y': 4, axis_types=(Auto, Auto), "
        "device_kind=cpu, num_cores=None, platform=cpu) should match the mesh passed to "
        "shard_map Mesh('_internal_pmap_axis_name': 8, axis_types=(Auto,))"
    )
    with set_mesh(mesh), pytest.raises(ValueError) as info:
        pmap(lambda v: v + 1)(X)
    assert str(info.value) == message


def test_axis_index_groups_under_jit_of_pmap():
    # recorded from JAX 0.10.2
    groups = [[0, 3], [1, 2]]
    x = np.arange(4.0, dtype=np.float32)
    out = jit(pmap(lambda v: lax.psum(v, "i", axis_index_groups=groups), axis_name="i"))(x)
    np.testing.assert_array_equal(np.asarray(out), [3, 3, 3, 3])
    most = pmap(lambda v: lax.pmax(v, "i", axis_index_groups=groups), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(most), [3, 2, 2, 3])
    cover = r"^axis_index_groups must cover all indices exactly once$"
    with pytest.raises(ValueError, match=cover):
        pmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [1, 2]]), axis_name="i")(x)
    message = "axis_index_groups not supported in vmap collectives. Please open a feature request!"
    with pytest.raises(NotImplementedError) as info:
        vmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1]]), axis_name="i")(x[:2])
    assert str(info.value) == message
