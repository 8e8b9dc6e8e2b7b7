# ruff: noqa: E501  (module text recorded from JAX is kept verbatim, one op a line)
"""scan's while loop is built as JAX's: the xs and constants carried first, then the
counter, the carry and the ys; slices read and written through calls of the private
functions ``@dynamic_index_in_dim`` and ``@dynamic_update_index_in_dim``."""

import numpy as np

import lamina as jax

jnp = jax.numpy
lax = jax.lax


def plain(c):
    return lax.scan(lambda c, _: (c * 2.0 + 1.0, None), c, None, length=5)[0]


def xsys(c, xs):
    return lax.scan(lambda c, x: (c + x, jnp.sin(c) * x), c, xs)


def rnn_loss(params, xs):
    """benchmarks/lax.py's RNN (the rnn-grad program of benchmarks/hlo_compare.py)."""
    w, u, b = params
    h0 = lax.full((xs.shape[1], w.shape[0]), 0.0, w.dtype)

    def step(h, x):
        pre = lax.add(lax.dot(h, w), lax.dot(x, u))
        h = lax.tanh(lax.add(pre, lax.broadcast_in_dim(b, pre.shape, (1,))))
        return h, h

    _, hs = lax.scan(step, h0, xs)
    return lax.reduce_sum(lax.mul(hs, hs), (0, 1, 2))


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


# Recorded from JAX 0.10.2: ``jax.jit(jax.grad(lambda p, xs: rnn_loss(p, xs)))`` lowered
# for w f32[4,4], u f32[3,4], b f32[4], xs f32[5,2,3].
_RNN_GRAD = """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<5x2x3xf32>) -> (tensor<4x4xf32> {jax.result_info = "result[0]"}, tensor<3x4xf32> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<5x2x4xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<5x2x4xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<5x2x4xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<5x2x4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %6:10 = stablehlo.while(%iterArg = %arg3, %iterArg_10 = %arg0, %iterArg_11 = %arg1, %iterArg_12 = %1, %iterArg_13 = %c, %iterArg_14 = %0, %iterArg_15 = %2, %iterArg_16 = %3, %iterArg_17 = %4, %iterArg_18 = %5) : tensor<5x2x3xf32>, tensor<4x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<2x4xf32>, tensor<5x2x4xf32>, tensor<5x2x4xf32>, tensor<5x2x4xf32>, tensor<5x2x4xf32>
    cond {
      %c_19 = stablehlo.constant dense<5> : tensor<i32>
      %16 = stablehlo.compare LT, %iterArg_13, %c_19, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %16 : tensor<i1>
    } do {
      %16 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_13) : (tensor<5x2x3xf32>, tensor<i32>) -> tensor<2x3xf32>
      %17:5 = func.call @closed_call(%iterArg_10, %iterArg_11, %iterArg_12, %iterArg_14, %16) : (tensor<4x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
      %18 = func.call @dynamic_update_index_in_dim(%iterArg_15, %17#1, %iterArg_13) : (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<i32>) -> tensor<5x2x4xf32>
      %19 = func.call @dynamic_update_index_in_dim(%iterArg_16, %17#2, %iterArg_13) : (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<i32>) -> tensor<5x2x4xf32>
      %20 = func.call @dynamic_update_index_in_dim(%iterArg_17, %17#3, %iterArg_13) : (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<i32>) -> tensor<5x2x4xf32>
      %21 = func.call @dynamic_update_index_in_dim(%iterArg_18, %17#4, %iterArg_13) : (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<i32>) -> tensor<5x2x4xf32>
      %c_19 = stablehlo.constant dense<1> : tensor<i32>
      %22 = stablehlo.add %iterArg_13, %c_19 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_10, %iterArg_11, %iterArg_12, %22, %17#0, %18, %19, %20, %21 : tensor<5x2x3xf32>, tensor<4x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<2x4xf32>, tensor<5x2x4xf32>, tensor<5x2x4xf32>, tensor<5x2x4xf32>, tensor<5x2x4xf32>
    }
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<5x2x4xf32>
    %8 = stablehlo.multiply %6#6, %7 : tensor<5x2x4xf32>
    %9 = stablehlo.multiply %7, %6#6 : tensor<5x2x4xf32>
    %10 = stablehlo.add %8, %9 : tensor<5x2x4xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %c_9 = stablehlo.constant dense<0> : tensor<i32>
    %15:11 = stablehlo.while(%iterArg = %10, %iterArg_10 = %6#7, %iterArg_11 = %arg3, %iterArg_12 = %6#8, %iterArg_13 = %6#9, %iterArg_14 = %arg0, %iterArg_15 = %c_9, %iterArg_16 = %12, %iterArg_17 = %13, %iterArg_18 = %14, %iterArg_19 = %11) : tensor<5x2x4xf32>, tensor<5x2x4xf32>, tensor<5x2x3xf32>, tensor<5x2x4xf32>, tensor<5x2x4xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x4xf32>, tensor<3x4xf32>, tensor<4xf32>, tensor<2x4xf32>
    cond {
      %c_20 = stablehlo.constant dense<5> : tensor<i32>
      %16 = stablehlo.compare LT, %iterArg_15, %c_20, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %16 : tensor<i1>
    } do {
      %c_20 = stablehlo.constant dense<5> : tensor<i32>
      %16 = stablehlo.subtract %c_20, %iterArg_15 : tensor<i32>
      %c_21 = stablehlo.constant dense<1> : tensor<i32>
      %17 = stablehlo.subtract %16, %c_21 : tensor<i32>
      %18 = func.call @dynamic_index_in_dim_0(%iterArg, %17) : (tensor<5x2x4xf32>, tensor<i32>) -> tensor<2x4xf32>
      %19 = func.call @dynamic_index_in_dim_0(%iterArg_10, %17) : (tensor<5x2x4xf32>, tensor<i32>) -> tensor<2x4xf32>
      %20 = func.call @dynamic_index_in_dim(%iterArg_11, %17) : (tensor<5x2x3xf32>, tensor<i32>) -> tensor<2x3xf32>
      %21 = func.call @dynamic_index_in_dim_0(%iterArg_12, %17) : (tensor<5x2x4xf32>, tensor<i32>) -> tensor<2x4xf32>
      %22 = func.call @dynamic_index_in_dim_0(%iterArg_13, %17) : (tensor<5x2x4xf32>, tensor<i32>) -> tensor<2x4xf32>
      %23:4 = func.call @closed_call_1(%iterArg_14, %iterArg_16, %iterArg_17, %iterArg_18, %iterArg_19, %18, %19, %20, %21, %22) : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<3x4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<4x4xf32>, tensor<3x4xf32>, tensor<4xf32>, tensor<2x4xf32>)
      %c_22 = stablehlo.constant dense<1> : tensor<i32>
      %24 = stablehlo.add %iterArg_15, %c_22 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_10, %iterArg_11, %iterArg_12, %iterArg_13, %iterArg_14, %24, %23#0, %23#1, %23#2, %23#3 : tensor<5x2x4xf32>, tensor<5x2x4xf32>, tensor<5x2x3xf32>, tensor<5x2x4xf32>, tensor<5x2x4xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x4xf32>, tensor<3x4xf32>, tensor<4xf32>, tensor<2x4xf32>
    }
    return %15#7, %15#8, %15#9 : tensor<4x4xf32>, tensor<3x4xf32>, tensor<4xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<5x2x3xf32>, %arg1: tensor<i32>) -> tensor<2x3xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 2, 3] : (tensor<5x2x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x3xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
  func.func private @closed_call(%arg0: tensor<4x4xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<2x4xf32>, %arg3: tensor<2x4xf32>, %arg4: tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
    %0 = stablehlo.dot_general %arg3, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %1 = stablehlo.dot_general %arg4, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %2 = stablehlo.add %0, %1 : tensor<2x4xf32>
    %3 = stablehlo.add %2, %arg2 : tensor<2x4xf32>
    %4 = stablehlo.tanh %3 : tensor<2x4xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %6 = stablehlo.subtract %5, %4 : tensor<2x4xf32>
    return %4, %4, %arg3, %4, %6 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<5x2x4xf32>, %arg1: tensor<2x4xf32>, %arg2: tensor<i32>) -> tensor<5x2x4xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0 : (tensor<5x2x4xf32>, tensor<1x2x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<5x2x4xf32>
    return %1 : tensor<5x2x4xf32>
  }
  func.func private @dynamic_index_in_dim_0(%arg0: tensor<5x2x4xf32>, %arg1: tensor<i32>) -> tensor<2x4xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 2, 4] : (tensor<5x2x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x4xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x2x4xf32>) -> tensor<2x4xf32>
    return %1 : tensor<2x4xf32>
  }
  func.func private @closed_call_1(%arg0: tensor<4x4xf32>, %arg1: tensor<4x4xf32>, %arg2: tensor<3x4xf32>, %arg3: tensor<4xf32>, %arg4: tensor<2x4xf32>, %arg5: tensor<2x4xf32>, %arg6: tensor<2x4xf32>, %arg7: tensor<2x3xf32>, %arg8: tensor<2x4xf32>, %arg9: tensor<2x4xf32>) -> (tensor<4x4xf32>, tensor<3x4xf32>, tensor<4xf32>, tensor<2x4xf32>) {
    %0 = stablehlo.add %arg4, %arg5 : tensor<2x4xf32>
    %1 = stablehlo.multiply %0, %arg9 : tensor<2x4xf32>
    %2 = stablehlo.multiply %1, %arg8 : tensor<2x4xf32>
    %3 = stablehlo.add %1, %2 : tensor<2x4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x4xf32>, tensor<f32>) -> tensor<4xf32>
    %5 = stablehlo.add %arg3, %4 : tensor<4xf32>
    %6 = stablehlo.dot_general %3, %arg7, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>
    %8 = stablehlo.add %arg2, %7 : tensor<3x4xf32>
    %9 = stablehlo.dot_general %3, %arg6, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
    %10 = stablehlo.transpose %9, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %11 = stablehlo.add %arg1, %10 : tensor<4x4xf32>
    %12 = stablehlo.dot_general %3, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    return %11, %8, %5, %12 : tensor<4x4xf32>, tensor<3x4xf32>, tensor<4xf32>, tensor<2x4xf32>
  }
}
"""


def test_rnn_gradient_module_is_jaxs():
    rng = np.random.default_rng(0)
    params = (
        rng.standard_normal((4, 4), np.float32),
        rng.standard_normal((3, 4), np.float32),
        np.zeros(4, np.float32),
    )
    xs = rng.standard_normal((5, 2, 3), np.float32)
    step = jax.jit(jax.grad(lambda p, xs: rnn_loss(p, xs)))
    assert step.lower(params, xs).as_text() == _RNN_GRAD


def withc(c, xs, w):
    return lax.scan(lambda c, x: (jnp.tanh(c * w + x), c * w), c, xs, reverse=True)


# Recorded from JAX 0.10.2: ``jax.jit(withc).lower(c, xs, w).as_text()``.
_REVERSED_WITH_CONSTANT = """\
module @jit_withc attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<5x3xf32>, %arg2: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<5x3xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5x3xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:5 = stablehlo.while(%iterArg = %arg1, %iterArg_0 = %arg2, %iterArg_1 = %c, %iterArg_2 = %arg0, %iterArg_3 = %0) : tensor<5x3xf32>, tensor<3xf32>, tensor<i32>, tensor<3xf32>, tensor<5x3xf32>
    cond {
      %c_4 = stablehlo.constant dense<5> : tensor<i32>
      %2 = stablehlo.compare LT, %iterArg_1, %c_4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %c_4 = stablehlo.constant dense<5> : tensor<i32>
      %2 = stablehlo.subtract %c_4, %iterArg_1 : tensor<i32>
      %c_5 = stablehlo.constant dense<1> : tensor<i32>
      %3 = stablehlo.subtract %2, %c_5 : tensor<i32>
      %4 = func.call @dynamic_index_in_dim(%iterArg, %3) : (tensor<5x3xf32>, tensor<i32>) -> tensor<3xf32>
      %5:2 = func.call @closed_call(%iterArg_0, %iterArg_2, %4) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
      %6 = func.call @dynamic_update_index_in_dim(%iterArg_3, %5#1, %3) : (tensor<5x3xf32>, tensor<3xf32>, tensor<i32>) -> tensor<5x3xf32>
      %c_6 = stablehlo.constant dense<1> : tensor<i32>
      %7 = stablehlo.add %iterArg_1, %c_6 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_0, %7, %5#0, %6 : tensor<5x3xf32>, tensor<3xf32>, tensor<i32>, tensor<3xf32>, tensor<5x3xf32>
    }
    return %1#3, %1#4 : tensor<3xf32>, tensor<5x3xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<5x3xf32>, %arg1: tensor<i32>) -> tensor<3xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 3] : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x3xf32>) -> tensor<3xf32>
    return %1 : tensor<3xf32>
  }
  func.func private @closed_call(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
    %0 = stablehlo.convert %arg0 : tensor<3xf32>
    %1 = stablehlo.multiply %arg1, %0 : tensor<3xf32>
    %2 = stablehlo.add %1, %arg2 : tensor<3xf32>
    %3 = stablehlo.tanh %2 : tensor<3xf32>
    %4 = stablehlo.convert %arg0 : tensor<3xf32>
    %5 = stablehlo.multiply %arg1, %4 : tensor<3xf32>
    return %3, %5 : tensor<3xf32>, tensor<3xf32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<5x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<i32>) -> tensor<5x3xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<5x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<5x3xf32>
    return %1 : tensor<5x3xf32>
  }
}
"""


def _without_function(text: str, name: str) -> str:
    """``text`` less the private function ``name``'s definition."""
    start = text.index(f"  func.func private @{name}(")
    return text[:start] + text[text.index("\n  }\n", start) + 5 :]


def test_reversed_scan_with_a_constant_loops_as_jax():
    # The loop, its index arithmetic and the slicing functions are JAX's; the body
    # differs only in the no-op converts of the weak-typed ``w`` that lamina hoists
    # out of the loop (both giving the same value, carried once).
    c, xs, w = jnp.ones(3), jnp.ones((5, 3)), jnp.full(3, 0.5)
    text = jax.jit(withc).lower(c, xs, w).as_text()
    want = _without_function(_REVERSED_WITH_CONSTANT, "closed_call")
    assert _without_function(text, "closed_call") == want
    assert "stablehlo.convert" not in text and want != _REVERSED_WITH_CONSTANT
    carry, ys = jax.jit(withc)(c, xs, w)
    h, want_ys = np.ones(3, np.float32), [None] * 5
    for t in reversed(range(5)):
        want_ys[t] = h * 0.5
        h = np.tanh(h * 0.5 + 1.0)
    np.testing.assert_allclose(np.asarray(carry), h, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ys), np.stack(want_ys), rtol=1e-6)
