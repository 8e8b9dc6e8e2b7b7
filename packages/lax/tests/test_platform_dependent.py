# ruff: noqa: E501  (module text recorded from JAX is kept verbatim, one op a line)
"""``lax.platform_dependent``: a ``platform_index`` and a ``cond`` whose lowering keeps
the branches of the platforms lowered for. Jaxprs and modules recorded from JAX 0.10.2
(``jax.jit(f).trace(x).lower(lowering_platforms=...).as_text()``)."""

import textwrap

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import grad, jit, make_jaxpr, vmap
from lamina.lax import cos, sin, tan


def f(x):
    return lax.platform_dependent(x, cpu=sin, default=cos)


def f2(x):
    return lax.platform_dependent(x, cuda=sin, cpu=cos, default=tan)


X = np.linspace(0.1, 0.5, 3, dtype=np.float32)


def _body(text):
    return "\n".join(line for line in textwrap.dedent(text).splitlines() if line.strip())


def _lowered(fun, platforms):
    return jit(fun).trace(X).lower(lowering_platforms=platforms).as_text()


JAXPR = """\
{ lambda ; a:f32[3]. let
    b:i32[] = platform_index[platforms=(('cpu',), None)]\x20
    c:f32[3] = cond[
      branches=(
        { lambda ; d:f32[3]. let e:f32[3] = sin d in (e,) }
        { lambda ; f:f32[3]. let g:f32[3] = cos f in (g,) }
      )
      branches_platforms=(('cpu',), None)
    ] b a
  in (c,) }"""

CUDA = """
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = "stablehlo.case"(%c) ({
      %c_0 = stablehlo.constant dense<0> : tensor<i32>
      stablehlo.return %c_0 : tensor<i32>
    }, {
      %c_0 = stablehlo.constant dense<0> : tensor<i32>
      stablehlo.return %c_0 : tensor<i32>
    }) : (tensor<i32>) -> tensor<i32>
    %1 = "stablehlo.case"(%0) ({
      %2 = stablehlo.cosine %arg0 : tensor<3xf32>
      stablehlo.return %2 : tensor<3xf32>
    }) : (tensor<i32>) -> tensor<3xf32>
    return %1 : tensor<3xf32>
  }
}
"""

CPU_CUDA_ROCM = """
module @jit_f2 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}, %arg1: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %0 = "stablehlo.case"(%arg0) ({
      %c = stablehlo.constant dense<1> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }, {
      %c = stablehlo.constant dense<0> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }, {
      %c = stablehlo.constant dense<2> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }) : (tensor<i32>) -> tensor<i32>
    %1 = "stablehlo.case"(%0) ({
      %c = stablehlo.constant dense<0> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }, {
      %c = stablehlo.constant dense<1> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }, {
      %c = stablehlo.constant dense<2> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }) : (tensor<i32>) -> tensor<i32>
    %2 = "stablehlo.case"(%1) ({
      %c = stablehlo.constant dense<1> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }, {
      %c = stablehlo.constant dense<0> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }, {
      %c = stablehlo.constant dense<2> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }) : (tensor<i32>) -> tensor<i32>
    %3 = "stablehlo.case"(%2) ({
      %4 = stablehlo.cosine %arg1 : tensor<3xf32>
      stablehlo.return %4 : tensor<3xf32>
    }, {
      %4 = stablehlo.sine %arg1 : tensor<3xf32>
      stablehlo.return %4 : tensor<3xf32>
    }, {
      %4 = stablehlo.tan %arg1 : tensor<3xf32>
      stablehlo.return %4 : tensor<3xf32>
    }) : (tensor<i32>) -> tensor<3xf32>
    return %3 : tensor<3xf32>
  }
}
"""


def test_jaxpr_is_jaxs():
    assert str(make_jaxpr(f)(X)) == JAXPR


def test_values_on_the_cpu_eagerly_and_jitted():
    np.testing.assert_allclose(f(X), np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(jit(f)(X), np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(jit(f2)(X), np.cos(X), rtol=1e-6)


@pytest.mark.parametrize(
    "fun, platforms, expected",
    [
        pytest.param(f, ("cuda",), CUDA, id="cuda_keeps_the_default_branch"),
        pytest.param(f2, ("cpu", "cuda", "rocm"), CPU_CUDA_ROCM, id="three_keep_a_branch_each"),
    ],
)
def test_lowered_for_platforms(fun, platforms, expected):
    assert _body(_lowered(fun, platforms)) == _body(expected)


def test_gradient_and_vmap_keep_the_platform_choice():
    # Recorded from JAX 0.10.2: the gradient's conds keep branches_platforms.
    g = grad(lambda x: lax.reduce_sum(f(x), (0,)))
    np.testing.assert_allclose(g(X), np.cos(X), rtol=1e-6)
    assert str(make_jaxpr(g)(X)).count("branches_platforms=(('cpu',), None)") == 2
    np.testing.assert_allclose(vmap(f)(X), np.sin(X), rtol=1e-6)


def test_bad_branches():
    with pytest.raises(ValueError, match=r"Use 'cuda' or 'rocm' for lax\.platform_dependent\."):
        lax.platform_dependent(X, gpu=sin)
    with pytest.raises(TypeError, match="the 'cpu' branch must be a callable"):
        lax.platform_dependent(X, cpu=1)
    with pytest.raises(NotImplementedError, match=r"platform_index.*not implemented for platform"):
        jit(lambda x: lax.platform_dependent(x, cuda=sin)).trace(X).lower(
            lowering_platforms=("cpu",)
        )
