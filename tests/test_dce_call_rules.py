"""Dead-code elimination through ``custom_jvp_call``, ``custom_vjp_call`` and ``remat2``:
the pruned Jaxprs and ``jit``'s modules match JAX 0.10.2's, and the pruned custom rules
still differentiate and batch."""

import numpy as np

import lamina as jax
from lamina.extend.core import jaxpr_as_fun
from lamina.interpreters.partial_eval import dce_jaxpr
from lamina.ir import ClosedJaxpr

jnp = jax.numpy


@jax.custom_jvp
def cj(x, y):
    return jnp.sin(x), jnp.cos(y)


@cj.defjvp
def cj_jvp(p, t):
    return cj(*p), (2.0 * t[0], 3.0 * t[1])


@jax.custom_vjp
def cv(x, y):
    return jnp.sin(x), jnp.cos(y)


def cv_fwd(x, y):
    return cv(x, y), (x, y)


def cv_bwd(r, g):
    return (2.0 * g[0], 3.0 * g[1])


cv.defvjp(cv_fwd, cv_bwd)


def f_cj(x, y):
    return cj(x, y)[0]


def f_cv(x, y):
    return cv(x, y)[0]


def f_remat(x, y):
    return jax.checkpoint(lambda x, y: (jnp.sin(x), jnp.cos(y)))(x, y)[0]


# Recorded from JAX 0.10.2: ``pe.dce_jaxpr(make_jaxpr(f)(1.0, 2.0).jaxpr, [True])[0]``.
_CJ = """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = custom_jvp_call[
      name=cj
      call_jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = sin d in (f,) }
      jvp=cj_jvp
      symbolic_zeros=False
    ] a b
  in (c,) }"""
_CV = """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = custom_vjp_call[
      name=cv
      bwd=cv_bwd
      call_jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = sin d in (f,) }
      fwd=cv_fwd
      symbolic_zeros=False
    ] a b
  in (c,) }"""
_REMAT = """{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }
      policy=None
      prevent_cse=True
    ] a
  in (b,) }"""

# Recorded from JAX 0.10.2: ``jax.jit(f).lower(1.0, 2.0).as_text()``.
_ATTRS = "{{mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}}"
_MODULE = (
    "module @jit_{name} attributes "
    + _ATTRS
    + """ {{
  func.func public @main({args}) -> (tensor<f32> {{jax.result_info = "result"}}) {{
    %0 = stablehlo.sine %arg0 : tensor<f32>
    return %0 : tensor<f32>
  }}
}}
"""
)
_TWO = "%arg0: tensor<f32>, %arg1: tensor<f32>"


def _dce(f):
    return dce_jaxpr(jax.make_jaxpr(f)(1.0, 2.0).jaxpr, [True])[0]


def test_dce_prunes_custom_calls_and_checkpoint():
    assert str(_dce(f_cj)) == _CJ
    assert str(_dce(f_cv)) == _CV
    assert str(_dce(f_remat)) == _REMAT


def test_jit_modules_drop_the_dead_outputs():
    assert jax.jit(f_cj).lower(1.0, 2.0).as_text() == _MODULE.format(name="f_cj", args=_TWO)
    assert jax.jit(f_cv).lower(1.0, 2.0).as_text() == _MODULE.format(name="f_cv", args=_TWO)
    one = "%arg0: tensor<f32>"
    assert jax.jit(f_remat).lower(1.0, 2.0).as_text() == _MODULE.format(name="f_remat", args=one)


def _pruned(f):
    return lambda x, y: jaxpr_as_fun(ClosedJaxpr(_dce(f), []), x, y)[0]


def test_pruned_rules_differentiate_and_batch():
    # The custom rules scale by 2 and 3; JAX gives (2.0, 0.0) for both.
    for f in (f_cj, f_cv):
        g = jax.grad(_pruned(f), argnums=(0, 1))(1.0, 2.0)
        np.testing.assert_allclose(np.array(g), [2.0, 0.0])
        xs = jnp.arange(3.0)
        gs = jax.vmap(jax.grad(_pruned(f)), (0, None))(xs, 2.0)
        np.testing.assert_allclose(np.asarray(gs), [2.0, 2.0, 2.0])
    remat = ClosedJaxpr(_dce(f_remat), [])
    g = jax.grad(lambda x: jaxpr_as_fun(remat, x)[0])(1.0)
    np.testing.assert_allclose(g, np.cos(np.float32(1.0)), rtol=1e-6)


# Recorded from JAX 0.10.2 (one CPU device): the pruned Jaxpr of ``f_shard_map``.
_SHARD_MAP = """{ lambda ; a:f32[4]. let
    b:f32[4] = shard_map[
      check_vma=True
      in_specs=(P('i',),)
      jaxpr={ lambda ; c:f32[4]{V:i}. let d:f32[4]{V:i} = sin c in (d,) }
      mesh=Mesh('i': 1, axis_types=(Auto,))
      newly_manual_axes=frozenset({'i'})
      out_specs=(P('i',),)
    ] a
  in (b,) }"""


def test_dce_prunes_shard_map_body_and_specs():
    P = jax.sharding.PartitionSpec
    mesh = jax.sharding.Mesh(jax.devices()[:1], ("i",))
    body = lambda a, b: (jnp.sin(a), jnp.cos(b))  # noqa: E731
    sm = jax.shard_map(body, mesh=mesh, in_specs=(P("i"), P()), out_specs=(P("i"), P()))
    x, y = jnp.arange(4.0), jnp.ones(3)
    pruned = dce_jaxpr(jax.make_jaxpr(lambda x, y: sm(x, y)[0])(x, y).jaxpr, [True])[0]
    assert str(pruned) == _SHARD_MAP
    out = jaxpr_as_fun(ClosedJaxpr(pruned, []), x)[0]
    np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(4.0, dtype=np.float32)))
