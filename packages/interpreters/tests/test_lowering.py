# ruff: noqa: E501  (module text recorded from JAX is kept verbatim, one op a line)
"""Lowering Jaxprs to StableHLO: the module's shape against text recorded from
``jax.jit(f).lower(...).as_text(debug_info=False)`` in JAX 0.10.2, and values from
compiling and running the modules through jaxlib against NumPy.

The primitives here are test-local (lamina.lax defines the real ones later), registered
in a private PrimitiveRegistry so that ``parse_jaxpr`` reads JAX-printed text with them.
"""

import sys
import textwrap
import warnings

import ml_dtypes
import numpy as np
import pytest
from jaxlib import xla_client
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina.interpreters.jaxprs import mlir_builders
from lamina.interpreters.jaxprs.lowering import (
    LoweredModule,
    call_lowering,
    get_lowering_rule,
    lower_jaxpr,
)
from lamina.interpreters.runtime.execute import execute_stablehlo
from lamina.ir import (
    ClosedJaxpr,
    Jaxpr,
    Literal,
    MissingRuleError,
    Primitive,
    PrimitiveRegistry,
    ShapedArray,
    Var,
    abstract_token,
    new_jaxpr_eqn,
    parse_jaxpr,
)

registry = PrimitiveRegistry()


def _prim(name, rule=None, platform=None):
    p = Primitive(name, registry=registry)
    if rule is not None:
        p.def_lowering(rule, platform)
    return p


def _binary(op):
    def rule(ctx, x, y):
        x, y = ctx.broadcast_to([x, y])
        return [op(x, y)]

    return rule


add_p = _prim("add", _binary(hlo.add))
mul_p = _prim("mul", _binary(hlo.multiply))
and_p = _prim("and", _binary(hlo.and_))
sin_p = _prim("sin", lambda ctx, x: [hlo.sine(x)])


def _gt_rule(ctx, x, y):
    x, y = ctx.broadcast_to([x, y])
    direction = hlo.ComparisonDirectionAttr.get("GT")
    return [hlo.compare(x, y, direction, compare_type=hlo.ComparisonTypeAttr.get("FLOAT"))]


gt_p = _prim("gt", _gt_rule)


def _bid_rule(ctx, x, *, shape, broadcast_dimensions, sharding=None):
    return [ctx.broadcast_in_dim(x, ctx.avals_out[0], broadcast_dimensions)]


bid_p = _prim("broadcast_in_dim", _bid_rule)


def _convert_rule(ctx, x, *, new_dtype, weak_type=False, sharding=None):
    return [ctx.convert(x, ctx.avals_in[0], ctx.avals_out[0])]


convert_p = _prim("convert_element_type", _convert_rule)


def _reduce_sum_rule(ctx, x, *, axes, out_sharding=None):
    (aval_in,), (aval_out,) = ctx.avals_in, ctx.avals_out
    scalar = ShapedArray((), aval_in.dtype)
    zero = ctx.constant(np.zeros((), aval_in.dtype))
    op = hlo.ReduceOp([ctx.ir_type(aval_out)], [x], [zero], list(axes))
    block = op.regions[0].blocks.append(ctx.ir_type(scalar), ctx.ir_type(scalar))
    from jaxlib.mlir import ir

    with ir.InsertionPoint(block):
        hlo.return_([hlo.add(*block.arguments)])
    return list(op.results)


reduce_sum_p = _prim("reduce_sum", _reduce_sum_rule)
jit_p = _prim("jit", call_lowering)
jit_p.multiple_results = True
create_token_p = _prim("create_token", lambda ctx: [hlo.create_token()])
after_all_p = _prim("after_all", lambda ctx, *ts: [hlo.after_all(list(ts))])
nolower_p = _prim("no_lowering")

CLIENT = xla_client.make_cpu_client()


def parse(text, consts=()):
    return ClosedJaxpr(parse_jaxpr(textwrap.dedent(text), registry=registry), list(consts))


def body(module_text):
    """The module text without blank lines, for comparing with JAX's."""
    return "\n".join(line for line in module_text.splitlines() if line.strip())


def run(lowered: LoweredModule, *args):
    """Compile the module's text with jaxlib and run it on the CPU device."""

    outs = execute_stablehlo(lowered.as_text(), list(args))
    return [np.asarray(o) for o in outs]


def expect(lowered, recorded):
    assert body(lowered.as_text()) == body(textwrap.dedent(recorded)), lowered.as_text()


X5 = np.arange(5, dtype=np.float32)


def test_weak_literal_becomes_scalar_constant_broadcast():
    cj = parse(
        """
        { lambda ; a:f32[5] b:f32[5]. let
            c:f32[5] = sin a
            d:f32[5] = mul c b
            e:f32[5] = add d 2.0:f32[]
          in (e,) }
        """
    )
    lowered = lower_jaxpr(cj)
    expect(
        lowered,
        """
        module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
          func.func public @main(%arg0: tensor<5xf32>, %arg1: tensor<5xf32>) -> (tensor<5xf32> {jax.result_info = "result"}) {
            %0 = stablehlo.sine %arg0 : tensor<5xf32>
            %1 = stablehlo.multiply %0, %arg1 : tensor<5xf32>
            %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
            %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
            %3 = stablehlo.add %1, %2 : tensor<5xf32>
            return %3 : tensor<5xf32>
          }
        }
        """,
    )
    y = X5[::-1].copy()
    (out,) = run(lowered, X5, y)
    np.testing.assert_allclose(out, np.sin(X5) * y + 2, rtol=1e-6)


def compile_only(lowered):
    devices = xla_client.DeviceList(tuple(CLIENT.devices()[:1]))
    return CLIENT.compile_and_load(lowered.as_text(), devices, xla_client.CompileOptions())


def test_constvars_are_constants_at_the_top_and_several_results():
    c = np.array([0.0, 3.0, 6.0], np.float32)
    cj = parse(
        """
        { lambda a:f32[3]; b:f32[5] c:f32[3]. let
            d:f32[3] = add c a
            e:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
          in (d, e) }
        """,
        [c],
    )
    lowered = lower_jaxpr(cj, module_name="jit_g")
    expect(
        lowered,
        """
        module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
          func.func public @main(%arg0: tensor<5xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<f32> {jax.result_info = "result[1]"}) {
            %cst = stablehlo.constant dense<[0.000000e+00, 3.000000e+00, 6.000000e+00]> : tensor<3xf32>
            %0 = stablehlo.add %arg1, %cst : tensor<3xf32>
            %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
            %1 = stablehlo.reduce(%arg0 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
            return %0, %1 : tensor<3xf32>, tensor<f32>
          }
        }
        """,
    )
    y = np.ones(3, np.float32)
    d, e = run(lowered, X5, y)
    np.testing.assert_array_equal(d, y + c)
    assert e.shape == () and e == X5.sum()


def test_bool_bf16_and_splat_constants():
    cb = np.array([True, False, True])
    cs = np.broadcast_to(np.float32(1.0), (2, 3))  # zero strides: scalar + broadcast
    cbf = np.array([3, 4, 6], ml_dtypes.bfloat16)
    cj = parse(
        """
        { lambda a:bool[3] b:f32[2,3] c:bf16[3]; d:f32[3] e:bf16[3]. let
            f:bool[3] = gt d 0.0:f32[]
            g:bool[3] = and f a
            m:bf16[3] = mul 1.5:bf16[] e
          in (g, b, c, m) }
        """,
        [cb, cs, cbf],
    )
    lowered = lower_jaxpr(cj, module_name="jit_k")
    expect(
        lowered,
        """
        module @jit_k attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
          func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xbf16>) -> (tensor<3xi1> {jax.result_info = "result[0]"}, tensor<2x3xf32> {jax.result_info = "result[1]"}, tensor<3xbf16> {jax.result_info = "result[2]"}, tensor<3xbf16> {jax.result_info = "result[3]"}) {
            %c = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>
            %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
            %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
            %cst_0 = stablehlo.constant dense<[3.000000e+00, 4.000000e+00, 6.000000e+00]> : tensor<3xbf16>
            %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
            %1 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<3xf32>
            %2 = stablehlo.compare GT, %arg0, %1, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
            %3 = stablehlo.and %2, %c : tensor<3xi1>
            %cst_2 = stablehlo.constant dense<1.500000e+00> : tensor<bf16>
            %4 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<bf16>) -> tensor<3xbf16>
            %5 = stablehlo.multiply %4, %arg1 : tensor<3xbf16>
            return %3, %0, %cst_0, %5 : tensor<3xi1>, tensor<2x3xf32>, tensor<3xbf16>, tensor<3xbf16>
          }
        }
        """,
    )
    d = np.array([-1.0, 2.0, 3.0], np.float32)
    e = np.array([1, 2, 3], ml_dtypes.bfloat16)
    g, b, c, m = run(lowered, d, e)
    np.testing.assert_array_equal(g, [False, False, True])
    np.testing.assert_array_equal(b, np.ones((2, 3), np.float32))
    assert c.dtype == ml_dtypes.bfloat16 and m.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(c, cbf)
    np.testing.assert_array_equal(m.astype(np.float32), [1.5, 3.0, 4.5])


def test_unsigned_int_literals_and_output_literal():
    cj = parse(
        """
        { lambda ; a:u32[5] b:i32[]. let
            c:u32[5] = add a 3:u32[]
            d:i32[] = add b 1:i32[]
          in (c, d, 3:i32[]) }
        """
    )
    lowered = lower_jaxpr(cj, module_name="jit_u")
    expect(
        lowered,
        """
        module @jit_u attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
          func.func public @main(%arg0: tensor<5xui32>, %arg1: tensor<i32>) -> (tensor<5xui32> {jax.result_info = "result[0]"}, tensor<i32> {jax.result_info = "result[1]"}, tensor<i32> {jax.result_info = "result[2]"}) {
            %c = stablehlo.constant dense<3> : tensor<ui32>
            %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui32>) -> tensor<5xui32>
            %1 = stablehlo.add %arg0, %0 : tensor<5xui32>
            %c_0 = stablehlo.constant dense<1> : tensor<i32>
            %2 = stablehlo.add %arg1, %c_0 : tensor<i32>
            %c_1 = stablehlo.constant dense<3> : tensor<i32>
            return %1, %2, %c_1 : tensor<5xui32>, tensor<i32>, tensor<i32>
          }
        }
        """,
    )
    a = np.array([0, 1, 2, 2**32 - 4, 7], np.uint32)
    c, d, three = run(lowered, a, np.int32(41))
    assert c.dtype == np.uint32
    np.testing.assert_array_equal(c, a + np.uint32(3))
    assert d == 42 and three == 3


NESTED = """
let inner = { lambda ; a:f32[5]. let b:f32[5] = mul a a in (b,) } in
{ lambda ; c:f32[5]. let
    d:f32[5] = jit[name=inner jaxpr=inner] c
    e:f32[5] = add c 1.0:f32[]
    f:f32[5] = jit[name=inner jaxpr=inner] e
    g:f32[5] = add d f
  in (g,) }
"""


def test_nested_jit_is_one_private_function_called_twice():
    lowered = lower_jaxpr(parse(NESTED), module_name="jit_h")
    expect(
        lowered,
        """
        module @jit_h attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
          func.func public @main(%arg0: tensor<5xf32>) -> (tensor<5xf32> {jax.result_info = "result"}) {
            %0 = call @inner(%arg0) : (tensor<5xf32>) -> tensor<5xf32>
            %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
            %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
            %2 = stablehlo.add %arg0, %1 : tensor<5xf32>
            %3 = call @inner(%2) : (tensor<5xf32>) -> tensor<5xf32>
            %4 = stablehlo.add %0, %3 : tensor<5xf32>
            return %4 : tensor<5xf32>
          }
          func.func private @inner(%arg0: tensor<5xf32>) -> tensor<5xf32> {
            %0 = stablehlo.multiply %arg0, %arg0 : tensor<5xf32>
            return %0 : tensor<5xf32>
          }
        }
        """,
    )
    (out,) = run(lowered, X5)
    np.testing.assert_array_equal(out, X5 * X5 + (X5 + 1) ** 2)


def test_nested_jit_inline():
    text = NESTED.replace("jit[name=inner", "jit[inline=True name=inner")
    lowered = lower_jaxpr(parse(text), module_name="jit_h")
    expect(
        lowered,
        """
        module @jit_h attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
          func.func public @main(%arg0: tensor<5xf32>) -> (tensor<5xf32> {jax.result_info = "result"}) {
            %0 = stablehlo.multiply %arg0, %arg0 : tensor<5xf32>
            %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
            %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
            %2 = stablehlo.add %arg0, %1 : tensor<5xf32>
            %3 = stablehlo.multiply %2, %2 : tensor<5xf32>
            %4 = stablehlo.add %0, %3 : tensor<5xf32>
            return %4 : tensor<5xf32>
          }
        }
        """,
    )
    (out,) = run(lowered, X5)
    np.testing.assert_array_equal(out, X5 * X5 + (X5 + 1) ** 2)


def _jit_eqn(closed, invars, outvars, name, inline=False):
    params = dict(jaxpr=closed, name=name, inline=inline)
    return new_jaxpr_eqn(invars, outvars, jit_p, params)


def test_equal_jaxprs_share_a_function_and_clashing_names_are_renamed():
    inner_text = "{ lambda ; a:f32[5]. let b:f32[5] = mul a a in (b,) }"
    sq1, sq2 = parse(inner_text), parse(inner_text)  # equal, distinct objects
    sin_ = parse("{ lambda ; a:f32[5]. let b:f32[5] = sin a in (b,) }")
    consts = np.full(5, 2.0, np.float32)
    with_const = parse("{ lambda k:f32[5]; a:f32[5]. let b:f32[5] = add a k in (b,) }", [consts])
    x = Var(ShapedArray((5,), np.float32))
    outs = [Var(ShapedArray((5,), np.float32)) for _ in range(4)]
    eqns = [
        _jit_eqn(sq1, [x], [outs[0]], "inner"),
        _jit_eqn(sq2, [outs[0]], [outs[1]], "inner"),
        _jit_eqn(sin_, [x], [outs[2]], "inner"),
        _jit_eqn(with_const, [x], [outs[3]], "plus"),
    ]
    lowered = lower_jaxpr(ClosedJaxpr(Jaxpr([], [x], outs[1:], eqns), []))
    text = lowered.as_text()
    assert text.count("func.func private @inner(") == 1
    assert text.count("func.func private @inner_0(") == 1
    assert text.count("call @inner(") == 2 and text.count("call @inner_0(") == 1
    assert "func.func private @plus(" in text
    a, b, c = run(lowered, X5)
    np.testing.assert_array_equal(a, X5**4)
    np.testing.assert_allclose(b, np.sin(X5), rtol=1e-6)
    np.testing.assert_array_equal(c, X5 + 2)


DEAD = """
{ lambda ; a:f32[5] b:f32[5] c:f32[5]. let
    z:f32[5] = sin b
  in (a,) }
"""


def test_unused_inputs_and_dead_equations_are_dropped_by_default():
    lowered = lower_jaxpr(parse(DEAD), module_name="jit_u")
    expect(
        lowered,
        """
        module @jit_u attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
          func.func public @main(%arg0: tensor<5xf32>) -> (tensor<5xf32> {jax.result_info = "result"}) {
            return %arg0 : tensor<5xf32>
          }
        }
        """,
    )
    assert lowered.kept_var_idx == (0,)
    assert lowered.in_avals == [ShapedArray((5,), np.float32)]


def test_keep_unused_keeps_every_input():
    lowered = lower_jaxpr(parse(DEAD), module_name="jit_u", keep_unused=True)
    expect(
        lowered,
        """
        module @jit_u attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
          func.func public @main(%arg0: tensor<5xf32>, %arg1: tensor<5xf32>, %arg2: tensor<5xf32>) -> (tensor<5xf32> {jax.result_info = "result"}) {
            return %arg0 : tensor<5xf32>
          }
        }
        """,
    )
    assert lowered.kept_var_idx == (0, 1, 2)
    (out,) = run(lowered, X5, X5 + 1, X5 + 2)
    np.testing.assert_array_equal(out, X5)


def test_no_inputs_no_outputs():
    lowered = lower_jaxpr(parse("{ lambda ; a:f32[5]. let  in () }"), module_name="jit_e")
    expect(
        lowered,
        """
        module @jit_e attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
          func.func public @main() {
            return
          }
        }
        """,
    )
    assert run(lowered) == []


DONATE = """
{ lambda ; a:f32[5] b:f32[5] c:f32[] w:f32[3]. let
    d:f32[5] = mul a 2.0:f32[]
    e:f32[5] = add b 1.0:f32[]
    s:f32[] = reduce_sum[axes=(0,) out_sharding=None] w
  in (d, e, s) }
"""


def test_donated_inputs_alias_results_of_their_type():
    with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: float32\[3\]"):
        lowered = lower_jaxpr(
            parse(DONATE), module_name="jit_g", donated_args=[True, True, True, True]
        )
    # c is unused, so dropped; w is used but no f32[3] result can take its buffer.
    assert lowered.kept_var_idx == (0, 1, 3)
    assert lowered.input_output_aliases == {0: 0, 1: 1}
    head = body(lowered.as_text()).splitlines()[1]
    assert head == (
        "  func.func public @main(%arg0: tensor<5xf32> {tf.aliasing_output = 0 : i32}, "
        "%arg1: tensor<5xf32> {tf.aliasing_output = 1 : i32}, %arg2: tensor<3xf32>) -> "
        '(tensor<5xf32> {jax.result_info = "result[0]"}, tensor<5xf32> '
        '{jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}) {'
    )
    d, e, s = run(lowered, X5, X5, np.ones(3, np.float32))
    np.testing.assert_array_equal(d, X5 * 2)
    np.testing.assert_array_equal(e, X5 + 1)
    assert s == 3


def test_donation_with_keep_unused_counts_every_input():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lowered = lower_jaxpr(parse(DEAD), donated_args=[False, False, True], keep_unused=True)
    assert lowered.input_output_aliases == {2: 0}
    assert "%arg2: tensor<5xf32> {tf.aliasing_output = 0 : i32}" in lowered.as_text()


def test_result_names_and_arg_names():
    cj = parse("{ lambda ; a:f32[5] b:f32[5]. let  in (a, b, a) }")
    lowered = lower_jaxpr(
        cj,
        arg_names=["x", "y"],
        result_names=["result['a']", "result['b'][0]", "result['b'][1]"],
    )
    text = lowered.as_text()
    assert "-> (tensor<5xf32> {jax.result_info = \"result['a']\"}, tensor<5xf32> " in text
    assert "jax.result_info = \"result['b'][1]\"" in text
    assert "loc(" not in text
    debug = lowered.as_text(debug_info=True)
    assert '%arg0: tensor<5xf32> loc("x")' in debug and '%arg1: tensor<5xf32> loc("y")' in debug
    with pytest.raises(ValueError, match="result_names has 1 entries for 3 results"):
        lower_jaxpr(cj, result_names=["r"])
    with pytest.raises(ValueError, match="arg_names has 1 entries for 2 inputs"):
        lower_jaxpr(cj, arg_names=["x"])


def test_module_attributes_and_bytecode():
    cj = parse("{ lambda ; a:f32[5]. let b:f32[5] = sin a in (b,) }")
    lowered = lower_jaxpr(cj, module_name="jit_sin", num_replicas=2, num_partitions=4)
    assert lowered.as_text().startswith(
        "module @jit_sin attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 2 : i32}"
    )
    assert lowered.as_bytecode().startswith(b"ML\xefR")
    assert str(lowered) == lowered.as_text()


def test_tokens_are_stablehlo_tokens():
    cj = parse(
        """
        { lambda ; a:f32[5] t:Tok. let
            u:Tok = after_all t
            v:Tok = create_token
          in (a, u, v) }
        """
    )
    lowered = lower_jaxpr(cj, module_name="jit_tok")
    expect(
        lowered,
        """
        module @jit_tok attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
          func.func public @main(%arg0: tensor<5xf32>, %arg1: !stablehlo.token) -> (tensor<5xf32> {jax.result_info = "result[0]"}, !stablehlo.token {jax.result_info = "result[1]"}, !stablehlo.token {jax.result_info = "result[2]"}) {
            %0 = stablehlo.after_all %arg1 : !stablehlo.token
            %1 = stablehlo.create_token : !stablehlo.token
            return %arg0, %0, %1 : tensor<5xf32>, !stablehlo.token, !stablehlo.token
          }
        }
        """,
    )
    assert cj.jaxpr.invars[1].aval == abstract_token
    compile_only(lowered)


def test_tokens_through_a_nested_call():
    inner = parse("{ lambda ; t:Tok a:f32[5]. let u:Tok = after_all t in (u, a) }")
    t, a = Var(abstract_token), Var(ShapedArray((5,), np.float32))
    u, b = Var(abstract_token), Var(ShapedArray((5,), np.float32))
    cj = ClosedJaxpr(Jaxpr([], [t, a], [b, u], [_jit_eqn(inner, [t, a], [u, b], "tok")]), [])
    text = lower_jaxpr(cj).as_text()
    assert "func.func private @tok(%arg0: !stablehlo.token, %arg1: tensor<5xf32>)" in text
    assert "call @tok(%arg0, %arg1) : (!stablehlo.token, tensor<5xf32>) -> " in text


CONVERT = """
{ lambda ; a:f32[5]. let
    b:f8_e4m3fn[5] = convert_element_type[new_dtype=float8_e4m3fn weak_type=False] a
    c:i8[5] = convert_element_type[new_dtype=int8 weak_type=False] a
    d:u8[5] = convert_element_type[new_dtype=uint8 weak_type=False] a
    e:c64[5] = convert_element_type[new_dtype=complex64 weak_type=False] a
    f:f16[5] = convert_element_type[new_dtype=float16 weak_type=False] a
    g:bf16[5] = convert_element_type[new_dtype=bfloat16 weak_type=False] a
    h:f32[5] = convert_element_type[new_dtype=float32 weak_type=True] a
  in (b, c, d, e, f, g, h) }
"""


def test_element_types_and_no_redundant_convert():
    lowered = lower_jaxpr(parse(CONVERT), module_name="jit_f8")
    expect(
        lowered,
        """
        module @jit_f8 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
          func.func public @main(%arg0: tensor<5xf32>) -> (tensor<5xf8E4M3FN> {jax.result_info = "result[0]"}, tensor<5xi8> {jax.result_info = "result[1]"}, tensor<5xui8> {jax.result_info = "result[2]"}, tensor<5xcomplex<f32>> {jax.result_info = "result[3]"}, tensor<5xf16> {jax.result_info = "result[4]"}, tensor<5xbf16> {jax.result_info = "result[5]"}, tensor<5xf32> {jax.result_info = "result[6]"}) {
            %0 = stablehlo.convert %arg0 : (tensor<5xf32>) -> tensor<5xf8E4M3FN>
            %1 = stablehlo.convert %arg0 : (tensor<5xf32>) -> tensor<5xi8>
            %2 = stablehlo.convert %arg0 : (tensor<5xf32>) -> tensor<5xui8>
            %3 = stablehlo.convert %arg0 : (tensor<5xf32>) -> tensor<5xcomplex<f32>>
            %4 = stablehlo.convert %arg0 : (tensor<5xf32>) -> tensor<5xf16>
            %5 = stablehlo.convert %arg0 : (tensor<5xf32>) -> tensor<5xbf16>
            return %0, %1, %2, %3, %4, %5, %arg0 : tensor<5xf8E4M3FN>, tensor<5xi8>, tensor<5xui8>, tensor<5xcomplex<f32>>, tensor<5xf16>, tensor<5xbf16>, tensor<5xf32>
          }
        }
        """,
    )
    outs = run(lowered, X5)
    wanted = [ml_dtypes.float8_e4m3fn, np.int8, np.uint8, np.complex64, np.float16]
    wanted += [ml_dtypes.bfloat16, np.float32]
    for out, dtype in zip(outs, wanted, strict=True):
        assert out.dtype == dtype
        np.testing.assert_array_equal(out, X5.astype(dtype))


def test_every_dtype_has_an_mlir_type_and_constants_round_trip():

    dtypes = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16]
    dtypes += [np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64]
    dtypes += [np.complex128, ml_dtypes.bfloat16, ml_dtypes.int4, ml_dtypes.uint4]
    dtypes += [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fnuz]
    dtypes += [ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e3m4]
    dtypes += [ml_dtypes.float8_e4m3, ml_dtypes.float8_e8m0fnu, ml_dtypes.float4_e2m1fn]
    dtypes += [ml_dtypes.int2, ml_dtypes.uint2]
    with mlir_builders.make_context():
        for dt in dtypes:
            assert str(mlir_builders.dtype_to_ir_type(dt)), dt
    # Constants of each kind compile and come back unchanged.
    values = [
        np.array([True, False]),
        np.array([1, 255], np.uint8),
        np.array([-3, 7], ml_dtypes.int4),
        np.array([1.5, -2.0], ml_dtypes.bfloat16),
        np.array([0.5, 448.0], ml_dtypes.float8_e4m3fn),
        np.array([1 + 2j, -3j], np.complex64),
        np.array(7, np.uint32),
    ]
    outvars = [Var(ShapedArray(v.shape, v.dtype)) for v in values]
    cj = ClosedJaxpr(Jaxpr(outvars, [], outvars, []), values)
    for got, value in zip(run(lower_jaxpr(cj)), values, strict=True):
        assert got.dtype == value.dtype and got.shape == value.shape
        np.testing.assert_array_equal(got, value)


def test_broadcast_in_dim_rule_helper():
    cj = parse(
        """
        { lambda ; a:f32[3]. let
            b:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,) shape=(2, 3) sharding=None] a
          in (b,) }
        """
    )
    lowered = lower_jaxpr(cj)
    assert (
        "stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>"
        in lowered.as_text()
    )
    (out,) = run(lowered, np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(out, np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3)))


def test_missing_rule_names_the_primitive():
    x, y = Var(ShapedArray((5,), np.float32)), Var(ShapedArray((5,), np.float32))
    cj = ClosedJaxpr(Jaxpr([], [x], [y], [new_jaxpr_eqn([x], [y], nolower_p, {})]), [])
    with pytest.raises(MissingRuleError, match="Lowering rule for primitive 'no_lowering'"):
        lower_jaxpr(cj)


def test_platform_rules_come_first():
    p = _prim("plat")
    p.def_lowering(lambda ctx, x: [hlo.sine(x)])
    p.def_lowering(lambda ctx, x: [hlo.cosine(x)], platform="cpu")
    q = _prim("gpu_only", lambda ctx, x: [x], platform="gpu")
    assert get_lowering_rule(q, "cuda") is get_lowering_rule(q, "rocm")
    with pytest.raises(MissingRuleError, match="'gpu_only' not implemented for platform 'cpu'"):
        get_lowering_rule(q, "cpu")
    x, y = Var(ShapedArray((5,), np.float32)), Var(ShapedArray((5,), np.float32))
    cj = ClosedJaxpr(Jaxpr([], [x], [y], [new_jaxpr_eqn([x], [y], p, {})]), [])
    assert "stablehlo.cosine" in lower_jaxpr(cj, platform="cpu").as_text()
    assert "stablehlo.sine" in lower_jaxpr(cj, platform="cuda").as_text()


def test_rule_results_are_checked():
    wrong_count = _prim("wrong_count", lambda ctx, x: [x, x])
    wrong_type = _prim("wrong_type", lambda ctx, x: hlo.convert(ctx.ir_type(ctx.avals_in[0]), x))
    x, y = Var(ShapedArray((5,), np.float32)), Var(ShapedArray((5,), np.int32))
    for prim, err, msg in [
        (wrong_count, ValueError, "'wrong_count' returned 2 values, expected 1"),
        (wrong_type, TypeError, "'wrong_type' produced tensor<5xf32>, expected tensor<5xi32>"),
    ]:
        cj = ClosedJaxpr(Jaxpr([], [x], [y], [new_jaxpr_eqn([x], [y], prim, {})]), [])
        with pytest.raises(err, match=msg):
            lower_jaxpr(cj)


def test_literal_operands_of_nested_and_inlined_calls():
    inner = parse("{ lambda ; a:f32[] b:f32[5]. let c:f32[5] = mul b a in (c,) }")
    x, y, z = (Var(ShapedArray((5,), np.float32)) for _ in range(3))
    three = Literal(3.0, ShapedArray((), np.float32))
    eqns = [
        _jit_eqn(inner, [three, x], [y], "scale"),
        _jit_eqn(inner, [three, y], [z], "scale", inline=True),
    ]
    lowered = lower_jaxpr(ClosedJaxpr(Jaxpr([], [x], [z], eqns), []))
    text = lowered.as_text()
    assert "call @scale(%cst, %arg0) : (tensor<f32>, tensor<5xf32>) -> tensor<5xf32>" in text
    (out,) = run(lowered, X5)
    np.testing.assert_array_equal(out, X5 * 9)


def test_lowerings_share_a_context_until_it_holds_enough_constants(monkeypatch):

    monkeypatch.setattr(mlir_builders, "_CONTEXT_CONSTANT_BYTES", 4096)
    monkeypatch.setattr(mlir_builders, "_thread", type(mlir_builders._thread)())
    small = parse("{ lambda ; a:f32[5]. let b:f32[5] = sin a in (b,) }")
    first, second = lower_jaxpr(small), lower_jaxpr(small)
    assert first.context is second.context
    big = np.arange(2048, dtype=np.float32)  # 8 KiB: over the context's budget
    with_big = parse(
        "{ lambda k:f32[2048]; a:f32[2048]. let b:f32[2048] = add a k in (b,) }", [big]
    )
    third = lower_jaxpr(with_big)
    assert third.context is first.context
    fourth = lower_jaxpr(small)
    assert fourth.context is not first.context
    # Each module prints as it would alone, whichever context built it.
    assert first.as_text() == second.as_text() == fourth.as_text()
    (result,) = execute_stablehlo(third.as_text(), [np.ones(2048, np.float32)])
    np.testing.assert_array_equal(np.asarray(result), big + 1)


def _programs():
    """Small programs that differ in shapes, dtypes and constants (so in the types and
    attributes their lowerings cache)."""
    programs = []
    for n in (1, 3, 5, 8):
        for dtype in ("f32", "i32", "bf16"):
            two = "2" if dtype == "i32" else "2.0"
            programs.append(
                parse(
                    f"{{ lambda ; a:{dtype}[{n}] b:{dtype}[]. let"
                    f" c:{dtype}[{n}] = add a b; d:{dtype}[{n}] = mul c {two}:{dtype}[]"
                    f" in (d,) }}"
                )
            )
    programs.append(parse("{ lambda k:f32[4]; a:f32[4]. let b:f32[4] = add a k in (b,) }",
                          [np.arange(4, dtype=np.float32)]))  # fmt: skip
    return programs


def _foreign_types(lowered):
    """Result types and attributes of the module's operations made in another context."""
    context, found = lowered.context, []

    def walk(op):
        found.extend(r.type for r in op.results if r.type.context is not context)
        attrs = [op.attributes[name] for name in op.attributes]
        found.extend(a for a in attrs if a.context is not context)
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    walk(inner.operation)

    walk(lowered.module.operation)
    return found


def test_threads_lowering_at_once_emit_the_modules_one_thread_does():
    import threading

    programs = _programs()
    expected = [lower_jaxpr(p).as_text() for p in programs]
    n_threads = 4
    barrier = threading.Barrier(n_threads)
    results: dict[int, list] = {}
    errors, foreign = [], []

    def work(t):
        try:
            order = list(range(len(programs)))[t:] + list(range(len(programs)))[:t]
            barrier.wait()
            texts = {}
            for _ in range(5):
                for i in order:
                    lowered = lower_jaxpr(programs[i])
                    texts.setdefault(i, set()).add(lowered.as_text())
                    foreign.extend(_foreign_types(lowered))
            results[t] = texts
        except BaseException as e:  # reported below, in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns often, mid-lowering
    try:
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    assert not foreign  # every type and attribute belongs to its module's context
    for texts in results.values():
        assert {i: s for i, s in texts.items()} == {i: {e} for i, e in enumerate(expected)}


def test_builders_cache_per_context():
    from jaxlib.mlir import ir

    aval = ShapedArray((2, 3), np.float32)
    first, second = mlir_builders.make_context(), mlir_builders.make_context()
    with first, ir.Location.unknown():
        in_first = mlir_builders.ir_type(aval)
        attr_first = mlir_builders.i64_array([0, 1])
    with second, ir.Location.unknown():
        in_second = mlir_builders.ir_type(aval)
        attr_second = mlir_builders.i64_array([0, 1])
        assert mlir_builders.ir_type(aval).context is second
    with first, ir.Location.unknown():  # back to the first: its own types again
        assert mlir_builders.ir_type(aval).context is first
        assert mlir_builders.i64_array([0, 1]).context is first
    assert in_first.context is first and in_second.context is second
    assert attr_first.context is first and attr_second.context is second
    assert str(in_first) == str(in_second) == "tensor<2x3xf32>"


def test_renewed_contexts_are_freed(monkeypatch):
    import gc

    from jaxlib.mlir import ir

    monkeypatch.setattr(mlir_builders, "_CONTEXT_MODULES", 10)
    monkeypatch.setattr(mlir_builders, "_thread", type(mlir_builders._thread)())
    gc.collect()
    live = ir.Context._get_live_count()
    texts = set()
    for i in range(1000):  # 1,000 different programs: 100 contexts in turn
        program = parse(f"{{ lambda ; a:f32[{i + 1}]. let b:f32[{i + 1}] = sin a in (b,) }}")
        texts.add(lower_jaxpr(program).as_text())
        del program
    assert len(texts) == 1000
    gc.collect()
    # The thread's current context, and none of those it gave up.
    assert ir.Context._get_live_count() <= live + 1
