"""``lamina.custom_derivatives``'s ``linear_call``, ``custom_vjp_primal_tree_values`` and
``remat_opt_p``. Expected values recorded from JAX 0.10.2."""

from functools import partial

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina.custom_derivatives import (
    CustomVJPPrimal,
    custom_vjp,
    custom_vjp_primal_tree_values,
    linear_call,
    remat_opt_p,
)
from lamina.interpreters import partial_eval as pe


def _div(r, x):
    return x / r


def _div_t(r, t):
    return t / r


def _div_add(x, denom):
    return x + linear_call(_div, _div_t, denom, x)


def _transpose(f, x_example):
    def transposed(y):
        (x,) = jax.linear_transpose(f, x_example)(y)
        return x

    return transposed


def _custom_id(x):
    return linear_call(lambda _, x: x, lambda _, t: 7.0, (), x)


def test_linear_call_docstring_examples():
    # recorded from JAX 0.10.2 (the examples of linear_call's docstring)
    assert float(_div_add(9.0, 3.0)) == 12.0
    assert float(jax.jit(_div_add)(9.0, 3.0)) == 12.0
    assert float(_transpose(partial(_div_add, denom=3.0), 1.0)(18.0)) == 24.0
    assert float(_custom_id(1.0)) == 1.0
    assert float(_transpose(_custom_id, 1.0)(1.0)) == 7.0
    assert float(_transpose(_transpose(_custom_id, 1.0), 1.0)(1.0)) == 1.0
    assert float(_transpose(_transpose(_transpose(_custom_id, 1.0), 1.0), 1.0)(1.0)) == 7.0


def test_linear_call_derivatives():
    # recorded from JAX 0.10.2
    y, t = jax.jvp(lambda x: linear_call(_div, _div_t, 3.0, x), (9.0,), (1.0,))
    assert float(y) == 3.0
    np.testing.assert_allclose(t, 0.33333334, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda x: linear_call(_div, _div_t, 3.0, x))(9.0), 1 / 3)
    # grad goes through the user's transpose, not the callee's
    scaled = lambda x: 2 * linear_call(lambda r, x: x * r, lambda r, c: c * 100.0, 3.0, x)  # noqa: E731
    assert float(jax.grad(scaled)(9.0)) == 200.0
    y, vjp = jax.vjp(lambda x: linear_call(_div, lambda r, c: c * 10.0, 2.0, x), 4.0)
    assert float(y) == 2.0 and float(vjp(1.0)[0]) == 10.0


def test_linear_call_pytrees():
    def fa(r, xs):
        return {"a": xs[0] * r["s"], "b": xs[1]}

    def ta(r, ct):
        return (ct["a"] * r["s"], ct["b"] * 3.0)

    out = linear_call(fa, ta, {"s": 2.0}, (1.0, jnp.ones(2)))
    # recorded from JAX 0.10.2
    assert float(out["a"]) == 2.0
    np.testing.assert_array_equal(out["b"], np.ones(2, np.float32))
    f = lambda xs: linear_call(fa, ta, {"s": 2.0}, xs)  # noqa: E731
    ((a, b),) = jax.linear_transpose(f, (1.0, jnp.ones(2)))({"a": 1.0, "b": jnp.ones(2)})
    assert float(a) == 2.0
    np.testing.assert_array_equal(b, np.full(2, 3.0, np.float32))
    bad = lambda xs: linear_call(fa, lambda r, ct: ct["a"], {"s": 2.0}, xs)  # noqa: E731
    with pytest.raises(
        TypeError,
        match=r"transpose output pytree structure must match that of linear inputs, "
        r"got output structure PyTreeDef\(\*\) and input structure PyTreeDef\(\(\*, \*\)\)\.",
    ):
        jax.linear_transpose(bad, (1.0, jnp.ones(2)))({"a": 1.0, "b": jnp.ones(2)})


def test_linear_call_limits():
    # recorded from JAX 0.10.2: residuals cannot be differentiated (an AssertionError
    # in JAX) and there is no batching rule
    with pytest.raises(AssertionError):
        jax.jvp(lambda r: linear_call(_div, _div_t, r, 9.0), (3.0,), (1.0,))
    with pytest.raises(AssertionError):
        jax.grad(lambda r: linear_call(_div, _div_t, r, 9.0))(3.0)
    with pytest.raises(NotImplementedError, match="Batching rule for 'linear_call'"):
        jax.vmap(lambda x: linear_call(_div, _div_t, 2.0, x))(jnp.array([4.0, 6.0]))


def test_linear_call_jaxpr():
    # recorded from JAX 0.10.2: one linear_call equation, residuals before linear operands
    jaxpr = jax.make_jaxpr(_div_add)(9.0, 3.0)
    (eqn, add) = jaxpr.eqns
    assert eqn.primitive.name == "linear_call" and add.primitive.name == "add"
    assert eqn.params["num_res"] == 1 and eqn.params["num_callee_consts"] == 0
    assert (
        str(eqn.params["callee"]) == "{ lambda ; a:f32[] b:f32[]. let c:f32[] = div b a in (c,) }"
    )
    assert eqn.invars == [jaxpr.jaxpr.invars[1], jaxpr.jaxpr.invars[0]]


def test_custom_vjp_primal_tree_values():
    tree = {"a": CustomVJPPrimal(1.0, True), "b": [CustomVJPPrimal(2.0, False)]}
    assert custom_vjp_primal_tree_values(tree) == {"a": 1.0, "b": [2.0]}
    with pytest.raises(TypeError, match="unexpected leaf type <class 'float'>"):
        custom_vjp_primal_tree_values({"a": 1.0})

    @custom_vjp
    def f(x, y):
        return x * y

    def fwd(x, y):
        x, y = custom_vjp_primal_tree_values((x, y))
        return x * y, (x, y)

    f.defvjp(fwd, lambda res, g: (g * res[1], g * res[0]), symbolic_zeros=True)
    assert float(jax.grad(f)(2.0, 5.0)) == 5.0


def _fwd_jaxpr():
    return jax.make_jaxpr(lambda x: [jnp.cos(x), jnp.sin(x)])(1.0)


def _remat_opt(x):
    fun = jax.make_jaxpr(lambda x: [jnp.sin(x)])(1.0)
    return remat_opt_p.bind(
        x,
        num_consts=0,
        num_res=1,
        fwd_jaxpr=_fwd_jaxpr(),
        fun_jaxpr_thunk=lambda: (fun.jaxpr, fun.consts),
    )


def test_remat_opt_primitive():
    # JAX 0.10.2's remat_opt: outputs are the fwd's residuals then its outputs
    assert remat_opt_p.name == "remat_opt" and remat_opt_p.multiple_results
    cos1, sin1 = np.cos(np.float32(1)), np.sin(np.float32(1))
    for fn in (_remat_opt, jax.jit(_remat_opt)):
        res, out = fn(1.0)
        np.testing.assert_allclose([res, out], [cos1, sin1], rtol=1e-6)
    (res, out), (res_dot, out_dot) = jax.jvp(_remat_opt, (1.0,), (2.0,))
    np.testing.assert_allclose([res_dot, out_dot], [-2 * sin1, 2 * cos1], rtol=1e-6)
    res, out = jax.vmap(_remat_opt)(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(out, np.sin([1.0, 2.0]), rtol=1e-6)


def test_remat_opt_dce():
    # as JAX 0.10.2's DCE rule does: with no residual used, the plain function
    # runs instead (a call); with residuals used, the fwd Jaxpr is pruned
    jaxpr = jax.make_jaxpr(_remat_opt)(1.0).jaxpr
    only_out, _ = pe.dce_jaxpr(jaxpr, [False, True])
    (eqn,) = only_out.eqns
    assert eqn.primitive.name == "jit"
    assert [e.primitive.name for e in eqn.params["jaxpr"].jaxpr.eqns] == ["sin"]
    only_res, _ = pe.dce_jaxpr(jaxpr, [True, False])
    (eqn,) = only_res.eqns
    assert eqn.primitive is remat_opt_p and eqn.params["num_res"] == 1
    assert [e.primitive.name for e in eqn.params["fwd_jaxpr"].jaxpr.eqns] == ["cos"]


def test_remat_opt_has_no_reverse_mode():
    # recorded from JAX 0.10.2 (grad of grad of a remat-optimized custom_vjp)
    with pytest.raises(ValueError, match="Linearization failed"):
        jax.grad(lambda x: _remat_opt(x)[1])(1.0)


def _sin_remat_opt():
    @custom_vjp
    def sn(x):
        return jnp.sin(x)

    sn.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (g * c,), optimize_remat=True)
    return sn


def test_optimize_remat_stages_fwd_as_remat_opt():
    sn = _sin_remat_opt()
    # recorded from JAX 0.10.2: grad's Jaxpr is one remat_opt equation, then the bwd
    jaxpr = jax.make_jaxpr(jax.grad(sn))(1.0)
    eqn = jaxpr.eqns[0]
    assert eqn.primitive is remat_opt_p
    assert (eqn.params["num_consts"], eqn.params["num_res"]) == (0, 1)
    assert [e.primitive.name for e in eqn.params["fwd_jaxpr"].jaxpr.eqns] == ["sin", "cos"]
    # recorded from JAX 0.10.2
    np.testing.assert_allclose(sn(1.0), 0.84147096, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(sn)(1.0), 0.5403023, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.grad(sn))(jnp.ones(2)), [0.5403023] * 2, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(jax.checkpoint(sn))(1.0), 0.5403023, rtol=1e-6)
    with pytest.raises(ValueError, match="Linearization failed"):
        jax.grad(jax.grad(sn))(1.0)
