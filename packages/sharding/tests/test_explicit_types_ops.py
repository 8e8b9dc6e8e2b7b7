"""Sharding-in-types rules of the shape, slicing, indexing, windowed, sorting, FFT and
convolution primitives, ``out_sharding=`` of lax's creation functions and typed
cotangents, over an Explicit (2, 4) mesh of 8 CPU devices. Types, layouts and errors
recorded from JAX 0.10.2; values checked against NumPy."""

import re

import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import device_put, grad, jit, make_jaxpr, typeof
from lamina.ir import ShardingTypeError
from lamina.sharding import NamedSharding, set_mesh
from lamina.sharding import PartitionSpec as P

GD, SD = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers
COLS = GD(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,))
ROWS = GD(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
IX = np.array([[3], [0], [5]], np.int32)


@pytest.fixture(scope="module")
def ops(mesh):
    def put(x, *spec):
        return device_put(np.asarray(x), NamedSharding(mesh, P(*spec)))

    return {
        "a": put(np.arange(32.0, dtype=np.float32).reshape(8, 4), "x"),
        "b": put(np.arange(32.0, dtype=np.float32).reshape(8, 4), None, "y"),
        "c": put(np.arange(128.0, dtype=np.float32).reshape(8, 16), "x"),
        "w": put(np.arange(512.0, dtype=np.float32).reshape(16, 32) / 100, None, "y"),
        "labels": put(np.arange(8, dtype=np.int32).reshape(8, 1) % 16, "x"),
        "img": put(np.ones((8, 3, 6, 6), np.float32), "x"),
        "i16": put(np.ones((8, 4, 2), np.int16), "x"),
    }


def out_types(f, *args):
    return [str(a) for a in make_jaxpr(f)(*args).out_avals]


# (function, operands, result types): recorded from JAX 0.10.2
TYPES = [
    (lambda a: lax.pad(a, 0.0, [(1, 1, 0), (0, 0, 0)]), "a", ["float32[10@x,4]"]),
    (lambda a: lax.split(a, (4, 4), 0), "a", ["float32[4@x,4]", "float32[4@x,4]"]),
    (lambda a: lax.squeeze(lax.reshape(a, (8, 1, 4)), (1,)), "a", ["float32[8@x,4]"]),
    (lambda a: lax.rev(a, (0,)), "a", ["float32[8@x,4]"]),
    (lambda a: lax.argmax(a, 1, np.int32), "a", ["int32[8@x]"]),
    (lambda a: lax.argmax(a, 0, np.int32), "a", ["int32[4]"]),
    (lambda a: lax.clamp(0.0, a, 1.0), "a", ["float32[8@x,4]"]),
    (lambda a: lax.bitcast_convert_type(a, np.int16), "a", ["int16[8@x,4,2]"]),
    (lambda v: lax.bitcast_convert_type(v, np.float32), "i16", ["float32[8@x,4]"]),
    (lambda a: lax.cumsum(a, 1), "a", ["float32[8@x,4]"]),
    (lambda a: lax.dynamic_slice(a, (0, 1), (4, 2)), "a", ["float32[4@x,2]"]),
    (lambda a: lax.dynamic_update_slice(a, a, (0, 0)), "a", ["float32[8@x,4]"]),
    (lambda a: lax.top_k(a, 2), "a", ["float32[8@x,2]", "int32[8@x,2]"]),
    (lambda b: lax.sort(b, dimension=0), "b", ["float32[8,4@y]"]),
    (
        lambda a: lax.reduce_window(a, 0.0, lax.add, (2, 1), (2, 1), "VALID"),
        "a",
        ["float32[4@x,4]"],
    ),
    (
        lambda a: lax.reduce_window(a, -np.inf, lax.max, (1, 2), (1, 2), "VALID"),
        "a",
        ["float32[8@x,2]"],
    ),
    (lambda a: lax.reduce(a, 0.0, lax.add, (1,)), "a", ["float32[8@x]"]),
    (lambda a: lax.concatenate([a, np.ones((8, 4), np.float32)], 0), "a", ["float32[16@x,4]"]),
    (lambda a: lax.concatenate([a, a], 1), "a", ["float32[8@x,8]"]),
    (
        lambda b: lax.fft(lax.convert_element_type(b, np.complex64), "FFT", (4,)),
        "b",
        ["complex64[8,4@y]"],
    ),
    (lambda c: lax.gather(c, IX, COLS, (8, 1)), "c", ["float32[8@x,3]"]),
    (lambda w: lax.gather(w, IX, ROWS, (1, 32)), "w", ["float32[3,32@y]"]),
    (
        lambda img: lax.conv_general_dilated(
            img, np.ones((2, 3, 3, 3), np.float32), (1, 1), "SAME"
        ),
        "img",
        ["float32[8@x,2,6,6]"],
    ),
]


@pytest.mark.parametrize("case", range(len(TYPES)))
def test_result_types(ops, case):
    f, name, expected = TYPES[case]
    assert out_types(f, ops[name]) == expected


def test_batched_gather_and_scatter_keep_the_splits(ops):
    batched = GD(
        offset_dims=(),
        collapsed_slice_dims=(1,),
        start_index_map=(1,),
        operand_batching_dims=(0,),
        start_indices_batching_dims=(0,),
    )
    # recorded from JAX 0.10.2
    assert out_types(lambda c, i: lax.gather(c, i, batched, (1, 1)), ops["c"], ops["labels"]) == [
        "float32[8@x]"
    ]
    dims = SD(update_window_dims=(0,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,))
    updates = device_put(np.ones((8, 3), np.float32), ops["c"].sharding)
    f = jit(lambda c, u: lax.scatter_add(c, IX, u, dims))
    assert out_types(f, ops["c"], updates) == ["float32[8@x,16]"]
    with set_mesh(ops["c"].sharding.mesh):
        r = f(ops["c"], updates)
    expected = np.asarray(ops["c"]).copy()
    np.add.at(expected, (slice(None), IX[:, 0]), 1.0)
    np.testing.assert_array_equal(np.asarray(r), expected)
    assert r.sharding == NamedSharding(ops["c"].sharding.mesh, P("x", None))


GATHER_ERROR = (
    "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
    "indexing as out sharding could not be resolved unambiguously (or would require "
    "collectives on inputs). Got operand=ShapedArray({}), indices=ShapedArray({})"
)
SCATTER_ERROR = (
    "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for the "
    "scatter update as out sharding could not be resolved unambiguously (or would require "
    "collectives on inputs). Got operand=ShapedArray({}), indices=ShapedArray({}), "
    "updates=ShapedArray({})"
)
ROW_SCATTER = SD(
    update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)
MESH_TYPES = "({Explicit: ('x', 'y')})"

# (function, operands, message): recorded from JAX 0.10.2
ERRORS = [
    (
        lambda a: lax.slice(a, (0, 0), (1, 4)),
        "a",
        "slicing on sharded dims where out dim (1) is not divisible by mesh axes (2) with spec "
        "(x) is not implemented. Got input type=f32[8@x,4] and output shape=(1, 4)",
    ),
    (
        lambda a: lax.pad(a, 0.0, [(1, 0, 0), (0, 0, 0)]),
        "a",
        "padding on sharded dims where out dim (9) is not divisible by mesh axes (2) with spec "
        "(x) is not implemented. Got input type=f32[8@x,4] and output shape=(9, 4)",
    ),
    (
        lambda a: lax.split(a, (3, 5), 0),
        "a",
        "split on sharded dims where out dim (3) is not divisible by mesh axes (2) with spec "
        "(x) is not implemented. Got input type=f32[8@x,4] and output shape=(3, 4)",
    ),
    (
        lambda a: lax.dynamic_slice(a, (0, 1), (3, 2)),
        "a",
        "dynamic_slice on sharded dims where out dim (3) is not divisible by mesh axes (2) with "
        "spec (x) is not implemented. Got input type=f32[8@x,4] and output shape=(3, 2)",
    ),
    (
        lambda a: lax.cumsum(a, 0),
        "a",
        "Input should be unsharded over the axis being reduced. Got input "
        "type=float32[8@x,4] and axis=0",
    ),
    (
        lambda b: lax.cummax(b, 1),
        "b",
        "Input should be unsharded over the axis being reduced. Got input "
        "type=float32[8,4@y] and axis=1",
    ),
    (
        lambda a: lax.dynamic_update_slice(a, np.ones((2, 2), np.float32), (0, 0)),
        "a",
        "dynamic_update_slice operand sharding must be equal to update sharding, got operand "
        f"sharding float32[8@x,4]{MESH_TYPES} and update sharding float32[2,2]({{}}).",
    ),
    (
        lambda b: lax.top_k(b, 2),
        "b",
        "The input should be unsharded over the axis along which to compute the top_k "
        "values. Got input type=float32[8,4@y] and axis=1",
    ),
    (
        lambda a: lax.unstack(a, 0),
        "a",
        "unstack operand cannot be sharded on the unstacking axis 0. Got operand type=f32[8@x,4]",
    ),
    (
        lambda a: lax.tile(a, (2, 1)),
        "a",
        "Operand cannot be sharded on dimension 0 when the tiling is non-trivial. Got input "
        "type: float32[8@x,4] with reps: (2, 1)",
    ),
    (
        lambda c: lax.gather(c, IX, ROWS, (1, 16)),
        "c",
        GATHER_ERROR.format("float32[8@x,16]", "int32[3,1]"),
    ),
    (
        lambda w, i: lax.gather(w, i, ROWS, (1, 32)),
        "w labels",
        GATHER_ERROR.format("float32[16,32@y]", "int32[8@x,1]"),
    ),
    (
        lambda w, i: lax.scatter_add(w, i, np.ones((8, 32), np.float32), ROW_SCATTER),
        "w labels",
        SCATTER_ERROR.format("float32[16,32@y]", "int32[8@x,1]", "float32[8,32]"),
    ),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_as_jax(ops, case):
    f, names, message = ERRORS[case]
    args = [ops[n] for n in names.split()]
    with pytest.raises(ShardingTypeError, match=re.escape(message) + r"(\n|$)"):
        make_jaxpr(f)(*args)


def test_operands_split_differently_raise(ops, mesh):
    abstract = repr(mesh.abstract_mesh)
    # recorded from JAX 0.10.2
    with pytest.raises(
        ShardingTypeError,
        match=re.escape(
            "All operands should have the same sharding. Got shardings "
            f"NamedSharding(mesh={abstract}, spec=P('x', None)), "
            f"NamedSharding(mesh={abstract}, spec=P(None, 'y'))"
        ),
    ):
        make_jaxpr(lambda a, b: lax.concatenate([a, b], 0))(ops["a"], ops["b"])
    with pytest.raises(
        ShardingTypeError,
        match=re.escape(
            "Arguments to sort must be unsharded over the sorting dimension. Got arg "
            f"sharding=NamedSharding(mesh={abstract}, spec=P('x', None)) and sorting "
            "dimension=0"
        ),
    ):
        make_jaxpr(lambda a, b: lax.sort((a, b), dimension=0, num_keys=1))(ops["a"], ops["b"])
    with pytest.raises(ShardingTypeError, match=re.escape("select cases must have the same")):
        make_jaxpr(lambda a, b: lax.select_n(lax.gt(a, 0.0), a, b))(ops["a"], ops["b"])
    split_features = device_put(np.ones((8, 4, 6, 6), np.float32), NamedSharding(mesh, P("x", "y")))
    with pytest.raises(
        ShardingTypeError,
        match=re.escape(
            "Please specify the output sharding via `out_sharding` parameter of "
            "`conv_general_dilated`"
        ),
    ):
        make_jaxpr(
            lambda v: lax.conv_general_dilated(v, np.ones((2, 4, 3, 3), np.float32), (1, 1), "SAME")
        )(split_features)


def test_values_and_layouts_under_jit(ops, mesh):
    a, c = np.asarray(ops["a"]), np.asarray(ops["c"])

    def f(a, c):
        head = lax.slice(c, (0, 2), (8, 10))
        padded = lax.pad(a, 0.0, [(0, 0, 0), (2, 2, 0)])
        both = lax.concatenate([head, padded], 1)
        return lax.cumsum(both, 1), lax.gather(c, IX, COLS, (8, 1)), lax.top_k(c, 3)[0]

    with set_mesh(mesh):
        run, cols, top = jit(f)(ops["a"], ops["c"])
    ref = np.concatenate([c[:, 2:10], np.pad(a, ((0, 0), (2, 2)))], 1)
    np.testing.assert_allclose(np.asarray(run), np.cumsum(ref, 1))
    np.testing.assert_array_equal(np.asarray(cols), c[:, IX[:, 0]])
    np.testing.assert_array_equal(np.asarray(top), -np.sort(-c, 1)[:, :3])
    # layouts recorded from JAX 0.10.2: the results are split as their types
    for r in (run, cols, top):
        assert r.sharding == NamedSharding(mesh, P("x", None))
        assert str(typeof(r)).endswith("@x," + str(r.shape[1]) + "]")


def test_lax_creation_functions_take_out_sharding(mesh):
    # recorded from JAX 0.10.2
    with set_mesh(mesh):
        f = jit(lambda: lax.broadcasted_iota(np.int32, (8, 4), 1, out_sharding=P("x")))
        assert out_types(f) == ["int32[8@x,4]"]
        r = f()
        np.testing.assert_array_equal(np.asarray(r), np.broadcast_to(np.arange(4), (8, 4)))
        assert r.sharding == NamedSharding(mesh, P("x", None))
        full = lax.full((8, 4), 2.0, sharding=NamedSharding(mesh.abstract_mesh, P("x", "y")))
        assert str(typeof(full)) == "~float32[8@x,4@y]"
        assert full.sharding == NamedSharding(mesh, P("x", "y"))
        assert out_types(lambda: lax.full((8, 4), 2.0, sharding=NamedSharding(mesh, P("x")))) == [
            "~float32[8,4]"  # a concrete sharding is left to XLA under jit
        ]
        with pytest.raises(
            ValueError,
            match=re.escape(
                "Sharding spec ('y',) implies that array axis 2 is partitioned 4 times, but does "
                "not evenly divide the dimension size 2. Got shape: (8, 16, 2) and sharding "
                f"NamedSharding(mesh={mesh.abstract_mesh!r}, spec=P('x', None, 'y'))"
            ),
        ):
            make_jaxpr(
                lambda: lax.broadcast_in_dim(1.0, (8, 16, 2), (), out_sharding=P("x", None, "y"))
            )()
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Using PartitionSpec when you are not under a mesh context is not allowed. Please "
            "pass a NamedSharding instance or enter into a mesh context via `jax.set_mesh`. "
            "Got P('x',)"
        ),
    ):
        lax.broadcasted_iota(np.int32, (8, 4), 0, out_sharding=P("x"))


def test_full_like_keeps_the_prototypes_type(ops, mesh):
    # recorded from JAX 0.10.2: a traced prototype's type unless a shape is given
    assert out_types(lambda a: lax.full_like(a, 1.0), ops["a"]) == ["float32[8@x,4]"]
    assert out_types(lambda a: lax.full_like(a, 1.0, shape=(8, 4)), ops["a"]) == ["float32[8,4]"]
    eager = lax.full_like(ops["a"], 3, np.int32)
    assert str(typeof(eager)) == "int32[8@x,4]"
    assert eager.sharding == ops["a"].sharding  # the prototype's own sharding, P('x',)
    np.testing.assert_array_equal(np.asarray(eager), np.full((8, 4), 3))


def test_eager_operations_are_typed_as_under_jit(ops, mesh):
    # recorded from JAX 0.10.2: eager primitives follow the sharding rules
    with pytest.raises(ShardingTypeError, match="dynamic_update_slice operand sharding"):
        lax.dynamic_update_slice(ops["c"], np.zeros((8, 4), np.float32), (0, 2))
    with set_mesh(mesh):
        r = lax.dot_general(ops["a"], ops["a"], (([0], [0]), ([], [])), out_sharding=P(None, "y"))
    assert str(typeof(r)) == "float32[4,4@y]"
    assert r.sharding == NamedSharding(mesh, P(None, "y"))
    a = np.asarray(ops["a"])
    np.testing.assert_allclose(np.asarray(r), a.T @ a)


def test_cotangents_of_dot_general_are_typed_as_their_primals(ops, mesh):
    x, w = ops["c"], ops["w"]  # f32[8@x,16] and f32[16,32@y]
    unsplit = device_put(np.ones((32, 4), np.float32) / 32, NamedSharding(mesh, P()))

    def loss(w, v, x):
        h = lax.dot_general(x, w, (([1], [0]), ([], [])))  # f32[8@x,32@y]
        out = lax.dot_general(lax.tanh(h), v, (([1], [0]), ([], [])))  # contracts y
        return lax.reduce_sum(out, (0, 1))

    with set_mesh(mesh):
        gw, gv = jit(grad(loss, argnums=(0, 1)))(w, unsplit, x)
    # recorded from JAX 0.10.2: each cotangent typed and laid out as its primal
    assert [str(typeof(g)) for g in (gw, gv)] == ["float32[16,32@y]", "float32[32,4]"]
    assert gw.sharding == NamedSharding(mesh, P(None, "y"))
    xv, wv = np.asarray(x, np.float64), np.asarray(w, np.float64)
    dh = (1 - np.tanh(xv @ wv) ** 2) * np.asarray(unsplit).sum(1)
    np.testing.assert_allclose(np.asarray(gw), xv.T @ dh, rtol=1e-4)
    np.testing.assert_allclose(
        np.asarray(gv), np.tanh(xv @ wv).sum(0)[:, None] * np.ones(4), rtol=1e-4
    )


def test_linear_algebra_keeps_batch_splits(mesh):
    m = np.eye(4, dtype=np.float32) * 2 + 0.1
    batch = device_put(np.broadcast_to(m, (8, 4, 4)).copy(), NamedSharding(mesh, P("x")))
    rhs = device_put(np.ones((8, 4, 2), np.float32), NamedSharding(mesh, P("x")))
    la = lax.linalg
    # recorded from JAX 0.10.2
    assert out_types(la.cholesky, batch) == ["float32[8@x,4,4]"]
    assert out_types(la.qr, batch) == ["float32[8@x,4,4]", "float32[8@x,4,4]"]
    assert out_types(la.eigh, batch) == ["float32[8@x,4,4]", "float32[8@x,4]"]
    assert out_types(la.svd, batch) == ["float32[8@x,4,4]", "float32[8@x,4]", "float32[8@x,4,4]"]
    assert out_types(la.lu, batch) == ["float32[8@x,4,4]", "int32[8@x,4]", "int32[8@x,4]"]

    def solve(a, b):
        return la.triangular_solve(a, b, left_side=True, lower=True)

    assert out_types(solve, batch, rhs) == ["float32[8@x,4,2]"]
    with set_mesh(mesh):
        chol, x = jit(lambda a, b: (la.cholesky(a), solve(a, b)))(batch, rhs)
    np.testing.assert_allclose(np.asarray(chol)[3], np.linalg.cholesky(m), rtol=1e-5)
    np.testing.assert_allclose(
        np.asarray(x)[5], np.linalg.solve(np.tril(m), np.ones((4, 2))), rtol=1e-5
    )
    assert chol.sharding == NamedSharding(mesh, P("x", None, None))
    split_rhs = device_put(np.ones((8, 4, 4), np.float32), NamedSharding(mesh, P(None, "y")))
    with pytest.raises(
        ShardingTypeError,
        match=re.escape(
            "All inputs to triangular_solve must have the same batch sharding, but got ('x',) "
            "and (None,)."
        ),
    ):
        make_jaxpr(solve)(batch, split_rhs)
    with pytest.raises(
        ShardingTypeError,
        match=re.escape(
            "Input 0 to cholesky must be unsharded on non-batch dimensions, but got "
            "P(None, 'y', None)."
        ),
    ):
        make_jaxpr(lambda v: la.cholesky(v, symmetrize_input=False))(split_rhs)
    with pytest.raises(
        ShardingTypeError,
        match=re.escape(
            "add operation with inputs: f32[8,4@y,4], f32[8,4,4@y] produces an illegally "
            "sharded result: f32[8,4@y,4@y]"  # symmetrizing the input
        ),
    ):
        make_jaxpr(la.cholesky)(split_rhs)


def test_reshape_out_sharding_and_one_axis_splitting_two_dimensions(ops):
    # recorded from JAX 0.10.2
    with set_mesh(ops["a"].sharding.mesh):
        f = jit(lambda a: lax.reshape(a, (4, 8), out_sharding=P(None, "y")))
        assert out_types(f, ops["a"]) == ["float32[4,8@y]"]
        r = f(ops["a"])
    np.testing.assert_array_equal(np.asarray(r), np.asarray(ops["a"]).reshape(4, 8))
    assert r.sharding.spec == P(None, "y")
    b = ops["b"]  # f32[8,4@y]
    with pytest.raises(
        ShardingTypeError,
        match=re.escape(
            "add operation with inputs: f32[8,4@y,1], f32[8,1,4@y] produces an illegally "
            "sharded result: f32[8,4@y,4@y]"
        ),
    ):
        make_jaxpr(lambda v: lax.add(lax.reshape(v, (8, 4, 1)), lax.reshape(v, (8, 1, 4))))(b)


def _sq(v):
    return lax.reduce_sum(lax.mul(v, v), tuple(range(len(v.shape))))


# (loss, sum of its gradient at ops["a"]): each gradient typed f32[8@x,4] as its
# primal; recorded from JAX 0.10.2
GRADIENTS = {
    "gather": (
        lambda x: _sq(lax.gather(x, np.array([[3], [0], [2]], np.int32), COLS, (8, 1))),
        752.0,
    ),
    "dynamic_update_slice": (
        lambda x: _sq(
            lax.dynamic_update_slice(x, lax.mul(lax.slice(x, (0, 0), (8, 2)), 2.0), (0, 1))
        ),
        2352.0,
    ),
    "dynamic_slice": (lambda x: _sq(lax.dynamic_slice(x, (0, 1), (8, 2))), 496.0),
    "cumsum": (lambda x: _sq(lax.cumsum(x, 1)), 7280.0),
    "pad": (lambda x: _sq(lax.pad(x, 0.0, [(0, 0, 0), (1, 1, 0)])), 992.0),
    "concatenate": (lambda x: _sq(lax.concatenate([x, x], 1)), 1984.0),
    "sort": (lambda x: _sq(lax.sort(x, dimension=1)), 992.0),
    "reduce_window_max": (
        lambda x: _sq(lax.reduce_window(x, -np.inf, lax.max, (1, 2), (1, 2), "VALID")),
        512.0,
    ),
    "reduce_window_sum": (
        lambda x: _sq(lax.reduce_window(x, 0.0, lax.add, (1, 2), (1, 2), "VALID")),
        1984.0,
    ),
    "top_k": (lambda x: _sq(lax.top_k(x, 2)[0]), 528.0),
    "reduce_max": (lambda x: _sq(lax.reduce_max(x, (1,))), 272.0),
}
APPROX = ["float32[8@x,2]", "int32[8@x,2]"]  # lax.approx_max_k, recorded from JAX 0.10.2


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_are_typed_as_their_primals(ops, mesh, name):
    loss, total = GRADIENTS[name]
    assert out_types(grad(loss), ops["a"]) == ["float32[8@x,4]"]
    with set_mesh(mesh):
        g = jit(grad(loss))(ops["a"])
    assert float(np.asarray(g).sum()) == total
    assert g.sharding == NamedSharding(mesh, P("x", None))


def test_approx_max_k_keeps_the_splits(ops):
    assert out_types(lambda x: lax.approx_max_k(x, 2), ops["a"]) == APPROX


def test_device_put_takes_a_partition_spec_under_set_mesh(mesh):
    x = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    # recorded from JAX 0.10.2
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to device_put"
        ),
    ):
        device_put(x, P("x"))
    with set_mesh(mesh):
        a = device_put(x, P("x"))
        assert str(typeof(a)) == "float32[8@x,4]"
        assert a.sharding == NamedSharding(mesh, P("x"))
        moved = jit(lambda v: device_put(v, P(None, "y")))(a)
        assert out_types(lambda v: device_put(v, P(None, "y")), a) == ["float32[8,4@y]"]
        assert moved.sharding == NamedSharding(mesh, P(None, "y"))
        # the cotangent goes back where the value came from
        g = jit(grad(lambda v: _sq(device_put(v, P(None, "y")))))(a)
    assert str(typeof(g)) == "float32[8@x,4]"
    np.testing.assert_array_equal(np.asarray(moved), x)
    np.testing.assert_array_equal(np.asarray(g), 2 * x)


def test_typed_results_need_the_mesh_in_force(mesh):
    # recorded from JAX 0.10.2: a result typed over the 8-device mesh computed from
    # one-device operands needs set_mesh to be laid out
    message = re.escape(
        "Length of device assignment 1 is not equal to the size of the mesh 8 of aval "
        "f32[8@x,4]({Explicit: ('x', 'y')}). Please enter your `jit` into a mesh context "
        "via `jax.set_mesh`."
    )
    spec = NamedSharding(mesh, P("x"))
    with pytest.raises(ValueError, match=message):
        lax.broadcasted_iota(np.float32, (8, 4), 0, out_sharding=spec)
    with pytest.raises(ValueError, match=message):
        jit(lambda: lax.broadcasted_iota(np.float32, (8, 4), 0, out_sharding=spec))()
    # a concrete sharding lays lax.full out eagerly, not weakly typed, as in JAX
    full = lax.full((8, 4), 2.0, sharding=NamedSharding(mesh, P(None, "y")))
    assert str(typeof(full)) == "float32[8,4@y]"
    assert full.sharding == NamedSharding(mesh, P(None, "y"))


def test_device_count_is_checked_when_the_call_is_lowered_or_run(mesh):
    # recorded from JAX 0.10.2: tracing, eval_shape and make_jaxpr of a jit whose result
    # is typed over the 8-device mesh succeed without set_mesh; lowering, compiling and
    # calling raise
    message = re.escape(
        "Length of device assignment 1 is not equal to the size of the mesh 8 of aval "
        "f32[8@x,4]({Explicit: ('x', 'y')}). Please enter your `jit` into a mesh context "
        "via `jax.set_mesh`."
    )
    spec = NamedSharding(mesh, P("x"))
    f = jit(lambda: lax.broadcasted_iota(np.float32, (8, 4), 0, out_sharding=spec))
    traced = f.trace()
    assert [str(a) for a in traced.jaxpr.out_avals] == ["float32[8@x,4]"]
    shape = f.eval_shape()
    assert shape.shape == (8, 4) and shape.sharding.spec == P("x", None)
    assert str(shape.sharding.mesh) == str(mesh.abstract_mesh)
    assert "f32[8@x,4] = jit" in str(make_jaxpr(f)())
    for run in (f.lower, lambda: f.trace().lower(), f):
        with pytest.raises(ValueError, match=message):
            run()
    with set_mesh(mesh):
        r = f()
    assert r.sharding == NamedSharding(mesh, P("x", None))
    np.testing.assert_array_equal(np.asarray(r), np.broadcast_to(np.arange(8.0)[:, None], (8, 4)))
