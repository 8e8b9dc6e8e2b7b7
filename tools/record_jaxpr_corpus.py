"""Records the Jaxpr corpus of lamina-ir's tests: the text JAX 0.10.2 prints for real
programs, one file per program in packages/ir/tests/data/jaxpr_corpus.

Runs only where JAX 0.10.2 itself is installed (never in the suite):
``/path/to/jax-env/bin/python tools/record_jaxpr_corpus.py``.
"""

import functools
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

OUT = pathlib.Path(__file__).parent.parent / "packages/ir/tests/data/jaxpr_corpus"
PROGRAMS = {}


def program(*args):
    def register(f):
        PROGRAMS[f.__name__] = (f, args)
        return f

    return register


f32 = functools.partial(np.ones, dtype=np.float32)
i32 = functools.partial(np.arange, dtype=np.int32)


@jax.jit
def _layer(w, x):
    return lax.tanh(lax.dot_general(x, w, (((1,), (0,)), ((), ()))) * 2.0 + 1.0)


@program(f32((4, 3)), f32((2, 4)))
def quickstart_layer(w, x):
    return _layer(w, x)


@program(f32(3), np.float32(2))
def elementwise(x, y):
    return jnp.sin(x) * y + 1.0


@program(f32((8, 16)), f32((16, 4)), f32(4))
def mlp(x, w, b):
    h = jax.nn.relu(x @ w + b)
    return jax.nn.softmax(h, axis=-1)


@program(np.float32(1.0), f32(3))
def cond_branches(p, x):
    return lax.cond(p > 0, lambda x: jnp.sin(x), lambda x: jnp.cos(x) * 2, x)


@program(np.int32(1), f32(3))
def switch_three(i, x):
    return lax.switch(i, [jnp.sin, jnp.cos, lambda x: -x], x)


@program(f32(3))
def fori_loop(x):
    return lax.fori_loop(0, 10, lambda i, x: x * 2 + i, x)


@program(np.float32(1.0))
def while_loop(x):
    return lax.while_loop(lambda x: x < 100, lambda x: x * 2, x)


@program(f32(3), f32((5, 3)))
def scan_cumulative(c, xs):
    return lax.scan(lambda c, x: (c + x, c * x), c, xs)


@program(f32(3), f32((5, 3)))
def grad_of_scan(c, xs):
    def loss(c, xs):
        c, ys = lax.scan(lambda c, x: (jnp.sin(c) * x, c * x), c, xs)
        return jnp.sum(c) + jnp.sum(ys)

    return jax.grad(loss, argnums=(0, 1))(c, xs)


@program(f32(3), f32((5, 3)))
def jvp_of_scan(c, xs):
    f = lambda c: lax.scan(lambda c, x: (jnp.tanh(c * x), c), c, xs)  # noqa: E731
    return jax.jvp(f, (c,), (c,))


@program(f32(4))
def vmap_of_while(x):
    return jax.vmap(lambda x: lax.while_loop(lambda v: v < 10, lambda v: v + 1.5, x))(x)


@program(f32(3))
def custom_jvp_logaddexp(x):
    return jnp.logaddexp(x, 2.0)


@jax.custom_vjp
def _clip_gradient(x):
    return x


_clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1, 1),))


@program(f32(3))
def custom_vjp_call(x):
    return _clip_gradient(x) * 2


@program(f32(3))
def grad_of_custom_vjp(x):
    return jax.grad(lambda x: jnp.sum(_clip_gradient(jnp.sin(x))))(x)


@program(f32(3))
def grad_of_custom_jvp(x):
    return jax.grad(lambda x: jnp.sum(jax.nn.relu(x) + jnp.logaddexp(x, 1.0)))(x)


@program(f32(3))
def remat(x):
    return jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))(x)


@program(f32(3))
def grad_of_remat(x):
    f = jax.checkpoint(lambda x: jnp.sum(jnp.sin(jnp.cos(x))))
    return jax.grad(f)(x)


@program(f32(3))
def remat_policy(x):
    policy = jax.checkpoint_policies.dots_with_no_batch_dims_saveable
    f = jax.checkpoint(lambda x: jnp.sum(jnp.tanh(jnp.outer(x, x))), policy=policy)
    return jax.grad(f)(x)


@program(f32(3), f32(3))
def nested_jit_twice(x, y):
    @jax.jit
    def g(a):
        for _ in range(6):
            a = jnp.sin(a) + jnp.cos(a)
        return a

    return g(x) + g(y)


@program(np.uint32(0))
def random_keys(seed):
    key = jax.random.key(seed)
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, (3,)), jax.random.uniform(k2, (2, 2))


@program(np.uint32(0))
def random_raw_prngkey(seed):
    key = jax.random.PRNGKey(seed)
    return jax.random.bernoulli(key, 0.3, (4,)), jax.random.randint(key, (2,), 0, 10)


@program(np.uint32(0))
def random_key_data(seed):
    key = jax.random.fold_in(jax.random.key(seed), 3)
    return jax.random.key_data(key), jax.random.permutation(key, 5)


@program(f32((1, 3, 8, 8)), f32((4, 3, 3, 3)))
def conv2d(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME")


@program(f32((2, 8, 8, 3)))
def pooling(x):
    m = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    s = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return m, s / 4


@program(f32((4, 5)))
def reductions(x):
    return jnp.sum(x, 0), jnp.max(x), jnp.argmax(x, 1), jnp.cumsum(x, 1), jnp.prod(x)


@program(f32(6))
def sort_and_top_k(x):
    return jnp.sort(x), lax.top_k(x, 2), jnp.argsort(x)


@program(f32((5, 3)), np.int32(2))
def gather_scatter(x, i):
    return x[i], x[1:4:2], x.at[i].set(0.0), x.at[:, 1].add(1.0)


@program(f32(8), np.int32(2))
def dynamic_slices(x, i):
    return lax.dynamic_slice(x, (i,), (3,)), lax.dynamic_update_slice(x, x[:2], (i,))


@program(f32((3, 3)))
def linalg(a):
    a = a + jnp.eye(3)
    return jnp.linalg.cholesky(a @ a.T), jnp.linalg.qr(a), jnp.linalg.eigh(a), jnp.linalg.inv(a)


@program(f32((3, 3)))
def svd_and_solve(a):
    return jnp.linalg.svd(a + jnp.eye(3)), jnp.linalg.solve(a + jnp.eye(3), a[0])


@program(f32(8))
def fft(x):
    return jnp.fft.fft(x), jnp.fft.irfft(jnp.fft.rfft(x))


@program(f32((2, 3)))
def logsumexp_and_special(x):
    return jax.nn.logsumexp(x, axis=1), jax.scipy.special.erf(x), lax.lgamma(x), x**3


@program(f32(3))
def hessian(x):
    return jax.hessian(lambda x: jnp.sum(jnp.sin(x) ** 2))(x)


@program(f32((4, 3)))
def lax_map(xs):
    return lax.map(lambda x: jnp.dot(x, x), xs)


@program(f32(8))
def associative_scan(x):
    return lax.associative_scan(jnp.add, x)


@program(f32(3))
def debug_print_and_callback(x):
    jax.debug.print("x={x}", x=x)
    y = jax.pure_callback(lambda v: np.sin(v), jax.ShapeDtypeStruct((3,), np.float32), x)
    return y * 2


@program(f32(3))
def linear_solve_cg(b):
    def matvec(v):
        return 2 * v

    return jax.scipy.sparse.linalg.cg(matvec, b)[0]


@program(f32(3))
def linear_transpose(x):
    return jax.linear_transpose(lambda v: 3.0 * v[::-1], x)(x)


@program(np.complex64(1 + 2j) * np.ones(3, np.complex64))
def complex_numbers(z):
    return jnp.abs(z), jnp.conj(z) * z, jnp.angle(z), z.real


@program(f32((2, 3)), f32((2, 3)))
def vmap_of_jit_dot(x, y):
    return jax.vmap(jax.jit(jnp.dot))(x, y)


@program(f32((2, 3)))
def types_and_casts(x):
    return x.astype(jnp.bfloat16), x.astype(jnp.int8), lax.iota(jnp.int32, 4), x > 1


@program(f32(3), f32(3))
def stop_gradient_and_select(x, y):
    return jnp.where(x > y, lax.stop_gradient(x), y), jnp.clip(x, 0, 1), jnp.isnan(x)


@program(f32((1, 3)))
def pmap_one_device(x):
    return jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(x)


@program(f32(3))
def scan_of_cond(xs):
    def step(c, x):
        return lax.cond(x > 0.5, lambda: c + x, lambda: c * x), c

    return lax.scan(step, 0.0, xs)


@program(f32(3))
def jacfwd_of_while(x):
    f = lambda x: lax.fori_loop(0, 3, lambda i, v: jnp.sin(v), x)  # noqa: E731
    return jax.jacfwd(f)(x)


@program(np.float32(1.0))
def many_variables(x):
    # Enough variables that some are named like primitives ('ne', 'or', 'lt', ...).
    for i in range(420):
        x = jnp.sin(x) if i % 2 else x * 1.5
    return x


def main(names):
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (f, args) in PROGRAMS.items():
        if names and name not in names:
            continue
        try:
            text = str(jax.make_jaxpr(f)(*args))
        except Exception as e:  # some programs need what this machine lacks
            print(f"skipped {name}: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
            continue
        (OUT / f"{name}.jaxpr").write_text(text + "\n")
    print(len(list(OUT.glob("*.jaxpr"))), "files in", OUT)


if __name__ == "__main__":
    assert jax.__version__ == "0.10.2", jax.__version__
    main(sys.argv[1:])
