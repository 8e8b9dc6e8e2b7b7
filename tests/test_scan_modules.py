# ruff: noqa: E501  (module text recorded from JAX is kept verbatim, one op a line)
"""scan's while loop is built as JAX's: the xs and constants carried first, then the
counter, the carry and the ys; slices read and written through calls of the private
functions ``@dynamic_index_in_dim`` and ``@dynamic_update_index_in_dim``."""

import lamina as jax

jnp = jax.numpy
lax = jax.lax


def plain(c):
    return lax.scan(lambda c, _: (c * 2.0 + 1.0, None), c, None, length=5)[0]


def xsys(c, xs):
    return lax.scan(lambda c, x: (c + x, jnp.sin(c) * x), c, xs)


# Recorded from JAX 0.10.2: ``jax.jit(f).lower(c, xs).as_text()``.
_PLAIN = """\
module @jit_plain attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<3xf32>
    cond {
      %c_1 = stablehlo.constant dense<5> : tensor<i32>
      %1 = stablehlo.compare LT, %iterArg, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %1 = func.call @closed_call(%iterArg_0) : (tensor<3xf32>) -> tensor<3xf32>
      %c_1 = stablehlo.constant dense<1> : tensor<i32>
      %2 = stablehlo.add %iterArg, %c_1 : tensor<i32>
      stablehlo.return %2, %1 : tensor<i32>, tensor<3xf32>
    }
    return %0#1 : tensor<3xf32>
  }
  func.func private @closed_call(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<3xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %3 = stablehlo.add %1, %2 : tensor<3xf32>
    return %3 : tensor<3xf32>
  }
}
"""

_XS_AND_YS = """\
module @jit_xsys attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<5x3xf32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<5x3xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5x3xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:4 = stablehlo.while(%iterArg = %arg1, %iterArg_0 = %c, %iterArg_1 = %arg0, %iterArg_2 = %0) : tensor<5x3xf32>, tensor<i32>, tensor<3xf32>, tensor<5x3xf32>
    cond {
      %c_3 = stablehlo.constant dense<5> : tensor<i32>
      %2 = stablehlo.compare LT, %iterArg_0, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %2 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_0) : (tensor<5x3xf32>, tensor<i32>) -> tensor<3xf32>
      %3:2 = func.call @closed_call(%iterArg_1, %2) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
      %4 = func.call @dynamic_update_index_in_dim(%iterArg_2, %3#1, %iterArg_0) : (tensor<5x3xf32>, tensor<3xf32>, tensor<i32>) -> tensor<5x3xf32>
      %c_3 = stablehlo.constant dense<1> : tensor<i32>
      %5 = stablehlo.add %iterArg_0, %c_3 : tensor<i32>
      stablehlo.return %iterArg, %5, %3#0, %4 : tensor<5x3xf32>, tensor<i32>, tensor<3xf32>, tensor<5x3xf32>
    }
    return %1#2, %1#3 : tensor<3xf32>, tensor<5x3xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<5x3xf32>, %arg1: tensor<i32>) -> tensor<3xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 3] : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x3xf32>) -> tensor<3xf32>
    return %1 : tensor<3xf32>
  }
  func.func private @closed_call(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<3xf32>
    %1 = stablehlo.sine %arg0 : tensor<3xf32>
    %2 = stablehlo.multiply %1, %arg1 : tensor<3xf32>
    return %0, %2 : tensor<3xf32>, tensor<3xf32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<5x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<i32>) -> tensor<5x3xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<5x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<5x3xf32>
    return %1 : tensor<5x3xf32>
  }
}
"""


def test_plain_scan_module_is_jaxs():
    c = jnp.ones(3)
    assert jax.jit(plain).lower(c).as_text() == _PLAIN


def test_scan_with_xs_and_ys_module_is_jaxs():
    c, xs = jnp.ones(3), jnp.ones((5, 3))
    assert jax.jit(xsys).lower(c, xs).as_text() == _XS_AND_YS
    got = jax.jit(xsys)(c, xs)
    assert float(got[0][0]) == 6.0
