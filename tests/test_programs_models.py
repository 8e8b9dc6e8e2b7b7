"""Small models written as JAX users write them (``import lamina as jax``): an MLP
classifier trained with jit(value_and_grad) and tree_map SGD, per-example gradients with
vmap(grad), a scan RNN, attention, stable softmax/logsumexp, gradient descent inside
fori_loop, layer norm under vmap, custom_jvp, remat, Jacobians and Hessians, random-number
programs (dropout, permutations, vmapped keys), Adam over a parameter tree, a small
convnet, while_loop/switch/cond/scan programs, static jit arguments, and vmap/grad of
numpy programs. Checked against NumPy re-implementations, numerical derivatives, and
values recorded from JAX 0.10.2 with the same PRNG keys (lamina's keys are bit-identical
to JAX's)."""

import itertools

import numpy as np

import lamina as jax
import lamina.numpy as jnp
from lamina import lax, nn
from lamina.test_util import check_grads

rng = np.random.default_rng(7)


def assert_close(actual, expected, rtol=1e-5, atol=1e-6):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected), (actual.shape, np.shape(expected))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def init_mlp(key, sizes):
    params = []
    keys = jax.random.split(key, len(sizes) - 1)
    for layer_key, (n_in, n_out) in zip(keys, itertools.pairwise(sizes), strict=True):
        w_key, b_key = jax.random.split(layer_key)
        w = nn.initializers.glorot_normal()(w_key, (n_in, n_out))
        b = 0.1 * jax.random.normal(b_key, (n_out,))
        params.append({"w": w, "b": b})
    return params


def mlp_log_probs(params, x):
    for layer in params[:-1]:
        x = nn.relu(jnp.dot(x, layer["w"]) + layer["b"])
    return nn.log_softmax(jnp.dot(x, params[-1]["w"]) + params[-1]["b"])


def mlp_loss(params, x, labels):
    return -jnp.mean(jnp.sum(mlp_log_probs(params, x) * nn.one_hot(labels, 3), axis=-1))


def numpy_mlp_loss_and_grads(params, x, labels):
    (w1, b1), (w2, b2) = [(np.float64(p["w"]), np.float64(p["b"])) for p in params]
    pre = x @ w1 + b1
    hidden = np.maximum(pre, 0.0)
    logits = hidden @ w2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    one_hot = np.eye(3)[labels]
    loss = -(log_probs * one_hot).sum(axis=1).mean()
    d_logits = (np.exp(log_probs) - one_hot) / len(x)
    d_pre = (d_logits @ w2.T) * (pre > 0)
    grads = [
        {"w": x.T @ d_pre, "b": d_pre.sum(0)},
        {"w": hidden.T @ d_logits, "b": d_logits.sum(0)},
    ]
    return loss, grads


def test_mlp_classifier_trains_like_jax():
    key = jax.random.PRNGKey(0)
    key, data_key, label_key = jax.random.split(key, 3)
    x = jax.random.normal(data_key, (16, 4))
    labels = jax.random.randint(label_key, (16,), 0, 3)
    params = init_mlp(key, [4, 8, 3])
    assert_close(labels, [0, 1, 2, 2, 0, 0, 0, 1, 0, 1, 1, 2, 1, 0, 1, 0])

    step = jax.jit(jax.value_and_grad(mlp_loss))
    loss, grads = step(params, x, labels)
    loss_np, grads_np = numpy_mlp_loss_and_grads(params, np.float64(x), np.asarray(labels))
    assert loss.dtype == np.float32
    assert_close(loss, loss_np, rtol=1e-5)
    for layer, layer_np in zip(grads, grads_np, strict=True):
        for name in ("w", "b"):
            assert layer[name].dtype == np.float32
            assert_close(layer[name], layer_np[name], rtol=1e-4, atol=1e-6)

    losses = []
    for _ in range(5):
        loss, grads = step(params, x, labels)
        losses.append(float(loss))
        params = jax.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, grads)
    recorded_jax_losses = [1.2272958755, 0.9571864009, 0.8984259963, 0.8615901470, 0.8353433013]
    assert_close(losses, recorded_jax_losses, rtol=1e-5)
    assert all(later < earlier for earlier, later in itertools.pairwise(losses))


def test_per_example_gradients_vmap_of_grad():
    features = rng.standard_normal((6, 3)).astype(np.float32)
    targets = (rng.random(6) > 0.5).astype(np.float32)
    weights = rng.standard_normal(3).astype(np.float32)

    def example_loss(w, x, y):
        logit = jnp.dot(x, w)
        return jnp.logaddexp(0.0, logit) - y * logit

    per_example = jax.jit(jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0)))
    grads = per_example(weights, features, targets)
    looped = np.stack(
        [jax.grad(example_loss)(weights, x, y) for x, y in zip(features, targets, strict=True)]
    )
    probs = 1.0 / (1.0 + np.exp(-(features @ weights)))
    assert grads.shape == (6, 3) and grads.dtype == np.float32
    assert_close(grads, looped, rtol=1e-6)
    assert_close(grads, (probs - targets)[:, None] * features, rtol=1e-5)

    def total_loss(w):
        return jnp.sum(jax.vmap(example_loss, in_axes=(None, 0, 0))(w, features, targets))

    assert_close(jax.grad(total_loss)(weights), grads.sum(0), rtol=1e-5)


def rnn_loss(params, inputs):
    def cell(hidden, x):
        hidden = jnp.tanh(hidden @ params["w_h"] + x @ params["w_x"] + params["b"])
        return hidden, jnp.sum(hidden**2, axis=-1)

    final, energies = lax.scan(cell, jnp.zeros((inputs.shape[1], 4)), inputs)
    return jnp.mean(energies) + jnp.sum(final)


def test_scan_rnn_forward_and_gradients():
    params = {
        "w_h": 0.5 * rng.standard_normal((4, 4)).astype(np.float32),
        "w_x": 0.5 * rng.standard_normal((3, 4)).astype(np.float32),
        "b": 0.1 * rng.standard_normal(4).astype(np.float32),
    }
    inputs = rng.standard_normal((5, 2, 3)).astype(np.float32)

    hidden = np.zeros((2, 4))
    energies = []
    for x in inputs:
        hidden = np.tanh(hidden @ params["w_h"] + x @ params["w_x"] + params["b"])
        energies.append((hidden**2).sum(-1))
    expected = np.mean(energies) + hidden.sum()

    loss = jax.jit(rnn_loss)(params, inputs)
    assert loss.dtype == np.float32
    assert_close(loss, expected, rtol=1e-5)
    grads = jax.jit(jax.grad(rnn_loss))(params, inputs)
    eps = 1e-3
    for unit in range(4):
        step = np.float32(np.eye(4)[unit] * eps)
        bumped, lowered = dict(params, b=params["b"] + step), dict(params, b=params["b"] - step)
        numeric = (float(rnn_loss(bumped, inputs)) - float(rnn_loss(lowered, inputs))) / (2 * eps)
        assert abs(float(grads["b"][unit]) - numeric) < 1e-2 * max(1.0, abs(numeric))
    # JAX's check_grads takes pytree arguments (here a dict of weights)
    check_grads(rnn_loss, (params, inputs), order=1, modes=("fwd", "rev"))


def numpy_attention(q, k, v, bias=None, mask=None, causal=False):
    repeat = q.shape[2] // k.shape[2]
    k, v = np.repeat(k, repeat, axis=2), np.repeat(v, repeat, axis=2)
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(q.shape[-1])
    if bias is not None:
        logits = logits + bias
    allowed = np.ones(logits.shape, bool)
    if mask is not None:
        allowed &= mask
    if causal:
        allowed &= np.tril(np.ones(logits.shape[-2:], bool))
    logits = np.where(allowed, logits, -np.inf)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return np.einsum("bnts,bsnh->btnh", weights, v)


def test_dot_product_attention_against_numpy():
    q = rng.standard_normal((2, 5, 4, 8)).astype(np.float32)
    k = rng.standard_normal((2, 5, 2, 8)).astype(np.float32)
    v = rng.standard_normal((2, 5, 2, 8)).astype(np.float32)
    bias = rng.standard_normal((1, 4, 5, 5)).astype(np.float32)
    mask = rng.random((2, 1, 5, 5)) > 0.3
    mask[..., 0] = True

    @jax.jit
    def attend(q, k, v, bias, mask):
        return (
            nn.dot_product_attention(q, k, v),
            nn.dot_product_attention(q, k, v, bias=bias, mask=mask),
            nn.dot_product_attention(q, k, v, is_causal=True),
        )

    plain, biased, causal = attend(q, k, v, bias, mask)
    for result in (plain, biased, causal):
        assert result.shape == (2, 5, 4, 8) and result.dtype == np.float32
    assert_close(plain, numpy_attention(q, k, v), rtol=1e-4, atol=1e-5)
    assert_close(biased, numpy_attention(q, k, v, bias, mask), rtol=1e-4, atol=1e-5)
    assert_close(causal, numpy_attention(q, k, v, causal=True), rtol=1e-4, atol=1e-5)


def test_softmax_and_logsumexp_are_stable():
    big = jnp.array([1000.0, 1001.0, 1002.0])
    tail = np.exp(np.array([-2.0, -1.0, 0.0]))
    assert_close(nn.softmax(big), tail / tail.sum(), rtol=1e-6)
    assert_close(nn.logsumexp(big), 1002.0 + np.log(tail.sum()), rtol=1e-7)
    assert_close(nn.logsumexp(-big), -1000.0 + np.log(tail[::-1].sum()), rtol=1e-7)
    assert_close(nn.log_softmax(big), np.log(tail / tail.sum()), rtol=1e-6)
    masked = nn.log_softmax(jnp.array([0.0, -jnp.inf, 0.0]))
    assert_close(masked, [np.log(0.5), -np.inf, np.log(0.5)])
    assert_close(jax.grad(lambda z: nn.logsumexp(z))(big), tail / tail.sum(), rtol=1e-6)
    batched = jax.jit(jax.vmap(nn.softmax))(jnp.stack([big, -big]))
    assert_close(batched.sum(axis=-1), [1.0, 1.0], rtol=1e-6)
    assert not np.isnan(np.asarray(jax.grad(lambda z: nn.log_softmax(z)[0])(big))).any()


def test_gradient_descent_inside_fori_loop():
    features = rng.standard_normal((20, 3)).astype(np.float32)
    true_weights = np.array([1.5, -2.0, 0.5], np.float32)
    targets = features @ true_weights + 0.01 * rng.standard_normal(20).astype(np.float32)

    def mse(w):
        return jnp.mean((features @ w - targets) ** 2)

    @jax.jit
    def fit(w0):
        return lax.fori_loop(0, 300, lambda _, w: w - 0.1 * jax.grad(mse)(w), w0)

    fitted = fit(jnp.zeros(3))
    reference = np.zeros(3)
    for _ in range(300):
        reference -= 0.1 * 2 * features.T @ (features @ reference - targets) / 20
    assert_close(fitted, reference, rtol=1e-4, atol=1e-5)
    assert_close(fitted, np.linalg.lstsq(features, targets, rcond=None)[0], atol=1e-3)


def test_layer_norm_under_vmap_with_gradients():
    rows = rng.standard_normal((3, 6)).astype(np.float32)
    scale = rng.standard_normal(6).astype(np.float32)

    def layer_norm(x, gain):
        return gain * nn.standardize(x, epsilon=1e-5)

    normalized = jax.jit(jax.vmap(layer_norm, in_axes=(0, None)))(rows, scale)
    mean = rows.mean(-1, keepdims=True)
    expected = scale * (rows - mean) / np.sqrt(rows.var(-1, keepdims=True) + 1e-5)
    assert_close(normalized, expected, rtol=1e-4, atol=1e-5)
    check_grads(layer_norm, (rows[0], scale), order=2, modes=("rev",))


def test_custom_jvp_remat_and_higher_derivatives():
    @jax.custom_jvp
    def log1pexp(x):
        return jnp.log1p(jnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * nn.sigmoid(x)

    slopes = jax.vmap(jax.grad(log1pexp))(jnp.array([-50.0, 0.0, 100.0]))
    assert_close(slopes, [1.0 / (1.0 + np.exp(50.0)), 0.5, 1.0], rtol=1e-6)

    def block(w, x):
        return jnp.sum(jnp.sin(x @ w) ** 2)

    w = rng.standard_normal((3, 3)).astype(np.float32)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    assert_close(jax.grad(jax.checkpoint(block))(w, x), jax.grad(block)(w, x), rtol=1e-6)

    def energy(v):
        return jnp.sum(jnp.sin(v) * v**2)

    point = jnp.array([0.3, -1.2, 2.0])
    hessian = jax.jit(jax.hessian(energy))(point)
    p = np.float64(point)
    assert_close(hessian, np.diag((2 - p**2) * np.sin(p) + 4 * p * np.cos(p)), atol=1e-5)

    def field(v):
        return jnp.array([v[0] * v[1], jnp.exp(v[2]), v[0] ** 2])

    expected_jacobian = [[p[1], p[0], 0.0], [0.0, 0.0, np.exp(p[2])], [2 * p[0], 0.0, 0.0]]
    assert_close(jax.jacfwd(field)(point), expected_jacobian, rtol=1e-6)
    assert_close(jax.jacrev(field)(point), expected_jacobian, rtol=1e-6)


def test_random_programs_match_recorded_jax():
    key = jax.random.PRNGKey(7)
    k1, k2, k3, k4 = jax.random.split(key, 4)

    @jax.jit
    def dropout(key, x):
        keep = jax.random.bernoulli(key, 0.75, x.shape)
        return jnp.where(keep, x / 0.75, 0.0)

    dropped = dropout(k1, jnp.arange(1.0, 9.0).reshape(2, 4))
    assert_close(dropped, [[0.0, 8 / 3, 4.0, 16 / 3], [0.0, 8.0, 28 / 3, 32 / 3]], rtol=1e-6)
    assert_close(jax.random.permutation(k2, 6), [0, 4, 1, 2, 5, 3])
    log_probs = jnp.log(jnp.array([0.1, 0.2, 0.7]))
    assert_close(jax.random.categorical(k3, log_probs, shape=(8,)), [2, 0, 1, 2, 1, 2, 2, 2])
    uniform = jax.random.uniform(k4, (3,), minval=-1.0, maxval=1.0)
    assert_close(uniform, [-0.5373318195, -0.3669211864, 0.5832717418])

    keys = jax.random.split(jax.random.fold_in(key, 3), 3)
    draws = jax.vmap(lambda k: jax.random.normal(k, (2,)))(keys)
    recorded = [
        [-0.1687523872, 0.2446760088],
        [-1.2810760736, -0.8098277450],
        [1.6086804867, -3.1508865356],
    ]
    assert_close(draws, recorded, rtol=1e-6)
    assert_close(draws[1], jax.random.normal(keys[1], (2,)), rtol=0)

    typed_key = jax.random.key(5)
    assert_close(jax.random.key_data(typed_key), [0, 5])
    sample = jax.random.normal(jax.random.split(typed_key)[1], (2,))
    assert_close(sample, [-1.3798700571, -0.7414402366], rtol=1e-6)


def test_adam_optimizer_over_a_parameter_tree():
    params = {"dense": {"w": jnp.ones((2, 2)), "b": jnp.zeros(2)}, "scale": jnp.array(2.0)}
    target = np.array([[1.0, -1.0], [0.5, 2.0]], np.float32)

    def loss(params):
        prediction = params["scale"] * params["dense"]["w"] + params["dense"]["b"]
        return jnp.sum((prediction - target) ** 2)

    def adam_update(params, grads, state, step, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, state[0], grads)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g**2, state[1], grads)
        m_hat = jax.tree_util.tree_map(lambda m: m / (1 - b1**step), m)
        v_hat = jax.tree_util.tree_map(lambda v: v / (1 - b2**step), v)
        updated = jax.tree_util.tree_map(
            lambda p, m, v: p - lr * m / (jnp.sqrt(v) + eps), params, m_hat, v_hat
        )
        return updated, (m, v)

    @jax.jit
    def train_step(params, state, step):
        value, grads = jax.value_and_grad(loss)(params)
        params, state = adam_update(params, grads, state, step)
        return params, state, value

    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = (zeros, zeros)
    values = []
    for step in range(1, 31):
        params, state, value = train_step(params, state, step)
        values.append(float(value))
    assert values[-1] < 0.1 * values[0]
    structure = jax.tree_util.tree_structure(params)
    assert structure == jax.tree_util.tree_structure(state[0])
    assert [leaf.shape for leaf in jax.tree_util.tree_leaves(params)] == [(2,), (2, 2), ()]
    assert all(leaf.dtype == np.float32 for leaf in jax.tree_util.tree_leaves(state))


def test_small_convnet_against_numpy():
    images = rng.standard_normal((2, 1, 6, 6)).astype(np.float32)
    kernels = rng.standard_normal((3, 1, 3, 3)).astype(np.float32)

    def features(kernels, images):
        conv = lax.conv_general_dilated(images, kernels, (1, 1), "VALID")
        pooled = lax.reduce_window(
            nn.relu(conv), -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"
        )
        return pooled.reshape(images.shape[0], -1)

    out = jax.jit(features)(kernels, images)
    conv_np = np.zeros((2, 3, 4, 4), np.float64)
    for i in range(4):
        for j in range(4):
            patch = images[:, :, i : i + 3, j : j + 3]
            conv_np[:, :, i, j] = np.einsum("bchw,ochw->bo", patch, kernels)
    relu = np.maximum(conv_np, 0.0)
    pooled_np = relu.reshape(2, 3, 2, 2, 2, 2).max(axis=(3, 5)).reshape(2, -1)
    assert out.shape == (2, 12) and out.dtype == np.float32
    assert_close(out, pooled_np, rtol=1e-4, atol=1e-5)

    def score(kernels):
        return jnp.sum(features(kernels, np.float64(images)) ** 2)

    # float32 central differences are too noisy for a sum of squares of this size
    with jax.enable_x64(True):
        check_grads(score, (np.float64(kernels),), order=1, modes=("rev",))


def test_control_flow_programs():
    def newton_sqrt(a):
        def body(state):
            x, _ = state
            return 0.5 * (x + a / x), x

        def not_converged(state):
            x, previous = state
            return jnp.abs(x - previous) > 1e-6 * x

        return lax.while_loop(not_converged, body, (a, 2 * a + 1))[0]

    roots = jax.jit(jax.vmap(newton_sqrt))(jnp.array([2.0, 9.0, 1e4]))
    assert_close(roots, np.sqrt([2.0, 9.0, 1e4]), rtol=1e-6)

    def piecewise_activation(x, branch):
        return lax.switch(branch, [jnp.sin, jnp.cos, lambda v: v**3], x)

    values = jax.vmap(piecewise_activation)(jnp.array([0.5, 0.5, 0.5]), jnp.array([0, 1, 2]))
    assert_close(values, [np.sin(0.5), np.cos(0.5), 0.125], rtol=1e-6)
    slope = jax.grad(lambda x: lax.cond(x > 0, jnp.exp, jnp.negative, x))
    assert_close([slope(1.0), slope(-1.0)], [np.e, -1.0], rtol=1e-6)

    @jax.jit
    def running_max(xs):
        return lax.scan(lambda best, x: (jnp.maximum(best, x),) * 2, -jnp.inf, xs)[1]

    sequence = rng.standard_normal(8).astype(np.float32)
    assert_close(running_max(sequence), np.maximum.accumulate(sequence))


def test_jit_static_arguments_and_shape_evaluation():
    def normalize(x, axis):
        return x / jnp.linalg.norm(x, axis=axis, keepdims=True)

    matrix = rng.standard_normal((3, 4)).astype(np.float32)
    by_name = jax.jit(normalize, static_argnames="axis")
    by_position = jax.jit(normalize, static_argnums=1)
    for axis in (0, 1):
        expected = matrix / np.linalg.norm(matrix, axis=axis, keepdims=True)
        assert_close(by_name(matrix, axis=axis), expected, rtol=1e-6)
        assert_close(by_position(matrix, axis), expected, rtol=1e-6)

    shapes = jax.eval_shape(lambda x: jnp.outer(x, x).astype(jnp.int8), jnp.ones(5))
    assert shapes.shape == (5, 5) and shapes.dtype == np.int8
    jaxpr_text = str(jax.make_jaxpr(lambda x: jnp.sum(nn.relu(x)))(jnp.ones(3)))
    assert "reduce_sum" in jaxpr_text and "max" in jaxpr_text


def test_transformations_of_numpy_programs():
    halves = rng.standard_normal((3, 4, 4)).astype(np.float32)
    spd = halves @ halves.transpose(0, 2, 1) + 4 * np.eye(4, dtype=np.float32)
    vectors = rng.standard_normal((3, 5)).astype(np.float32)
    positions = np.array([0, 4, 2], np.int32)

    @jax.jit
    def batched(spd, vectors, positions):
        return (
            jax.vmap(jnp.linalg.solve)(spd, vectors[:, :4]),
            jax.vmap(lambda m: jnp.linalg.eigh(m)[0])(spd),
            jax.vmap(jnp.sort)(vectors),
            jax.vmap(lambda v, i: v.at[i].add(10.0))(vectors, positions),
            jax.vmap(lambda v: jnp.nonzero(v > 0, size=5, fill_value=-1)[0])(vectors),
            jax.vmap(lambda v: jnp.histogram(v, bins=3, range=(-2, 2))[0])(vectors),
        )

    solved, eigenvalues, ordered, bumped, positive, counts = batched(spd, vectors, positions)
    for row in range(3):
        v = vectors[row]
        assert_close(solved[row], np.linalg.solve(spd[row], v[:4]), rtol=1e-4, atol=1e-5)
        assert_close(eigenvalues[row], np.linalg.eigvalsh(spd[row]), rtol=1e-4)
        assert_close(ordered[row], np.sort(v))
        assert_close(bumped[row], v + 10.0 * (np.arange(5) == positions[row]))
        hits = np.flatnonzero(v > 0)
        assert_close(positive[row], np.concatenate([hits, [-1] * (5 - len(hits))]))
        assert_close(counts[row], np.histogram(v, bins=3, range=(-2, 2))[0])

    rhs = vectors[0, :4]

    def matrix_summary(m):
        logdet = jnp.linalg.slogdet(m)[1]
        return logdet + jnp.sum(jnp.linalg.inv(m)) + jnp.sum(jnp.linalg.solve(m, rhs) ** 2)

    # float32 central differences are too coarse for these; check in float64
    with jax.enable_x64(True):
        top_eigenvalue = lambda m: jnp.linalg.eigh(m)[0][-1]  # noqa: E731
        check_grads(jax.jit(matrix_summary), (np.float64(spd[0]),), order=1)
        check_grads(jax.jit(top_eigenvalue), (np.float64(spd[1]),), order=1, modes=("rev",))
