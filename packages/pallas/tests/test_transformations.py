"""pallas_call under jit, vmap (a new grid axis), JVP (the kernel differentiated) and
grad through kernels with custom_vjp."""

import numpy as np
import pytest
from kernels import attention_reference, flash_attention, matmul

import lamina.numpy as jnp
from lamina import pallas as pl
from lamina.interpreters import (
    ShapeDtypeStruct,
    custom_vjp,
    grad,
    jit,
    jvp,
    make_jaxpr,
    vmap,
)

RNG = np.random.default_rng(1)


def _sin2(x):
    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.sin(x_ref[...]) * 2

    return pl.pallas_call(
        kernel,
        out_shape=ShapeDtypeStruct(x.shape, x.dtype),
        grid=(2,),
        in_specs=[pl.BlockSpec((4,), lambda i: (i,))],
        out_specs=pl.BlockSpec((4,), lambda i: (i,)),
        interpret=True,
    )(x)


def test_vmap_adds_a_grid_axis():
    x = RNG.standard_normal((3, 8)).astype(np.float32)
    np.testing.assert_allclose(vmap(_sin2)(x), np.sin(x) * 2, rtol=1e-6)
    eqn = make_jaxpr(vmap(_sin2))(x).jaxpr.eqns[0]
    # Recorded from JAX 0.10.2: the batch becomes the leading grid axis.
    assert eqn.params["grid_mapping"].grid == (3, 2)


def test_vmap_with_an_unbatched_operand_and_in_axes():
    x = RNG.standard_normal((16, 8)).astype(np.float32)
    ys = RNG.standard_normal((2, 8, 16)).astype(np.float32)
    f = vmap(lambda y: matmul(x, y, bm=8, bn=8, bk=8))
    np.testing.assert_allclose(f(ys), x @ ys, rtol=1e-4, atol=1e-4)
    g = vmap(lambda y: matmul(x, y, bm=8, bn=8, bk=8), in_axes=2, out_axes=1)
    zs = np.moveaxis(ys, 0, 2)
    np.testing.assert_allclose(g(zs), np.moveaxis(x @ ys, 0, 1), rtol=1e-4, atol=1e-4)


def test_jvp_differentiates_the_kernel():
    x = np.arange(8.0, dtype=np.float32)
    out, tangent = jvp(_sin2, (x,), (np.ones(8, np.float32),))
    np.testing.assert_allclose(out, 2 * np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(tangent, 2 * np.cos(x), rtol=1e-5, atol=1e-6)


@custom_vjp
def _sin2_vjp(x):
    return _sin2(x)


def _fwd(x):
    return _sin2(x), x


def _bwd(x, g):
    def kernel(x_ref, g_ref, o_ref):
        o_ref[...] = 2 * jnp.cos(x_ref[...]) * g_ref[...]

    return (
        pl.pallas_call(kernel, out_shape=ShapeDtypeStruct(x.shape, x.dtype), interpret=True)(x, g),
    )


_sin2_vjp.defvjp(_fwd, _bwd)


def test_grad_through_a_custom_vjp_kernel():
    x = RNG.standard_normal(8).astype(np.float32)
    np.testing.assert_allclose(
        grad(lambda x: _sin2_vjp(x).sum())(x), 2 * np.cos(x), rtol=1e-5, atol=1e-6
    )
    per_row = jit(vmap(grad(lambda x: (_sin2_vjp(x) ** 2).sum())))
    xs = RNG.standard_normal((3, 8)).astype(np.float32)
    np.testing.assert_allclose(per_row(xs), 8 * np.sin(xs) * np.cos(xs), rtol=1e-4, atol=1e-5)


def test_jit_caches_and_matches_eager():
    x = RNG.standard_normal(8).astype(np.float32)
    f = jit(_sin2)
    np.testing.assert_array_equal(f(x), _sin2(x))
    np.testing.assert_array_equal(f(x + 1), _sin2(x + 1))


def test_grad_without_custom_vjp_fails_as_in_jax():
    x = np.arange(8.0, dtype=np.float32)
    # Recorded from JAX 0.10.2: pallas_call has no reverse mode of its own.
    with pytest.raises(ValueError, match="Linearization failed to produce known values"):
        grad(lambda x: _sin2(x).sum())(x)


def test_grid_spec():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + pl.program_id(0).astype(np.float32)

    spec = pl.GridSpec(
        grid=(2,),
        in_specs=[pl.BlockSpec((4,), lambda i: (i,))],
        out_specs=pl.BlockSpec((4,), lambda i: (i,)),
    )
    f = pl.pallas_call(
        kernel, out_shape=ShapeDtypeStruct((8,), np.float32), grid_spec=spec, interpret=True
    )
    np.testing.assert_array_equal(f(np.zeros(8, np.float32)), [0, 0, 0, 0, 1, 1, 1, 1])


def test_one_pallas_call_traces_its_kernel_once_per_input_type():
    f = pl.pallas_call(
        lambda x_ref, o_ref: o_ref.__setitem__(..., x_ref[...] + 1),
        out_shape=ShapeDtypeStruct((4,), np.float32),
        interpret=True,
    )
    x = np.zeros(4, np.float32)
    first = make_jaxpr(f)(x).jaxpr.eqns[0].params["jaxpr"]
    assert make_jaxpr(f)(x + 1).jaxpr.eqns[0].params["jaxpr"] is first
    np.testing.assert_array_equal(f(x), [1, 1, 1, 1])
    np.testing.assert_array_equal(f(x + 1), [2, 2, 2, 2])


def test_jvp_of_a_kernel_with_control_flow():
    x, y = RNG.standard_normal((2, 32, 32)).astype(np.float32)
    dx, dy = RNG.standard_normal((2, 32, 32)).astype(np.float32)
    _, t = jvp(lambda a, b: matmul(a, b, 16, 16, 16), (x, y), (dx, dy))
    np.testing.assert_allclose(t, dx @ y + x @ dy, rtol=1e-4, atol=1e-4)


def test_vmap_of_flash_attention():
    q = RNG.standard_normal((3, 2, 32, 16)).astype(np.float32)
    out = vmap(lambda q: flash_attention(q, q, q, 16, 16))(q)
    expected = np.stack([attention_reference(a, a, a) for a in q])
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
