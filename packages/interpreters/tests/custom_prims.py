"""Test-local primitives for the custom-derivative tests (lax is a higher layer): fresh
sin, cos, neg, mul and add with JVP, transpose and batching rules, and the helpers the
tests share."""

import jit_prims
import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina.interpreters import batching
from lamina.interpreters.transformations.ad import defjvp2, deflinear
from lamina.interpreters.transformations.reverse import is_undefined_primal

# Fresh primitives with every rule these tests need (JVP, transpose, batching).
sin_p = jit_prims._unary("sin", hlo.sine)
cos_p = jit_prims._unary("cos", hlo.cosine)
neg_p = jit_prims._unary("neg", hlo.negate)
mul_p = jit_prims._binary("mul", hlo.multiply)
add_p = jit_prims._binary("add", hlo.add)
sin, cos, neg, mul, add = sin_p.bind, cos_p.bind, neg_p.bind, mul_p.bind, add_p.bind
defjvp2(sin_p, lambda t, ans, x: mul(t, cos(x)))
defjvp2(cos_p, lambda t, ans, x: neg(mul(t, sin(x))))
defjvp2(mul_p, lambda t, ans, x, y: mul(t, y), lambda t, ans, x, y: mul(x, t))
deflinear(add_p)
deflinear(neg_p)
mul_p.def_transpose(
    lambda ct, x, y: [mul(ct, y), None] if is_undefined_primal(x) else [None, mul(x, ct)]
)
add_p.def_transpose(lambda ct, x, y: [ct, ct])
neg_p.def_transpose(lambda ct, x: [neg(ct)])
for _p in (sin_p, cos_p, neg_p):
    batching.defvectorized(_p)
for _p in (mul_p, add_p):
    batching.defbroadcasting(_p)

X = np.float32(0.7)
XS = np.linspace(-1.0, 1.0, 4).astype(np.float32)
ONE = np.float32(1.0)


def close(got, want, rtol=1e-5):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=1e-6)
