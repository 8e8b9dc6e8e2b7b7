"""Gaussian-process regression, its hyperparameters fitted by gradient descent.

Noisy samples of a smooth function are fitted with a GP with a squared-exponential
kernel. The negative log marginal likelihood is computed with a Cholesky factorization
(``jax.scipy.linalg.cho_factor`` / ``cho_solve``); its gradient with respect to the
log length scale, log amplitude and log noise drives Adam. The example checks the
likelihood against a direct NumPy evaluation, that fitting lowers it, and that the
posterior mean follows the true function.

Runs unchanged on JAX with ``import jax`` in place of ``import lamina as jax``.

    uv run python examples/gaussian_process.py [--small]
"""

import argparse

import numpy as np

import lamina as jax
import lamina.numpy as jnp
from lamina.scipy.linalg import cho_factor, cho_solve


def kernel(params, a, b):
    scaled = (a[:, None] - b[None, :]) / jnp.exp(params["log_length"])
    return jnp.exp(2 * params["log_amplitude"]) * jnp.exp(-0.5 * scaled**2)


def neg_log_marginal_likelihood(params, x, y):
    k = kernel(params, x, x) + jnp.exp(2 * params["log_noise"]) * jnp.eye(x.shape[0])
    factor = cho_factor(k, lower=True)
    alpha = cho_solve(factor, y)
    log_det = 2 * jnp.sum(jnp.log(jnp.diag(factor[0])))
    return 0.5 * (y @ alpha + log_det + x.shape[0] * jnp.log(2 * jnp.pi))


def posterior_mean(params, x, y, x_new):
    k = kernel(params, x, x) + jnp.exp(2 * params["log_noise"]) * jnp.eye(x.shape[0])
    return kernel(params, x_new, x) @ cho_solve(cho_factor(k, lower=True), y)


@jax.jit
def fit_step(state, x, y, t, lr=0.05, b1=0.9, b2=0.999):
    """One Adam step on the hyperparameters; ``t`` counts steps from 1."""
    params, m, v = state
    nll, grads = jax.value_and_grad(neg_log_marginal_likelihood)(params, x, y)
    m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    params = jax.tree.map(
        lambda p, m, v: p - lr * (m / (1 - b1**t)) / (jnp.sqrt(v / (1 - b2**t)) + 1e-8),
        params,
        m,
        v,
    )
    return nll, (params, m, v)


def numpy_nll(params, x, y):
    """The same likelihood computed directly, for comparison."""
    p = {k: float(v) for k, v in params.items()}
    d = (x[:, None] - x[None, :]) / np.exp(p["log_length"])
    k = np.exp(2 * p["log_amplitude"]) * np.exp(-0.5 * d**2)
    k += np.exp(2 * p["log_noise"]) * np.eye(len(x))
    _, log_det = np.linalg.slogdet(k)
    return 0.5 * (y @ np.linalg.solve(k, y) + log_det + len(x) * np.log(2 * np.pi))


def truth(x):
    return np.sin(3 * x) + 0.5 * x


def main(small=False, seed=0):
    n, steps = (30, 150) if small else (200, 500)
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-2, 2, n)).astype(np.float32)
    y = (truth(x) + 0.1 * rng.normal(size=n)).astype(np.float32)
    params = {
        "log_length": jnp.float32(0.0),
        "log_amplitude": jnp.float32(0.0),
        "log_noise": jnp.float32(0.0),
    }
    start = float(neg_log_marginal_likelihood(params, x, y))
    np.testing.assert_allclose(start, numpy_nll(params, x, y), rtol=1e-4)

    state = (params, jax.tree.map(jnp.zeros_like, params), jax.tree.map(jnp.zeros_like, params))
    for t in range(1, steps + 1):
        nll, state = fit_step(state, x, y, t)
        if t % (steps // 5) == 0:
            print(f"step {t:4d}  negative log marginal likelihood {float(nll):.4f}")
    params = state[0]
    final = float(neg_log_marginal_likelihood(params, x, y))
    np.testing.assert_allclose(final, numpy_nll(params, x, y), rtol=1e-3, atol=1e-3)
    fitted = {k: float(jnp.exp(v)) for k, v in params.items()}
    print("fitted:", ", ".join(f"{k[4:]} {v:.3f}" for k, v in fitted.items()))
    x_new = np.linspace(-1.8, 1.8, 50, dtype=np.float32)
    error = np.max(np.abs(np.asarray(posterior_mean(params, x, y, x_new)) - truth(x_new)))
    print(f"likelihood {start:.3f} -> {final:.3f}; posterior mean max error {error:.3f}")
    assert final < start and error < 0.3 and 0.03 < fitted["log_noise"] < 0.3
    print("ok: matches NumPy's likelihood, fitted noise near 0.1, mean follows the function")
    return final, error


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="fewer points and steps")
    main(small=parser.parse_args().small)
