"""ragged_all_to_all with vmap semantics against a Python reference of its documented
send/receive loop, JAX's documented example, its reverse-mode derivative (an exact
linear map, checked entry by entry), and the unbound-axis error; psend/precv behave
as JAX 0.10.2's do on CPU."""

from functools import partial

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import ShapeDtypeStruct, grad, jit, jvp, vmap

ragged = vmap(partial(lax.ragged_all_to_all, axis_name="i"), axis_name="i")


def reference(operand, output, input_offsets, send_sizes, output_offsets):
    n, slices = input_offsets.shape
    per = slices // n
    out = output.copy()
    for sender in range(n):
        for i in range(slices):
            start, size, at = (
                input_offsets[sender, i],
                send_sizes[sender, i],
                output_offsets[sender, i],
            )
            out[i // per, at : at + size] = operand[sender, start : start + size]
    return out


def random_problem(n=3, per=2, rows_in=8, rows_out=14, seed=0):
    rng = np.random.default_rng(seed)
    operand = rng.standard_normal((n, rows_in, 2)).astype(np.float32)
    output = rng.standard_normal((n, rows_out, 2)).astype(np.float32)
    sizes = rng.integers(0, 3, (n, n * per)).astype(np.int32)
    starts = rng.integers(0, rows_in - 3, (n, n * per)).astype(np.int32)
    at = np.zeros_like(sizes)
    for receiver in range(n):  # disjoint windows on every receiver
        position = 0
        for sender in range(n):
            for j in range(per):
                at[sender, receiver * per + j] = position
                position += sizes[sender, receiver * per + j]
    return operand, output, starts, sizes, at


def test_jax_documented_example():
    operand = np.array([[1, 2, 2], [3, 4, 0]], np.float32)
    output = np.zeros((2, 4), np.float32)
    input_offsets = np.array([[0, 1], [0, 1]], np.int32)
    send_sizes = np.array([[1, 2], [1, 1]], np.int32)
    output_offsets = np.array([[0, 0], [1, 2]], np.int32)
    recv_sizes = np.array([[1, 1], [2, 1]], np.int32)
    got = ragged(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes)
    np.testing.assert_array_equal(np.asarray(got), [[1, 3, 0, 0], [2, 2, 4, 0]])


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_reference(seed):
    operand, output, starts, sizes, at = random_problem(seed=seed)
    got = jit(ragged)(operand, output, starts, sizes, at, np.zeros_like(sizes))
    np.testing.assert_allclose(np.asarray(got), reference(operand, output, starts, sizes, at))


def test_reverse_mode_is_the_transposed_exchange():
    operand, output, starts, sizes, at = random_problem(seed=2)
    weights = np.random.default_rng(3).standard_normal(output.shape).astype(np.float32)
    recv = np.zeros_like(sizes)

    def loss(a, b):
        return lax.reduce_sum(ragged(a, b, starts, sizes, at, recv) * weights, (0, 1, 2))

    grad_operand, grad_output = grad(loss, argnums=(0, 1))(operand, output)
    want_operand, want_output = np.zeros_like(operand), np.zeros_like(output)
    zeros_in, zeros_out = np.zeros_like(operand), np.zeros_like(output)
    for index in np.ndindex(operand.shape):
        unit = zeros_in.copy()
        unit[index] = 1
        want_operand[index] = (reference(unit, zeros_out, starts, sizes, at) * weights).sum()
    for index in np.ndindex(output.shape):
        unit = zeros_out.copy()
        unit[index] = 1
        want_output[index] = (reference(zeros_in, unit, starts, sizes, at) * weights).sum()
    np.testing.assert_allclose(np.asarray(grad_operand), want_operand, atol=1e-6)
    np.testing.assert_allclose(np.asarray(grad_output), want_output, atol=1e-6)
    tangent = jvp(lambda a: ragged(a, output, starts, sizes, at, recv), (operand,), (operand,))[1]
    np.testing.assert_allclose(
        np.asarray(tangent), reference(operand, np.zeros_like(output), starts, sizes, at)
    )


def test_errors():
    operand, output, starts, sizes, at = random_problem()
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.ragged_all_to_all(operand[0], output[0], starts[0], sizes[0], at[0], sizes[0],
                              axis_name="i")  # fmt: skip
    with pytest.raises(ValueError, match="input and output dtypes must be equal"):
        ragged(operand, output.astype(np.float16), starts, sizes, at, sizes)
    with pytest.raises(ValueError, match="must be rank 1 with positive dimension size"):
        ragged(operand, output, starts[:, :, None], sizes, at, sizes)


def test_psend_precv_refuse_cpu_like_jax():
    with pytest.raises(NameError, match="call psend under"):
        lax.psend(np.float32(1), "i", [(0, 1)])
    token_out = ShapeDtypeStruct((2,), np.float32)
    with pytest.raises(NameError, match="call precv under"):
        lax.precv(lax.create_token(), token_out, "i", [(0, 1)])
