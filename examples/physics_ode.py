"""A physics simulation: a pendulum integrated with ``odeint``, studied with ``jacfwd``.

The equations of motion come from the Hamiltonian by automatic differentiation
(``jax.grad``). ``jax.experimental.ode.odeint`` integrates them. The example checks the
simulation against physics it must obey:

- linearized about its equilibria (the Jacobian of the vector field, from ``jax.jacfwd``)
  the pendulum oscillates with angular frequency 1 at the bottom and is unstable, with
  rate 1, at the top; the vector field is divergence-free (trace 0);
- at small amplitude the pendulum is a harmonic oscillator: the closed form
  ``q(t) = q0 cos(t)`` holds;
- energy is conserved along a large swing;
- the flow of a Hamiltonian system preserves phase-space volume (Liouville's theorem):
  the Jacobian of the final state with respect to the initial one, differentiated
  through the solver (``jax.jacrev``: odeint's derivative is reverse mode), has
  determinant 1, and matches finite differences.

Runs unchanged on JAX with ``import jax`` in place of ``import lamina as jax``.

    uv run python examples/physics_ode.py [--small]
"""

import argparse

import numpy as np

import lamina as jax
import lamina.numpy as jnp
from lamina.experimental.ode import odeint


def hamiltonian(state):
    q, p = state
    return 0.5 * p**2 + (1 - jnp.cos(q))  # unit mass, length and gravity


def dynamics(state, t):
    dq, dp = jax.grad(hamiltonian)(state)
    return jnp.stack([dp, -dq])  # Hamilton's equations


def simulate(state0, times):
    return odeint(dynamics, state0, times, rtol=1e-8, atol=1e-8)


def main(small=False):
    times = jnp.linspace(0.0, 5.0 if small else 20.0, 50 if small else 400)

    for name, equilibrium, want in [("bottom", 0.0, [-1j, 1j]), ("top", jnp.pi, [-1, 1])]:
        linear = jax.jacfwd(dynamics)(jnp.array([equilibrium, 0.0]), 0.0)
        eigenvalues = np.sort_complex(np.linalg.eigvals(np.asarray(linear)))
        print(f"linearized at the {name}: eigenvalues {eigenvalues}")
        np.testing.assert_allclose(eigenvalues, want, atol=1e-6)
        assert abs(float(jnp.trace(linear))) < 1e-6

    small_swing = simulate(jnp.array([1e-3, 0.0]), times)
    np.testing.assert_allclose(small_swing[:, 0], 1e-3 * np.cos(times), atol=1e-7)
    print("small swing follows q0 cos(t)")

    state0 = jnp.array([2.5, 0.0])  # a large swing, far from harmonic
    path = jax.jit(simulate)(state0, times)
    energy = jax.vmap(hamiltonian)(path)
    drift = float(jnp.max(jnp.abs(energy - energy[0])))
    print(f"large swing: energy {float(energy[0]):.6f}, largest drift {drift:.2e}")
    assert drift < 1e-5

    final_state = jax.jit(lambda s: simulate(s, times)[-1])
    jacobian = jax.jacrev(final_state)(state0)
    det = float(jnp.linalg.det(jacobian))
    print(f"d(final state)/d(initial state) =\n{np.asarray(jacobian)}\ndeterminant {det:.6f}")
    assert abs(det - 1) < 1e-3

    eps = 1e-3
    columns = [
        (final_state(state0 + eps * e) - final_state(state0 - eps * e)) / (2 * eps)
        for e in jnp.eye(2)
    ]
    np.testing.assert_allclose(jacobian, jnp.stack(columns, axis=1), rtol=1e-2, atol=1e-2)
    print("ok: linearization, closed form, energy conservation, Liouville's theorem")
    return det, drift


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a shorter simulation")
    main(small=parser.parse_args().small)
