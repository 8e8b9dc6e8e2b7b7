"""Sharded ``jit`` calls on 8 CPU devices, run in a subprocess by test_sharded_jit.py
(the other root tests see the default device count); prints what it saw as JSON."""

import json
import re
import warnings

import numpy as np

import lamina as jax
import lamina.numpy as jnp
import lamina.sharding as from_sh

jax.config.update("jax_num_cpu_devices", 8)
Mesh, NamedSharding, P = from_sh.Mesh, from_sh.NamedSharding, from_sh.PartitionSpec

out = {}
mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
s = NamedSharding(mesh, P("x", "y"))
r = NamedSharding(mesh, P())
x = np.arange(32.0, dtype=np.float32).reshape(8, 4)


def spec(a):
    return str(a.sharding.spec)


def f(a, b):
    c = jax.lax.with_sharding_constraint(a * 2, NamedSharding(mesh, P("x")))
    return c + b, a.sum()


g = jax.jit(f, in_shardings=(s, r), out_shardings=(s, r))
text = g.lower(x, x).as_text()
out["lowered_shardings"] = re.findall(r'mhlo\.sharding = "([^"]*)"', text)
out["num_partitions"] = re.findall(r"mhlo.num_partitions = (\d+)", text)
o = g(x, x)
o = g(x, x)  # the second call takes the C++ fast path
out["values"] = [np.asarray(o[0]).tolist(), float(o[1])]
out["out_specs"] = [spec(o[0]), spec(o[1])]
out["shards"] = [list(sh.data.shape) for sh in o[0].addressable_shards]


def loss(a, b):
    return jnp.sum(jnp.sin(g(a, b)[0]) * b)


xs = jax.device_put(x, s)
ga, gb = jax.grad(loss, argnums=(0, 1))(xs, x)
out["grad"] = [np.asarray(ga).tolist(), np.asarray(gb).tolist()]
out["grad_spec"] = spec(ga)
out["sum_spec"] = spec(jax.jit(lambda a: a.sum(0))(xs))
emesh = Mesh(
    np.array(jax.devices()).reshape(4, 2), ("x", "y"), axis_types=(from_sh.AxisType.Explicit,) * 2
)
h = jax.jit(lambda a: from_sh.reshard(a * 2, NamedSharding(emesh, P(None, "y"))))
xe = jax.device_put(x, NamedSharding(emesh, P("x", None)))
out["reshard_spec"] = spec(h(xe))
out["reshard_values"] = np.asarray(h(xe)).tolist()
out["unspecified_from_committed"] = spec(jax.jit(lambda a, b: a * b)(xs, x))
out["in_none"] = spec(jax.jit(lambda a, b: a + b, in_shardings=(None, r))(x, x))
sy = NamedSharding(mesh, P("y"))
k = jax.jit(lambda a: a + 1)
out["cache_by_sharding"] = [spec(k(jax.device_put(x, s))), spec(k(jax.device_put(x, sy)))]
d = jax.jit(lambda a: a + 1, in_shardings=s, out_shardings=s, donate_argnums=0)
xd = jax.device_put(x, s)
od = d(xd)
out["donated_deleted"] = xd.is_deleted()
out["donated_value"] = float(np.asarray(od).sum())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    xd = jax.device_put(x, s)
    jax.jit(lambda a: a + 1, donate_argnums=0, out_shardings=r)(xd)
out["donation_warning"] = [str(w.message) for w in caught]
v = jax.jit(jax.vmap(lambda a: jax.lax.with_sharding_constraint(a * 2, s)))(
    np.ones((3, 8, 4), np.float32)
)
out["vmap"] = [float(np.asarray(v).sum()), list(v.shape)]


def mlp_loss(w, batch):
    return jnp.mean((jnp.tanh(batch @ w) - 1.0) ** 2)


w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
step = jax.jit(jax.grad(mlp_loss), in_shardings=(r, NamedSharding(mesh, P("x"))), out_shardings=r)
out["dp_grad"] = np.asarray(step(w, x / 32)).tolist()
out["dp_grad_unsharded"] = np.asarray(jax.grad(mlp_loss)(w, x / 32)).tolist()

inner = jax.jit(lambda a: a * 2, in_shardings=s, out_shardings=r)
outer = jax.jit(lambda a: inner(a) + 1)
o = outer(x)
out["nested"] = [spec(o), np.asarray(o).tolist()]
c = jax.jit(lambda a, b: (a + b, a.sum()), in_shardings=(s, r)).lower(x, x).compile()
out["compiled_shardings"] = [repr(c.input_shardings), repr(c.output_shardings)]

ks = jax.random.split(jax.random.key(0), 8)
draw = lambda keys: jax.vmap(jax.random.uniform)(keys)  # noqa: E731
u = jax.jit(draw, in_shardings=NamedSharding(mesh, P("x")))(ks)
out["keys"] = [spec(u), bool(np.array_equal(np.asarray(u), np.asarray(jax.jit(draw)(ks))))]

out["vmap_spec"] = spec(v)
wsc_loss = lambda a: jnp.sum(jnp.sin(jax.lax.with_sharding_constraint(a, s)))  # noqa: E731
gw = jax.jit(jax.grad(wsc_loss))(x)
out["wsc_grad"] = [spec(gw), bool(np.allclose(np.asarray(gw), np.cos(x), rtol=1e-6))]


def err(name, fn):
    try:
        fn()
        out[name] = None
    except Exception as e:
        out[name] = [type(e).__name__, str(e)]


plus = lambda a, b: a + b  # noqa: E731
mesh4 = Mesh(np.array(jax.devices()[:4]), ("x",))
x4 = jax.device_put(x, NamedSharding(mesh4, P("x")))
err("err_committed_mismatch", lambda: jax.jit(plus, in_shardings=(s, r))(jax.device_put(x, sy), x))
err("err_devices", lambda: jax.jit(plus)(x4, xs))
err("err_single_device", lambda: jax.jit(plus)(jax.device_put(x, jax.devices()[1]), xs))
err("err_length", lambda: jax.jit(plus, in_shardings=(s, r, r))(x, x))
err("err_prefix", lambda: jax.jit(plus, in_shardings=({"a": s}, r))(x, x))
err("err_kwargs", lambda: jax.jit(plus, in_shardings=(s, r))(x, b=x))
err("err_indivisible", lambda: jax.jit(plus, in_shardings=(s, r))(np.ones((3, 4)), np.ones((3, 4))))
err("err_rank", lambda: jax.jit(plus, in_shardings=(s, r))(np.ones(8), np.ones(8)))
print(json.dumps(out))
