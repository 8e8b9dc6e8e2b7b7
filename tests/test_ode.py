"""lamina.experimental.ode.odeint: values against SciPy and closed forms, gradients
against closed forms and central differences, and values recorded from JAX 0.10.2."""

import numpy as np
import pytest
import scipy.integrate

import lamina as jax
import lamina.numpy as jnp
from lamina.experimental.ode import odeint
from lamina.test_util import check_grads


def oscillator(y, t, a, b):
    """A damped, driven oscillator: y'' = -a y - b y' + sin t."""
    return jnp.stack([y[1], -a * y[0] - b * y[1] + jnp.sin(t)])


Y0 = np.array([1.0, 0.0], np.float32)
TS = np.linspace(0.0, 3.0, 5).astype(np.float32)


def test_values_match_scipy_and_jax():
    ys = odeint(oscillator, Y0, TS, 2.0, 0.3)
    assert ys.shape == (5, 2) and ys.dtype == np.float32

    def rhs(y, t):
        return [y[1], -2.0 * y[0] - 0.3 * y[1] + np.sin(t)]

    want = scipy.integrate.odeint(rhs, Y0.astype(np.float64), TS, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(ys, want, rtol=2e-5, atol=2e-6)
    recorded = [  # from JAX 0.10.2
        [1.0, 0.0],
        [0.58502185, -0.8792337],
        [0.019415705, -0.4609908],
        [-0.014725882, 0.319782],
        [0.30656964, 0.3712122],
    ]
    np.testing.assert_allclose(ys, recorded, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.jit(odeint, static_argnums=0)(oscillator, Y0, TS, 2.0, 0.3), ys)


def test_gradients_match_jax():
    def loss(y0, ts, a, b):
        return odeint(oscillator, y0, ts, a, b).sum()

    grads = jax.grad(loss, argnums=(0, 1, 2, 3))(Y0, TS, 2.0, 0.3)
    recorded = [  # from JAX 0.10.2
        [-1.1486037, 0.5509647],
        [-0.89807445, -1.1038685, 0.63597, 1.0313723, -0.21217069],
        -0.41911083,
        0.5005617,
    ]
    for got, want in zip(grads, recorded, strict=True):
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)


def test_exponential_decay_against_closed_forms():
    # y' = -k y: y(t) = y0 exp(-k t); the gradients of y(T) are closed forms too.
    def final(y0, k, t_end):
        return odeint(lambda y, t, k: -k * y, y0, jnp.array([0.0, t_end]), k)[1]

    y0, k, t_end = 1.5, 0.7, 2.0
    value = y0 * np.exp(-k * t_end)
    np.testing.assert_allclose(final(y0, k, t_end), value, rtol=1e-5)
    d_y0, d_k, d_t = jax.grad(final, argnums=(0, 1, 2))(y0, k, t_end)
    np.testing.assert_allclose(d_y0, np.exp(-k * t_end), rtol=1e-4)
    np.testing.assert_allclose(d_k, -t_end * value, rtol=1e-4)
    np.testing.assert_allclose(d_t, -k * value, rtol=1e-4)


def test_check_grads_in_double_precision():
    with jax.enable_x64(True):
        y0 = np.array([1.0, 0.0])
        ts = np.array([0.0, 0.5, 1.0])

        def f(y0, a, b):
            return odeint(oscillator, y0, ts, a, b)

        check_grads(f, (y0, 2.0, 0.3), order=1, modes=["rev"], atol=1e-5, rtol=1e-5)
        ys = f(y0, 2.0, 0.3)
        assert ys.dtype == np.float64
        want = scipy.integrate.odeint(
            lambda y, t: [y[1], -2.0 * y[0] - 0.3 * y[1] + np.sin(t)],
            y0,
            ts,
            rtol=1e-12,
            atol=1e-12,
        )
        np.testing.assert_allclose(ys, want, rtol=1e-7, atol=1e-9)


def test_pytree_states():
    def rhs(s, t, k):
        return {"x": -k * s["x"], "v": s["x"] * s["v"][::-1]}

    s0 = {"x": np.float32(1.5), "v": np.array([0.5, -0.25], np.float32)}
    ts = np.array([0.0, 0.5, 1.0], np.float32)
    out = odeint(rhs, s0, ts, 0.7)
    assert set(out) == {"x", "v"} and out["x"].shape == (3,) and out["v"].shape == (3, 2)
    # Recorded from JAX 0.10.2.
    np.testing.assert_allclose(out["x"], [1.5, 1.0570321, 0.74487805], rtol=1e-5)
    np.testing.assert_allclose(
        out["v"], [[0.5, -0.25], [0.43452334, 0.036200818], [0.49513173, 0.24011545]], rtol=1e-5
    )
    np.testing.assert_allclose(out["x"], 1.5 * np.exp(-0.7 * ts), rtol=1e-5)

    def total(k):
        return sum(jnp.sum(v) for v in jax.tree_util.tree_leaves(odeint(rhs, s0, ts, k)))

    np.testing.assert_allclose(jax.grad(total)(0.7), -1.6942072, rtol=1e-4)  # recorded


def test_closed_over_values_are_differentiated():
    w = jnp.array([0.3, -0.2])
    ts = jnp.array([0.0, 1.0])
    out = jax.jit(lambda y0: odeint(lambda y, t: w * y, y0, ts))(jnp.ones(2))
    np.testing.assert_allclose(out[1], np.exp([0.3, -0.2]), rtol=1e-5)
    g = jax.grad(lambda w: odeint(lambda y, t: w * y, jnp.ones(2), ts)[1].sum())(w)
    np.testing.assert_allclose(g, np.exp([0.3, -0.2]), rtol=1e-4)  # d/dw exp(w t) at t=1


def test_solver_options():
    ts = jnp.array([0.0, 1.0, 2.0])
    decay = lambda y, t: -y  # noqa: E731
    exact = np.exp(-np.asarray(ts))
    # Recorded from JAX 0.10.2.
    loose = odeint(decay, 1.0, ts, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(loose, [1.0, 0.36792943, 0.13554657], rtol=1e-5)
    assert np.abs(loose - exact).max() > 1e-5  # looser than the default
    few = odeint(decay, 1.0, ts, mxstep=3)  # stops after 3 steps per output time
    np.testing.assert_allclose(few, [1.0, 0.37698418, 0.16312382], rtol=1e-5)
    short = odeint(decay, 1.0, ts, hmax=0.1)
    np.testing.assert_allclose(short, [1.0, 0.36787942, 0.1353353], rtol=1e-6)
    np.testing.assert_allclose(short, exact, rtol=1e-6)


def test_vmap_over_a_parameter():
    out = jax.vmap(lambda a: odeint(oscillator, Y0, TS, a, 0.3)[-1])(jnp.array([1.0, 2.0, 3.0]))
    recorded = [[0.6525856, -0.01764685], [0.30656955, 0.37121254], [0.5564317, 0.426354]]
    np.testing.assert_allclose(out, recorded, rtol=2e-5, atol=2e-6)  # from JAX 0.10.2
    loop = [odeint(oscillator, Y0, TS, a, 0.3)[-1] for a in (1.0, 2.0, 3.0)]
    np.testing.assert_allclose(out, loop, rtol=2e-5, atol=2e-6)


# Messages recorded from JAX 0.10.2.
def test_bad_input():
    with pytest.raises(TypeError) as info:
        odeint(oscillator, Y0, jnp.arange(3), 1.0, 2.0)
    assert str(info.value) == "t must be an array of floats, but got [0 1 2]."
    with pytest.raises(TypeError) as info:
        odeint(oscillator, Y0, TS, "a", 2.0)
    assert str(info.value) == "The contents of odeint *args must be arrays or scalars, but got a."


def _pendulum(state, t):
    dq, dp = jax.grad(lambda s: 0.5 * s[1] ** 2 + (1 - jnp.cos(s[0])))(state)
    return jnp.stack([dp, -dq])


@pytest.mark.parametrize(
    "x64, final, jacobian, rtol",
    [  # recorded from JAX 0.10.2 (examples/physics_ode.py, shortened)
        (
            False,
            [-2.4921746253967285, -0.09704006463289261],
            [
                [-0.7355809211730957, 0.16212694346904755],
                [-1.5834804773330688, -1.0104585886001587],
            ],
            1e-6,
        ),
        (
            True,
            [-2.492173731646051, -0.09703882544797872],
            [[-0.7355662931359979, 0.16214383239034816], [-1.5834693540897826, -1.010446258135126]],
            1e-14,
        ),
    ],
)
def test_adjoint_jacobian_matches_jax(x64, final, jacobian, rtol):
    # The dense output and the adjoint do JAX's floating-point operations in JAX's
    # order, so the values agree to the last bits or nearly.
    with jax.enable_x64(x64):
        times = jnp.linspace(0.0, 5.0, 50)
        run = jax.jit(lambda s: odeint(_pendulum, s, times, rtol=1e-8, atol=1e-8)[-1])
        state0 = jnp.array([2.5, 0.0])
        np.testing.assert_allclose(run(state0), final, rtol=rtol)
        np.testing.assert_allclose(jax.jacrev(run)(state0), jacobian, rtol=rtol)


def test_matrix_products_of_the_adjoint_use_the_highest_precision():
    # As in JAX 0.10.2: the solver's products, and the transposes of the vector field's
    # products in the adjoint, have precision HIGHEST; the vector field's own products
    # were traced before the solver and keep theirs.
    m = jnp.array([[0.0, 1.0], [-1.0, 0.0]])
    ts = jnp.linspace(0.0, 1.0, 3)
    loss = lambda y: odeint(lambda y, t: jnp.dot(m, y), y, ts).sum()  # noqa: E731
    closed = jax.make_jaxpr(jax.grad(loss))(jnp.ones(2))
    found = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "dot_general":
                found.append(eqn.params["precision"])
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else [value]:
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        walk(inner)

    walk(closed.jaxpr)
    highest = (jax.lax.Precision.HIGHEST, jax.lax.Precision.HIGHEST)
    assert all(p in (None, highest) for p in found)
    # The order recorded from JAX 0.10.2 (H: HIGHEST, N: None), walking each equation's
    # sub-Jaxprs after it.
    assert "".join("H" if p else "N" for p in found) == "NNHNHHHNHNHNHHNHHHH"
