"""checkpoint / remat on test-local primitives (lax is a higher layer): the primitive's
printed form and rules, values under every transformation, what each policy saves
(read from the Jaxpr of the backward pass), checkpoint_name, the optimization barrier
of the lowering, static_argnums, pytrees and JAX's errors."""

import functools

import jit_prims
import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina.interpreters import batching, jit, make_jaxpr
from lamina.interpreters.core.errors import ConcretizationTypeError
from lamina.interpreters.jaxprs.calls import eval_jaxpr
from lamina.interpreters.runtime.dispatch import def_standard_impl
from lamina.interpreters.test_util import check_grads
from lamina.interpreters.transformations.ad import defjvp2, deflinear, jvp
from lamina.interpreters.transformations.batching import vmap
from lamina.interpreters.transformations.checkpoint import (
    checkpoint,
    checkpoint_name,
    checkpoint_p,
    checkpoint_policies,
    remat,
)
from lamina.interpreters.transformations.reverse import (
    grad,
    is_undefined_primal,
    linearize,
    value_and_grad,
    vjp,
)
from lamina.ir import Primitive, PrimitiveRegistry, parse_jaxpr

# ----------------------------------------------------------------- test primitives

sin_p = jit_prims._unary("sin", hlo.sine)
cos_p = jit_prims._unary("cos", hlo.cosine)
neg_p = jit_prims._unary("neg", hlo.negate)
mul_p = jit_prims._binary("mul", hlo.multiply)
add_p = jit_prims._binary("add", hlo.add)
sin, cos, neg = sin_p.bind, cos_p.bind, neg_p.bind


def mul(x, y):
    return mul_p.bind(x, y)


defjvp2(sin_p, lambda t, ans, x: mul(t, cos(x)))
defjvp2(cos_p, lambda t, ans, x: neg(mul(t, sin(x))))
defjvp2(mul_p, lambda t, ans, x, y: mul(t, y), lambda t, ans, x, y: mul(x, t))
deflinear(neg_p)
deflinear(add_p)
mul_p.def_transpose(
    lambda ct, x, y: [mul(ct, y), None] if is_undefined_primal(x) else [None, mul(x, ct)]
)
neg_p.def_transpose(lambda ct, x: [neg(ct)])
add_p.def_transpose(lambda ct, x, y: [ct, ct])
for _p in (sin_p, cos_p, neg_p):
    batching.defvectorized(_p)
for _p in (mul_p, add_p):
    batching.defbroadcasting(_p)

# A stand-in for lax's dot_general (elementwise here): policies know dots by name.
dot_p = Primitive("dot_general", registry=None)
dot_p.def_abstract_eval(lambda x, y, *, dimension_numbers: x)
dot_p.def_lowering(lambda ctx, x, y, *, dimension_numbers: [hlo.multiply(x, y)])
def_standard_impl(dot_p)
NO_BATCH = (((), ()), ((), ()))
BATCHED = (((), ()), ((0,), (0,)))


def dot(x, y, dims=NO_BATCH):
    return dot_p.bind(x, y, dimension_numbers=dims)


def _dot_jvp(primals, tangents, *, dimension_numbers):
    (x, y), (tx, ty) = primals, tangents
    out = dot(x, y, dimension_numbers)
    return out, add_p.bind(dot(tx, y, dimension_numbers), dot(x, ty, dimension_numbers))


dot_p.def_jvp(_dot_jvp)
dot_p.def_transpose(
    lambda ct, x, y, *, dimension_numbers: (
        [dot(ct, y, dimension_numbers), None]
        if is_undefined_primal(x)
        else [None, dot(x, ct, dimension_numbers)]
    )
)

REGISTRY = PrimitiveRegistry()  # the test primitives, by name, for the parser
for _p in (sin_p, cos_p, neg_p, mul_p, add_p, dot_p, checkpoint_p):
    REGISTRY.register(_p)

X = np.float32(0.7)
XS = np.linspace(-1.2, 1.3, 5).astype(np.float32)


def sin_sin(x):
    return sin(sin(x))


def d_sin_sin(x):
    return np.cos(np.sin(x)) * np.cos(x)


def dd_sin_sin(x):
    return -np.sin(np.sin(x)) * np.cos(x) ** 2 - np.cos(np.sin(x)) * np.sin(x)


# ----------------------------------------------------------------- Jaxpr helpers


def eqns_of(fun, *args):
    return make_jaxpr(fun)(*args).jaxpr.eqns


def backward_eqn(fun, *args):
    """The one ``checkpoint`` equation with differentiated=True in the Jaxpr of ``fun``."""
    found = [
        e for e in eqns_of(fun, *args) if e.primitive is checkpoint_p and e.params["differentiated"]
    ]
    assert len(found) == 1, found
    return found[0]


def prim_names(jaxpr):
    return [e.primitive.name for e in jaxpr.eqns]


# ----------------------------------------------------------------- the primitive


def test_printed_jaxpr_has_jaxs_form():
    text = str(make_jaxpr(checkpoint(sin_sin))(X))
    assert text == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = remat2[\n"
        "      differentiated=False\n"
        "      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c; e:f32[] = sin d in (e,) }\n"
        "      policy=None\n"
        "      prevent_cse=True\n"
        "    ] a\n"
        "  in (b,) }"
    ), text


def test_printed_jaxpr_parses_back_and_runs():
    jaxpr = make_jaxpr(grad(checkpoint(sin_sin)))(X).jaxpr
    parsed = parse_jaxpr(str(jaxpr), registry=REGISTRY)
    assert str(parsed) == str(jaxpr)
    (out,) = eval_jaxpr(parsed, [], X)
    np.testing.assert_allclose(out, d_sin_sin(X), rtol=1e-6)


def test_constants_become_operands_of_an_open_jaxpr():
    w = np.arange(3, dtype=np.float32)
    (eqn,) = eqns_of(checkpoint(lambda x: mul(x, w)), np.ones(3, np.float32))
    assert eqn.params["jaxpr"].constvars == []
    assert len(eqn.invars) == len(eqn.params["jaxpr"].invars) == 2
    np.testing.assert_allclose(checkpoint(lambda x: mul(x, w))(np.ones(3, np.float32)), w)


def test_values_eager_and_under_jit():
    f = checkpoint(sin_sin)
    np.testing.assert_allclose(f(XS), np.sin(np.sin(XS)), rtol=1e-6)
    np.testing.assert_allclose(jit(f)(XS), np.sin(np.sin(XS)), rtol=1e-6)
    assert remat is checkpoint


def test_decorator_and_partial_forms():
    @checkpoint
    def f(x):
        return sin_sin(x)

    @functools.partial(checkpoint, policy=checkpoint_policies.everything_saveable)
    def g(x):
        return sin_sin(x)

    assert f.__name__ == "f"
    np.testing.assert_allclose(grad(f)(X), d_sin_sin(X), rtol=1e-6)
    np.testing.assert_allclose(grad(g)(X), d_sin_sin(X), rtol=1e-6)


def test_pytrees_and_keyword_arguments():
    @checkpoint
    def f(d, scale=None):
        return {"s": sin(d["x"]), "p": (mul(d["y"], scale), d["x"])}

    d = {"x": X, "y": np.float32(2.0)}
    out = f(d, scale=np.float32(3.0))
    np.testing.assert_allclose(out["s"], np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(out["p"][0], 6.0)
    np.testing.assert_allclose(out["p"][1], X)

    def loss(d):
        out = f(d, scale=np.float32(3.0))
        return add_p.bind(out["s"], out["p"][0])

    g = grad(loss)(d)
    np.testing.assert_allclose(g["x"], np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(g["y"], 3.0)


def test_static_argnums():
    @functools.partial(checkpoint, static_argnums=(1,))
    def f(x, use_sin):
        return sin(x) if use_sin else cos(x)

    np.testing.assert_allclose(f(X, True), np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(grad(f)(X, False), -np.sin(X), rtol=1e-6)
    g = checkpoint(lambda x, fns: fns[0](x), static_argnums=-1)  # unhashable: a list
    np.testing.assert_allclose(grad(g)(X, [cos]), -np.sin(X), rtol=1e-6)


def test_static_argnums_errors():
    with pytest.raises(TypeError, match="must be an int, tuple of ints or, bool, but got value"):
        checkpoint(sin_sin, static_argnums=[0])
    with pytest.raises(ValueError, match="greater than or equal to `-len\\(args\\)`"):
        checkpoint(sin_sin, static_argnums=(1,))(X)


def test_python_control_flow_on_traced_values_suggests_static_argnums():
    def f(x):
        return sin(x) if x else x

    with pytest.raises(ConcretizationTypeError, match="Consider using the `static_argnums`"):
        checkpoint(f)(X)


def test_non_array_argument_is_a_type_error():
    with pytest.raises(TypeError, match="is not a valid JAX type"):
        checkpoint(sin_sin)("hello")


# ----------------------------------------------------------------- transformations


def test_jvp_is_a_checkpoint_of_the_jvp():
    f = checkpoint(sin_sin)
    y, t = jvp(f, (X,), (np.float32(2.0),))
    np.testing.assert_allclose(y, np.sin(np.sin(X)), rtol=1e-6)
    np.testing.assert_allclose(t, 2 * d_sin_sin(X), rtol=1e-6)
    (eqn,) = eqns_of(lambda x: jvp(f, (x,), (x,)), X)
    assert eqn.primitive is checkpoint_p and not eqn.params["differentiated"]
    assert len(eqn.outvars) == 2 and prim_names(eqn.params["jaxpr"]).count("cos") == 2


def test_jvp_keeps_symbolic_zeros():
    f = checkpoint(lambda x, y: (sin(x), mul(y, y)))
    (eqn,) = eqns_of(lambda x, y: jvp(lambda a: f(a, y), (x,), (x,)), X, X)
    # Only x has a tangent: one tangent output, no tangent input for y.
    assert len(eqn.invars) == 3 and len(eqn.outvars) == 3


def test_vmap():
    f = checkpoint(lambda x, y: mul(sin(x), y))
    np.testing.assert_allclose(vmap(f)(XS, XS), np.sin(XS) * XS, rtol=1e-6)
    np.testing.assert_allclose(vmap(f, (0, None))(XS, X), np.sin(XS) * X, rtol=1e-6)
    (eqn,) = eqns_of(vmap(f), XS, XS)
    assert eqn.primitive is checkpoint_p and eqn.params["jaxpr"].in_avals[0].shape == (5,)


def test_grad_under_every_composition():
    f = checkpoint(sin_sin)
    np.testing.assert_allclose(grad(f)(X), d_sin_sin(X), rtol=1e-6)
    np.testing.assert_allclose(jit(grad(f))(X), d_sin_sin(X), rtol=1e-6)
    np.testing.assert_allclose(grad(jit(f))(X), d_sin_sin(X), rtol=1e-6)
    np.testing.assert_allclose(vmap(grad(f))(XS), d_sin_sin(XS), rtol=1e-6)
    np.testing.assert_allclose(grad(grad(f))(X), dd_sin_sin(X), rtol=1e-5)
    np.testing.assert_allclose(jit(grad(grad(f)))(X), dd_sin_sin(X), rtol=1e-5)
    v, g = value_and_grad(f)(X)
    np.testing.assert_allclose([v, g], [np.sin(np.sin(X)), d_sin_sin(X)], rtol=1e-6)


def test_check_grads_numerically():
    f = checkpoint(lambda x, y: mul(sin(mul(x, y)), cos(x)))
    check_grads(f, (XS, XS[::-1].copy()), order=2)
    g = checkpoint(f, policy=checkpoint_policies.everything_saveable)
    check_grads(g, (XS, XS[::-1].copy()), order=2, modes="rev")


def test_vjp_with_several_outputs_and_zero_cotangents():
    f = checkpoint(lambda x: (sin(x), cos(x)))
    _, f_vjp = vjp(f, XS)
    (ct,) = f_vjp((np.ones(5, np.float32), np.zeros(5, np.float32)))
    np.testing.assert_allclose(ct, np.cos(XS), rtol=1e-6)
    (ct,) = f_vjp((np.zeros(5, np.float32), np.ones(5, np.float32)))
    np.testing.assert_allclose(ct, -np.sin(XS), rtol=1e-6)


def test_linearize_stages_a_differentiated_checkpoint():
    y, f_jvp = linearize(checkpoint(sin_sin), X)
    np.testing.assert_allclose(y, np.sin(np.sin(X)), rtol=1e-6)
    np.testing.assert_allclose(f_jvp(np.float32(3.0)), 3 * d_sin_sin(X), rtol=1e-6)


# ----------------------------------------------------------------- policies


def test_nothing_saveable_recomputes_the_primal_in_the_backward_pass():
    for policy in (None, checkpoint_policies.nothing_saveable):
        f = checkpoint(sin_sin, policy=policy)
        forward = [e.primitive.name for e in eqns_of(grad(f), X)]
        assert forward == ["sin", "sin", "remat2"], forward  # primal work once, now
        eqn = backward_eqn(grad(f), X)
        inner = prim_names(eqn.params["jaxpr"])
        assert inner.count("sin") == 1 and inner.count("cos") == 2, inner
        assert len(eqn.invars) == 2  # only x (and the cotangent) are saved


def test_everything_saveable_recomputes_nothing():
    f = checkpoint(sin_sin, policy=checkpoint_policies.everything_saveable)
    eqn = backward_eqn(grad(f), X)
    assert prim_names(eqn.params["jaxpr"]) == ["mul", "mul"]
    assert len(eqn.invars) == 3  # cos x, cos(sin x) and the cotangent


def dot_sin(x):
    return sin(dot(sin(x), x))


def d_dot_sin(x):
    s = np.sin(x)
    return np.cos(s * x) * (np.cos(x) * x + s)


@pytest.mark.parametrize(
    "policy, dots_recomputed",
    [
        (checkpoint_policies.nothing_saveable, True),
        (checkpoint_policies.dots_saveable, False),
        (checkpoint_policies.checkpoint_dots, False),
        (checkpoint_policies.dots_with_no_batch_dims_saveable, False),
        (checkpoint_policies.everything_saveable, False),
    ],
)
def test_dot_policies(policy, dots_recomputed):
    f = checkpoint(dot_sin, policy=policy)
    np.testing.assert_allclose(grad(f)(X), d_dot_sin(X), rtol=1e-5)
    inner = prim_names(backward_eqn(grad(f), X).params["jaxpr"])
    # The backward pass transposes two dots; recomputing adds the primal one.
    assert inner.count("dot_general") == (3 if dots_recomputed else 2), inner
    assert ("cos" in inner) == (policy is not checkpoint_policies.everything_saveable), inner


def test_dots_with_batch_dims_are_not_saved_by_the_no_batch_dims_policy():
    def f(x, dims):
        return sin(dot(sin(x), x, dims))

    for dims, saved in ((NO_BATCH, True), (BATCHED, False)):
        g = checkpoint(
            f, static_argnums=1, policy=checkpoint_policies.dots_with_no_batch_dims_saveable
        )
        inner = prim_names(backward_eqn(grad(g), X, dims).params["jaxpr"])
        assert inner.count("dot_general") == (2 if saved else 3), (dims, inner)
        np.testing.assert_allclose(grad(g)(X, dims), d_dot_sin(X), rtol=1e-5)
        # dots_saveable saves either kind.
        h = checkpoint(f, static_argnums=1, policy=checkpoint_policies.dots_saveable)
        assert prim_names(backward_eqn(grad(h), X, dims).params["jaxpr"]).count("dot_general") == 2


def named_sin_sin(x):
    return sin(checkpoint_name(sin(x), "hidden"))


@pytest.mark.parametrize(
    "policy, saves_hidden",
    [
        (checkpoint_policies.save_only_these_names("hidden"), True),
        (checkpoint_policies.save_only_these_names("other"), False),
        (checkpoint_policies.save_any_names_but_these("other"), True),
        (checkpoint_policies.save_any_names_but_these("hidden"), False),
        (
            checkpoint_policies.save_from_both_policies(
                checkpoint_policies.dots_saveable,
                checkpoint_policies.save_only_these_names("hidden"),
            ),
            True,
        ),
    ],
)
def test_name_policies(policy, saves_hidden):
    f = checkpoint(named_sin_sin, policy=policy)
    np.testing.assert_allclose(grad(f)(X), d_sin_sin(X), rtol=1e-6)
    inner = prim_names(backward_eqn(grad(f), X).params["jaxpr"])
    assert ("sin" in inner) == (not saves_hidden), inner
    assert ("name" in inner) == (not saves_hidden), inner


def test_save_anything_except_these_names():
    def square_of_named(x):
        h = checkpoint_name(sin(x), "hidden")
        return mul(h, h)

    for excluded, recomputed in (("hidden", ["name"]), ("other", [])):
        policy = checkpoint_policies.save_anything_except_these_names(excluded)
        f = checkpoint(square_of_named, policy=policy)
        np.testing.assert_allclose(grad(f)(X), 2 * np.sin(X) * np.cos(X), rtol=1e-6)
        inner = prim_names(backward_eqn(grad(f), X).params["jaxpr"])
        # The unnamed sin(x) is saved either way; the named value only if allowed.
        assert [p for p in inner if p not in ("mul", "add_any")] == recomputed, inner


def test_checkpoint_name():
    tree = {"a": X, "b": (XS,)}
    out = checkpoint_name(tree, "t")
    np.testing.assert_allclose(out["b"][0], XS)
    text = str(make_jaxpr(lambda x: checkpoint_name(x, "t"))(X))
    assert "name[name=t] a" in text, text
    # JVP names the primal only; batching and transposition pass values through.
    assert prim_names(make_jaxpr(lambda x: jvp(named_sin_sin, (x,), (x,)))(X)).count("name") == 1
    np.testing.assert_allclose(grad(named_sin_sin)(X), d_sin_sin(X), rtol=1e-6)
    np.testing.assert_allclose(vmap(named_sin_sin)(XS), np.sin(np.sin(XS)), rtol=1e-6)
    np.testing.assert_allclose(grad(lambda x: checkpoint_name(x, "t"))(X), 1.0)


# ----------------------------------------------------------------- nesting


def test_nested_checkpoint_and_jit():
    def inner(x):
        return sin_sin(x)

    def outer_ckpt(x):
        return sin(checkpoint(inner)(cos(x)))

    def outer_jit(x):
        return sin(jit(inner)(cos(x)))

    def want(x):
        c = np.cos(x)
        return np.cos(np.sin(np.sin(c))) * d_sin_sin(c) * -np.sin(x)

    for fun in (outer_ckpt, outer_jit):
        for policy in (None, checkpoint_policies.everything_saveable):
            f = checkpoint(fun, policy=policy)
            np.testing.assert_allclose(grad(f)(X), want(X), rtol=1e-5)
            np.testing.assert_allclose(jit(grad(f))(X), want(X), rtol=1e-5)
        inner_eqns = backward_eqn(grad(checkpoint(fun)), X).params["jaxpr"]
        assert "sin" in prim_names(inner_eqns)
    check_grads(checkpoint(outer_ckpt), (XS,), order=2)


def test_closed_over_tracers():
    def f(x):
        return checkpoint(lambda y: mul(sin(y), x))(x)

    np.testing.assert_allclose(grad(f)(X), np.cos(X) * X + np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(grad(grad(f))(X), 2 * np.cos(X) - X * np.sin(X), rtol=1e-5)


# ----------------------------------------------------------------- lowering


def test_prevent_cse_puts_an_optimization_barrier_in_the_backward_pass():
    with_barrier = jit(grad(checkpoint(sin_sin))).lower(X).as_text()
    assert "stablehlo.optimization_barrier" in with_barrier, with_barrier
    without = jit(grad(checkpoint(sin_sin, prevent_cse=False))).lower(X).as_text()
    assert "optimization_barrier" not in without, without
    forward = jit(checkpoint(sin_sin)).lower(X).as_text()  # not differentiated: no barrier
    assert "optimization_barrier" not in forward, forward
    np.testing.assert_allclose(jit(grad(checkpoint(sin_sin)))(X), d_sin_sin(X), rtol=1e-6)
