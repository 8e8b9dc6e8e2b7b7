"""Contractions beyond dot_general's core: batch_matmul, ragged_dot(_general) against a
NumPy loop over groups (values, derivatives, vmap), dot_general's precision forms
(pairs, algorithm presets, DotAlgorithm) and preferred_element_type, with the Jaxprs and
errors of JAX 0.10.2."""

import ml_dtypes
import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import (
    default_matmul_precision,
    enable_x64,
    grad,
    jit,
    linear_transpose,
    linearize,
    make_jaxpr,
    vmap,
)
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(5)


def test_batch_matmul():
    a = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = rng.standard_normal((2, 3, 5, 2)).astype(np.float32)
    np.testing.assert_allclose(
        np.asarray(lax.batch_matmul(a, b, precision="highest")), a @ b, rtol=1e-5, atol=1e-5
    )
    jaxpr = make_jaxpr(lax.batch_matmul)(
        np.ones((2, 2, 3), np.float32), np.ones((2, 3, 4), np.float32)
    )
    assert str(jaxpr) == (
        "{ lambda ; a:f32[2,2,3] b:f32[2,3,4]. let\n"
        "    c:f32[2,2,4] = dot_general[dimension_numbers=(([2], [1]), ([0], [0]))] a b\n"
        "  in (c,) }"
    )


@pytest.mark.parametrize(
    "shapes, message",
    [
        (((2, 3), (2, 3, 4)), "Arguments to batch_matmul must have same ndim, got 2, 3"),
        (((3,), (3,)), "Arguments to batch_matmul must be at least 2D, got 1, 1"),
    ],
)
def test_batch_matmul_errors(shapes, message):
    with pytest.raises(ValueError) as info:
        lax.batch_matmul(np.ones(shapes[0]), np.ones(shapes[1]))
    assert str(info.value) == message


def ragged_reference(lhs, rhs, sizes):
    out = np.zeros((lhs.shape[0], rhs.shape[2]), np.result_type(lhs, rhs))
    start = 0
    for g, size in enumerate(sizes):
        out[start : start + size] = lhs[start : start + size] @ rhs[g]
        start += size
    return out


def test_ragged_dot_matches_jax_and_reference():
    lhs = np.arange(12, dtype=np.float32).reshape(4, 3)
    rhs = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    got = jit(lax.ragged_dot)(lhs, rhs, np.array([1, 2], np.int32))
    np.testing.assert_array_equal(np.asarray(got), [[10, 13], [100, 112], [172, 193], [0, 0]])
    lhs = rng.standard_normal((7, 3)).astype(np.float32)
    rhs = rng.standard_normal((3, 3, 4)).astype(np.float32)
    for sizes in ([2, 0, 5], [7, 0, 0], [1, 1, 1]):
        got = jit(lax.ragged_dot)(lhs, rhs, np.array(sizes, np.int32))
        want = ragged_reference(lhs, rhs, sizes)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_ragged_dot_dtypes():
    lhs, rhs = np.ones((3, 2), np.int8), np.ones((2, 2, 2), np.int8)
    ragged_dot = jit(lax.ragged_dot, static_argnames="preferred_element_type")
    out = ragged_dot(lhs, rhs, np.array([1, 2], np.int32), preferred_element_type=np.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), np.full((3, 2), 2))
    lhs = lhs.astype(ml_dtypes.bfloat16)
    assert ragged_dot(lhs, rhs.astype(ml_dtypes.bfloat16), np.array([1, 2])).dtype == (
        ml_dtypes.bfloat16
    )


@pytest.mark.parametrize(
    "rhs_shape, sizes, error, message",
    [
        ((2, 3, 2), [1, 2, 1], TypeError, "expected rhs group dimension size to be 3, got 2."),
        ((3, 2), [1, 2], TypeError, "expected rhs group dimension size to be 2, got 3."),
        (
            (2, 3, 2),
            np.array([1.0, 2.0], np.float32),
            TypeError,
            "ragged_dot_general requires that group_sizes.dtype is subtype of np.integer.",
        ),
    ],
)
def test_ragged_dot_errors(rhs_shape, sizes, error, message):
    lhs = np.ones((4, 3), np.float32)
    with pytest.raises(error) as info:
        lax.ragged_dot(lhs, np.ones(rhs_shape, np.float32), np.asarray(sizes))
    assert str(info.value) == message


def test_ragged_dot_derivatives():
    sizes = np.array([2, 1, 2], np.int32)
    with enable_x64():
        lhs, rhs = rng.standard_normal((6, 3)), rng.standard_normal((3, 3, 2))
        f = lambda a, b: lax.ragged_dot(a, b, sizes)  # noqa: E731
        check_grads(f, (lhs, rhs), order=1, modes=("fwd", "rev"))
    # The last row is in no group: no gradient reaches it.
    g = grad(lambda a: lax.reduce_sum(lax.ragged_dot(a, rhs, sizes), (0, 1)))(lhs)
    np.testing.assert_array_equal(np.asarray(g)[5], 0)


def test_ragged_dot_vmap():
    lhs = rng.standard_normal((3, 5, 2)).astype(np.float32)
    rhs = rng.standard_normal((2, 2, 4)).astype(np.float32)
    sizes = np.array([[2, 3], [0, 4], [5, 0]], np.int32)
    got = jit(vmap(lambda a, s: lax.ragged_dot(a, rhs, s, precision="highest")))(lhs, sizes)
    for i in range(3):
        want = ragged_reference(lhs[i], rhs, sizes[i])
        np.testing.assert_allclose(np.asarray(got)[i], want, rtol=1e-5, atol=1e-5)


def test_ragged_dot_general_with_batch_dims():
    numbers = lax.RaggedDotDimensionNumbers(
        dot_dimension_numbers=(((2,), (2,)), ((0,), (1,))),
        lhs_ragged_dimensions=(1,),
        rhs_group_dimensions=(0,),
    )
    lhs = rng.standard_normal((2, 5, 3)).astype(np.float32)  # batch, ragged rows, k
    rhs = rng.standard_normal((2, 2, 3, 4)).astype(np.float32)  # group, batch, k, n
    sizes = np.array([3, 2], np.int32)
    got = lax.ragged_dot_general(lhs, rhs, sizes, numbers, precision="highest")
    want = np.stack([ragged_reference(lhs[b], rhs[:, b], sizes) for b in range(2)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


GRAD_JAXPR = """\
{ lambda ; a:f16[2,3] b:f16[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[2,4] = broadcast_in_dim 1.0:f32[]
    e:f32[4,3] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
    ] d a
    f:f32[3,4] = transpose[permutation=(1, 0)] e
    g:f16[3,4] = convert_element_type[new_dtype=float16 weak_type=False] f
    h:f32[2,3] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
    ] d b
    i:f16[2,3] = convert_element_type[new_dtype=float16 weak_type=False] h
  in (i, g) }"""


def test_grad_with_preferred_element_type_matches_jax():
    numbers = (((1,), (0,)), ((), ()))

    def f(a, b):
        out = lax.dot_general(a, b, numbers, precision="highest", preferred_element_type=np.float32)
        return lax.reduce_sum(out, (0, 1))

    a, b = np.ones((2, 3), np.float16), np.ones((3, 4), np.float16)
    assert str(make_jaxpr(grad(f, (0, 1)))(a, b)) == GRAD_JAXPR
    ga, gb = grad(f, (0, 1))(a, b)
    assert ga.dtype == np.float16 and gb.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(ga), np.full((2, 3), 4))


def test_preferred_element_type_values():
    a = np.full((2, 40), 100, np.int8)
    out = lax.dot_general(a, a.T, (((1,), (0,)), ((), ())), preferred_element_type=np.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 2), 400000))


def test_precision_forms():
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 2)).astype(np.float32)
    for precision in [
        ("highest", "default"),
        lax.Precision.HIGH,
        "F32_F32_F32",
        lax.DotAlgorithmPreset.BF16_BF16_F32,
    ]:
        got = lax.dot(a, b, precision=precision)
        np.testing.assert_allclose(np.asarray(got), a @ b, rtol=1e-2, atol=1e-2)
    # Recorded from JAX 0.10.2: explicit algorithms and most presets are refused on CPU.
    for precision in [lax.DotAlgorithm(np.float32, np.float32, np.float32), "TF32_TF32_F32"]:
        with pytest.raises(ValueError, match="is not supported by dot_general on CPU"):
            lax.dot(a, b, precision=precision)
    jaxpr = str(make_jaxpr(lambda a, b: lax.dot(a, b, precision="F32_F32_F32"))(a, b))
    assert "precision=F32_F32_F32" in jaxpr
    jaxpr = str(make_jaxpr(lambda a, b: lax.dot(a, b, precision=("highest", "default")))(a, b))
    assert "precision=(Precision.HIGHEST, Precision.DEFAULT)" in jaxpr


def test_precision_error_matches_jax():
    with pytest.raises(ValueError) as info:
        lax.dot(np.ones((2, 2)), np.ones((2, 2)), precision="bf16_bf16_f32")
    assert str(info.value) == (
        "Precision argument must be one of:\n- None,\n- a string in ['highest', 'float32', "
        "'high', 'bfloat16_3x', 'tensorfloat32', 'default', 'bfloat16', 'fastest', None],\n"
        "- a lax.Precision value,\n- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
        "- a lax.DotAlgorithm value;\nbut got bf16_bf16_f32."
    )


def test_algorithm_types():
    assert list(lax.DotAlgorithmPreset.__members__)[:3] == [
        "DEFAULT",
        "ANY_F8_ANY_F8_F32",
        "ANY_F8_ANY_F8_F32_FAST_ACCUM",
    ]
    algorithm = lax.DotAlgorithm("float32", "float32", "float32")
    assert algorithm.lhs_component_count == 1 and algorithm.allow_imprecise_accumulation is False


def test_scaled_dot_rounds_scaled_operands_to_bfloat16():
    bf16 = ml_dtypes.bfloat16
    lhs = rng.standard_normal((2, 3, 8)).astype(np.float32)
    rhs = rng.standard_normal((2, 8, 4)).astype(np.float32)
    lhs_scale = rng.uniform(1, 2, (2, 3, 2)).astype(np.float32)
    rhs_scale = rng.uniform(1, 2, (2, 2, 4)).astype(np.float32)
    out = lax.scaled_dot(
        lhs, rhs, lhs_scale=lhs_scale, rhs_scale=rhs_scale, preferred_element_type=np.float32
    )
    assert out.dtype == np.float32

    def rounded(x):
        return x.astype(bf16).astype(np.float32)

    a = rounded(rounded(lhs) * rounded(np.repeat(lhs_scale, 4, axis=2)))
    b = rounded(rounded(rhs) * rounded(np.repeat(rhs_scale, 4, axis=1)))
    np.testing.assert_allclose(np.asarray(out), a @ b, rtol=1e-4, atol=1e-4)
    plain = lax.scaled_dot(lhs[0], rhs[0])
    assert plain.dtype == bf16 and plain.shape == (3, 4)


def _groups(sizes):
    ends = np.cumsum(sizes)
    return list(zip(ends - sizes, ends, strict=True))


def test_ragged_dot_general_with_a_ragged_contracting_dimension():
    rng = np.random.default_rng(0)
    sizes = np.array([2, 0, 3], np.int32)
    lhs = rng.standard_normal((4, 6)).astype(np.float32)
    rhs = rng.standard_normal((6, 5)).astype(np.float32)
    numbers = lax.RaggedDotDimensionNumbers(
        dot_dimension_numbers=(((1,), (0,)), ((), ())),
        lhs_ragged_dimensions=(1,),
        rhs_group_dimensions=(),
    )
    out = lax.ragged_dot_general(lhs, rhs, sizes, numbers)
    want = np.stack([lhs[:, s:e] @ rhs[s:e] for s, e in _groups(sizes)])
    assert out.shape == (3, 4, 5)
    np.testing.assert_allclose(np.asarray(out), want, atol=1e-5)  # columns past 5: dropped


def test_ragged_dot_general_with_a_ragged_batch_dimension_is_a_dot_general():
    rng = np.random.default_rng(1)
    lhs = rng.standard_normal((3, 4, 6)).astype(np.float32)
    rhs = rng.standard_normal((3, 6, 5)).astype(np.float32)
    numbers = lax.RaggedDotDimensionNumbers(
        dot_dimension_numbers=(((2,), (1,)), ((0,), (0,))),
        lhs_ragged_dimensions=(0,),
        rhs_group_dimensions=(),
    )
    out = lax.ragged_dot_general(lhs, rhs, np.array([1, 2], np.int32), numbers)
    np.testing.assert_allclose(np.asarray(out), lhs @ rhs, atol=1e-5)
    with pytest.raises(NotImplementedError, match="Unimplemented group_offset support"):
        lax.ragged_dot_general(lhs, rhs, np.array([1, 2], np.int32), numbers,
                               group_offset=np.zeros(1, np.int32))  # fmt: skip


def _dot_lines(f, *args):
    text = jit(f).lower(*args).as_text()
    return [
        line.strip() for line in text.splitlines() if "dot_general" in line or "convolution" in line
    ]


def test_default_matmul_precision_option():
    # Lowered lines and Jaxprs recorded from JAX 0.10.2.
    x = np.ones((2, 2), np.float32)
    f = lambda a: lax.dot(a, a)  # noqa: E731
    dot = "%0 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [1] x [0], "
    types = " : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>"
    assert _dot_lines(f, x) == [dot + "precision = [DEFAULT, DEFAULT]" + types]
    for option, shown in [
        ("highest", "HIGHEST"),
        ("tensorfloat32", "HIGH"),
        ("bfloat16", "DEFAULT"),
    ]:
        with default_matmul_precision(option):
            assert _dot_lines(f, x) == [dot + f"precision = [{shown}, {shown}]" + types]
            assert f"precision=(Precision.{shown}, Precision.{shown})" in str(make_jaxpr(f)(x))
    with default_matmul_precision("F32_F32_F32"):
        assert _dot_lines(f, x) == [
            dot + "precision = [DEFAULT, DEFAULT], algorithm = <lhs_precision_type = f32, "
            "rhs_precision_type = f32, accumulation_type = f32, lhs_component_count = 1, "
            "rhs_component_count = 1, num_primitive_operations = 1, "
            "allow_imprecise_accumulation = false>" + types
        ]
        assert "precision=F32_F32_F32" in str(make_jaxpr(f)(x))
    with default_matmul_precision("highest"):  # an explicit precision wins
        assert (
            "[DEFAULT, DEFAULT]" in _dot_lines(lambda a: lax.dot(a, a, precision="default"), x)[0]
        )
        conv = _dot_lines(
            lambda a, b: lax.conv(a, b, (1, 1), "SAME"),
            np.ones((1, 1, 5, 5), np.float32),
            np.ones((1, 1, 3, 3), np.float32),
        )
        assert (
            "precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]"
            in conv[0]
        )


def test_default_matmul_precision_keys_the_jit_cache():
    x = np.ones((2, 2), np.float32)
    traces = []
    f = jit(lambda a: traces.append(1) or lax.dot(a, a))
    f(x)
    with default_matmul_precision("highest"):
        f(x)
    f(x)
    assert len(traces) == 2


def test_transpose_takes_the_default_precision_in_force():
    # As JAX 0.10.2: a product staged without a precision is transposed with the
    # jax_default_matmul_precision in force at transposition (Jaxpr recorded from it).
    m = np.array([[0.0, 1.0], [-1.0, 0.0]], np.float32)
    x = np.ones(2, np.float32)
    _, f_lin = linearize(lambda y: lax.dot(m, y), x)
    with default_matmul_precision("highest"):
        text = str(make_jaxpr(linear_transpose(f_lin, x))(x))
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in text
    assert "precision=" not in str(make_jaxpr(linear_transpose(f_lin, x))(x))
