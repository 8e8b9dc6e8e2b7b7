"""``jax.interpreters`` (ad, batching, mlir, partial_eval, pxla, xla) on lamina: a
primitive defined entirely the JAX way works under jit, grad, vmap and their
compositions, and the helper functions behave as JAX 0.10.2's do."""

import numpy as np
import pytest
from jaxlib.mlir.dialects import func

import lamina as jax
import lamina.extend.linear_util as lu
import lamina.numpy as jnp
from lamina import api_util
from lamina.extend.core import Primitive
from lamina.interpreters import ad, batching, execute_stablehlo, mlir, partial_eval, pxla, xla
from lamina.interpreters.mlir import hlo
from lamina.ir import remat_split_rules

# dir() of JAX 0.10.2's modules, public names (recorded from JAX 0.10.2).
JAX_NAMES = {
    "ad": "JVPTrace JVPTracer UndefinedPrimal Zero add_jaxvals add_jaxvals_p add_tangents "
    "annotations defbilinear defjvp defjvp2 deflinear deflinear2 get_primitive_transpose "
    "instantiate_zeros is_undefined_primal jvp linearize primitive_jvps "
    "primitive_transposes zeros_like_aval",
    "batching": "axis_primitive_batchers bdim_at_front broadcast defbroadcasting defreducer "
    "defvectorized fancy_primitive_batchers primitive_batchers register_vmappable "
    "unregister_vmappable",
    "mlir": "AxisContext ConstantHandler DEVICE_TO_DEVICE_TYPE LoweringParameters "
    "LoweringResult LoweringRule LoweringRuleContext MeshAxisName ModuleContext "
    "RECV_FROM_HOST_TYPE SEND_TO_HOST_TYPE SPMDAxisContext ShapePolyLoweringState "
    "ShardingContext Token TokenSet Value aval_to_ir_type aval_to_ir_types "
    "core_call_lowering dense_int_array dense_int_elements dtype_to_ir_type "
    "emit_python_callback flatten_ir_types flatten_ir_values i32_attr i64_attr ir "
    "ir_attribute ir_constant ir_constants ir_tree_registry ir_type_handlers jaxpr_subcomp "
    "lower_fun lower_jaxpr_to_fun lower_jaxpr_to_module lowerable_effects make_ir_context "
    "merge_mlir_modules module_to_bytecode module_to_string register_constant_handler "
    "register_lowering shape_tensor token_type unflatten_ir_values_like_types",
    "partial_eval": "DynamicJaxprTracer JaxprTracer PartialVal Val custom_partial_eval_rules "
    "dce_jaxpr dce_jaxpr_call_rule dce_jaxpr_closed_call_rule dce_jaxpr_consts dce_rules "
    "partial_eval_jaxpr_custom_rules trace_to_jaxpr_dynamic trace_to_jaxpr_nounits",
    "pxla": "create_compile_options",
    "xla": "Backend apply_primitive canonicalize_dtype_handlers",
}
# JAX's mlir also has Mesh, not built in lamina yet (the sharding layer, issue 17).


@pytest.mark.parametrize("name", sorted(JAX_NAMES))
def test_modules_have_jaxs_names(name):
    module = getattr(jax.interpreters, name)
    missing = set(JAX_NAMES[name].split()) - set(dir(module))
    assert not missing


def test_mesh_names_its_layer():
    with pytest.raises(AttributeError, match=r"not built yet \(issue 17\)"):
        mlir.Mesh  # noqa: B018


# ------------------------------------------------ JAX's "How primitives work" example

multiply_add_p = Primitive("multiply_add")


def multiply_add(x, y, z):
    return multiply_add_p.bind(x, y, z)


def _multiply_add_impl(x, y, z):
    return np.add(np.multiply(x, y), z)


def _multiply_add_abstract_eval(xs, ys, zs):
    assert xs.shape == ys.shape == zs.shape
    return jax.core.ShapedArray(xs.shape, xs.dtype)


def _multiply_add_lowering(x, y, z):
    return jax.lax.add(jax.lax.mul(x, y), z)


def _multiply_add_value_and_jvp(arg_values, arg_tangents):
    x, y, z = arg_values
    xt, yt, zt = arg_tangents

    def make_zero(tan):
        return jnp.zeros_like(x) if type(tan) is ad.Zero else tan

    primal_out = multiply_add(x, y, z)
    tangent_out = multiply_add(make_zero(xt), y, multiply_add(x, make_zero(yt), make_zero(zt)))
    return primal_out, tangent_out


def _multiply_add_transpose(ct, x, y, z):
    if not ad.is_undefined_primal(x):
        assert ad.is_undefined_primal(y)
        ct_y = ad.Zero(y.aval) if type(ct) is ad.Zero else multiply_add(ct, x, jnp.zeros_like(x))
        return None, ct_y, ct
    ct_x = ad.Zero(x.aval) if type(ct) is ad.Zero else multiply_add(ct, y, jnp.zeros_like(y))
    return ct_x, None, ct


def _multiply_add_batch(vector_arg_values, batch_axes):
    size = next(
        v.shape[d] for v, d in zip(vector_arg_values, batch_axes, strict=True) if d is not None
    )
    moved = [
        batching.bdim_at_front(v, d, size)
        for v, d in zip(vector_arg_values, batch_axes, strict=True)
    ]
    return multiply_add(*moved), 0


multiply_add_p.def_impl(_multiply_add_impl)
multiply_add_p.def_abstract_eval(_multiply_add_abstract_eval)
mlir.register_lowering(
    multiply_add_p, mlir.lower_fun(_multiply_add_lowering, multiple_results=False), platform="cpu"
)
ad.primitive_jvps[multiply_add_p] = _multiply_add_value_and_jvp
ad.primitive_transposes[multiply_add_p] = _multiply_add_transpose
batching.primitive_batchers[multiply_add_p] = _multiply_add_batch


def square_add(a, b):
    return multiply_add(a, a, b)


X = np.array([1.0, 2.0, 3.0], np.float32)
Y = np.array([4.0, 5.0, 6.0], np.float32)


def test_registries_read_back_what_was_set():
    assert ad.primitive_jvps[multiply_add_p] is _multiply_add_value_and_jvp
    assert ad.primitive_transposes[multiply_add_p] is _multiply_add_transpose
    assert batching.primitive_batchers[multiply_add_p] is _multiply_add_batch
    assert multiply_add_p in ad.primitive_jvps


def test_multiply_add_eager_and_jit():
    # recorded from JAX 0.10.2: np.float64(14.0) eagerly (the impl's NumPy result),
    # Array(14., dtype=float32) under jit
    assert square_add(2.0, 10.0) == 14.0
    out = jax.jit(square_add)(2.0, 10.0)
    assert isinstance(out, jax.Array) and out.dtype == np.float32 and float(out) == 14.0


def test_multiply_add_jvp_and_grad():
    primal, tangent = jax.jvp(square_add, (2.0, 10.0), (1.0, 1.0))
    assert (float(primal), float(tangent)) == (14.0, 5.0)
    assert float(jax.grad(square_add)(2.0, 10.0)) == 4.0
    assert float(jax.jit(jax.grad(square_add))(2.0, 10.0)) == 4.0
    ga, gb = jax.grad(square_add, argnums=(0, 1))(2.0, 10.0)
    assert (float(ga), float(gb)) == (4.0, 1.0)


def test_multiply_add_vmap_and_compositions():
    np.testing.assert_array_equal(jax.vmap(square_add)(X, Y), X * X + Y)
    np.testing.assert_array_equal(jax.jit(jax.vmap(square_add))(X, Y), X * X + Y)
    np.testing.assert_array_equal(jax.vmap(jax.grad(square_add))(X, Y), 2 * X)
    np.testing.assert_array_equal(jax.vmap(square_add, in_axes=(0, None))(X, 1.0), X * X + 1)


def test_multiply_add_jaxprs_as_jax():
    # recorded from JAX 0.10.2
    assert str(jax.make_jaxpr(square_add)(2.0, 10.0)) == (
        "{ lambda ; a:f32[] b:f32[]. let c:f32[] = multiply_add a a b in (c,) }"
    )
    assert str(jax.make_jaxpr(jax.grad(square_add))(2.0, 10.0)) == (
        "{ lambda ; a:f32[] b:f32[]. let\n"
        "    _:f32[] = multiply_add a a b\n"
        "    c:f32[] = multiply_add 1.0:f32[] a 0.0:f32[]\n"
        "    d:f32[] = multiply_add 1.0:f32[] a 0.0:f32[]\n"
        "    e:f32[] = add_any c d\n"
        "  in (e,) }"
    )
    assert str(jax.make_jaxpr(jax.vmap(square_add))(X, Y)) == (
        "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = multiply_add a a b in (c,) }"
    )


# ------------------------------------------------ ad helpers


def _unary(name, impl):
    p = Primitive(name)
    p.def_impl(impl)
    p.def_abstract_eval(lambda x, **_: jax.core.ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(p, mlir.lower_fun(lambda x, **_: [impl(x)]))
    return p


def test_defjvp_rule_gets_tangent_and_primals():
    cube_p = _unary("cube", lambda x: x * x * x)
    ad.defjvp(cube_p, lambda g, x: g * 3.0 * x * x)
    f = cube_p.bind
    np.testing.assert_allclose(jax.grad(f)(2.0), 12.0)
    np.testing.assert_allclose(jax.jit(jax.grad(jax.grad(f)))(2.0), 12.0)


def test_defjvp2_rule_gets_the_answer_too():
    exp_p = _unary("my_exp", jnp.exp)
    ad.defjvp2(exp_p, lambda g, ans, x: g * ans)
    np.testing.assert_allclose(jax.grad(exp_p.bind)(1.5), np.exp(1.5), rtol=1e-6)


def test_deflinear_and_deflinear2_define_the_transpose():
    double_p = _unary("double", lambda x: x * 2.0)
    ad.deflinear(double_p, lambda ct: [ct * 2.0])
    batching.defvectorized(double_p)
    assert float(jax.grad(double_p.bind)(3.0)) == 2.0
    assert float(jax.grad(lambda x: jnp.sum(jax.vmap(double_p.bind)(x)))(X)[0]) == 2.0
    triple_p = _unary("triple", lambda x: x * 3.0)
    ad.deflinear2(triple_p, lambda ct, x: [ct * 3.0])
    assert ad.is_undefined_primal(ad.UndefinedPrimal(jax.core.ShapedArray((), np.float32)))
    assert float(jax.grad(triple_p.bind)(3.0)) == 3.0


def test_defbilinear():
    bmul_p = Primitive("bmul")
    bmul_p.def_impl(lambda x, y: x * y)
    bmul_p.def_abstract_eval(lambda x, y: x)
    mlir.register_lowering(bmul_p, mlir.lower_fun(lambda x, y: [x * y]))
    ad.defbilinear(bmul_p, lambda ct, x, y: bmul_p.bind(ct, y), lambda ct, x, y: bmul_p.bind(x, ct))
    gx, gy = jax.grad(bmul_p.bind, argnums=(0, 1))(3.0, 5.0)
    assert (float(gx), float(gy)) == (5.0, 3.0)


def test_rules_of_lamina_primitives_are_readable():
    sin_p = jax.lax.sin_p
    primal, tangent = ad.primitive_jvps[sin_p]((np.float32(1.0),), (np.float32(1.0),))
    np.testing.assert_allclose([primal, tangent], [np.sin(1.0), np.cos(1.0)], rtol=1e-6)
    assert sin_p not in ad.primitive_transposes
    assert sin_p in batching.fancy_primitive_batchers
    # recorded from JAX 0.10.2
    with pytest.raises(NotImplementedError, match=r"Transpose rule .* for 'sin' not implemented"):
        ad.get_primitive_transpose(sin_p)
    assert ad.get_primitive_transpose(jax.lax.neg_p) is ad.primitive_transposes[jax.lax.neg_p]


def test_add_jaxvals():
    assert ad.add_jaxvals_p.name == "add_any"
    assert float(ad.add_jaxvals(np.float32(1.0), np.float32(2.0))) == 3.0
    assert repr(ad.instantiate_zeros(ad.Zero(jax.core.ShapedArray((2,), np.float32)))) == (
        "Array([0., 0.], dtype=float32)"
    )


# ------------------------------------------------ batching helpers


def test_defvectorized_defbroadcasting_defreducer():
    neg_p = _unary("my_neg", lambda x: -x)
    batching.defvectorized(neg_p)
    np.testing.assert_array_equal(
        jax.vmap(neg_p.bind, in_axes=1)(np.ones((2, 3))), -np.ones((3, 2))
    )
    add_p = Primitive("my_add")
    add_p.def_impl(np.add)
    add_p.def_abstract_eval(lambda x, y: x)
    mlir.register_lowering(add_p, mlir.lower_fun(lambda x, y: [x + y]))
    batching.defbroadcasting(add_p)
    np.testing.assert_array_equal(jax.vmap(add_p.bind, in_axes=(0, None))(X, 1.0), X + 1)
    sum_p = Primitive("my_sum")
    sum_p.def_impl(lambda x, *, axes: np.sum(x, axes))
    sum_p.def_abstract_eval(
        lambda x, *, axes: jax.core.ShapedArray(
            tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype
        )
    )
    mlir.register_lowering(sum_p, mlir.lower_fun(lambda x, *, axes: [jnp.sum(x, axes)]))
    batching.defreducer(sum_p)
    m = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    out = jax.vmap(lambda x: sum_p.bind(x, axes=(0,)), in_axes=2)(m)
    np.testing.assert_array_equal(out, m.sum(0).T)


def test_axis_primitive_batchers_get_the_axis():
    seen = []
    p = _unary("axis_seen", lambda x: x)

    def rule(axis_size, axis_name, spmd_name, vals, dims):
        seen.append((axis_size, axis_name))
        return p.bind(*vals), dims[0]

    batching.axis_primitive_batchers[p] = rule
    jax.vmap(p.bind, axis_name="i")(X)
    assert seen == [(3, "i")]


def test_bdim_at_front_and_broadcast():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(batching.bdim_at_front(x, 1, 3), x.T)
    np.testing.assert_array_equal(batching.bdim_at_front(X, None, 2), np.stack([X, X]))
    np.testing.assert_array_equal(batching.broadcast(X, 2, 1, None), np.stack([X, X], 1))


# ------------------------------------------------ mlir


def test_hand_written_lowering_rule():

    p = Primitive("twice_plus_one")
    p.def_impl(lambda x: 2 * x + 1)
    p.def_abstract_eval(lambda x: x)

    def lowering(ctx, x):
        (aval,) = ctx.avals_out
        assert aval.shape == (3,) and ctx.avals_in[0] == aval
        two = mlir.ir_constant(np.full(aval.shape, 2, aval.dtype))
        one = mlir.ir_constant(np.full(aval.shape, 1, aval.dtype))
        assert two.type == mlir.aval_to_ir_type(None, aval)
        return [hlo.add(hlo.multiply(x, two), one)]

    mlir.register_lowering(p, lowering)
    np.testing.assert_array_equal(jax.jit(p.bind)(X), 2 * X + 1)


def test_mlir_builders():
    with mlir.make_ir_context(), mlir.ir.Location.unknown():
        assert str(mlir.dtype_to_ir_type(np.float32)) == "f32"
        assert str(mlir.dense_int_array([1, 2])) == "array<i64: 1, 2>"
        assert str(mlir.i32_attr(3)) == "3 : i32"
        assert str(mlir.i64_attr(3)) == "3 : i64"
        assert str(mlir.ir_attribute("a")) == '"a"'
        assert str(mlir.aval_to_ir_types(None, jax.core.ShapedArray((2,), np.int32))) == (
            "(RankedTensorType(tensor<2xi32>),)"
        )
        assert str(mlir.token_type()) == "!stablehlo.token"
        t = mlir.dtype_to_ir_type(np.float32)
        assert mlir.flatten_ir_types([t, (t, t)]) == [t, t, t]
        assert mlir.unflatten_ir_values_like_types([1, 2, 3], [t, (t, t)]) == [1, (2, 3)]


def test_module_text():
    text = jax.jit(square_add).lower(2.0, 10.0).as_text()
    assert "stablehlo.multiply" in text and "stablehlo.add" in text


def _lower_to_module(closed, **kwargs):
    return mlir.lower_jaxpr_to_module(
        "jit_f",
        closed,
        num_const_args=0,
        in_avals=closed.in_avals,
        ordered_effects=[],
        platforms=["cpu"],
        backend=None,
        axis_context=mlir.ShardingContext(1),
        donated_args=[False] * len(closed.in_avals),
        lowering_parameters=mlir.LoweringParameters(),
        **kwargs,
    )


def _sin_mul_add(x, y):
    return jnp.sin(x) * y + 1.0


def test_lower_jaxpr_to_module_compiles_and_runs():
    x, y = np.arange(3, dtype=np.float32), np.full(3, 2.0, np.float32)
    closed = jax.make_jaxpr(_sin_mul_add)(x, y)
    result = _lower_to_module(closed)
    assert isinstance(result, mlir.LoweringResult) and result.host_callbacks == []
    text = mlir.module_to_string(result.module)
    # recorded from JAX 0.10.2: the module's name and attributes, a public main
    assert text.startswith(
        "module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}"
    )
    assert "func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>)" in text
    (out,) = execute_stablehlo(text, [x, y])
    np.testing.assert_allclose(out, np.sin(x) * y + 1.0, rtol=1e-6)
    with pytest.raises(NotImplementedError, match="num_const_args"):
        mlir.lower_jaxpr_to_module(
            "m", closed, num_const_args=1, in_avals=[], ordered_effects=[], platforms=["cpu"]
        )


def test_lower_jaxpr_to_fun_in_a_lowering_rule():
    inner = jax.make_jaxpr(lambda x: jnp.cos(x) * 2.0)(np.float32(1.0))
    names = []
    p = Primitive("call_inner_twice")
    p.def_abstract_eval(lambda x: x)

    def lowering(ctx, x):
        fns = [
            mlir.lower_jaxpr_to_fun(
                ctx.module_context, "inner", inner, [], num_const_args=0, in_avals=ctx.avals_in
            )
            for _ in range(2)
        ]
        names.extend(str(f.name) for f in fns)
        (y,) = func.CallOp(fns[0], [x]).results
        return func.CallOp(fns[1], [y]).results

    mlir.register_lowering(p, lowering)
    x = np.float32(0.5)
    np.testing.assert_allclose(jax.jit(p.bind)(x), np.cos(np.cos(x) * 2.0) * 2.0, rtol=1e-6)
    assert names == ['"inner"', '"inner_0"']  # recorded from JAX 0.10.2


MODULE_WITH_HELPER = """module {
  func.func public @main() -> () { func.call @helper() : () -> ()
    return }
  func.func private @helper() -> () { return }
}"""


def test_merge_mlir_modules():
    x, y = np.arange(3, dtype=np.float32), np.full(3, 2.0, np.float32)
    text = mlir.module_to_string(_lower_to_module(jax.make_jaxpr(_sin_mul_add)(x, y)).module)
    with mlir.make_ir_context(), mlir.ir.Location.unknown():
        dst = mlir.ir.Module.parse(text)
        # recorded from JAX 0.10.2: the names main takes, others renamed only on clashes
        assert mlir.merge_mlir_modules(dst, "f2", mlir.ir.Module.parse(text)) == "f2"
        assert mlir.merge_mlir_modules(dst, "f2", mlir.ir.Module.parse(text)) == "f2_0"
        merged = [mlir.ir.Module.parse(MODULE_WITH_HELPER) for _ in range(2)]
        assert mlir.merge_mlir_modules(dst, "helper", merged[0]) == "helper_0"
        assert mlir.merge_mlir_modules(dst, "g", merged[1]) == "g"
        assert dst.operation.verify()
        merged_text = str(dst)
    for piece in (
        "func.func private @f2(",
        "func.func private @f2_0(",
        "func.func private @helper_0() {\n    call @helper() : () -> ()",
        "func.func private @g() {\n    call @helper_1() : () -> ()",
        "func.func private @helper_1() {",
    ):
        assert piece in merged_text
    (out,) = execute_stablehlo(merged_text, [x, y])  # dst's main is untouched
    np.testing.assert_allclose(out, np.sin(x) * y + 1.0, rtol=1e-6)


def test_ir_tree_registry():
    # recorded from JAX 0.10.2: lists and tuples are nodes, None and dicts are leaves
    leaves, tree = mlir.ir_tree_registry.flatten([None, (1, 2)])
    assert leaves == [None, 1, 2] and str(tree) == "PyTreeDef([*, (*, *)])"
    assert mlir.ir_tree_registry.flatten({"a": 1})[0] == [{"a": 1}]


# ------------------------------------------------ partial_eval


def _f(x, y, z):
    return jnp.sin(x), jnp.cos(y) * 2.0


def test_dce_jaxpr():
    jaxpr = jax.make_jaxpr(_f)(1.0, 2.0, 3.0).jaxpr
    # recorded from JAX 0.10.2
    new, used = partial_eval.dce_jaxpr(jaxpr, [False, True])
    assert (
        str(new) == "{ lambda ; a:f32[]. let b:f32[] = cos a; c:f32[] = mul b 2.0:f32[] in (c,) }"
    )
    assert used == [False, True, False]
    new, used = partial_eval.dce_jaxpr(jaxpr, [False, True], instantiate=[True, False, False])
    assert used == [True, True, False] and len(new.invars) == 2


def test_dce_jaxpr_prunes_inside_jit():
    def g(x):
        return [jax.jit(lambda a, b: (jnp.sin(a), jnp.cos(b)))(x, x)[1]]

    new, used = partial_eval.dce_jaxpr(jax.make_jaxpr(g)(1.0).jaxpr, [True])
    # recorded from JAX 0.10.2
    assert str(new) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda ; a:f32[]. let b:f32[] = cos a in (b,) }\n"
        "    ] a\n"
        "  in (b,) }"
    )
    assert used == [True]


def _h(x, y):
    return [x * y, x + 1.0]


F32 = jax.core.ShapedArray((), np.float32)


def test_trace_to_jaxpr_dynamic():
    wf = lu.wrap_init(_h, debug_info=api_util.debug_info("test", _h, (1.0, 2.0), {}))
    jaxpr, out_avals, consts = partial_eval.trace_to_jaxpr_dynamic(wf, [F32, F32])
    # recorded from JAX 0.10.2
    assert str(jaxpr) == (
        "{ lambda ; a:f32[] b:f32[]. let\n    c:f32[] = mul a b\n    d:f32[] = add a 1.0:f32[]\n"
        "  in (c, d) }"
    )
    assert out_avals == [F32, F32] and consts == []


def test_trace_to_jaxpr_nounits():
    pvals = [partial_eval.PartialVal.known(np.float32(3.0)), partial_eval.PartialVal.unknown(F32)]
    assert not pvals[1].is_known() and pvals[1].get_aval() == F32
    wf = lu.wrap_init(_h, debug_info=api_util.debug_info("test", _h, (1.0, 2.0), {}))
    jaxpr, out_pvals, consts = partial_eval.trace_to_jaxpr_nounits(wf, pvals)
    # JAX 0.10.2: out_pvals [(f32[], None), (None, 4.0)]; the staged part computes 3 * y
    assert out_pvals[0] == (F32, None)
    assert out_pvals[1].is_known() and out_pvals[1].get_known() == 4.0
    (out,) = jax.core.eval_jaxpr(jaxpr, consts, np.float32(5.0))
    assert float(out) == 15.0


def _scale_by_primitive(name):
    p = Primitive(name)
    p.def_impl(lambda x, s: x * s)
    p.def_abstract_eval(lambda x, s: x)
    mlir.register_lowering(p, mlir.lower_fun(lambda x, s: x * s, multiple_results=False))
    ad.defjvp(p, lambda g, x, s: p.bind(g, s), lambda g, x, s: p.bind(x, g))
    ad.primitive_transposes[p] = lambda ct, x, s: [p.bind(ct, s), None]
    return p


def test_custom_partial_eval_rule_the_jax_way():
    p = _scale_by_primitive("pe_default")
    seen = []

    def rule(trace, x, s):
        seen.append((type(x).__name__, x.is_known(), s.pval.is_known()))
        return trace.default_process_primitive(p, (x, s), {})

    partial_eval.custom_partial_eval_rules[p] = rule
    assert partial_eval.custom_partial_eval_rules[p] is rule

    def f(x):
        return jnp.sin(p.bind(x, 3.0))

    # recorded from JAX 0.10.2: 0.2122116, the rule called for the known primal and
    # the unknown tangent
    np.testing.assert_allclose(jax.grad(f)(0.5), 0.2122116, rtol=1e-6)
    assert seen == [("JaxprTracer", True, True), ("JaxprTracer", False, True)]
    seen.clear()
    y, f_jvp = jax.linearize(f, np.float32(0.5))
    np.testing.assert_allclose([y, f_jvp(np.float32(2.0))], [0.997495, 0.4244232], rtol=1e-6)
    assert [k for _, k, _ in seen] == [True, False]
    np.testing.assert_allclose(jax.jit(jax.grad(f))(0.5), 0.2122116, rtol=1e-6)


def test_custom_partial_eval_rule_staging_by_hand():
    p = _scale_by_primitive("pe_by_hand")

    def rule(trace, x, s):
        if x.is_known() and s.is_known():
            return trace.default_process_primitive(p, (x, s), {})
        x_t = trace.instantiate_const(x)
        s_t = trace.new_instantiated_const(s.pval.get_known()) if s.is_known() else s
        out = partial_eval.JaxprTracer(trace, partial_eval.PartialVal.unknown(x_t.aval), None)
        out.recipe = partial_eval.new_eqn_recipe(trace, [x_t, s_t], [out], p, {}, frozenset(), None)
        return out

    partial_eval.custom_partial_eval_rules[p] = rule

    def f(x):
        return jnp.sin(p.bind(x, 3.0))

    np.testing.assert_allclose(jax.grad(f)(0.5), 0.2122116, rtol=1e-6)
    # recorded from JAX 0.10.2
    assert str(jax.make_jaxpr(jax.grad(f))(0.5)) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = scale_by a 3.0:f32[]\n"
        "    _:f32[] = sin b\n"
        "    c:f32[] = cos b\n"
        "    d:f32[] = mul 1.0:f32[] c\n"
        "    e:f32[] = scale_by d 3.0:f32[]\n"
        "  in (e,) }"
    ).replace("scale_by", "pe_by_hand")


def test_partial_eval_jaxpr_custom_rule_is_used_by_checkpoint():
    p = Primitive("bmul_remat")
    p.def_impl(lambda x, y: x * y)
    p.def_abstract_eval(lambda x, y: x)
    mlir.register_lowering(p, mlir.lower_fun(lambda x, y: x * y, multiple_results=False))
    ad.defbilinear(p, lambda ct, x, y: p.bind(ct, y), lambda ct, x, y: p.bind(x, ct))
    calls = []

    def rule(saveable, unks_in, inst_in, eqn):
        avals = [v.aval for v in eqn.invars]
        calls.append((list(unks_in), bool(saveable(eqn.primitive, *avals, **eqn.params))))
        if any(unks_in):
            res = [v for v, inst in zip(eqn.invars, inst_in, strict=True) if not inst]
            return None, eqn, [True], [True], res
        return eqn, None, [False], [False], []

    partial_eval.partial_eval_jaxpr_custom_rules[p] = rule
    assert p in remat_split_rules

    def f(x, y):
        return jnp.sin(p.bind(jnp.cos(x), y))

    # recorded from JAX 0.10.2: (-0.7923208, 0.25437167) for each policy; JAX calls the
    # rule for each bmul equation, these for the two with known and unknown operands
    for policy, saved in ((None, False), (jax.checkpoint_policies.everything_saveable, True)):
        calls.clear()
        g = jax.checkpoint(f, policy=policy)
        gx, gy = jax.grad(g, argnums=(0, 1))(1.0, 2.0)
        np.testing.assert_allclose([gx, gy], [-0.7923208, 0.25437167], rtol=1e-6)
        assert calls == [([True, False], saved), ([False, True], saved)]


# ------------------------------------------------ vmap of custom types


class Labeled:
    def __init__(self, data, label, index=None):
        self.data, self.label, self.index = data, label, index


class LabeledAxis:
    def __init__(self, axis):
        self.axis = axis


def _labeled_axis(spec):
    return spec.axis if isinstance(spec, LabeledAxis) else spec


VMAP_LOG = []


def _labeled_to_elt(cont, get_idx, x, spec):
    VMAP_LOG.append(("to", type(spec).__name__, _labeled_axis(spec)))
    return Labeled(cont(x.data, _labeled_axis(spec)), x.label, get_idx())


def _labeled_from_elt(cont, axis_size, x, spec):
    VMAP_LOG.append(("from", axis_size, type(spec).__name__, _labeled_axis(spec)))
    return Labeled(cont(axis_size, x.data, _labeled_axis(spec)), x.label)


batching.register_vmappable(Labeled, LabeledAxis, int, _labeled_to_elt, _labeled_from_elt, None)

M = np.arange(6.0, dtype=np.float32).reshape(2, 3)
V = np.array([10.0, 20.0, 30.0], np.float32)


def _relabel(lab, y):
    return Labeled(lab.data * 2.0 + y + lab.index, lab.label + "!")


def _vmap_logged(fun, *args, **kwargs):
    VMAP_LOG.clear()
    return fun(*args, **kwargs), list(VMAP_LOG)


def test_vmap_maps_registered_types():
    # all recorded from JAX 0.10.2
    f = jax.vmap(_relabel, in_axes=(LabeledAxis(1), 0), out_axes=LabeledAxis(1))
    out, log = _vmap_logged(f, Labeled(M, "a"), V)
    assert isinstance(out, Labeled) and out.label == "a!"
    np.testing.assert_array_equal(out.data, [[10.0, 23.0, 36.0], [16.0, 29.0, 42.0]])
    assert log == [("to", "LabeledAxis", 1), ("from", 3, "LabeledAxis", 1)]

    out, log = _vmap_logged(jax.vmap(_relabel, in_axes=(LabeledAxis(1), 0)), Labeled(M, "a"), V)
    np.testing.assert_array_equal(out.data, [[10.0, 16.0], [23.0, 29.0], [36.0, 42.0]])
    assert log == [("to", "LabeledAxis", 1), ("from", 3, "int", 0)]

    def g(lab, k):
        return lab.data.sum() * k.data, Labeled(k.data, k.label)

    gv = jax.vmap(g, in_axes=(None, 0), out_axes=(0, LabeledAxis(0)), axis_size=3)
    (o1, o2), log = _vmap_logged(gv, Labeled(M, "b"), Labeled(V, "c"))
    np.testing.assert_array_equal(o1, [150.0, 300.0, 450.0])
    assert o2.label == "c" and np.asarray(o2.data).tolist() == [10.0, 20.0, 30.0]
    assert log == [("to", "NoneType", None), ("to", "int", 0), ("from", 3, "LabeledAxis", 0)]


def test_vmap_of_registered_types_nested_and_under_jit():
    # all recorded from JAX 0.10.2
    def jitted(m, v):
        f = jax.vmap(_relabel, in_axes=(LabeledAxis(0), None), axis_size=2)
        return f(Labeled(m, "d"), v).data

    out, log = _vmap_logged(jax.jit(jitted), M, V)
    np.testing.assert_array_equal(out, [[10.0, 22.0, 34.0], [17.0, 29.0, 41.0]])
    assert log == [("to", "LabeledAxis", 0), ("from", 2, "int", 0)]

    def h(pair, scale=1.0):
        lab, d = pair
        return {"l": Labeled(lab.data + d["x"], lab.label), "s": lab.data.sum() * scale}

    hv = jax.vmap(h, in_axes=((LabeledAxis(0), {"x": None}),))
    out, _ = _vmap_logged(hv, (Labeled(M, "e"), {"x": V}), scale=np.ones(2, np.float32))
    assert sorted(out) == ["l", "s"] and out["l"].label == "e"
    np.testing.assert_array_equal(out["l"].data, [[10.0, 21.0, 32.0], [13.0, 24.0, 35.0]])
    np.testing.assert_array_equal(out["s"], [3.0, 12.0])
    # as in JAX, unregistering changes nothing
    batching.unregister_vmappable(Labeled)
    out = jax.vmap(_relabel, in_axes=(LabeledAxis(1), 0))(Labeled(M, "a"), V)
    assert out.label == "a!"


def test_vmap_spec_of_a_custom_type_on_an_array():
    with pytest.raises(TypeError, match="not a registered vmappable type"):
        jax.vmap(lambda x: x, in_axes=LabeledAxis(0))(V)


# ------------------------------------------------ ad with a WrappedFun


def _wrapped(f, *args):
    return lu.wrap_init(f, debug_info=api_util.debug_info("test", f, args, {}))


def test_ad_jvp_and_linearize_take_a_wrapped_fun():
    x, t = np.float32(0.5), np.float32(2.0)
    primal, tangent = ad.jvp(_wrapped(jnp.sin, x), (x,), (t,))
    np.testing.assert_allclose([primal, tangent], [np.sin(x), np.cos(x) * t], rtol=1e-6)
    y, f_jvp = ad.linearize(_wrapped(jnp.sin, x), x)
    np.testing.assert_allclose([y, f_jvp(t)], [np.sin(x), np.cos(x) * t], rtol=1e-6)
    y, f_jvp = ad.linearize(jnp.sin, x)  # a plain function still
    np.testing.assert_allclose(f_jvp(t), np.cos(x) * t, rtol=1e-6)


# ------------------------------------------------ pxla, xla


def test_create_compile_options():
    devices = np.array([jax.devices()[:1]])
    options = pxla.create_compile_options(None, False, [False], [False], None, devices, {})
    assert options.num_partitions == 1 and not options.parameter_is_tupled_arguments
    assert options.device_assignment.computation_count() == 1


def test_xla_module():
    out = xla.apply_primitive(jax.lax.add_p, np.float32(1.0), np.float32(2.0))
    assert isinstance(out, jax.Array) and float(out) == 3.0
    assert xla.Backend is type(jax.extend.backend.get_backend())
    h = xla.canonicalize_dtype_handlers
    # recorded from JAX 0.10.2 (x64 off): int32, float32 and float32
    assert h[np.ndarray](np.arange(3)).dtype == np.int32
    assert h[float](1.0).dtype == np.float32
    assert h[np.float64](np.float64(2.0)).dtype == np.float32


def test_internal_helpers_other_layers_use_stay_on_the_modules():
    # lamina's own layers reach the interpreters' helpers through these modules too
    names = {
        ad: "Zero add_tangents defjvp2 deflinear instantiate_zeros is_zero jvp_flat "
        "on_tangent_side register_zeros_maker tangent_aval zero_jvp zeros_like_aval",
        batching: "axis_frame batch_flat batching_rules bdim_at_front broadcast "
        "defbroadcasting defreducer defvectorized matchaxis moveaxis not_mapped shape_of "
        "shape_ops vmap",
    }
    for module, listed in names.items():
        assert all(hasattr(module, n) for n in listed.split())
