"""Creation functions asked for float0 (the tangent dtype of integers): as in JAX, they
return host NumPy float0 arrays (float0 holds no data, so the fill value is not used)."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina import lax
from lamina.interpreters import Array, devices, make_jaxpr
from lamina.ir import dtypes

FLOAT0 = dtypes.float0

# recorded from JAX 0.10.2: each is a host float0 array of the shape given here
CASES = {
    "zeros": (lambda: jnp.zeros((2, 3), FLOAT0), (2, 3)),
    "ones": (lambda: jnp.ones(2, FLOAT0), (2,)),
    "empty": (lambda: jnp.empty((), FLOAT0), ()),
    "full": (lambda: jnp.full((2,), 7, FLOAT0), (2,)),
    "full_array_fill": (lambda: jnp.full((2,), np.ones(2), FLOAT0), (2,)),
    "zeros_like": (lambda: jnp.zeros_like(np.ones(3), FLOAT0), (3,)),
    "ones_like": (lambda: jnp.ones_like(jnp.ones((2, 2)), FLOAT0), (2, 2)),
    "full_like": (lambda: jnp.full_like(np.ones(2), 3, FLOAT0), (2,)),
    "empty_like": (lambda: jnp.empty_like(np.ones(2), FLOAT0), (2,)),
    "zeros_like_float0": (lambda: jnp.zeros_like(np.zeros(2, FLOAT0)), (2,)),
    "zeros_like_shape": (lambda: jnp.zeros_like(np.ones(3), FLOAT0, shape=(4,)), (4,)),
    "asarray": (lambda: jnp.asarray(np.zeros(2, FLOAT0)), (2,)),
    "array": (lambda: jnp.array(np.zeros(2, FLOAT0)), (2,)),
    "zeros_on_device": (lambda: jnp.zeros(2, FLOAT0, device=devices()[0]), (2,)),
    "lax.full": (lambda: lax.full((2,), 0, FLOAT0), (2,)),
    "lax.full_like": (lambda: lax.full_like(np.ones(2), 0, FLOAT0), (2,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float0_creation_gives_a_host_float0_array(name):
    make, shape = CASES[name]
    out = make()
    assert isinstance(out, np.ndarray) and not isinstance(out, Array)
    assert out.dtype == FLOAT0 and out.shape == shape


def test_float0_creation_under_a_trace():
    jaxpr = make_jaxpr(lambda x: (jnp.zeros(3, FLOAT0), jnp.full((2,), x, FLOAT0)))(1.0)
    # recorded from JAX 0.10.2
    assert str(jaxpr) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:float0[3] = broadcast_in_dim (b'',):float0[]\n"
        "    c:float0[] = convert_element_type[\n"
        "      new_dtype=[('float0', 'V')]\n"
        "      weak_type=False\n"
        "    ] a\n"
        "    d:float0[2] = broadcast_in_dim c\n"
        "  in (b, d) }"
    )
