"""Shape polymorphism across the layers: Jaxprs traced with symbolic shapes (printed
as JAX 0.10.2 prints them), their StableHLO (dynamic tensor types, dimension variables
read from the arguments, ``shape_assertion`` checks) and running them on concrete
arrays through jaxlib's shape refinement, against NumPy."""

import numpy as np
import pytest

import lamina
import lamina.numpy as jnp
from lamina import lax
from lamina.interpreters import call_polymorphic, refine_module
from lamina.ir import ShapedArray, UnexpectedDimVar, symbolic_shape

b, n = symbolic_shape("b, n")


def S(*shape, dtype=np.float32):
    return lamina.ShapeDtypeStruct(shape, dtype)


# Jaxprs recorded from JAX 0.10.2 (str(jax.make_jaxpr(f)(*specs))); "$" marks the space
# JAX prints after an equation without operands
JAXPRS = {
    "mul_dim": (
        lambda x: x * x.shape[0],
        S(b, n),
        """{ lambda ; a:f32[b,n]. let
    b:i32[] = dim_as_value[dim=b]$
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[b,n] = mul a c
  in (d,) }""",
    ),
    "mean0": (
        lambda x: jnp.mean(x, axis=0),
        S(b, n),
        """{ lambda ; a:f32[b,n]. let
    b:i32[] = dim_as_value[dim=b]$
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[n] = reduce_sum[axes=(0,) out_sharding=None] a
    e:f32[n] = div d c
  in (e,) }""",
    ),
    "sum": (
        lambda x: jnp.sum(x, axis=1),
        S(b, n),
        """{ lambda ; a:f32[b,n]. let
    b:f32[b] = reduce_sum[axes=(1,) out_sharding=None] a
  in (b,) }""",
    ),
    "reshape": (
        lambda x: jnp.reshape(x, (x.shape[0] * 2, -1)),
        S(b, 2 * n),
        """{ lambda ; a:f32[b,2*n]. let
    b:f32[2*b,n] = reshape[dimensions=None new_sizes=(2*b, n) sharding=None] a
  in (b,) }""",
    ),
    "arange": (
        lambda x: jnp.arange(x.shape[0]),
        S(b, n),
        """{ lambda ; a:f32[b,n]. let
    b:i32[b] = iota[dimension=0 dtype=int32 shape=(b,) sharding=None]$
    c:i32[b] = mul 1:i32[] b
    d:i32[b] = add 0:i32[] c
  in (d,) }""",
    ),
    "zeros": (
        lambda x: jnp.zeros(x.shape),
        S(b, n),
        "{ lambda ; a:f32[b,n]. let b:f32[b,n] = broadcast_in_dim 0.0:f32[] in (b,) }",
    ),
    "ones_like": (
        lambda x: jnp.ones_like(x) + 1,
        S(b, n),
        """{ lambda ; a:f32[b,n]. let
    b:f32[b,n] = broadcast_in_dim 1.0:f32[]
    c:f32[b,n] = add b 1.0:f32[]
  in (c,) }""",
    ),
    "dot": (
        lambda x: x @ x.T,
        S(b, n),
        """{ lambda ; a:f32[b,n]. let
    b:f32[n,b] = transpose[permutation=(1, 0)] a
    c:f32[b,b] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) }""",
    ),
    "outer_broadcast": (
        lambda x: x[:, None] + x[None, :],
        S(b),
        """{ lambda ; a:f32[b]. let
    b:f32[b,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a
    c:f32[1,b] = broadcast_in_dim[broadcast_dimensions=(1,)] a
    d:f32[b,b] = add b c
  in (d,) }""",
    ),
    "transpose": (
        lambda x: jnp.transpose(x) * 2,
        S(b, n),
        """{ lambda ; a:f32[b,n]. let
    b:f32[n,b] = transpose[permutation=(1, 0)] a
    c:f32[n,b] = mul b 2.0:f32[]
  in (c,) }""",
    ),
    "concat": (
        lambda x: jnp.concatenate([x, x + 1], axis=1),
        S(b, n),
        """{ lambda ; a:f32[b,n]. let
    b:f32[b,n] = add a 1.0:f32[]
    c:f32[b,2*n] = concatenate[dimension=1] a b
  in (c,) }""",
    ),
    "max": (
        lambda x: jnp.max(x, axis=0),
        S(b, n),
        "{ lambda ; a:f32[b,n]. let b:f32[n] = reduce_max[axes=(0,)] a in (b,) }",
    ),
    "concat_reshape_arange": (
        lambda x: (
            jnp.concatenate([x, x], axis=0).reshape((-1,))
            + jnp.arange(2 * x.shape[0] * x.shape[1], dtype=jnp.float32)
        ),
        S(b, 2 * n),
        """{ lambda ; a:f32[b,2*n]. let
    b:f32[2*b,2*n] = concatenate[dimension=0] a a
    c:f32[4*b*n] = reshape[dimensions=None new_sizes=(4*b*n,) sharding=None] b
    d:f32[4*b*n] = iota[dimension=0 dtype=float32 shape=(4*b*n,) sharding=None]$
    e:f32[4*b*n] = mul 1.0:f32[] d
    f:f32[4*b*n] = add 0.0:f32[] e
    g:f32[4*b*n] = add c f
  in (g,) }""",
    ),
    "inner_jit": (
        lambda x: lamina.jit(lambda y: y * 3)(x) + 1,
        S(b, n),
        """{ lambda ; a:f32[b,n]. let
    b:f32[b,n] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[b,n]. let b:f32[b,n] = mul a 3.0:f32[] in (b,) }
    ] a
    c:f32[b,n] = add b 1.0:f32[]
  in (c,) }""",
    ),
    "ravel": (
        lambda x: x.ravel(),
        S(b, n),
        """{ lambda ; a:f32[b,n]. let
    b:f32[b*n] = reshape[dimensions=None new_sizes=(b*n,) sharding=None] a
  in (b,) }""",
    ),
    "sum_over_size": (
        lambda x: jnp.sum(x) / x.shape[0],
        S(b, n),
        """{ lambda ; a:f32[b,n]. let
    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a
    c:i32[] = dim_as_value[dim=b]$
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    e:f32[] = div b d
  in (e,) }""",
    ),
}


@pytest.mark.parametrize("name", list(JAXPRS))
def test_jaxpr_as_jax(name):
    f, spec, text = JAXPRS[name]
    assert str(lamina.make_jaxpr(f)(spec)) == text.replace("$", " ")


def _run(f, spec, *xs):
    lowered = lamina.jit(f).trace(*spec).lower()._lowered
    return call_polymorphic(lowered, lowered.in_avals, lowered.out_avals, list(xs))


# name -> (function, specs, concrete shapes to run it on)
PROGRAMS = {
    **{
        k: (f, (spec,), [(3, 4), (5, 2)] if spec.ndim == 2 else [(5,), (1,)])
        for k, (f, spec, _) in JAXPRS.items()
    },
    "stack": (lambda x: jnp.stack([x, x]), (S(b, n),), [(3, 4)]),
    "int_index": (lambda x: x[0] + x[-1], (S(b, n),), [(3, 4), (1, 2)]),
    "slices": (lambda x: x[1:, :3] * 2, (S(b, n),), [(3, 4), (2, 2)]),
    "where": (lambda x: jnp.where(x > 2, x, 0.0), (S(b, n),), [(3, 4)]),
    "var": (lambda x: jnp.var(x, axis=0), (S(b, n),), [(3, 4), (6, 1)]),
    "broadcast_to": (lambda x: jnp.broadcast_to(x[:, :1], x.shape), (S(b, n),), [(3, 4)]),
    "expand_squeeze": (lambda x: jnp.expand_dims(x, 0).squeeze(0) + 1, (S(b, n),), [(3, 4)]),
    "sort": (lambda x: jnp.sort(x, axis=0), (S(b, n),), [(3, 4)]),
    "argmax": (lambda x: jnp.argmax(x, axis=0), (S(b, n),), [(3, 4)]),
    "softmax": (lambda x: lamina.nn.softmax(x, axis=-1), (S(b, n),), [(3, 4)]),
    "rank_promotion": (lambda x, y: jnp.tanh(x + y) * y, (S(b, n), S(n)), [(3, 4), (4,)]),
    "matmul_two_args": (lambda x, y: x @ y, (S(b, n), S(n, 5)), [(3, 4), (4, 5)]),
    "flip_pad_tile": (
        lambda x: jnp.tile(jnp.pad(jnp.flip(x, 0), ((1, 1), (0, 0))), (2, 1)),
        (S(b, n),),
        [(3, 4)],
    ),
    "fori_cond": (
        lambda x: lax.cond(
            True, lambda y: y + 1, lambda y: y, lax.fori_loop(0, 3, lambda i, c: c * 2, x)
        ),
        (S(b, n),),
        [(3, 4)],
    ),
    "scan": (
        lambda x: lax.scan(lambda c, r: (c * 0.5 + r, jnp.sum(c)), jnp.zeros(x.shape[1]), x),
        (S(b, n),),
        [(3, 4), (1, 2)],
    ),
    "scan_reverse": (
        lambda x: lax.scan(lambda c, r: (c + r, r * 2), x[0], x, reverse=True)[1],
        (S(b, n),),
        [(3, 4)],
    ),
    "dynamic_slice": (
        lambda x: (
            lax.dynamic_slice_in_dim(x, jnp.int32(x.shape[0]) - 1, 1, axis=0)
            + lax.dynamic_slice_in_dim(x, 5, 1, axis=0)
        ),
        (S(b, n),),
        [(3, 4), (7, 1)],
    ),
    "take": (lambda x: jnp.take(x, jnp.array([0, -1, 7]), axis=0), (S(b, n),), [(3, 4)]),
    "einsum": (lambda x: jnp.einsum("ij,kj->ik", x, x), (S(b, n),), [(3, 4)]),
    "eye_tril": (lambda x: jnp.eye(x.shape[0]) @ jnp.tril(x), (S(b, n),), [(3, 4)]),
    "fori_symbolic_bound": (
        lambda x: lax.fori_loop(0, x.shape[0], lambda i, c: c + x[i], jnp.zeros(x.shape[1])),
        (S(b, n),),
        [(3, 4), (1, 2)],
    ),
    "while_symbolic_bound": (
        lambda x: lax.while_loop(
            lambda c: c[0] < x.shape[0], lambda c: (c[0] + 1, c[1] * 2), (0, x)
        )[1],
        (S(b, n),),
        [(3, 4)],
    ),
    "argsort_at_set": (lambda x: jnp.argsort(x.at[0].set(1.0), axis=1), (S(b, n),), [(3, 4)]),
    "conv_symbolic_batch": (
        lambda x, w: lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        ),
        (S(b, 8, 8, 3), S(3, 3, 3, 4)),
        [(2, 8, 8, 3), (3, 3, 3, 4)],
    ),
    "split": (lambda x: jnp.split(x, 2, axis=1)[1] * 2, (S(b, 2 * n),), [(3, 4)]),
    "cumulative": (
        lambda x: jnp.cumsum(x, axis=0) + lax.cummax(x, axis=1, reverse=True) + jnp.cumprod(x, 0),
        (S(b, n),),
        [(3, 4), (1, 5)],
    ),
    "grad": (lambda x: lamina.grad(lambda y: jnp.sum(jnp.sin(y)))(x), (S(b, n),), [(3, 4)]),
    "grad_of_mean": (lambda x: lamina.grad(lambda y: jnp.mean(y**2))(x), (S(b, n),), [(3, 4)]),
    "vmap_of_size": (lambda x: lamina.vmap(lambda r: r * x.shape[0])(x), (S(b, n),), [(3, 4)]),
    "vmap": (lambda x: lamina.vmap(lambda r: r * jnp.sum(r))(x), (S(b, n),), [(3, 4)]),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_run_polymorphic_against_numpy(name):
    f, specs, shapes = PROGRAMS[name]
    rng = np.random.default_rng(0)
    if len(specs) == 1:
        cases = [[rng.normal(size=s).astype(np.float32)] for s in shapes]
    else:
        cases = [[rng.normal(size=s).astype(np.float32) for s in shapes]]
    for xs in cases:
        outs = _run(f, specs, *xs)
        expected = lamina.tree_util.tree_leaves(lamina.jit(f)(*xs))  # with static shapes
        assert len(outs) == len(expected)
        for out, want in zip(outs, expected, strict=True):
            want = np.asarray(want)
            assert out.shape == want.shape and out.dtype == want.dtype
            np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-5)


# name -> (function, NumPy reference, shapes of the arguments to run it on)
NUMPY_REFERENCES = {
    "mean_over_symbolic_axis": (
        lambda x: jnp.mean(x, axis=0),
        lambda x: x.mean(0),
        [(3, 4), (9, 2)],
    ),
    "size_as_value": (
        lambda x: x * x.shape[0] + x.shape[1],
        lambda x: x * x.shape[0] + x.shape[1],
        [(3, 4)],
    ),
    "reshape_concat_arange": (
        lambda x: (
            jnp.concatenate([x, x], axis=0).reshape((-1,))
            + jnp.arange(2 * x.shape[0] * x.shape[1], dtype=jnp.float32)
        ),
        lambda x: np.concatenate([x, x]).reshape(-1) + np.arange(2 * x.size, dtype=np.float32),
        [(3, 4), (2, 6)],
    ),
    "gram": (lambda x: x @ x.T, lambda x: x @ x.T, [(3, 4), (5, 2)]),
    "slices": (lambda x: x[1:, :3] - x[-1, :3], lambda x: x[1:, :3] - x[-1, :3], [(3, 4), (2, 2)]),
    "cumulative_scan": (
        lambda x: lax.scan(lambda c, r: (c + r, c + r), jnp.zeros(x.shape[1]), x)[1],
        lambda x: np.cumsum(x, axis=0),
        [(4, 3)],
    ),
}


@pytest.mark.parametrize("name", list(NUMPY_REFERENCES))
def test_run_polymorphic_against_numpy_formulas(name):
    f, reference, shapes = NUMPY_REFERENCES[name]
    spec = S(*symbolic_shape("b, n"))
    rng = np.random.default_rng(1)
    for shape in shapes:
        x = rng.normal(size=shape).astype(np.float32)
        (out,) = _run(f, (spec,), x)
        np.testing.assert_allclose(np.asarray(out), reference(x), rtol=1e-5, atol=1e-5)


def test_polymorphic_module_as_jax():
    spec = S(*symbolic_shape("b, 2*n", constraints=("b >= 2",)))
    text = lamina.jit(lambda x: x + 1).trace(spec).lower().as_text()
    # the structure JAX 0.10.2's export gives: dynamic argument types, dimension
    # variables read with get_dimension_size, checks as shape_assertion custom calls
    assert "module @jit__lambda attributes {jax.uses_shape_polymorphism = true" in text
    assert "func.func public @main(%arg0: tensor<?x?xf32>) -> (tensor<?x?xf32>" in text
    assert "stablehlo.get_dimension_size %arg0, dim = 0" in text
    assert text.count("stablehlo.custom_call @shape_assertion") == 4
    assert (
        'error_message = "Input shapes do not match the polymorphic shapes specification. '
        "Expected value >= 1 for dimension variable 'b'. Using the following polymorphic "
        "shapes specifications: args[0].shape = (b, 2*n). Obtained dimension variables: "
        "'b' = {0} from specification 'b' for dimension args[0].shape[0] (= {0}), . Please "
        "see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors "
        'for more details.", has_side_effect = true}'
    ) in text
    assert "stablehlo.dynamic_broadcast_in_dim" in text


def test_private_functions_take_dimension_values():
    f = lamina.jit(lambda x: lamina.jit(lambda y: jnp.zeros(y.shape) + y, inline=False)(x))
    text = f.trace(S(b, n)).lower().as_text()
    assert 'tensor<i32> {jax.global_constant = "b"}' in text
    assert 'tensor<i32> {jax.global_constant = "n"}' in text
    x = np.ones((2, 3), np.float32)
    lowered = f.trace(S(b, n)).lower()._lowered
    np.testing.assert_array_equal(
        call_polymorphic(lowered, lowered.in_avals, lowered.out_avals, [x])[0], x
    )


def test_constraint_violations_as_jax():
    spec = S(*symbolic_shape("b, 2*n", constraints=("b >= 2",)))
    f = lambda x: x * 2  # noqa: E731
    tail = (
        "Using the following polymorphic shapes specifications: args[0].shape = (b, 2*n). "
        "Obtained dimension variables: 'b' = {b} from specification 'b' for dimension "
        "args[0].shape[0] (= {b}), {more}. Please see "
        "https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors "
        "for more details."
    )
    # recorded from JAX 0.10.2 (Exported.call)
    with pytest.raises(ValueError) as e:
        _run(f, (spec,), np.ones((1, 4), np.float32))
    more = "'n' = 2 from specification '2*n' for dimension args[0].shape[1] (= 4), "
    assert str(e.value) == (
        "Input shapes do not match the symbolic shape constraint b >= 2. Expected 'b - 2' to "
        "be greater or equal to 0, but found -1.  " + tail.format(b=1, more=more)
    )
    with pytest.raises(ValueError) as e:
        _run(f, (spec,), np.ones((3, 3), np.float32))
    assert str(e.value) == (
        "Input shapes do not match the polymorphic shapes specification. Division had "
        "remainder 1 when computing the value of 'n'. " + tail.format(b=3, more="")
    )
    with pytest.raises(ValueError, match=r"^Rank mismatch for args\[0\]: expected \(b, 2\*n\) "
                       r"and called with \(2,\)$"):  # fmt: skip
        _run(f, (spec,), np.ones((2,), np.float32))
    with pytest.raises(ValueError, match=r"^Dtype mismatch for args\[0\]: expected float32 "
                       "and called with int32$"):  # fmt: skip
        _run(f, (spec,), np.ones((2, 2), np.int32))


def test_shape_assertions_run_in_the_program():
    # Without the Python-side checks, the refined program's own assertions fail.
    spec = S(*symbolic_shape("b, 2*n", constraints=("b >= 2",)))
    lowered = lamina.jit(lambda x: x * 2).trace(spec).lower()._lowered
    arg = ShapedArray((1, 4), np.float32)
    with pytest.raises(
        ValueError, match="Expected 'b - 2' to be greater or equal to 0, but found -1"
    ):
        refine_module(lowered, [arg], [arg])
    good = ShapedArray((3, 4), np.float32)
    refined = refine_module(lowered, [good], [good])
    assert b"?x" not in refined and isinstance(refined, bytes)


def test_symbolic_shape_outside_a_polymorphic_program_as_jax():
    # recorded from JAX 0.10.2
    with pytest.raises(UnexpectedDimVar) as e:
        jnp.ones((b, 3))
    assert str(e.value) == (
        "Encountered dimension variable 'b' that is not appearing in the shapes of the "
        "function arguments.\nThe following dimension variables are appearing in the shapes "
        "of the function arguments: [].\nPlease see https://docs.jax.dev/en/latest/export/"
        "shape_poly.html#dimension-variables-must-be-solvable-from-the-input-shapes for more "
        "details."
    )
