"""lamina on a CUDA GPU: linear algebra through the plugin's cuSOLVER targets against
NumPy, a training step, attention and random bits against the same programs on the CPU.
Every test here needs a CUDA device (jaxlib with the jax-cuda12/13 plugin) and is
skipped without one; tools/gpu_check.sh runs them on a GPU machine."""

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina import lax


def _has_cuda() -> bool:
    try:
        return any(d.client.platform == "cuda" for d in jax.devices())
    except RuntimeError:
        return False


pytestmark = pytest.mark.skipif(not _has_cuda(), reason="needs a CUDA device")

RNG = np.random.default_rng(0)
TOL = {"rtol": 2e-4, "atol": 2e-4}


def _gpu():
    return next(d for d in jax.devices() if d.client.platform == "cuda")


def _cpu():
    return jax.devices("cpu")[0]


def _on(device, *xs):
    return [jax.device_put(x, device) for x in xs]


def _spd(n, batch=()):
    a = RNG.standard_normal((*batch, n, n)).astype(np.float32)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32)


def _ran_on_gpu(x):
    assert next(iter(x.devices())).client.platform == "cuda"
    return np.asarray(x)


def test_cholesky():
    a = _spd(6, (3,))
    (x,) = _on(_gpu(), a)
    np.testing.assert_allclose(_ran_on_gpu(jnp.linalg.cholesky(x)), np.linalg.cholesky(a), **TOL)


def test_lu_and_permutation():
    a = RNG.standard_normal((2, 5, 5)).astype(np.float32)
    (x,) = _on(_gpu(), a)
    lu, piv, perm = jax.jit(lax.linalg.lu)(x)
    lu, perm = _ran_on_gpu(lu), np.asarray(perm)
    for i in range(2):
        lower = np.tril(lu[i], -1) + np.eye(5)
        np.testing.assert_allclose(lower @ np.triu(lu[i]), a[i][perm[i]], **TOL)
    np.testing.assert_array_equal(lax.linalg.lu_pivots_to_permutation(piv, 5), perm)


def test_solve_inv_det():
    a, b = _spd(8), RNG.standard_normal((8, 3)).astype(np.float32)
    x, y = _on(_gpu(), a, b)
    np.testing.assert_allclose(_ran_on_gpu(jnp.linalg.solve(x, y)), np.linalg.solve(a, b), **TOL)
    np.testing.assert_allclose(np.asarray(jnp.linalg.inv(x)), np.linalg.inv(a), **TOL)
    np.testing.assert_allclose(float(jnp.linalg.det(x)), np.linalg.det(a), rtol=1e-3)


@pytest.mark.parametrize("shape, full", [((6, 4), False), ((4, 6), True), ((2, 5, 5), False)])
def test_qr(shape, full):
    a = RNG.standard_normal(shape).astype(np.float32)
    (x,) = _on(_gpu(), a)
    q, r = jnp.linalg.qr(x, mode="complete" if full else "reduced")
    q, r = _ran_on_gpu(q), np.asarray(r)
    np.testing.assert_allclose(q @ r, a, **TOL)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(
        np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), **TOL)  # fmt: skip


@pytest.mark.parametrize("n", [8, 100])  # the kernel's Jacobi (small) and QR paths
def test_eigh(n):
    a = _spd(n)
    (x,) = _on(_gpu(), a)
    w, v = jnp.linalg.eigh(x)
    w, v = _ran_on_gpu(w), np.asarray(v)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(a @ v, v * w, rtol=1e-3, atol=1e-2)


@pytest.mark.parametrize("shape", [(7, 5), (5, 7), (40, 36), (1100, 30)])  # gesvdj; gesvd
def test_svd(shape):
    a = RNG.standard_normal(shape).astype(np.float32)
    (x,) = _on(_gpu(), a)
    u, s, vh = jnp.linalg.svd(x, full_matrices=False)
    u, s, vh = _ran_on_gpu(u), np.asarray(s), np.asarray(vh)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose((u * s) @ vh, a, rtol=1e-3, atol=1e-3)


def test_triangular_solve():
    a = np.tril(_spd(5))
    b = RNG.standard_normal((5, 2)).astype(np.float32)
    x, y = _on(_gpu(), a, b)
    out = lax.linalg.triangular_solve(x, y, left_side=True, lower=True)
    np.testing.assert_allclose(_ran_on_gpu(out), np.linalg.solve(a, b), **TOL)


def test_tridiagonal_and_its_solve():
    a = _spd(6)
    (x,) = _on(_gpu(), a)
    _, d, e, _ = lax.linalg.tridiagonal(x)
    t = np.diag(np.asarray(d)) + np.diag(np.asarray(e), 1) + np.diag(np.asarray(e), -1)
    np.testing.assert_allclose(np.linalg.eigvalsh(t), np.linalg.eigvalsh(a), rtol=1e-4)
    for m in (2, 6):  # lax operations below 3 rows, cuSPARSE's gtsv2 above
        dl, d, du = (RNG.standard_normal(m).astype(np.float32) for _ in range(3))
        d = d + 4
        dl[0] = du[-1] = 0
        b = RNG.standard_normal((m, 3)).astype(np.float32)
        args = _on(_gpu(), dl, d, du, b)
        full = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
        out = lax.linalg.tridiagonal_solve(*args)
        np.testing.assert_allclose(_ran_on_gpu(out), np.linalg.solve(full, b), **TOL)


def test_eig():  # cuSOLVER's geev (11.7.1 and newer) or the plugin's hybrid kernel
    a = RNG.standard_normal((5, 5)).astype(np.float32)
    (x,) = _on(_gpu(), a)
    w, v = jnp.linalg.eig(x)
    w, v = np.asarray(w), np.asarray(v)
    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(np.linalg.eigvals(a)),
                               rtol=1e-4, atol=1e-4)  # fmt: skip
    np.testing.assert_allclose(a @ v, v * w, rtol=1e-3, atol=1e-3)


def test_cholesky_update_and_symmetric_product():
    a = _spd(4)
    r = np.linalg.cholesky(a).T
    w = RNG.standard_normal(4).astype(np.float32)
    x, v = _on(_gpu(), r, w)
    updated = _ran_on_gpu(lax.linalg.cholesky_update(x, v))
    np.testing.assert_allclose(updated.T @ updated, a + np.outer(w, w), rtol=1e-4, atol=1e-4)
    b, c = RNG.standard_normal((4, 3)).astype(np.float32), _spd(4)
    y, z = _on(_gpu(), b, c)
    out = lax.linalg.symmetric_product(y, z, alpha=2.0, beta=0.5)
    expected = 2.0 * b @ b.T + 0.5 * c
    # The cuBLAS kernel writes the lower triangle.
    np.testing.assert_allclose(np.tril(_ran_on_gpu(out)), np.tril(expected), **TOL)


def _mlp_step(params, x, y):
    def loss(p):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return value, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def test_training_step_matches_the_cpu():
    params = {
        "w1": RNG.standard_normal((16, 32)).astype(np.float32) * 0.1,
        "b1": np.zeros(32, np.float32),
        "w2": RNG.standard_normal((32, 4)).astype(np.float32) * 0.1,
    }
    x = RNG.standard_normal((64, 16)).astype(np.float32)
    y = RNG.standard_normal((64, 4)).astype(np.float32)
    step = jax.jit(_mlp_step)
    results = [step(*jax.device_put((params, x, y), d)) for d in (_gpu(), _cpu())]
    (lg, pg), (lc, pc) = results
    np.testing.assert_allclose(float(lg), float(lc), rtol=1e-4)
    for k in params:
        np.testing.assert_allclose(np.asarray(pg[k]), np.asarray(pc[k]), rtol=1e-3, atol=1e-5)


def _attention_grads(implementation, device, dtype):
    rng = np.random.default_rng(1)  # the same inputs on every call
    q, k, v = (rng.standard_normal((2, 128, 4, 64)).astype(np.float32) for _ in range(3))
    q, k, v = (jnp.asarray(t, dtype) for t in _on(device, q, k, v))

    def loss(q, k, v):
        out = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation=implementation)
        return jnp.sum(out.astype(jnp.float32) ** 2)

    value, grads = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))(q, k, v)
    return float(value), [np.asarray(g, np.float32) for g in grads]


def test_attention_matches_the_cpu():
    gpu = _attention_grads(None, _gpu(), jnp.float32)
    cpu = _attention_grads(None, _cpu(), jnp.float32)
    np.testing.assert_allclose(gpu[0], cpu[0], rtol=1e-3)
    for a, b in zip(gpu[1], cpu[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3)


def test_cudnn_attention_matches_xla():
    fused = _attention_grads("cudnn", _gpu(), jnp.bfloat16)
    plain = _attention_grads("xla", _gpu(), jnp.bfloat16)
    np.testing.assert_allclose(fused[0], plain[0], rtol=2e-2)
    for a, b in zip(fused[1], plain[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=5e-2, atol=5e-2)


def _random(device):
    key = jax.device_put(jax.random.key(42), device)
    return np.asarray(jax.random.bits(key, (4096,))), np.asarray(jax.random.normal(key, (1000,)))


def test_random_bits_are_the_cpus():
    (gpu_bits, gpu_normal), (cpu_bits, cpu_normal) = _random(_gpu()), _random(_cpu())
    np.testing.assert_array_equal(gpu_bits, cpu_bits)
    np.testing.assert_allclose(gpu_normal, cpu_normal, rtol=1e-6, atol=1e-6)
