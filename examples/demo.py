"""lamina's main demo, growing as layers land.

1. The IR alone: build a Jaxpr with the IR API, print it, parse it back, check it.
2. The runtime: trace a Python function to a Jaxpr, lower it to StableHLO, compile it
   with XLA through jaxlib and run it on device arrays, eagerly and under jit.
3. A JAX program, unchanged: ``import lamina as jax``, a small classifier initialised
   with ``jax.random`` and ``jax.nn.initializers``, trained with
   ``jax.jit(jax.value_and_grad(...))`` on ``jax.numpy`` operations, with per-example
   gradient norms from ``jax.vmap(jax.grad(...))``.
"""

import numpy as np

from lamina.ir import (
    Jaxpr,
    Literal,
    Primitive,
    ShapedArray,
    Var,
    check_jaxpr,
    new_jaxpr_eqn,
    parse_jaxpr,
)

# lamina.lax will define the real primitives; the demo declares two of its own.
sin = Primitive("demo_sin", registry=None)
sin.def_abstract_eval(lambda x: x)
mul = Primitive("demo_mul", registry=None)
mul.def_abstract_eval(lambda x, y: ShapedArray(np.broadcast_shapes(x.shape, y.shape), x.dtype))


def build() -> Jaxpr:
    f32 = np.dtype("float32")
    x = Var(ShapedArray((5,), f32))
    s = Var(ShapedArray((5,), f32))
    y = Var(ShapedArray((5,), f32))
    two = Literal(np.float32(2.0), ShapedArray((), f32, weak_type=True))
    return Jaxpr(
        constvars=[],
        invars=[x],
        outvars=[y],
        eqns=[new_jaxpr_eqn([x], [s], sin, {}), new_jaxpr_eqn([s, two], [y], mul, {})],
    )


def runtime_demo() -> None:
    import lamina as jax
    from lamina import lax

    def layer(w, x):
        return lax.tanh(lax.dot_general(x, w, (((1,), (0,)), ((), ()))) * 2.0 + 1.0)

    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    x = np.ones((2, 4), np.float32)
    print("\ntraced:\n" + str(jax.make_jaxpr(layer)(w, x)))
    jitted = jax.jit(layer)
    print("lowered to StableHLO:\n" + jitted.lower(w, x).as_text())
    result = jitted(w, x)
    print("jit result:", result)
    expected = np.tanh(x @ w * 2 + 1)
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(layer(w, x)), expected, rtol=1e-6)
    print("matches NumPy, eagerly and under jit")


def program_demo() -> None:
    import lamina as jax
    import lamina.numpy as jnp

    key = jax.random.PRNGKey(0)
    k_data, k_w1, k_w2 = jax.random.split(key, 3)
    x = jax.random.normal(k_data, (64, 2))
    labels = (x[:, 0] * x[:, 1] > 0).astype(jnp.int32)  # XOR of the signs
    init = jax.nn.initializers.glorot_normal()
    params = {"w1": init(k_w1, (2, 32)), "b1": jnp.zeros(32),
              "w2": init(k_w2, (32, 2)), "b2": jnp.zeros(2)}  # fmt: skip

    def loss(params, x, labels):
        hidden = jax.nn.relu(x @ params["w1"] + params["b1"])
        log_probs = jax.nn.log_softmax(hidden @ params["w2"] + params["b2"])
        return -jnp.mean(jnp.sum(jax.nn.one_hot(labels, 2) * log_probs, axis=-1))

    @jax.jit
    def step(params, x, labels):
        value, grads = jax.value_and_grad(loss)(params, x, labels)
        return value, jax.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, grads)

    first = None
    for _ in range(200):
        value, params = step(params, x, labels)
        first = value if first is None else first
    print(f"\nclassifier loss: {float(first):.3f} -> {float(value):.3f}")
    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(
        params, x[:, None], labels[:, None]
    )
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(64, -1) ** 2, axis=1) for g in per_example.values()))
    print("largest per-example gradient norm:", float(norms.max()))
    assert float(value) < 0.5 * float(first)


def main() -> None:
    from lamina.ir import PrimitiveRegistry

    jaxpr = build()
    print("built and printed as JAX prints it:\n" + str(jaxpr))
    # JAX's text drops weak types; lamina can mark them (`~`) so nothing is lost.
    text = jaxpr.pretty_print(print_weak_types=True)
    print("with weak types marked:\n" + text)
    registry = PrimitiveRegistry()
    registry.register(sin)
    registry.register(mul)
    parsed = parse_jaxpr(text, registry=registry)
    print("parsed back, equal to the original:", parsed == jaxpr)
    check_jaxpr(parsed)
    print("check_jaxpr: well-formed")
    assert parsed == jaxpr and parsed.pretty_print(print_weak_types=True) == text
    runtime_demo()
    program_demo()


if __name__ == "__main__":
    main()
