"""lamina.numpy.einsum and einsum_path against NumPy's einsum, opt_einsum's paths and
values recorded from JAX 0.10.2: values, dtypes, the one-dot_general-per-contraction
lowering, derivatives, vmap, the plan cache and errors."""

import importlib

import numpy as np
import opt_einsum
import pytest

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import jit, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

# the module, which the package attribute of the same name (the function) hides
einsum_module = importlib.import_module("lamina.numpy.contractions.einsum_notation")
RNG = np.random.default_rng(0)


def _operand(shape, dtype=np.float32):
    if np.dtype(dtype) == np.bool_:
        return RNG.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-3, 4, shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


# (subscripts, operand shapes): traces, diagonals, ellipses, broadcasting, scalars,
# outer products, sums, transposes, 1 to 5 operands.
CASES = [
    ("ii", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("iii->i", [(3, 3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("iij,jj->ij", [(3, 3, 2), (2, 2)]),
    ("ij->ji", [(2, 3)]),
    ("ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("ij", [(2, 3)]),
    ("", [()]),
    (",->", [(), ()]),
    ("i,->i", [(3,), ()]),
    ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij,jk->ki", [(2, 3), (3, 4)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ij,ij->i", [(2, 3), (2, 3)]),
    ("ijk,jlk->il", [(2, 3, 5), (3, 4, 5)]),
    ("bij,bjk->bik", [(4, 2, 3), (4, 3, 5)]),
    ("bij,bjk->bki", [(4, 2, 3), (4, 3, 5)]),
    ("ij,kl->ijkl", [(2, 3), (4, 1)]),
    ("ii,ij->j", [(3, 3), (3, 2)]),
    ("ij,ik->", [(3, 2), (3, 4)]),
    ("...ij->...ji", [(5, 2, 3)]),
    ("...j->...", [(4, 3)]),
    ("i...->...", [(3, 4, 5)]),
    ("...ij,...jk->...ik", [(1, 2, 3), (5, 3, 4)]),
    ("...i,...i->...", [(7, 1, 3), (5, 3)]),
    ("ij...,jk...->ik...", [(2, 3, 6), (3, 4, 6)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,kl,lm->im", [(8, 16), (16, 32), (32, 8), (8, 4)]),
    ("ab,bc,cd,de,ef->af", [(2, 3), (3, 4), (4, 2), (2, 5), (5, 3)]),
    ("ijk,ikl,ilm->ijm", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]),
    ("ea,fb,abcd,gc,hd->efgh", [(3, 2), (3, 2), (2, 2, 2, 2), (3, 2), (3, 2)]),
]


def _run_case(subscripts, shapes, dtypes):
    operands = [_operand(s, d) for s, d in zip(shapes, dtypes, strict=True)]
    return operands, jnp.einsum(subscripts, *operands)


@pytest.mark.parametrize("subscripts, shapes", CASES, ids=[c[0] or "scalar" for c in CASES])
def test_einsum_matches_numpy(subscripts, shapes):
    operands, out = _run_case(subscripts, shapes, [np.float32] * len(shapes))
    expected = np.einsum(subscripts, *[x.astype(np.float64) for x in operands])
    assert out.dtype == np.float32 and not out.weak_type
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=2e-5)


# Mixed dtypes: the result is the operands' result type; integers stay integers.
DTYPE_CASES = [
    ("ij,jk", [np.int8, np.float16], np.float16),
    ("ij,jk", [np.int32, np.int32], np.int32),
    ("ij,jk", [np.int8, np.int8], np.int8),
    ("ij,jk", [np.bool_, np.bool_], np.bool_),
    ("ij,jk", [np.bool_, np.int8], np.int8),
    ("ij,jk", [np.complex64, np.float32], np.complex64),
    ("ii->", [np.int16], np.int16),
    ("ij->", [np.bool_], np.bool_),
    ("ij,j->i", [np.uint8, np.int8], np.int16),
]


@pytest.mark.parametrize("subscripts, dtypes, expected_dtype", DTYPE_CASES)
def test_einsum_dtypes(subscripts, dtypes, expected_dtype):
    shapes = {"ij,jk": [(2, 3), (3, 4)], "ii->": [(3, 3)], "ij->": [(2, 3)],
              "ij,j->i": [(2, 3), (3,)]}[subscripts]  # fmt: skip
    operands, out = _run_case(subscripts, shapes, dtypes)
    assert out.dtype == expected_dtype
    expected = np.einsum(subscripts, *operands).astype(expected_dtype)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-2, atol=1e-2)


def test_weak_types_and_preferred_element_type():
    out = jnp.einsum(",->", 2.0, 3)
    assert out.dtype == np.float32 and out.weak_type and float(out) == 6.0
    ints = np.arange(6, dtype=np.int8).reshape(2, 3)
    out = jnp.einsum("ij->", ints, preferred_element_type=np.float32)
    assert out.dtype == np.float32 and not out.weak_type and float(out) == 15.0
    out = jnp.einsum("ij,kj->ik", ints, ints, preferred_element_type=np.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, ints.astype(np.int32) @ ints.T.astype(np.int32))


def test_recorded_jax_values():
    # jnp.einsum docstring examples, as JAX 0.10.2 prints them.
    m = np.arange(16, dtype=np.int32).reshape(4, 4)
    x = np.arange(4, dtype=np.int32)
    assert int(jnp.einsum("ii", m)) == 30
    np.testing.assert_array_equal(jnp.einsum("ij,j", m, x), [14, 38, 62, 86])
    x3 = np.arange(30, dtype=np.int32).reshape(2, 3, 5)
    y3 = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    np.testing.assert_array_equal(
        jnp.einsum("ijk,jlk->il", x3, y3), [[3340, 3865, 4390, 4915], [8290, 9940, 11590, 13240]]
    )
    w = np.arange(5, 9, dtype=np.int32).reshape(2, 2)
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.arange(-2, 4, dtype=np.int32).reshape(3, 2)
    c = np.array([[2, 4, 6], [3, 5, 7]], np.int32)
    out = jnp.einsum("ij,jk,kl,lm->im", w, a, b, c)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [[481, 831, 1181], [651, 1125, 1599]])


def test_interleaved_form():
    a, b = _operand((2, 3)), _operand((3, 4))
    np.testing.assert_allclose(jnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), a @ b, rtol=1e-5)
    np.testing.assert_allclose(jnp.einsum(a, [0, 1], b, [1, 2]), a @ b, rtol=1e-5)
    x = _operand((5, 2, 3))
    out = jnp.einsum(x, [..., 1, 2], b, [2, 3], [..., 1, 3])
    np.testing.assert_allclose(out, x @ b, rtol=1e-5)
    assert float(jnp.einsum(a, (0, 1), ())) == pytest.approx(float(a.sum()), rel=1e-5)


def _count(closed, name):
    return sum(eqn.primitive.name == name for eqn in closed.jaxpr.eqns)


def test_one_dot_general_per_pairwise_contraction():
    shapes = [(8, 16), (16, 32), (32, 8), (8, 4)]
    operands = [_operand(s) for s in shapes]
    closed = make_jaxpr(lambda *o: jnp.einsum("ij,jk,kl,lm->im", *o))(*operands)
    assert _count(closed, "dot_general") == 3
    assert _count(closed, "pjit") + _count(closed, "jit") == 0  # inlined, as in JAX
    closed = make_jaxpr(lambda a, b: jnp.einsum("ij,ij->i", a, b))(operands[0], operands[0])
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["dot_general"]
    closed = make_jaxpr(lambda a: jnp.einsum("ij->ij", a))(operands[0])
    assert closed.jaxpr.eqns == []
    # a unique label summed before the product, a diagonal taken before it
    closed = make_jaxpr(lambda a, b: jnp.einsum("iij,jk->ik", a, b))(
        _operand((3, 3, 4)), _operand((4, 2))
    )
    assert _count(closed, "dot_general") == 1 and _count(closed, "reduce_sum") == 0
    closed = make_jaxpr(lambda a, b: jnp.einsum("ijz,jk->ik", a, b))(
        _operand((3, 4, 5)), _operand((4, 2))
    )
    assert _count(closed, "dot_general") == 1 and _count(closed, "reduce_sum") == 1


def test_optimize_settings_and_explicit_paths():
    operands = [_operand(s) for s in [(2, 3), (3, 40), (40, 5)]]
    expected = np.einsum("ij,jk,kl->il", *operands)
    for optimize in ("auto", True, False, "greedy", "optimal", "dp"):
        out = jnp.einsum("ij,jk,kl->il", *operands, optimize=optimize)
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    path, info = jnp.einsum_path("ij,jk,kl->il", *operands, optimize="optimal")
    reference = opt_einsum.contract_path("ij,jk,kl->il", *operands, optimize="optimal")
    assert path == reference[0] and str(info) == str(reference[1])
    assert jnp.einsum_path("ij,jk,kl", *operands, optimize=False)[0] == [(0, 1), (0, 1)]
    # an explicit path is followed: the first product is then operands 1 and 2 (3x5)
    closed = make_jaxpr(lambda *o: jnp.einsum("ij,jk,kl->il", *o, optimize=[(1, 2), (0, 1)]))(
        *operands
    )
    first = next(e for e in closed.jaxpr.eqns if e.primitive.name == "dot_general")
    assert sorted(first.outvars[0].aval.shape) == [3, 5]
    # a step over three operands is folded into two products
    out = jnp.einsum("ij,jk,kl->il", *operands, optimize=[(0, 1, 2)])
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_plan_is_cached():
    operands = [_operand(s) for s in [(2, 3), (3, 4)]]
    jnp.einsum("ij,jk->ik", *operands)
    before = einsum_module._cached_plan.cache_info()
    for _ in range(3):
        jnp.einsum("ij,jk->ik", *operands)
    after = einsum_module._cached_plan.cache_info()
    assert after.hits == before.hits + 3 and after.misses == before.misses


def test_grads():
    a, b, c = _operand((2, 3)), _operand((3, 4)), _operand((4,))

    def chain(a, b, c):
        return jnp.einsum("ij,jk,k->i", a, b, c)

    check_grads(chain, (a, b, c), order=2, modes=("rev",), atol=5e-2, rtol=5e-2)
    d = _operand((3, 3, 2))
    e = _operand((2, 4))
    check_grads(lambda d, e: jnp.einsum("iij,jk->ik", d, e), (d, e), order=1, atol=1e-2,
                rtol=1e-2)  # fmt: skip


def test_vmap_matches_loop():
    xs, y = _operand((5, 2, 3)), _operand((3, 4))

    def f(x, y):
        return jnp.einsum("ij,jk->ik", x, y)

    batched = vmap(f, in_axes=(0, None))(xs, y)
    np.testing.assert_allclose(batched, np.stack([f(x, y) for x in xs]), rtol=1e-5)
    jitted = jit(f)(xs[0], y)
    np.testing.assert_allclose(jitted, f(xs[0], y), rtol=1e-6)


def test_precision_and_dot_general_override():
    a, b = _operand((2, 3)), _operand((3, 4))
    out = jnp.einsum("ij,jk", a, b, precision=lax.Precision.HIGHEST)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)
    calls = []

    def recording_dot_general(*args, **kwargs):
        calls.append(kwargs.get("preferred_element_type"))
        return lax.dot_general(*args, **kwargs)

    out = jit(lambda a, b: jnp.einsum("ij,jk", a, b, _dot_general=recording_dot_general))(a, b)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)
    assert calls == [np.float32]


def test_errors():
    a, b = _operand((2, 3)), _operand((3, 4))
    with pytest.raises(ValueError, match="Size of label 'j' for operand 1"):
        jnp.einsum("ij,jk", a, a)
    with pytest.raises(ValueError, match="Number of einsum subscripts, 2, must be equal"):
        jnp.einsum("ij,jk", a)
    with pytest.raises(ValueError, match="does not contain the correct number of indices"):
        jnp.einsum("ijk,jk", a, b)
    with pytest.raises(ValueError, match="Output character 'k' did not appear"):
        jnp.einsum("ij->k", a)
    with pytest.raises(NotImplementedError, match="'out' argument"):
        jnp.einsum("ij,jk", a, b, out=a)
    with pytest.raises(TypeError, match="einsum requires ndarray or scalar arguments"):
        jnp.einsum("i,i", [1, 2], [3, 4])
    with pytest.raises(ValueError, match="Precision argument must be one of"):
        jnp.einsum("ij,jk", a, b, precision="bogus")
