"""jacfwd, jacrev, hessian, linear_transpose, holomorphic grad and stop_gradient on
test-local primitives (lax is a higher layer): values against hand-derived Jacobians,
pytree structure, argnums, has_aux, composition with vmap, JAX's errors, and the errors
of primitives missing a rule that these transformations need."""

from __future__ import annotations

import jit_prims
import linear_prims
import numpy as np
import pytest
from linear_prims import add, bcast, make_prim, mul, neg, reduce_sum, sin, transpose

from lamina.interpreters import batching, jit, make_jaxpr
from lamina.interpreters.jaxprs.trace_api import ShapeDtypeStruct
from lamina.interpreters.transformations.ad import deflinear, jvp
from lamina.interpreters.transformations.batching import vmap
from lamina.interpreters.transformations.jacobians import (
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    linear_transpose,
)
from lamina.interpreters.transformations.reverse import grad, value_and_grad
from lamina.interpreters.transformations.stop_gradient import stop_gradient, stop_gradient_p
from lamina.ir import MissingRuleError, dtypes, tree_util

shape_ops = linear_prims.shape_ops  # autouse fixture: vmap moves axes with local primitives
rng = np.random.default_rng(0)
A = rng.standard_normal((2, 3)).astype(np.float32)
X = rng.standard_normal(3).astype(np.float32)
Y = rng.standard_normal(3).astype(np.float32)


def matvec(m, v):
    """``m @ v`` from broadcasting, multiplication and a sum."""
    rows, cols = m.shape
    return reduce_sum(mul(m, bcast(v, (rows, cols), (1,))), (1,))


def f_sin_ax(x):
    return sin(matvec(A, x))  # R^3 -> R^2


def jac_sin_ax(x):
    return np.cos(A @ x)[:, None] * A


def close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# ---------------------------------------------------------------- values


@pytest.mark.parametrize("jac", [jacfwd, jacrev, jacobian])
def test_rn_to_rm_against_hand_derivation(jac):
    J = jac(f_sin_ax)(X)
    assert np.shape(J) == (2, 3)
    close(J, jac_sin_ax(X))


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_elementwise_is_diagonal(jac):
    J = jac(lambda x: mul(sin(x), x))(X)
    close(J, np.diag(np.cos(X) * X + np.sin(X)))


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_matrix_in_matrix_out(jac):
    M = rng.standard_normal((2, 3)).astype(np.float32)
    J = jac(lambda m: transpose(mul(m, m), (1, 0)))(M)  # (3, 2) out, (2, 3) in
    want = np.zeros((3, 2, 2, 3), np.float32)
    for i in range(2):
        for j in range(3):
            want[j, i, i, j] = 2 * M[i, j]
    close(J, want)


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_scalar_input_and_output(jac):
    J = jac(lambda x: mul(sin(x), x))(np.float32(0.7))
    assert np.shape(J) == ()
    close(J, np.cos(0.7) * 0.7 + np.sin(0.7))
    close(jac(lambda x: reduce_sum(sin(x), (0,)))(X), np.cos(X))


def test_jacfwd_equals_jacrev_on_a_pytree_function():
    def f(p):
        return (mul(p["a"], p["b"]), sin(p["a"]), {"s": reduce_sum(p["b"], (0,))})

    p = {"a": X, "b": Y}
    fwd, rev = jacfwd(f)(p), jacrev(f)(p)
    assert tree_util.tree_structure(fwd) == tree_util.tree_structure(rev)
    assert set(fwd[0]) == {"a", "b"} and set(fwd[2]["s"]) == {"a", "b"}
    close(fwd[0]["a"], np.diag(Y))
    close(fwd[0]["b"], np.diag(X))
    close(fwd[1]["a"], np.diag(np.cos(X)))
    close(fwd[1]["b"], np.zeros((3, 3)))  # sin(a) does not depend on b
    close(fwd[2]["s"]["a"], np.zeros(3))
    close(fwd[2]["s"]["b"], np.ones(3))
    for a, b in zip(tree_util.tree_leaves(fwd), tree_util.tree_leaves(rev), strict=True):
        close(a, b)


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_argnums(jac):
    def f(x, y):
        return mul(sin(x), y)

    jx, jy = jac(f, argnums=(0, 1))(X, Y)
    close(jx, np.diag(np.cos(X) * Y))
    close(jy, np.diag(np.sin(X)))
    close(jac(f, argnums=1)(X, Y), np.diag(np.sin(X)))
    close(jac(f, argnums=-1)(X, Y), np.diag(np.sin(X)))
    (single,) = jac(f, argnums=(1,))(X, Y)
    close(single, np.diag(np.sin(X)))
    with pytest.raises(ValueError, match=r"but got value 2 for len\(args\) == 2"):
        jac(f, argnums=2)(X, Y)


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_has_aux(jac):
    J, aux = jac(lambda x: (sin(x), {"x2": mul(x, x)}), has_aux=True)(X)
    close(J, np.diag(np.cos(X)))
    close(aux["x2"], X * X)
    assert not hasattr(aux["x2"], "tangent")


def test_hessian_against_hand_and_composition():
    def g(x):  # sum(sin(x) * x) + x.A^T A x / 2
        return add(reduce_sum(mul(sin(x), x), (0,)), mul(0.5, reduce_sum(mul(x, q(x)), (0,))))

    ata = A.T @ A

    def q(x):
        return matvec(ata, x)

    want = np.diag(2 * np.cos(X) - X * np.sin(X)) + ata
    close(hessian(g)(X), want, rtol=1e-4, atol=1e-5)
    close(jacfwd(jacrev(g))(X), want, rtol=1e-4, atol=1e-5)
    close(jacrev(jacfwd(g))(X), want, rtol=1e-4, atol=1e-5)
    h, aux = hessian(lambda x: (g(x), 7.0), has_aux=True)(X)
    close(h, want, rtol=1e-4, atol=1e-5)
    assert aux == 7.0


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_vmap_of_jacobian_against_loop(jac):
    xs = rng.standard_normal((4, 3)).astype(np.float32)
    got = vmap(jac(f_sin_ax))(xs)
    close(got, np.stack([jac_sin_ax(x) for x in xs]), rtol=1e-5)
    got_t = vmap(jac(f_sin_ax), out_axes=2)(xs)
    close(got_t, np.stack([jac_sin_ax(x) for x in xs], axis=2), rtol=1e-5)


def test_allow_int_gives_float0_blocks():
    J = jacrev(lambda x, n: mul(x, x), argnums=(0, 1), allow_int=True)(X, np.int32(3))
    close(J[0], np.diag(2 * X))
    assert np.asarray(J[1]).dtype == dtypes.float0 and np.shape(J[1]) == (3,)


# ---------------------------------------------------------------- holomorphic


Z = np.array([1 + 2j, -0.5 + 0.3j], np.complex64)


def test_holomorphic_grad_and_jacobians():
    z = np.complex64(0.3 - 1.1j)
    close(grad(lambda z: mul(z, z), holomorphic=True)(z), 2 * z)
    close(grad(sin, holomorphic=True)(z), np.cos(z), rtol=1e-5)
    v, g = value_and_grad(lambda z: mul(sin(z), z), holomorphic=True)(z)
    close(v, np.sin(z) * z, rtol=1e-5)
    close(g, np.cos(z) * z + np.sin(z), rtol=1e-5)
    for jac in (jacfwd, jacrev):
        J = jac(lambda z: mul(sin(z), z), holomorphic=True)(Z)
        assert np.asarray(J).dtype == np.complex64
        close(J, np.diag(np.cos(Z) * Z + np.sin(Z)), rtol=1e-5)


def test_holomorphic_errors():
    z, r = np.complex64(1j), np.float32(2)
    with pytest.raises(TypeError, match="grad with holomorphic=True requires inputs with complex"):
        grad(sin, holomorphic=True)(r)
    with pytest.raises(
        TypeError,
        match=r"grad with holomorphic=True requires outputs with complex dtype, but got float32\.",
    ):
        grad(lambda z: mul(r, r), holomorphic=True)(z)
    with pytest.raises(TypeError) as e:
        grad(lambda z: mul(z, z))(z)
    assert str(e.value) == (
        "grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
        "but got complex64. For holomorphic differentiation, pass holomorphic=True. For "
        "differentiation of non-holomorphic functions involving complex outputs, use jax.vjp "
        "directly."
    )
    with pytest.raises(TypeError, match=r"jacrev requires real-valued outputs .* got complex64"):
        jacrev(lambda x: mul(x, np.complex64(1j)))(X)
    with pytest.raises(TypeError, match="jacfwd with holomorphic=True requires inputs"):
        jacfwd(sin, holomorphic=True)(X)
    with pytest.raises(TypeError, match="jacfwd with holomorphic=True requires outputs"):
        jacfwd(lambda z: mul(r, r), holomorphic=True)(Z)
    with pytest.raises(TypeError, match="jacrev with holomorphic=True requires inputs"):
        jacrev(sin, holomorphic=True)(X)


# ---------------------------------------------------------------- input and output errors


def test_input_dtype_errors():
    with pytest.raises(TypeError) as e:
        jacfwd(sin)(np.int32(1))
    assert str(e.value) == (
        "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), "
        "but got int32. For holomorphic differentiation, pass holomorphic=True. For "
        "differentiation of non-holomorphic functions involving complex inputs or integer "
        "inputs, use jax.jvp directly."
    )
    with pytest.raises(TypeError, match=r"jacfwd requires real-valued inputs .* got complex64"):
        jacfwd(sin)(Z)
    with pytest.raises(TypeError, match=r"jacrev requires real- or complex-valued inputs .*int32"):
        jacrev(sin)(np.int32(1))
    with pytest.raises(TypeError, match=r"jacrev requires real-valued outputs .* got int32\. For "
                       "differentiation of functions with integer outputs"):  # fmt: skip
        jacrev(lambda x: np.int32(1))(X)
    with pytest.raises(TypeError, match="Expected a callable value"):
        jacfwd(3)
    with pytest.raises(TypeError, match="two-element tuple"):
        jacfwd(sin, has_aux=True)(X)


def test_missing_rules_name_primitive_and_transformation():
    nojvp_p = make_prim("nojvp", lambda x: x, lambda x: x)
    notranspose_p = make_prim("notranspose", lambda x: x, lambda x: x)
    deflinear(notranspose_p)
    batching.defvectorized(notranspose_p)
    nobatch_p = make_prim("nobatch", lambda x: x, lambda x: x)
    deflinear(nobatch_p)
    with pytest.raises(MissingRuleError, match="Differentiation rule for 'nojvp' not implemented"):
        jacfwd(nojvp_p.bind)(X)
    with pytest.raises(MissingRuleError, match="Differentiation rule for 'nojvp' not implemented"):
        jacrev(nojvp_p.bind)(X)
    with pytest.raises(MissingRuleError, match=r"Transpose rule .* for 'notranspose' not"):
        jacrev(notranspose_p.bind)(X)
    with pytest.raises(MissingRuleError, match=r"Transpose rule .* for 'notranspose' not"):
        linear_transpose(notranspose_p.bind, X)(X)
    with pytest.raises(MissingRuleError, match="Batching rule for 'nobatch' not implemented"):
        jacfwd(nobatch_p.bind)(X)
    assert jacfwd(nobatch_p.bind)(np.float32(2.0)) == 1.0  # scalar input: no vmap needed


# ---------------------------------------------------------------- linear_transpose


def test_linear_transpose_is_the_matrix_transpose():
    f_t = linear_transpose(lambda v: matvec(A, v), X)
    ct = rng.standard_normal(2).astype(np.float32)
    (got,) = f_t(ct)
    close(got, A.T @ ct)
    (tr,) = linear_transpose(lambda m: transpose(m, (1, 0)), A)(A.T)
    close(tr, A)
    (summed,) = linear_transpose(lambda m: reduce_sum(m, (1,)), A)(np.float32([1, 2]))
    close(summed, np.float32([[1] * 3, [2] * 3]))
    (b,) = linear_transpose(lambda v: bcast(v, (2, 3), (1,)), X)(A)
    close(b, A.sum(0))


def test_linear_transpose_pytrees_and_shape_dtype_structs():
    spec = ShapeDtypeStruct((3,), np.float32)

    def f(x, y):
        return {"sum": add(x, neg(y)), "x": x}

    f_t = linear_transpose(f, spec, spec)
    gx, gy = f_t({"sum": X, "x": Y})
    close(gx, X + Y)
    close(gy, -X)
    (zero,) = linear_transpose(lambda x: np.float32(1.0), np.float32(0))(np.float32(3))
    close(zero, 0.0)  # no cotangent reaches x
    assert isinstance(f_t, tree_util.Partial)


def test_linear_transpose_errors():
    f_t = linear_transpose(lambda v: matvec(A, v), X)
    with pytest.raises(TypeError, match="cotangent tree does not match function output"):
        f_t((np.ones(2, np.float32),))
    with pytest.raises(TypeError) as e:
        f_t(np.ones(3, np.float32))
    assert str(e.value).startswith(
        "cotangent type does not match function output, expected [ShapedArray(float32[2])] "
        "but got ["
    )
    with pytest.raises(TypeError, match="cotangent type does not match"):
        f_t(np.ones(2, np.int32))
    with pytest.raises(TypeError) as e:
        linear_transpose(lambda n: X, np.int32(1))
    assert str(e.value) == (
        "linear_transpose only supports [float or complex] -> [float or complex], and "
        "integer -> integer functions, but got [dtype('int32')] -> [dtype('float32')]."
    )
    with pytest.raises(NotImplementedError, match="reduce_axes argument to transpose"):
        linear_transpose(sin, X, reduce_axes=("i",))
    with pytest.raises(NotImplementedError, match=r"Transpose rule .* for 'sin'"):
        linear_transpose(sin, X)(X)  # not linear


# ---------------------------------------------------------------- stop_gradient


def test_stop_gradient_under_grad_jvp_vmap():
    x = np.float32(3.0)
    close(grad(lambda x: mul(stop_gradient(x), x))(x), 3.0)
    close(grad(lambda x: stop_gradient(mul(x, x)))(x), 0.0)
    # Nested differentiation: the inner grad's result is stopped for the outer one too.
    close(grad(grad(lambda x: mul(stop_gradient(x), mul(x, x))))(x), 2 * 3.0)
    y, t = jvp(lambda x: mul(stop_gradient(x), x), (x,), (np.float32(1),))
    close(y, 9.0)
    close(t, 3.0)
    _, t = jvp(stop_gradient_p.bind, (x,), (np.float32(1),))  # the primitive's own rule
    close(t, 0.0)
    xs = rng.standard_normal((3, 2)).astype(np.float32)
    close(vmap(stop_gradient, in_axes=1, out_axes=1)(xs), xs)
    text = str(make_jaxpr(vmap(stop_gradient, in_axes=1, out_axes=1))(xs))
    assert "transpose" not in text and "stop_gradient" in text, text  # batch dim stays


def test_stop_gradient_jaxpr_pytrees_and_integers():
    assert str(make_jaxpr(stop_gradient)(np.float32(1))) == (
        "{ lambda ; a:f32[]. let b:f32[] = stop_gradient a in (b,) }"
    )
    text = str(make_jaxpr(lambda x, n: stop_gradient((x, n)))(np.float32(1), np.int32(2)))
    assert text == "{ lambda ; a:f32[] b:i32[]. let c:f32[] = stop_gradient a in (c, b) }"
    n = np.int32(4)
    assert stop_gradient(n) is n
    out = stop_gradient({"a": X, "n": 3})
    close(out["a"], X)
    assert out["n"] == 3
    with pytest.raises(TypeError, match="stop_gradient only works on valid JAX arrays"):
        stop_gradient_p.bind("not an array")


def test_stop_gradient_lowers_to_its_operand():
    f = jit(lambda x: jit_prims.add(stop_gradient(x), x))
    close(f(X), 2 * X)
    close(jit(stop_gradient)(X), X)


def test_functions_returning_no_arrays():
    # recorded from JAX 0.10.2: jacrev and hessian need an output dtype; jacfwd returns
    # the empty output; grad wants a scalar.
    for transform in (jacrev, hessian):
        with pytest.raises(ValueError) as info:
            transform(lambda x: None)(1.0)
        assert str(info.value) == "at least one array or dtype is required"
    assert jacfwd(lambda x: None)(1.0) is None
    for transform in (grad, value_and_grad):
        with pytest.raises(TypeError) as info:
            transform(lambda x: None)(1.0)
        assert (
            str(info.value) == "Gradient only defined for scalar-output functions. Output was None."
        )
