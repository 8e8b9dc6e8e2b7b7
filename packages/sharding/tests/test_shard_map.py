"""shard_map over a 2x4 mesh of CPU devices: collectives against NumPy, specs, the
lowered program, grad and vmap, and JAX's errors (recorded from JAX 0.10.2)."""

import inspect

import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import device_put, devices, grad, jit, vmap
from lamina.sharding import (
    AxisType,
    Mesh,
    NamedSharding,
    P,
    get_abstract_mesh,
    make_mesh,
    set_mesh,
    shard_map,
    smap,
)

MESH = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"))
X = np.arange(32.0, dtype=np.float32).reshape(4, 8)


def smap_xy(f, in_specs, out_specs, **kw):
    return shard_map(f, mesh=MESH, in_specs=in_specs, out_specs=out_specs, **kw)


def blocks(x, rows, cols):
    """NumPy: x cut into a rows x cols grid of blocks."""
    return [np.hsplit(r, cols) for r in np.vsplit(x, rows)]


def f_sum(x):
    """NumPy: the sum of the column blocks of x's 4 column blocks."""
    return sum(np.hsplit(x, 4))


def test_psum_over_one_axis():
    out = smap_xy(lambda a: lax.psum(a, "y"), P("x", "y"), P("x", None))(X)
    want = np.concatenate([sum(row) for row in blocks(X, 2, 4)])
    np.testing.assert_array_equal(out, want)
    assert out.sharding == NamedSharding(MESH, P("x", None))


@pytest.mark.parametrize(
    "op, reduce", [(lax.pmax, np.maximum), (lax.pmin, np.minimum), (lax.psum, np.add)]
)
def test_reductions_over_both_axes(op, reduce):
    y = np.sin(X)
    out = smap_xy(lambda a: op(a, ("x", "y")), P("x", "y"), P())(y)
    pieces = [b for row in blocks(y, 2, 4) for b in row]
    np.testing.assert_allclose(out, reduce.reduce(pieces), rtol=1e-6)


def test_pmean():
    out = smap_xy(lambda a: lax.pmean(a, ("x", "y")), P("x", "y"), P())(X)
    np.testing.assert_array_equal(out, [[11.0, 12.0], [19.0, 20.0]])  # recorded from JAX 0.10.2


def test_all_gather_tiled():
    f = smap_xy(lambda a: lax.all_gather(a, "x", tiled=True), P("x", "y"), P(None, "y"),
                check_vma=False)  # fmt: skip
    np.testing.assert_array_equal(f(X), X)


def test_all_gather_untiled_stacks():
    f = smap_xy(lambda a: lax.all_gather(a, "y"), P(None, "y"), P(None, None, "y"),
                check_vma=False)  # fmt: skip
    out = np.asarray(f(X))
    assert out.shape == (4, 4, 8)
    np.testing.assert_array_equal(out[:, :, :2], np.stack(np.hsplit(X, 4)))


def test_ppermute_rotates_blocks():
    perm = [(i, (i + 1) % 4) for i in range(4)]
    out = smap_xy(lambda a: lax.ppermute(a, "y", perm), P("x", "y"), P("x", "y"))(X)
    np.testing.assert_array_equal(out, np.roll(X, 2, axis=1))


def test_axis_index():
    out = smap_xy(lambda a: a * 0 + lax.axis_index("y"), P("x", "y"), P("x", "y"))(X)
    np.testing.assert_array_equal(out, np.repeat(np.arange(4.0), 2)[None].repeat(4, 0))
    index_x = lambda a: lax.reshape(lax.axis_index("x"), (1,))  # noqa: E731
    ix = smap_xy(index_x, P("x"), P("x"), check_vma=False)(X)
    np.testing.assert_array_equal(ix, [0, 1])


def test_psum_scatter():
    out = smap_xy(lambda a: lax.psum_scatter(a, "y", scatter_dimension=1, tiled=True),
                  P("x", None), P("x", "y"))(X)  # fmt: skip
    np.testing.assert_array_equal(out, 4 * X)


def test_all_to_all():
    out = smap_xy(lambda a: lax.all_to_all(a, "y", 1, 0, tiled=True), P("x", None),
                  P("x", "y"))(X)  # fmt: skip
    # recorded from JAX 0.10.2: each device's rows, repeated for each of the 4 sources
    want = np.concatenate([np.tile(r, (4, 1)) for r in np.vsplit(X, 2)])
    np.testing.assert_array_equal(out, want)


def test_pytree_specs_and_replicated_input():
    f = smap_xy(lambda a, b: (a + b, lax.pmax(a, "x")), (P("x", "y"), P()),
                (P("x", "y"), P(None, "y")))  # fmt: skip
    s, m = f(X, np.float32(1))
    np.testing.assert_array_equal(s, X + 1)
    np.testing.assert_array_equal(m, X[2:])  # recorded from JAX 0.10.2


def test_under_jit_and_set_mesh():
    with set_mesh(MESH):
        f = shard_map(lambda a: lax.psum(a, "x"), in_specs=P("x"), out_specs=P())
        np.testing.assert_array_equal(jit(f)(X), X[:2] + X[2:])


def test_lowering_key_ops_match_jax():
    f = smap_xy(lambda a: lax.psum(a, "y"), P("x", "y"), P("x", None))
    text = jit(f).lower(X).as_text()
    # recorded from JAX 0.10.2 (jax_use_shardy_partitioner=False)
    for piece in [
        'stablehlo.custom_call @Sharding(%arg0) {backend_config = "", mhlo.sharding = '
        '"{devices=[2,4]<=[8]}"} : (tensor<4x8xf32>) -> tensor<4x8xf32>',
        '@SPMDFullToShardShape(%0) {backend_config = "", mhlo.sharding = "{manual}"} : '
        "(tensor<4x8xf32>) -> tensor<2x2xf32>",
        'mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"} : '
        "(tensor<2x2xf32>) -> tensor<4x2xf32>",
        "replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>, "
        "use_global_device_ids",
        "mhlo.num_partitions = 8",
    ]:
        assert piece in text, piece
    perm = smap_xy(lambda a: lax.ppermute(a, "x", [(0, 1), (1, 0)]), P("x", "y"), P("x", "y"))
    assert (
        "source_target_pairs = dense<[[0, 4], [4, 0], [1, 5], [5, 1], [2, 6], [6, 2], [3, 7], "
        "[7, 3]]>" in jit(perm).lower(X).as_text()
    )
    index = smap_xy(lambda a: lax.reshape(lax.axis_index("y"), (1,)), P("x", "y"), P("y"),
                    check_vma=False)  # fmt: skip
    text = jit(index).lower(X).as_text()
    assert "stablehlo.partition_id" in text and "stablehlo.remainder" in text


def test_grad():
    def loss(a):
        return lax.reduce_sum(smap_xy(lambda b: lax.psum(lax.sin(b), ("x", "y")), P("x", "y"),
                                      P())(a), (0, 1))  # fmt: skip

    np.testing.assert_allclose(grad(loss)(X), np.cos(X), rtol=1e-6)
    sq = lambda a: lax.reduce_sum(  # noqa: E731
        smap_xy(lambda b: lax.psum(b * b, "y"), P("x", "y"), P("x", None))(a), (0, 1)
    )
    np.testing.assert_allclose(grad(sq)(X), 2 * X)
    np.testing.assert_allclose(jit(grad(sq))(X), 2 * X)


def test_grad_of_replicated_input():
    w = np.float32(3.0)
    f = lambda w: lax.reduce_sum(smap_xy(lambda a, w: a * w, (P("x", "y"), P()),  # noqa: E731
                                         P("x", "y"))(X, w), (0, 1))  # fmt: skip
    np.testing.assert_allclose(grad(f)(w), X.sum())


def test_vmap():
    f = smap_xy(lambda b: lax.psum(b, "y"), P("x", "y"), P("x", None))
    xs = np.stack([X, 2 * X])
    out = vmap(f)(xs)
    np.testing.assert_array_equal(out, np.stack([f(X), f(2 * X)]))
    out1 = vmap(f, in_axes=1, out_axes=1)(np.moveaxis(xs, 0, 1))
    np.testing.assert_array_equal(np.moveaxis(out1, 1, 0), out)


def test_smap():
    with set_mesh(MESH):
        out = smap(lambda a: lax.psum(a, "y"), in_axes=1, out_axes=0, axis_name="y")(X)
    # recorded from JAX 0.10.2: shape (16, 2), the x-wise sums stacked once per y
    np.testing.assert_array_equal(out, np.tile(sum(np.hsplit(X, 4)), (4, 1)))


def test_explicit_axes_infer_in_specs():
    mesh = make_mesh((2, 4), ("x", "y"))  # Explicit axes
    f = shard_map(lambda a: lax.psum(a, "y"), mesh=mesh, out_specs=P("x", None))
    xs = device_put(X, NamedSharding(mesh, P("x", "y")))
    np.testing.assert_array_equal(f(xs), np.concatenate([sum(r) for r in blocks(X, 2, 4)]))
    # recorded from JAX 0.10.2: an unsharded argument is whole on each device
    np.testing.assert_array_equal(f(X), np.concatenate([4 * X, 4 * X]))
    given = shard_map(lambda a: a, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    msg = (
        r"in_specs passed to shard_map: P\('x', 'y'\) does not match the specs of the "
        r"input: P\(None, None\) for arg: float32\[4,8\]"
    )
    with pytest.raises(ValueError, match=msg):
        given(X)


# ---------------------------------------------------------------- errors (JAX 0.10.2)


def test_spec_longer_than_rank():
    f = smap_xy(lambda a: a, P("x", "y", None), P("x", "y"))
    with pytest.raises(ValueError, match=r"in_specs is P\('x', 'y', None\) which has length 3, "
                       r"but the passed args\[0\], where args\[0\] is bound to <lambda>'s "
                       r"parameter 'a', has shape float32\[4,8\], which has rank 2"):  # fmt: skip
        f(X)
    g = smap_xy(lambda a: a, P("x", "y"), P("x", "y", None))
    with pytest.raises(ValueError, match=r"out_specs is P\('x', 'y', None\) which has length 3"):
        g(X)


def test_indivisible():
    f = smap_xy(lambda a: a, P("y", "x"), P("y", "x"))
    with pytest.raises(ValueError) as e:
        f(np.zeros((2, 3), np.float32))
    msg = str(e.value)
    assert "not evenly divisible by the corresponding mesh axis sizes" in msg
    assert (
        "which maps array axis 0 (of size 2) to mesh axis 'y' (of size 4), but 4 does not "
        "evenly divide 2" in msg
    )
    assert "maps array axis 1 (of size 3) to mesh axis 'x' (of size 2)" in msg


def test_replication_claim_checked():
    f = smap_xy(lambda a: a, P("x", "y"), P("x"))
    with pytest.raises(ValueError, match=r"out_specs is P\('x',\) which implies that the "
                       r"corresponding output value is replicated across mesh axis 'y', but "
                       r"could not infer replication over any axes"):  # fmt: skip
        f(X)
    inner = jit(lambda a: lax.psum(a, "y"))
    np.testing.assert_array_equal(smap_xy(inner, P("x", "y"), P("x"))(X), f_sum(X))
    ok = smap_xy(lambda a: a, P("x", "y"), P("x"), check_vma=False)(X)
    assert ok.shape == (4, 2)


def test_unknown_axis_and_missing_mesh():
    with pytest.raises(ValueError, match=r"in_specs refers to 'z'"):
        smap_xy(lambda a: a, P("z"), P("x"))(X)
    with pytest.raises(ValueError, match=r"The context mesh cannot be empty"):
        shard_map(lambda a: a, in_specs=P("x"), out_specs=P("x"))(X)
    with pytest.raises(TypeError, match=r"in_specs argument must be a pytree of"):
        shard_map(lambda a: a, mesh=MESH, out_specs=P())(X)


def _total(f, specs):
    return lambda a: lax.reduce_sum(smap_xy(f, specs, specs)(a), (0, 1))


def test_grad_through_collectives():
    y = X / 10
    perm = [(i, (i + 1) % 4) for i in range(4)]
    shifted = _total(lambda b: lax.ppermute(lax.sin(b), "y", perm) * b, P("x", "y"))
    want = np.roll(np.sin(y), 2, axis=1) + np.cos(y) * np.roll(y, -2, axis=1)
    np.testing.assert_allclose(grad(shifted)(y), want, rtol=1e-5)
    gathered = _total(lambda b: lax.all_gather(b, "x", tiled=True) ** 2, P("x", "y"))
    np.testing.assert_allclose(grad(gathered)(y), 4 * y, rtol=1e-6)
    mean = _total(lambda b: lax.pmean(b, "x") * b, P("x", "y"))
    np.testing.assert_allclose(grad(mean)(y), np.tile(y[:2] + y[2:], (2, 1)), rtol=1e-6)


def test_decorator_form_traces_once():
    traces = []

    @shard_map(mesh=MESH, in_specs=P("x", "y"), out_specs=P("x", "y"))
    def double(a):
        traces.append(a.shape)
        return a * 2

    np.testing.assert_array_equal(double(X), 2 * X)
    np.testing.assert_array_equal(double(X + 1), 2 * X + 2)
    assert traces == [(2, 2)]


def test_grad_of_replicated_weights_through_psum():
    w = np.full((2,), 0.5, np.float32)

    def loss(w):
        f = smap_xy(lambda b, w: lax.psum(lax.tanh(b * w), "y"), (P("x", "y"), P()), P("x", None))
        out = f(X / 10, w)
        return lax.reduce_sum(out * out, (0, 1))

    # recorded from JAX 0.10.2
    np.testing.assert_allclose(grad(loss)(w), [51.8635, 53.7933], rtol=1e-5)


def test_axis_names_subset():
    y = X / 10
    f = shard_map(lambda b: lax.psum(lax.sin(b), "y"), mesh=MESH, in_specs=P(None, "y"),
                  out_specs=P(), axis_names={"y"})  # fmt: skip
    np.testing.assert_allclose(f(y), sum(np.hsplit(np.sin(y), 4)), rtol=1e-6)
    np.testing.assert_allclose(grad(lambda a: lax.reduce_sum(f(a), (0, 1)))(y), np.cos(y),
                               rtol=1e-6)  # fmt: skip
    # recorded from JAX 0.10.2: an axis left automatic is not bound inside
    g = shard_map(lambda b: lax.psum(b, "x"), mesh=MESH, in_specs=P(None, "y"),
                  out_specs=P(), axis_names={"y"})  # fmt: skip
    with pytest.raises(NameError, match="Found an unbound axis name: x"):
        g(y)


def test_grad_with_integer_inputs_and_results():
    k = np.arange(32, dtype=np.int32).reshape(4, 8)
    f = smap_xy(lambda b, k: (lax.psum(b * lax.convert_element_type(k, np.float32), "y"), k + 1),
                P("x", "y"), (P("x", None), P("x", "y")))  # fmt: skip
    g = grad(lambda a: lax.reduce_sum(f(a, k)[0], (0, 1)))(X)
    np.testing.assert_array_equal(g, k.astype(np.float32))


def test_signatures_match_jax():

    # recorded from JAX 0.10.2: inspect.signature(jax.shard_map) and (jax.smap)
    params = inspect.signature(shard_map).parameters
    assert list(params) == ["f", "out_specs", "in_specs", "mesh", "axis_names", "check_vma"]
    assert params["f"].kind is inspect.Parameter.POSITIONAL_ONLY
    assert params["check_vma"].default is True and params["mesh"].default is None
    assert list(inspect.signature(smap).parameters) == ["f", "in_axes", "out_axes", "axis_name"]


# ---------------------------------------------------------------- partially manual

AUTO = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"), (AxisType.Auto,) * 2)
R = np.arange(24.0, dtype=np.float32).reshape(8, 3)


def test_partial_auto_values_as_jax():
    # recorded from JAX 0.10.2: manual over 'x', XLA partitions the rest over 'y'
    def f(v):
        return lax.psum(v * lax.convert_element_type(lax.axis_index("x"), np.float32), "x")

    g = shard_map(f, mesh=AUTO, in_specs=P("x"), out_specs=P(), axis_names={"x"})
    np.testing.assert_array_equal(g(R), R[4:])
    np.testing.assert_array_equal(jit(g)(R), R[4:])
    swap = shard_map(lambda v: lax.ppermute(v, "x", [(0, 1), (1, 0)]), mesh=AUTO,
                     in_specs=P("x"), out_specs=P("x"), axis_names={"x"})  # fmt: skip
    np.testing.assert_array_equal(jit(swap)(R), np.concatenate([R[4:], R[:4]]))
    d = grad(lambda a: lax.reduce_sum(
        shard_map(lambda v: lax.psum(lax.reduce_sum(v * v, (0, 1)), "x"), mesh=AUTO,
                  in_specs=P("x"), out_specs=P(), axis_names={"x"})(a), ()))(R)  # fmt: skip
    np.testing.assert_array_equal(d, 2 * R)
    a, b = np.arange(32.0, dtype=np.float32).reshape(8, 4), np.arange(8.0, dtype=np.float32)
    mm = shard_map(lambda p, q: lax.psum(p @ q, "x"), mesh=AUTO, in_specs=(P(None, "x"), P("x")),
                   out_specs=P(), axis_names={"x"})  # fmt: skip
    np.testing.assert_allclose(jit(mm)(a, b.reshape(4, 2)), a @ b.reshape(4, 2))


def test_partial_auto_three_axes_and_lowering():
    mesh = Mesh(np.array(devices()).reshape(2, 2, 2), ("a", "b", "c"), (AxisType.Auto,) * 3)

    def body(v):
        return v * 2 + lax.convert_element_type(lax.axis_index("c"), np.float32)

    specs = P("c", "a")
    f = jit(shard_map(body, mesh=mesh, in_specs=specs, out_specs=specs, axis_names={"c", "a"}))
    x = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    # recorded from JAX 0.10.2
    np.testing.assert_array_equal(np.asarray(f(x)).ravel()[:12],
                                  [0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23])  # fmt: skip
    text = f.lower(x).as_text()
    # the body's values are manual over 'a' and 'c' and left to XLA over 'b', as JAX's
    # GSPMD lowering writes it
    manual = "{devices=[1,1,4,2]<=[2,2,2]T(0,2,1) last_tile_dims={manual, replicated}}"
    full_to_shard = [line for line in text.splitlines() if "@SPMDFullToShardShape" in line]
    assert len(full_to_shard) == 1 and manual in full_to_shard[0]
    assert text.count(manual) >= 3


def test_sharding_constraint_in_partially_manual_body():
    # recorded from JAX 0.10.2: a bare P (or the context mesh) may name the automatic axes
    x = np.arange(32.0, dtype=np.float32).reshape(8, 4)

    def body(v):
        return lax.with_sharding_constraint(v * 2, P(None, "y"))

    f = jit(shard_map(body, mesh=AUTO, in_specs=P("x"), out_specs=P("x"), axis_names={"x"}))
    out = f(x)
    np.testing.assert_array_equal(out, x * 2)
    assert out.sharding.spec == P("x", "y")  # XLA's layout over the automatic axis, as JAX

    def manual(v):
        return lax.with_sharding_constraint(v, P("x"))

    g = jit(shard_map(manual, mesh=AUTO, in_specs=P("x"), out_specs=P("x"), axis_names={"x"}))
    message = (
        "The spec of NamedSharding passed to with_sharding_constraint can only refer to Auto "
        "axes of the mesh. Got spec=P('x',) and mesh=AbstractMesh('x': 2, 'y': 4, "
        "axis_types=(Manual, Auto), device_kind=cpu, num_cores=None, platform=cpu). You "
        "probably meant to use `reshard` API?"
    )
    with pytest.raises(ValueError) as info:
        g(x)
    assert str(info.value) == message
    message = (
        "with_sharding_constraint requires a non-empty mesh in context if you are passing "
        "`PartitionSpec`s to shardings. You can define a context mesh via "
        "`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to shardings and then the "
        "mesh context manager is not required."
    )
    with pytest.raises(RuntimeError) as info:
        jit(lambda v: lax.with_sharding_constraint(v, P("x")))(x)
    assert str(info.value) == message


def test_body_sees_the_manual_abstract_mesh():

    seen = []

    def f(v):
        seen.append(repr(get_abstract_mesh()))
        return v

    shard_map(f, mesh=AUTO, in_specs=P("x"), out_specs=P("x"), axis_names={"x"})(R)
    # recorded from JAX 0.10.2
    assert seen == [
        "AbstractMesh('x': 2, 'y': 4, axis_types=(Manual, Auto), device_kind=cpu, "
        "num_cores=None, platform=cpu)"
    ]


def test_axis_names_and_context_mesh_errors_as_jax():
    # recorded from JAX 0.10.2
    with pytest.raises(TypeError) as info:
        shard_map(lambda v: v, mesh=AUTO, in_specs=P("x"), out_specs=P("x"), axis_names=["x"])(R)
    assert str(info.value) == (
        "`axis_names` argument of shard_map should be of type `frozenset` or `set`. Got "
        "type: <class 'list'>"
    )
    with pytest.raises(ValueError, match=r"^jax.shard_map requires axis_names=frozenset\(\{'q'\}\) "
                       r"to be a subset of mesh.axis_names=frozenset\("):  # fmt: skip
        shard_map(lambda v: v, mesh=AUTO, in_specs=P("x"), out_specs=P("x"), axis_names={"q"})(R)
    other = Mesh(np.array(devices()), ("z",), (AxisType.Auto,))
    with set_mesh(AUTO), pytest.raises(ValueError) as info:
        shard_map(lambda v: v + 1, mesh=other, in_specs=P("z"), out_specs=P("z"))(R)
    assert str(info.value) == (
        "The context mesh AbstractMesh('x': 2, 'y': 4, axis_types=(Auto, Auto), "
        "device_kind=cpu, num_cores=None, platform=cpu) should match the mesh passed to "
        "shard_map Mesh('z': 8, axis_types=(Auto,))"
    )
    with set_mesh(AUTO):
        out = shard_map(lambda v: v + 1, mesh=AUTO, in_specs=P("x"), out_specs=P("x"))(R)
    np.testing.assert_array_equal(out, R + 1)


def test_out_specs_errors_name_each_entry_as_jax():
    # recorded from JAX 0.10.2 (under jit)
    def myfun(v):
        return v, v * 2, v

    f = jit(shard_map(myfun, mesh=AUTO, in_specs=P("x"), out_specs=(P("x"), P(), P("y"))))
    with pytest.raises(ValueError) as info:
        f(R)
    assert str(info.value) == (
        "shard_map applied to the function 'myfun' was given out_specs which require "
        "replication which can't be statically inferred given the mesh:\n\nThe mesh given has "
        "shape (2, 4) with corresponding axis names ('x', 'y').\n\n* out_specs[1] is P() which "
        "implies that the corresponding output value is only varying across mesh axes {} and "
        "not {x}, but it was inferred to be possibly varying over {x}\n\n* out_specs[2] is "
        "P('y',) which implies that the corresponding output value is replicated across mesh "
        "axis 'x', but could not infer replication over any axes\n\nCheck if these output "
        "values are meant to be replicated over those mesh axes. If not, consider revising the "
        "corresponding out_specs entries. If so, consider disabling the check by passing the "
        "check_vma=False argument to `jax.shard_map`."
    )
    g = shard_map(myfun, mesh=AUTO, in_specs=P("x"), out_specs=(P("x"), P(), P("y")),
                  axis_names={"x"})  # fmt: skip
    with pytest.raises(ValueError) as info:
        g(R)
    assert str(info.value) == (
        "shard_map out_specs argument must refer to an axis marked as manual "
        "(frozenset({'x'})), but:\n\n  out_specs[2] refers to 'y'\n\nCheck the out_specs "
        "values passed to shard_map."
    )


G = [[0, 1], [2, 3]]
XY = P(("x", "y"))


@pytest.mark.parametrize(
    "op, want",
    [  # recorded from JAX 0.10.2
        (lambda v: lax.psum(v, "y", axis_index_groups=G), [1, 1, 5, 5, 9, 9, 13, 13]),
        (lambda v: lax.pmax(v, "y", axis_index_groups=G), [1, 1, 3, 3, 5, 5, 7, 7]),
        (lambda v: lax.pmin(v, "y", axis_index_groups=G), [0, 0, 2, 2, 4, 4, 6, 6]),
        (
            lambda v: lax.pmean(v, "y", axis_index_groups=G),
            [0.5, 0.5, 2.5, 2.5, 4.5, 4.5, 6.5, 6.5],
        ),
        (
            lambda v: lax.psum(v, ("x", "y"), axis_index_groups=[[0, 1, 2, 3], [4, 5, 6, 7]]),
            [6, 6, 6, 6, 22, 22, 22, 22],
        ),
    ],
)
def test_axis_index_groups_reductions(op, want):
    x = np.arange(8.0, dtype=np.float32)
    out = shard_map(op, mesh=AUTO, in_specs=XY, out_specs=XY, check_vma=False)(x)
    np.testing.assert_array_equal(out, want)


def test_axis_index_groups_exchanges():
    # recorded from JAX 0.10.2
    x = np.arange(8.0, dtype=np.float32)
    odd = [[0, 2], [1, 3]]

    def run(f, arg):
        return np.asarray(shard_map(f, mesh=AUTO, in_specs=XY, out_specs=XY, check_vma=False)(arg))

    gathered = run(lambda v: lax.all_gather(v, "y", axis_index_groups=odd), x)
    np.testing.assert_array_equal(
        gathered.ravel(), [0, 2, 1, 3, 0, 2, 1, 3, 4, 6, 5, 7, 4, 6, 5, 7]
    )
    x16 = np.arange(16.0, dtype=np.float32)
    scattered = run(lambda v: lax.psum_scatter(v, "y", axis_index_groups=odd, tiled=True), x16)
    np.testing.assert_array_equal(scattered, [4, 8, 6, 10, 20, 24, 22, 26])
    exchanged = run(lambda v: lax.all_to_all(v, "y", 0, 0, axis_index_groups=odd, tiled=True), x16)
    np.testing.assert_array_equal(exchanged, [0, 4, 2, 6, 1, 5, 3, 7, 8, 12, 10, 14, 9, 13, 11, 15])
    with pytest.raises(NotImplementedError):  # JAX 0.10.2 under check_vma: no message
        shard_map(lambda v: lax.psum(v, "y", axis_index_groups=G), mesh=AUTO, in_specs=XY,
                  out_specs=XY)(x)  # fmt: skip
    with pytest.raises(
        ValueError, match=r"^axis_index_groups must cover all indices exactly once$"
    ):
        run(lambda v: lax.psum(v, "y", axis_index_groups=[[0, 1], [1, 2]]), x)


def test_all_to_all_untiled_shapes_as_jax():
    # recorded from JAX 0.10.2: per device (8, 2) -> (2, 8)
    x = np.arange(8 * 8 * 2.0, dtype=np.float32).reshape(8, 8, 2)
    one = Mesh(np.array(devices()), ("i",), (AxisType.Auto,))

    def one_block(v):
        return lax.reshape(lax.all_to_all(lax.reshape(v, (8, 2)), "i", 0, 1), (1, 2, 8))

    f = shard_map(one_block, mesh=one, in_specs=P("i"), out_specs=P("i"))
    out = f(x)
    assert out.shape == (8, 2, 8)
    np.testing.assert_array_equal(np.asarray(out)[1].ravel()[:8], [2, 18, 34, 50, 66, 82, 98, 114])
    y = np.arange(128.0, dtype=np.float32).reshape(64, 2)
    flat = shard_map(lambda v: lax.all_to_all(v, "i", 0, 1), mesh=one, in_specs=P("i"),
                     out_specs=P("i"))(y)  # fmt: skip
    assert flat.shape == (16, 8)
    np.testing.assert_array_equal(np.asarray(flat)[1], [1, 17, 33, 49, 65, 81, 97, 113])


def test_nested_shard_map_over_the_remaining_axes():
    # recorded from JAX 0.10.2: the inner shard_map takes the body's mesh (x manual)
    def inner(w):
        y = lax.convert_element_type(lax.axis_index("y"), np.float32)
        return lax.psum(w, "y") + y

    def outer(v):
        u = shard_map(inner, in_specs=P(None, "y"), out_specs=P(None, "y"), axis_names={"y"})(v)
        return u * lax.convert_element_type(lax.axis_index("x") + 1, np.float32)

    f = shard_map(outer, mesh=AUTO, in_specs=P("x"), out_specs=P("x"), axis_names={"x"})
    x = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    rows = x.sum(1, keepdims=True) + np.arange(4, dtype=np.float32)
    want = rows * np.repeat([1.0, 2.0], 4)[:, None]
    np.testing.assert_array_equal(f(x), want)
    np.testing.assert_array_equal(jit(f)(x), want)
    g = grad(lambda a: lax.reduce_sum(f(a), (0, 1)))(x)
    np.testing.assert_array_equal(g, np.repeat([4.0, 8.0], 4)[:, None] * np.ones((8, 4)))
