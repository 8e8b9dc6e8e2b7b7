"""A typed training step and the NumPy API's ``out_sharding=`` arguments on 8 CPU
devices over an Explicit (2, 4) mesh, run in a subprocess by
test_explicit_types_numpy.py (the other root tests see one device); prints what it saw
as JSON: types, layouts, error messages and values."""

import json

import numpy as np

import lamina as jax
import lamina.numpy as jnp

jax.config.update("jax_num_cpu_devices", 8)
P, NamedSharding = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
nn = jax.nn
out: dict = {}


def types(tree):
    return [str(jax.typeof(v)) for v in jax.tree_util.tree_leaves(tree)]


def specs(tree):
    return [str(v.sharding.spec) for v in jax.tree_util.tree_leaves(tree)]


def values(tree):
    return [np.asarray(v).tolist() for v in jax.tree_util.tree_leaves(tree)]


def error(f, *args):
    try:
        f(*args)
    except Exception as e:  # the message JAX gives, first line
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"
    return "no error"


def loss(params, x, labels):
    w1, b1, w2 = params
    h = nn.gelu(x @ w1 + b1)
    logits = h @ w2
    return -jnp.mean(jnp.sum(nn.log_softmax(logits) * nn.one_hot(labels, 8), -1))


def step(params, x, labels):
    value, grads = jax.value_and_grad(loss)(params, x, labels)
    return value, grads, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def attention(x, wq, wk, wv):
    q, k, v = x @ wq, x @ wk, x @ wv  # f32[8@x,4,16]
    scores = jnp.einsum("bqd,bkd->bqk", q, k) / 4.0
    mask = jnp.tril(jnp.ones((4, 4), bool))
    weights = nn.softmax(jnp.where(mask, scores, -1e9), axis=-1)
    y = jnp.einsum("bqk,bkd->bqd", weights, v) + x
    mean = y.mean(-1, keepdims=True)
    normed = (y - mean) * jax.lax.rsqrt(y.var(-1, keepdims=True) + 1e-5)
    return jnp.sum(normed**2)


rng = np.random.default_rng(0)
host = {
    "x": rng.standard_normal((8, 16), np.float32),
    "w1": rng.standard_normal((16, 32), np.float32) / 4,
    "b1": rng.standard_normal(32).astype(np.float32),
    "w2": rng.standard_normal((32, 8), np.float32) / 4,
    "labels": np.arange(8, dtype=np.int32),
    "x3": rng.standard_normal((8, 4, 16), np.float32),
    "wq": rng.standard_normal((16, 16), np.float32) / 4,
}
# the unsharded computation, on one device
plain = (host["w1"], host["b1"], host["w2"])
out["plain_step"] = values(jax.jit(step)(plain, host["x"], host["labels"]))
attn_args = (host["x3"], host["wq"], host["wq"] * 0.5, host["wq"] * 2)
out["plain_attention_grad"] = values(jax.jit(jax.grad(attention))(*attn_args))

mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):

    def put(name, *spec):
        return jax.device_put(host[name], NamedSharding(mesh, P(*spec)))

    params = (put("w1", None, "y"), put("b1", "y"), put("w2"))
    x, labels = put("x", "x"), put("labels", "x")
    out["jaxpr_loss_out"] = str(jax.make_jaxpr(loss)(params, x, labels).out_avals[0])
    done = jax.jit(step)(params, x, labels)
    out["step_types"], out["step_specs"] = types(done), specs(done)
    out["step"] = values(done)
    eager = step(params, x, labels)
    out["eager_step_types"] = types(eager)

    x3 = put("x3", "x")
    wq = put("wq")
    attn = jax.jit(jax.grad(attention))(x3, wq, wq * 0.5, wq * 2)
    out["attention_grad_type"], out["attention_grad"] = types(attn), values(attn)
    parts = jax.jit(
        lambda x, w: (x @ w, jnp.tril(jnp.ones((4, 4))), jnp.swapaxes(x, 1, 2), x.reshape(8, 64))
    )(x3, wq)
    out["attention_parts"] = types(parts)

    made = {
        "zeros": jnp.zeros((8, 4), out_sharding=P("x")),
        "ones": jnp.ones((8, 4), jnp.int32, out_sharding=P("x", "y")),
        "full": jnp.full((8, 4), 2.5, out_sharding=NamedSharding(mesh, P(None, "y"))),
        "full_array": jnp.full((8, 4), jnp.arange(4.0), out_sharding=P("x")),
        "empty": jnp.empty((8, 4), out_sharding=P(None, "y")),
        "arange": jnp.arange(8, out_sharding=P("x")),
        "arange_step": jnp.arange(0, 16, 2, out_sharding=P("x")),
        "array": jnp.array(np.ones((8, 4), np.float32), out_sharding=P("x")),
        "zeros_like": jnp.zeros_like(x),
        "ones_like_spec": jnp.ones_like(x, out_sharding=P(None, "y")),
        "full_like_dtype": jnp.full_like(x, 7, dtype=jnp.int32),
        "plain_zeros": jnp.zeros((8, 4)),
    }
    out["made_types"] = {k: str(jax.typeof(v)) for k, v in made.items()}
    out["made_specs"] = {k: str(v.sharding.spec) for k, v in made.items() if k != "plain_zeros"}
    out["made_values"] = {k: np.asarray(v).tolist() for k, v in made.items() if k != "empty"}
    traced = jax.jit(
        lambda a: (
            jnp.zeros((8, 4), out_sharding=P("x")),
            jnp.arange(3, 11, out_sharding=P("y")),
            jnp.zeros_like(a),
            jnp.full_like(a, 1.0, shape=(4,)),
        )
    )(x)
    out["traced_types"] = types(traced)
    b = put("x", None, "y")  # f32[8,16@y]
    shaped = jax.jit(
        lambda x, b: (
            jnp.reshape(x, (4, 32), out_sharding=P("x")),
            jnp.broadcast_to(x[:, None, :], (8, 4, 16), out_sharding=P("x", "y")),
            jnp.einsum("ij,ij->i", x, b, out_sharding=P("x")),
            jnp.matmul(b, b.T, out_sharding=P("x")),
            jnp.dot(b, b.T, out_sharding=P(None, "y")),
            jnp.argsort(x, axis=-1),
            jnp.split(x, 4, axis=1)[0],
            jnp.pad(x, ((2, 2), (0, 0))),
            jnp.linalg.norm(x, axis=-1),
            jnp.flip(x, 0),
        )
    )(x, b)
    out["shaped_types"], out["shaped"] = types(shaped), values(shaped)
    converted = [
        jnp.asarray(np.ones((8, 4), np.float32), out_sharding=P("x")),  # kept as it is
        jnp.asarray([[1.0] * 4] * 8, out_sharding=P("x")),
    ]
    out["asarray"] = [f"{jax.typeof(v)} {type(v.sharding).__name__}" for v in converted]
    out["jaxpr_zeros"] = str(jax.make_jaxpr(lambda: jnp.zeros((8, 4), out_sharding=P("x")))())
    out["errors"] = {
        "both": error(lambda: jnp.zeros((8, 4), device=jax.devices()[0], out_sharding=P("x"))),
        "not_a_spec": error(lambda: jnp.zeros((8, 4), out_sharding="x")),
        "indivisible": error(jax.jit(lambda: jnp.zeros((7, 4), out_sharding=P("x")))),
        "unknown_axis": error(jax.jit(lambda: jnp.ones((8, 4), out_sharding=P("z")))),
        "cumsum": error(jax.jit(lambda a: jnp.cumsum(a, axis=0)), x),
        "repeat": error(jax.jit(lambda a: jnp.repeat(a, 2, axis=0)), x),
        "tile": error(jax.jit(lambda a: jnp.tile(a, (2, 1))), x),
        "embedding": error(jax.jit(lambda w, i: w[i]), params[0], labels),
        "row": error(jax.jit(lambda a: a[0]), x),
        "sort": error(jax.jit(lambda a: jnp.sort(a, axis=0)), x),
        "contracting": error(jax.jit(lambda h, w: h @ w), put("w1", None, "y"), put("w2", "y")),
        "eager_rows": error(lambda: x[:4]),  # eagerly a gather, jitted a slice
    }
    out["indexing_types"] = types((x[:, :8], x[::-1], jax.jit(lambda v: v[:4])(x)))
out["errors"]["spec_outside_mesh"] = error(lambda: jnp.zeros((8, 4), out_sharding=P("x")))
print(json.dumps(out))
