"""lamina's main demo: build a Jaxpr with the IR API, print it, parse it back, check it.

The demo grows as layers land; today it exercises lamina.ir alone.
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


if __name__ == "__main__":
    main()
