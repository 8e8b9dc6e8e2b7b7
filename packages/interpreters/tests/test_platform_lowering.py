# ruff: noqa: E501  (module text recorded from JAX is kept verbatim, one op a line)
"""Lowering for a platform other than the machine's, and for several platforms at once:
modules against text recorded from JAX 0.10.2 (``jax.jit(f).trace(x).lower(
lowering_platforms=...).as_text()``, with a primitive lowered to ``cosine`` on cpu,
``tan`` on gpu and ``sine`` elsewhere), and values from running them through jaxlib."""

import re
import textwrap

import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina.interpreters.jaxprs.lowering import (
    LoweringRuleContext,
    call_lowering,
    lower_jaxpr,
    lower_per_platform,
    platform_rules,
)
from lamina.interpreters.runtime.execute import execute_stablehlo
from lamina.ir import ClosedJaxpr, MissingRuleError, Primitive, PrimitiveRegistry, parse_jaxpr

registry = PrimitiveRegistry()


def _prim(name, rule=None, platform=None):
    p = Primitive(name, registry=registry)
    if rule is not None:
        p.def_lowering(rule, platform)
    return p


def _add(ctx, x, y):
    x, y = ctx.broadcast_to([x, y])
    return [hlo.add(x, y)]


add_p = _prim("add", _add)
jit_p = _prim("jit", call_lowering)
jit_p.multiple_results = True
plat_p = _prim("plat", lambda ctx, x: [hlo.sine(x)])
plat_p.def_lowering(lambda ctx, x: [hlo.cosine(x)], "cpu")
plat_p.def_lowering(lambda ctx, x: [hlo.tan(x)], "gpu")
cpu_only_p = _prim("cpu_only", lambda ctx, x: [x], "cpu")

PROGRAM = """
let inner = { lambda ; a:f32[5]. let b:f32[5] = plat a in (b,) } in
{ lambda ; c:f32[5]. let
    d:f32[5] = jit[name=inner jaxpr=inner] c
    e:f32[5] = add d 1.0:f32[]
  in (e,) }
"""


def _program(text=PROGRAM):
    return ClosedJaxpr(parse_jaxpr(textwrap.dedent(text), registry=registry), [])


def _body(text):
    return "\n".join(line for line in text.splitlines() if line.strip())


def _expect(lowered, recorded):
    assert _body(lowered.as_text()) == _body(textwrap.dedent(recorded)), lowered.as_text()


# JAX names the private function after the Python function (``@"<lambda>"`` when
# recorded); here it is ``@inner``, the name the Jaxpr gives.
CPU_CUDA = """
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}, %arg1: tensor<5xf32>) -> (tensor<5xf32> {jax.result_info = "result"}) {
    %0 = call @inner(%arg0, %arg1) : (tensor<i32>, tensor<5xf32>) -> tensor<5xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %2 = stablehlo.add %0, %1 : tensor<5xf32>
    return %2 : tensor<5xf32>
  }
  func.func private @inner(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}, %arg1: tensor<5xf32>) -> tensor<5xf32> {
    %0 = "stablehlo.case"(%arg0) ({
      %c = stablehlo.constant dense<0> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }, {
      %c = stablehlo.constant dense<1> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }) : (tensor<i32>) -> tensor<i32>
    %1 = "stablehlo.case"(%0) ({
      %2 = stablehlo.cosine %arg1 : tensor<5xf32>
      stablehlo.return %2 : tensor<5xf32>
    }, {
      %2 = stablehlo.tan %arg1 : tensor<5xf32>
      stablehlo.return %2 : tensor<5xf32>
    }) : (tensor<i32>) -> tensor<5xf32>
    return %1 : tensor<5xf32>
  }
}
"""

TPU_CPU_CASES = """
    %0 = "stablehlo.case"(%arg0) ({
      %c = stablehlo.constant dense<1> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }, {
      %c = stablehlo.constant dense<0> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }) : (tensor<i32>) -> tensor<i32>
    %1 = "stablehlo.case"(%0) ({
      %2 = stablehlo.cosine %arg1 : tensor<5xf32>
      stablehlo.return %2 : tensor<5xf32>
    }, {
      %2 = stablehlo.sine %arg1 : tensor<5xf32>
      stablehlo.return %2 : tensor<5xf32>
    }) : (tensor<i32>) -> tensor<5xf32>
"""

X = np.linspace(0.1, 0.5, 5, dtype=np.float32)


def test_one_platform_takes_its_rule_and_gpu_rules_serve_cuda_and_rocm():
    for platform, op in [("cpu", "cosine"), ("cuda", "tan"), ("rocm", "tan"), ("tpu", "sine")]:
        text = lower_jaxpr(_program(), module_name="jit_f", platform=platform).as_text()
        assert f"stablehlo.{op} " in text and "stablehlo.case" not in text
        assert "_platform_index" not in text


def test_cpu_and_cuda_module_is_jaxs():
    lowered = lower_jaxpr(_program(), module_name="jit_f", platforms=("cpu", "cuda"))
    _expect(lowered, CPU_CUDA)
    assert lowered.platforms == ("cpu", "cuda") and lowered.platform == "cpu"


def test_default_rule_comes_after_the_platform_rules():
    text = lower_jaxpr(_program(), module_name="jit_f", platforms=("tpu", "cpu")).as_text()
    stripped = "\n".join(line.strip() for line in text.splitlines())
    assert "\n".join(line.strip() for line in TPU_CPU_CASES.strip().splitlines()) in stripped


def test_platforms_sharing_a_family_rule_get_a_branch_each():
    # Recorded from JAX 0.10.2 for ("cuda", "rocm", "tpu"): tan, tan, sine.
    text = lower_jaxpr(_program(), platforms=("cuda", "rocm", "tpu")).as_text()
    ops = re.findall(r"%2 = (stablehlo\.\w+) %arg1", text)
    assert ops == ["stablehlo.tan", "stablehlo.tan", "stablehlo.sine"]


@pytest.mark.parametrize("index, expected", [(0, np.cos(X) + 1), (1, np.tan(X) + 1)])
def test_the_platform_index_picks_the_branch_when_run(index, expected):
    lowered = lower_jaxpr(_program(), platforms=("cpu", "cuda"))
    (out,) = execute_stablehlo(lowered.as_text(), [np.int32(index), X])
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


def test_a_platform_without_a_rule_is_named():
    text = "{ lambda ; a:f32[5]. let b:f32[5] = cpu_only a in (b,) }"
    lower_jaxpr(_program(text), platforms=("cpu",))
    with pytest.raises(MissingRuleError, match="'cpu_only' not implemented for platform 'cuda'"):
        lower_jaxpr(_program(text), platforms=("cuda",))
    with pytest.raises(MissingRuleError, match=r"not implemented for platforms \['cuda'\]"):
        lower_jaxpr(_program(text), platforms=("cpu", "cuda"))


def test_platform_rules_reads_the_table_in_platform_order():
    rules, default = platform_rules(plat_p, ("rocm", "cpu", "tpu"))
    assert list(rules) == ["rocm", "cpu"] and default is not None
    assert callable(lower_per_platform) and LoweringRuleContext is not None
