# ruff: noqa: E501  (module text recorded from JAX is kept verbatim, one op a line)
"""The while loops lamina emits for scans and batched while loops are built as JAX's:
the same number of carried values, the same reduction of a batched predicate; dead
loop carries, scan outputs and cond outputs are dropped as JAX's DCE drops them."""

import re

import numpy as np

import lamina.lax as lax
from lamina.interpreters import grad, jit, make_jaxpr, vmap
from lamina.interpreters.partial_eval import dce_jaxpr


def _rnn_loss(params, xs):
    w, u, b = params
    h0 = lax.full((xs.shape[1], w.shape[0]), 0.0, w.dtype)

    def step(h, x):
        pre = lax.add(lax.dot(h, w), lax.dot(x, u))
        h = lax.tanh(lax.add(pre, lax.broadcast_in_dim(b, pre.shape, (1,))))
        return h, h

    _, hs = lax.scan(step, h0, xs)
    return lax.reduce_sum(lax.mul(hs, hs), (0, 1, 2))


def _carried(text: str) -> list[int]:
    return [m.count("%iterArg") for m in re.findall(r"stablehlo\.while\(([^)]*)\)", text)]


def test_scan_gradient_loops_carry_what_jax_carries():
    # The bias's broadcast is hoisted out of the forward loop; the bias itself is then
    # read by nothing in it and is not carried. Recorded from JAX 0.10.2: [10, 11].
    params = (np.ones((4, 4), np.float32), np.ones((3, 4), np.float32), np.zeros(4, np.float32))
    xs = np.ones((5, 2, 3), np.float32)
    step = jit(grad(_rnn_loss))
    assert _carried(step.lower(params, xs).as_text()) == [10, 11]
    # recorded from JAX 0.10.2
    sums = [np.asarray(g).sum() for g in step(params, xs)]
    np.testing.assert_allclose(sums, [0.0008839591, 0.47190097, 0.15730031], rtol=1e-5)


def _collatz_steps(n):
    def body(carry):
        value, count = carry
        odd = lax.rem(value, 2) == 1
        return lax.select(odd, 3 * value + 1, value // 2), count + 1

    return lax.while_loop(lambda c: c[0] > 1, body, (n, 0))[1]


def test_batched_while_predicate_is_an_or_reduction():
    starts = np.arange(1, 9, dtype=np.int32)
    batched = jit(vmap(_collatz_steps))
    cond = batched.lower(starts).as_text().split("cond {")[1].split("} do {")[0]
    assert "stablehlo.or" in cond  # as JAX 0.10.2's module
    assert "stablehlo.maximum" not in cond and "stablehlo.convert" not in cond
    # recorded from JAX 0.10.2
    np.testing.assert_array_equal(batched(starts), [0, 1, 7, 2, 5, 8, 16, 3])


# Recorded from JAX 0.10.2: ``pe.dce_jaxpr(make_jaxpr(f)(...).jaxpr, [True])`` and
# ``jit(f).lower(...).as_text()`` of the programs below.
_LOOP_DCE = """\
{ lambda ; a:f32[]. let
    b:f32[] = scan[
      jaxpr={ lambda ; c:f32[]. let
          d:f32[] = mul c 2.0:f32[]
          e:f32[] = add d 1.0:f32[]
        in (e,) }
      length=10
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] a
  in (b,) }"""

_PICK_DCE = """\
{ lambda ; a:bool[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = sub e 1.0:f32[] in (f,) }
        { lambda ; g:f32[]. let h:f32[] = mul g 2.0:f32[] in (h,) }
      )
    ] c b
  in (d,) }"""

_PAIRS_DCE = """\
{ lambda ; a:f32[]. let
    b:f32[4] = iota[dimension=0 dtype=float32 shape=(4,) sharding=None]\x20
    c:f32[] _:f32[] = scan[
      jaxpr={ lambda ; d:f32[] e:f32[] f:f32[]. let
          g:f32[] = mul e 2.0:f32[]
          h:f32[] = add d f
        in (g, h) }
      length=4
      num_carry=2
      num_consts=0
      reverse=False
      unroll=1
    ] a a b
  in (c,) }"""

_LOOP_MODULE = """\
module @jit_loop attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<f32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<f32>
    cond {
      %c_1 = stablehlo.constant dense<10> : tensor<i32>
      %1 = stablehlo.compare LT, %iterArg, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %1 = func.call @closed_call(%iterArg_0) : (tensor<f32>) -> tensor<f32>
      %c_1 = stablehlo.constant dense<1> : tensor<i32>
      %2 = stablehlo.add %iterArg, %c_1 : tensor<i32>
      stablehlo.return %2, %1 : tensor<i32>, tensor<f32>
    }
    return %0#1 : tensor<f32>
  }
  func.func private @closed_call(%arg0: tensor<f32>) -> tensor<f32> {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.multiply %arg0, %cst : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.add %0, %cst_0 : tensor<f32>
    return %1 : tensor<f32>
  }
}
"""

_PICK_MODULE = """\
module @jit_pick attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i1>, %arg1: tensor<f32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<i1>) -> tensor<i32>
    %1 = "stablehlo.case"(%0) ({
      %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %2 = stablehlo.subtract %arg1, %cst : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }, {
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %2 = stablehlo.multiply %arg1, %cst : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<i32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
}
"""


def loop(x):
    return lax.fori_loop(0, 10, lambda i, c: c * 2.0 + 1.0, x)


def pick(p, x, y):
    branches = (lambda x, y: (x * 2.0, y + 1.0), lambda x, y: (x - 1.0, y * y))
    return lax.cond(p, *branches, x, y)[0]


def pairs(x):
    def body(c, xs):
        a, b, k = c
        return (b * 2.0, a + xs, k + 1.0), a

    return lax.scan(body, (x, x, x), lax.iota(np.float32, 4))[0][0]


def test_dce_drops_dead_scan_carries_and_ys():
    x = np.float32(1.0)
    # The loop index of fori_loop's body is carried by nothing that is read.
    assert str(dce_jaxpr(make_jaxpr(loop)(x).jaxpr, [True])[0]) == _LOOP_DCE
    # b feeds a, so it stays; k and the ys go.
    assert str(dce_jaxpr(make_jaxpr(pairs)(x).jaxpr, [True])[0]) == _PAIRS_DCE
    assert float(pairs(x)) == 8.0  # recorded from JAX 0.10.2


def test_dce_drops_unused_cond_outputs_and_operands():
    x = np.float32(1.0)
    assert str(dce_jaxpr(make_jaxpr(pick)(True, x, x).jaxpr, [True])[0]) == _PICK_DCE
    assert jit(pick).lower(True, x, x).as_text() == _PICK_MODULE
    # recorded from JAX 0.10.2
    assert (float(jit(pick)(True, x, x)), float(jit(pick)(False, x, x))) == (2.0, 0.0)


def test_fori_loop_module_is_jaxs():
    x = np.float32(1.0)
    assert jit(loop).lower(x).as_text() == _LOOP_MODULE
    assert float(jit(loop)(x)) == 2047.0  # recorded from JAX 0.10.2


def test_while_keeps_an_unused_carry_as_jax_does():
    # JAX 0.10.2 has no DCE rule for while: the loop below carries 3 values there too.
    def f(x):
        def body(c):
            i, a, b = c
            return i + 1, a * 2.0, b + a

        return lax.while_loop(lambda c: c[0] < 10, body, (0, x, x))[1]

    x = np.float32(1.0)
    assert _carried(jit(f).lower(x).as_text()) == [3]
    assert float(jit(f)(x)) == 1024.0  # recorded from JAX 0.10.2
