"""lamina's main demo, growing as layers land.

1. The IR alone: build a Jaxpr with the IR API, print it, parse it back, check it.
2. The runtime: trace a Python function to a Jaxpr, lower it to StableHLO, compile it
   with XLA through jaxlib and run it on device arrays, eagerly and under jit.
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
)
from lamina.ir.parser import parse_jaxpr

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


def main() -> None:
    from lamina.ir.primitives import PrimitiveRegistry

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


if __name__ == "__main__":
    main()
