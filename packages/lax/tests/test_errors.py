"""Bad input raises JAX's error types with JAX 0.10.2's messages (recorded from JAX),
eagerly and under make_jaxpr."""

import ml_dtypes
import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import device_put, make_jaxpr

f3 = np.ones(3, np.float32)
i3 = np.ones(3, np.int32)
b3 = np.ones(3, bool)
m = np.ones((2, 3), np.float32)
bf = np.ones((3, 1), ml_dtypes.bfloat16)

TIP = "(Tip: jnp.{} is a similar function that does automatic type promotion on inputs)."

CASES = [
    (lambda x: lax.add(x, 2.0), (bf,), TypeError,
     "lax.add requires arguments to have the same dtypes, got bfloat16, float32. "
     + TIP.format("add")),
    (lambda x: lax.add(x, 2), (f3,), TypeError,
     "lax.add requires arguments to have the same dtypes, got float32, int32. "
     + TIP.format("add")),
    (lambda x, y: lax.mul(x, y), (f3, i3), TypeError,
     "lax.mul requires arguments to have the same dtypes, got float32, int32. "
     + TIP.format("multiply")),
    (lambda x, y: lax.max(x, y), (f3, i3), TypeError,
     "lax.max requires arguments to have the same dtypes, got float32, int32. "
     + TIP.format("maximum")),
    (lambda x, y: lax.ne(x, y), (f3, i3), TypeError,
     "lax.ne requires arguments to have the same dtypes, got float32, int32. "
     + TIP.format("not_equal")),
    (lambda x, y: lax.lt(x, y), (f3, i3), TypeError,
     "lax.lt requires arguments to have the same dtypes, got float32, int32."),
    (lambda x, y: lax.add(x, y), (f3, np.ones(4, np.float32)), TypeError,
     "add got incompatible shapes for broadcasting: (3,), (4,)."),
    (lambda x, y: lax.add(x, y), (f3, np.ones(4, bool)), TypeError,
     "add got incompatible shapes for broadcasting: (3,), (4,)."),
    (lambda x, y: lax.add(x, y), (f3, m), TypeError,
     "add: arrays must have the same number of dimensions, got {1, 2}"),
    (lambda x: lax.sin(x), (i3,), TypeError,
     "sin does not accept dtype int32. Accepted dtypes are subtypes of floating, "
     "complexfloating."),
    (lambda x: lax.neg(x), (b3,), TypeError,
     "neg does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
     "complexfloating."),
    (lambda x, y: lax.add(x, y), (b3, b3), TypeError,
     "add does not accept dtype bool at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating, complexfloating."),
    (lambda p, x, y: lax.select_n(p, x, y), (b3, f3, np.float32(1)), TypeError,
     "select cases must have the same shapes, got [(3,), ()]."),
    (lambda p, x, y: lax.select_n(p, x, y), (np.ones(2, bool), f3, f3), TypeError,
     "select `which` must be scalar or have the same shape as cases, got `which` shape "
     "(2,) but case shape (3,)."),
    (lambda p, x, y: lax.select_n(p, x, y), (f3, f3, f3), TypeError,
     "select `which` must be boolean or integer type, got float32."),
    (lambda p, x, y: lax.select_n(p, x, y), (b3, f3, i3), TypeError,
     "lax.select requires arguments to have the same dtypes, got float32, int32. "
     + TIP.format("where")),
    (lambda p, x: lax.select_n(p, x, x, x), (b3, f3), TypeError,
     "select with boolean `which` cannot have > 2 cases."),
    (lambda p: lax.select_n(p), (b3,), ValueError, "select_n() must have at least one case"),
    (lambda x: lax.broadcast_in_dim(x, (2, 4), (1,)), (f3,), TypeError,
     "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
     "corresponding dimensions in the target broadcast shape; got operand of shape (3,), "
     "target broadcast shape (2, 4), broadcast_dimensions (1,) "),
    (lambda x: lax.broadcast_in_dim(x, (2, 3), (1, 1)), (np.ones((3, 3)),), TypeError,
     "broadcast_in_dim broadcast_dimensions must not contain duplicates, got "
     "broadcast_dimensions (1, 1)"),
    (lambda x: lax.broadcast_in_dim(x, (2, 3), (0, 1, 2)), (f3,), TypeError,
     "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
     "broadcast_dimensions (0, 1, 2) for operand ndim 1."),
    (lambda x: lax.broadcast_in_dim(x, (2, 3), (2,)), (f3,), TypeError,
     "broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, got "
     "(2,) for operand ndim 1 and shape (2, 3)."),
    (lambda x: lax.reshape(x, (3, 2), (0,)), (m,), TypeError,
     "reshape dimensions must be a permutation of operand dimensions, got dimensions (0,) "
     "for shape (2, 3)."),
    (lambda x: lax.reshape(x, (-1, 3)), (m,), TypeError,
     "reshape new_sizes must all be positive, got (-1, 3)."),
    (lambda x: lax.transpose(x, (0, 0)), (m,), TypeError,
     "transpose permutation isn't a permutation of operand dimensions, got permutation "
     "(0, 0) for operand shape (2, 3)."),
    (lambda x: lax.reduce_sum(x, (2,)), (m,), ValueError,
     "reduction axes (2,) contains out-of-bounds indices for float32[2,3]."),
    (lambda x: lax.reduce_sum(x, (1,)), (2.0,), ValueError,
     "reduction axes (1,) contains out-of-bounds indices for ~float32[]."),
    (lambda x: lax.reduce_sum(x, (0, 0)), (m,), ValueError,
     "duplicate value in 'axes' of reduction: (0, 0)"),
    (lambda x: lax.reduce_sum(x, (1,)), (m > 0,), TypeError,
     "reduce_sum does not accept dtype bool. Accepted dtypes are subtypes of number."),
    (lambda x, y: lax.dot_general(x, y, (((1,), (1,)), ((), ()))), (m, m.T), TypeError,
     "dot_general requires contracting dimensions to have the same shape, got (3,) and "
     "(2,)."),
    (lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
     (np.ones((4, 2, 3)), np.ones((5, 3, 5))), TypeError,
     "dot_general requires lhs batch dimensions and rhs batch dimensions to have the same "
     "shape, got (4,) and (5,)."),
    (lambda x, y: lax.dot_general(x, y, (((3,), (1,)), ((), ()))),
     (np.ones((4, 2, 3)), np.ones((5, 3, 5))), TypeError,
     "dot_general requires lhs dimension numbers to be nonnegative and less than the "
     "number of axes of the lhs value, got lhs_batch of () and lhs_contracting of (3,) "
     "for lhs of rank 3"),
    (lambda x, y: lax.dot(x, y), (np.ones((4, 2, 3)), np.ones((3, 5))), ValueError,
     "jax.lax.dot: dimension_numbers must be specified when not performing simple "
     "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
     "lhs_shape=(4, 2, 3) rhs_shape=(3, 5)"),
    (lambda x, y: lax.dot(x, y), (f3, np.ones((4, 5))), ValueError,
     "jax.lax.dot: dimension_numbers must be specified when not performing simple "
     "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
     "lhs_shape=(3,) rhs_shape=(4, 5)"),
    (lambda: lax.iota(np.int32, -1), (), TypeError,
     "iota shape must have every element be nonnegative, got (-1,)."),
    (lambda: lax.broadcasted_iota(np.int32, (2, 3), 2), (), ValueError,
     "iota dimension must be between 0 and len(shape), got dimension=2 for shape=(2, 3)"),
    (lambda: lax.iota(bool, 3), (), TypeError,
     "iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
     "complexfloating."),
]  # fmt: skip


@pytest.mark.parametrize(("fun", "args", "error", "message"), CASES)
def test_traced_errors(fun, args, error, message):
    with pytest.raises(error) as info:
        make_jaxpr(fun)(*args)
    assert str(info.value) == message


@pytest.mark.parametrize(("fun", "args", "error", "message"), CASES)
def test_eager_errors(fun, args, error, message):
    args = [device_put(a) for a in args]
    with pytest.raises(error) as info:
        fun(*args)
    assert str(info.value) == message


def test_operator_broadcast_error():
    with pytest.raises(
        TypeError, match=r"add got incompatible shapes for broadcasting: \(3,\), \(4,\)"
    ):
        device_put(f3) + device_put(np.ones(4, np.float32))  # same ranks: lax's TypeError, as JAX
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        device_put(f3) + device_put(np.ones((2, 4), np.float32))
