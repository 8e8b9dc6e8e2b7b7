"""Exports serialized by JAX 0.10.2 (tests/data/jax_*.bin, recorded with
tools/export_interop.py, with their arguments and JAX's results in the .npz beside):
lamina reads them, writes them back byte for byte, and runs them."""

import collections
from pathlib import Path

import numpy as np
import pytest

from lamina import export
from lamina.interpreters import grad, jit
from lamina.lax import reduce_sum

DATA = Path(__file__).parent / "data"

# name: (fun_name, flat input types, flat result types, platforms, kept inputs,
#        VJP orders serialized), recorded from JAX 0.10.2.
RECORDED = {
    "sin": ("_sin", ["float32[4]"], ["float32[4]"], ("cpu",), (0,), 0),
    "sin_mul": ("_sin_mul", ["float32[3]", "float32[]"], ["float32[3]", "float32[3]"],
                ("cpu",), (0, 1), 1),
    "dict_matmul": ("_dict_matmul", ["float32[2,3]", "float32[3,4]"],
                    ["float32[2,4]", "float32[]"], ("cpu",), (0, 1), 2),
    "int_where": ("_int_where", ["int32[5]", "bool[5]", "float32[2]"],
                  ["int32[5]", "float16[5]"], ("cpu",), (0, 1), 0),
    "multi_platform": ("_multi_platform", ["float32[4]"], ["float32[4]"], ("cpu", "cuda"),
                       (0,), 0),
    "ordered_dict": ("_ordered_dict", ["float32[3]", "float32[3]"], ["float32[3]"],
                     ("cpu",), (0, 1), 1),
    "solve": ("_solve", ["float32[3,3]", "float32[3]"], ["float32[3]"], ("cpu",), (0, 1), 0),
    "poly_mlp": ("_poly_mlp", ["float32[b,4]", "float32[4,8]", "float32[8]", "float32[8,2]"],
                 ["float32[b,2]"], ("cpu",), (0, 1, 2, 3), 1),
    "poly_reshape": ("_poly_reshape", ["float32[b,2*n]"], ["float32[2*b,n]"], ("cpu",), (0,),
                     0),
    "poly_constraint": ("_poly_constraint", ["float32[a,b]"], ["float32[a]"], ("cpu",), (0,),
                        0),
}  # fmt: skip
POLYMORPHIC = sorted(n for n in RECORDED if n.startswith("poly_"))


def _load(name):
    blob = (DATA / f"jax_{name}.bin").read_bytes()
    saved = np.load(DATA / f"jax_{name}.npz")
    args = [saved[k] for k in sorted(k for k in saved.files if k.startswith("arg"))]
    outs = [saved[f"out{i}"] for i in range(sum(k.startswith("out") for k in saved.files))]
    return blob, args, outs


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_fields_are_jax_s(name):
    blob, _, _ = _load(name)
    exp = export.deserialize(blob)
    fun_name, ins, outs, platforms, kept, vjp_order = RECORDED[name]
    assert exp.fun_name == fun_name
    assert [a.str_short() for a in exp.in_avals] == ins
    assert [a.str_short() for a in exp.out_avals] == outs
    assert exp.platforms == platforms and exp.module_kept_var_idx == kept
    assert (exp.nr_devices, exp.calling_convention_version) == (1, 10)
    # a platform index argument or dimension variables
    assert exp.uses_global_constants is (len(platforms) > 1 or name in POLYMORPHIC)
    assert exp.ordered_effects == () == exp.unordered_effects == tuple(exp.disabled_safety_checks)
    assert exp.in_shardings_hlo == (None,) * len(ins)
    assert exp.has_vjp() == (vjp_order > 0)
    assert "func.func public @main" in exp.mlir_module()


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_written_back_byte_for_byte(name):
    blob, _, _ = _load(name)
    assert bytes(export.deserialize(blob).serialize(vjp_order=RECORDED[name][-1])) == blob


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_runs_with_jax_s_results(name):
    blob, args, want = _load(name)
    exp = export.deserialize(bytearray(blob))
    call_args, call_kwargs = exp.in_tree.unflatten(args)
    for fn in (exp.call, jit(exp.call)):
        got = exp.out_tree.flatten_up_to(fn(*call_args, **call_kwargs))
        for g, w in zip(got, want, strict=True):
            assert np.asarray(g).dtype == w.dtype
            np.testing.assert_allclose(np.asarray(g, np.float64), w.astype(np.float64), rtol=1e-6)


def _shape_sets(name):
    """The arguments and JAX's results of a polymorphic export at each recorded shape."""
    saved = np.load(DATA / f"jax_{name}.npz")
    for tag in ["", "k1_", "k2_"]:
        n_args = sum(k.startswith(f"{tag}arg") for k in saved.files)
        n_outs = sum(k.startswith(f"{tag}out") for k in saved.files)
        yield (
            [saved[f"{tag}arg{i}"] for i in range(n_args)],
            [saved[f"{tag}out{i}"] for i in range(n_outs)],
        )


@pytest.mark.parametrize("name", POLYMORPHIC)
def test_polymorphic_runs_at_several_shapes(name):
    exp = export.deserialize(_load(name)[0])
    shapes = set()
    for args, want in _shape_sets(name):
        shapes.add(args[0].shape)
        for fn in (exp.call, jit(exp.call)):
            got = fn(*args)
            assert got.shape == want[0].shape
            np.testing.assert_allclose(np.asarray(got), want[0], rtol=1e-6, atol=1e-6)
    assert len(shapes) == 3


def test_polymorphic_shape_errors_as_jax():
    reshape = export.deserialize(_load("poly_reshape")[0])
    # recorded from JAX 0.10.2
    with pytest.raises(ValueError, match=r"Division had remainder 1 when computing the value "
                       r"of 'n'\. Using the following polymorphic shapes specifications: "
                       r"args\[0\]\.shape = \(b, 2\*n\)\. Obtained dimension variables: "
                       r"'b' = 2 from specification 'b' for dimension args\[0\]\.shape\[0\] "
                       r"\(= 2\), \."):  # fmt: skip
        jit(reshape.call)(np.zeros((2, 3), np.float32))
    # the constraint is not serialized (as in JAX): the module's shape assertion fails
    constraint = export.deserialize(_load("poly_constraint")[0])
    with pytest.raises(ValueError, match="Error refining shapes"):
        constraint.call(np.zeros((2, 3), np.float32))


def test_gradients_through_jax_s_polymorphic_vjp():
    exp = export.deserialize(_load("poly_mlp")[0])
    assert [a.str_short() for a in exp.vjp().in_avals[-1:]] == ["float32[b,2]"]
    for (x, w1, b1, w2), _ in _shape_sets("poly_mlp"):
        g = grad(lambda x, *w: reduce_sum(exp.call(x, *w), (0, 1)))(x, w1, b1, w2)
        t = np.tanh(x @ w1 + b1)
        want = ((1 - t**2) * w2.sum(axis=1)) @ w1.T
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


def test_trees_with_registered_nodes():
    exp = export.deserialize(_load("ordered_dict")[0])
    node = exp.in_tree.children()[0].children()[0]
    assert node.node_data() == (collections.OrderedDict, ("w", "v"))


def test_gradients_through_jax_s_vjp():
    blob, (x, y), _ = _load("sin_mul")
    exp = export.deserialize(blob)
    g = grad(lambda x: reduce_sum(exp.call(x, y)[0], (0,)))(x)
    np.testing.assert_allclose(g, np.cos(x) * y, rtol=1e-6)
    assert not exp.vjp().has_vjp()  # one order serialized


def test_second_order_gradients_through_jax_s_vjps():
    blob, (a, b), _ = _load("dict_matmul")
    exp = export.deserialize(blob)

    def f(a):
        out = exp.call({"a": a, "b": b})
        return reduce_sum(out["s"] * out["s"], (0, 1))

    # f(a) = |a b|^2, so grad f = 2 a b b^T and the Hessian-vector product along the
    # ones direction is 2 ones b b^T.
    np.testing.assert_allclose(grad(f)(a), 2 * a @ b @ b.T, rtol=1e-5)
    hvp = grad(lambda a: reduce_sum(grad(f)(a), (0, 1)))(a)
    np.testing.assert_allclose(hvp, 2 * np.ones_like(a) @ b @ b.T, rtol=1e-5)
