"""Typed PRNG keys as arrays of the extended dtype ``key<fry>``: abstract values, the
``random_*`` primitives, lax's structural operations on keys, keys through jit, vmap,
control flow and AD. Jaxpr texts, reprs, errors and values were recorded from JAX
0.10.2."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from lamina import lax, random
from lamina.interpreters import (
    device_put,
    grad,
    jit,
    jvp,
    make_jaxpr,
    vjp,
    vmap,
)
from lamina.ir import ShapedArray, dtypes, parse_jaxpr, physical_aval
from lamina.lax import PRNGKeyArray

U32 = np.uint32


def data(keys) -> np.ndarray:
    return np.asarray(random.key_data(keys))


# Recorded from JAX 0.10.2: key_data(split(key(0), (2, 3))).
SPLIT_2x3 = np.array(
    [
        [[1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009]],
        [[2467461003, 3840466878], [2285895361, 433833334], [1524306142, 1887795613]],
    ],
    U32,
)


def test_key_avals_print_parse_and_have_physical_avals():
    aval = ShapedArray((3,), random.key_dtype())
    assert str(aval) == "key<fry>[3]" and aval.str_short(short_dtypes=True) == "key<fry>[3]"
    assert physical_aval(aval) == ShapedArray((3, 2), np.uint32)
    assert physical_aval(ShapedArray((3,), np.float32)) == ShapedArray((3,), np.float32)
    assert dtypes.issubdtype(aval.dtype, dtypes.prng_key)
    jaxpr = make_jaxpr(lambda k: random.split(k))(random.key(0))
    assert parse_jaxpr(str(jaxpr)) == jaxpr.jaxpr
    key = random.key(0)
    assert key.aval == ShapedArray((), random.key_dtype())
    assert (key.shape, key.ndim, key.size, key.itemsize, str(key.dtype)) == (
        (),
        0,
        1,
        8,
        "key<fry>",
    )


# (function, argument, JAX 0.10.2's Jaxpr text)
JAXPRS = [
    (
        lambda k: random.split(k),
        random.key(0),
        "{ lambda ; a:key<fry>[]. let\n    b:key<fry>[2] = random_split[shape=(2,)] a\n  in (b,) }",
    ),
    (
        lambda k: random.split(k),
        random.PRNGKey(0),
        "{ lambda ; a:u32[2]. let\n    b:key<fry>[] = random_wrap[impl=fry] a\n"
        "    c:key<fry>[2] = random_split[shape=(2,)] b\n    d:u32[2,2] = random_unwrap c\n"
        "  in (d,) }",
    ),
    (
        lambda k: random.split(k, (2, 3)),
        random.key(0),
        "{ lambda ; a:key<fry>[]. let\n    b:key<fry>[2,3] = random_split[shape=(2, 3)] a\n"
        "  in (b,) }",
    ),
    (
        lambda k: random.fold_in(k, 3),
        random.key(0),
        "{ lambda ; a:key<fry>[]. let b:key<fry>[] = random_fold_in a 3:u32[] in (b,) }",
    ),
    (
        lambda s: random.key(s),
        0,
        "{ lambda ; a:i32[]. let b:key<fry>[] = random_seed[impl=fry] a in (b,) }",
    ),
    (
        lambda s: random.PRNGKey(s),
        0,
        "{ lambda ; a:i32[]. let\n    b:key<fry>[] = random_seed[impl=fry] a\n"
        "    c:u32[2] = random_unwrap b\n  in (c,) }",
    ),
    (
        random.key_data,
        random.PRNGKey(0),
        "{ lambda ; a:u32[2]. let\n    b:key<fry>[] = random_wrap[impl=fry] a\n"
        "    c:u32[2] = random_unwrap b\n  in (c,) }",
    ),
    (
        random.wrap_key_data,
        random.PRNGKey(0),
        "{ lambda ; a:u32[2]. let b:key<fry>[] = random_wrap[impl=fry] a in (b,) }",
    ),
    (
        lambda k: random.bits(k, (2, 3)),
        random.key(0),
        "{ lambda ; a:key<fry>[]. let\n"
        "    b:u32[2,3] = random_bits[bit_width=32 shape=(2, 3)] a\n  in (b,) }",
    ),
    (
        lambda k: random.bits(k, (3,)),
        random.PRNGKey(0),
        "{ lambda ; a:u32[2]. let\n    b:key<fry>[] = random_wrap[impl=fry] a\n"
        "    c:u32[3] = random_bits[bit_width=32 shape=(3,)] b\n  in (c,) }",
    ),
    (
        random.clone,
        random.key(0),
        "{ lambda ; a:key<fry>[]. let b:key<fry>[] = random_clone a in (b,) }",
    ),
    (
        lambda k: lax.expand_dims(k, (0,)).reshape(1, 1),
        random.key(0),
        "{ lambda ; a:key<fry>[]. let\n    b:key<fry>[1] = broadcast_in_dim a\n"
        "    c:key<fry>[1,1] = reshape[dimensions=None new_sizes=(1, 1) sharding=None] b\n"
        "  in (c,) }",
    ),
    (
        lambda k: k.T,
        random.split(random.key(0), (2, 3)),
        "{ lambda ; a:key<fry>[2,3]. let\n"
        "    b:key<fry>[3,2] = transpose[permutation=(1, 0)] a\n  in (b,) }",
    ),
    (
        lambda k: random.key_data(random.split(k, 3)[1:]),
        random.key(0),
        "{ lambda ; a:key<fry>[]. let\n    b:key<fry>[3] = random_split[shape=(3,)] a\n"
        "    c:key<fry>[2] = slice[limit_indices=(3,) start_indices=(1,) strides=None] b\n"
        "    d:u32[2,2] = random_unwrap c\n  in (d,) }",
    ),
    (
        lambda ks: lax.concatenate([ks, ks], 0),
        random.split(random.key(0), 2),
        "{ lambda ; a:key<fry>[2]. let\n    b:key<fry>[4] = concatenate[dimension=0] a a\n"
        "  in (b,) }",
    ),
    (
        vmap(random.key_data, in_axes=1),
        random.split(random.key(0), (2, 3)),
        "{ lambda ; a:key<fry>[2,3]. let\n    b:u32[2,3,2] = random_unwrap a\n"
        "    c:u32[3,2,2] = transpose[permutation=(1, 0, 2)] b\n  in (c,) }",
    ),
    (
        vmap(random.wrap_key_data, in_axes=1),
        np.zeros((3, 4, 2), U32),
        "{ lambda ; a:u32[3,4,2]. let\n"
        "    b:u32[4,3,2] = transpose[permutation=(1, 0, 2)] a\n"
        "    c:key<fry>[4,3] = random_wrap[impl=fry] b\n  in (c,) }",
    ),
    (
        vmap(random.key),
        np.arange(3, dtype=np.int32),
        "{ lambda ; a:i32[3]. let b:key<fry>[3] = random_seed[impl=fry] a in (b,) }",
    ),
    (
        vmap(lambda k: random.fold_in(k, 2)),
        random.split(random.key(0), 3),
        "{ lambda ; a:key<fry>[3]. let b:key<fry>[3] = random_fold_in a 2:u32[] in (b,) }",
    ),
    (
        vmap(lambda k: random.split(k, 2)),
        random.split(random.key(0), 3),
        "{ lambda ; a:key<fry>[3]. let\n    b:key<fry>[3,2] = random_split[shape=(2,)] a\n"
        "  in (b,) }",
    ),
]


@pytest.mark.parametrize("fun, arg, expected", JAXPRS)
def test_jaxprs_print_as_jax(fun, arg, expected):
    assert str(make_jaxpr(fun)(arg)) == expected


NORMAL_OF_RAW_KEY = """\
let _uniform = { lambda ; a:key<fry>[] b:f32[] c:f32[]. let
    d:f32[1] = broadcast_in_dim b
    e:f32[1] = broadcast_in_dim c
    f:u32[3] = random_bits[bit_width=32 shape=(3,)] a
    g:u32[3] = shift_right_logical f 9:u32[]
    h:u32[3] = or g 1065353216:u32[]
    i:f32[3] = bitcast_convert_type[new_dtype=float32] h
    j:f32[3] = sub i 1.0:f32[]
    k:f32[1] = sub e d
    l:f32[3] = mul j k
    m:f32[3] = add l d
    n:f32[3] = max d m
  in (n,) } in
{ lambda ; o:u32[2]. let
    p:key<fry>[] = random_wrap[impl=fry] o
    q:f32[3] = jit[
      name=_normal
      jaxpr={ lambda ; p:key<fry>[]. let
          q:f32[3] = jit[
            name=_normal_real
            jaxpr={ lambda ; p:key<fry>[]. let
                r:f32[3] = jit[name=_uniform jaxpr=_uniform] p -0.9999999403953552:f32[]
                  1.0:f32[]
                s:f32[3] = erf_inv r
                q:f32[3] = mul 1.4142135381698608:f32[] s
              in (q,) }
          ] p
        in (q,) }
    ] p
  in (q,) }"""


def test_sampler_jaxpr_wraps_raw_keys_and_draws_random_bits():
    jaxpr = make_jaxpr(lambda k: random.normal(k, (3,)))(random.PRNGKey(0))
    assert str(jaxpr) == NORMAL_OF_RAW_KEY


def test_key_values_match_jax():
    key = random.key(0)
    np.testing.assert_array_equal(data(random.split(key, (2, 3))), SPLIT_2x3)
    np.testing.assert_array_equal(
        data(random.split(key, (2, 3))), data(jit(random.split, static_argnums=1)(key, (2, 3)))
    )
    np.testing.assert_array_equal(np.asarray(random.bits(key, (4,), np.uint8)), [167, 146, 40, 53])
    np.testing.assert_array_equal(np.asarray(random.bits(key, (2,), np.uint16)), [20391, 13970])
    seeds = vmap(random.key)(np.array([1, 2, 3], np.int32))
    np.testing.assert_array_equal(data(seeds), [[0, 1], [0, 2], [0, 3]])
    folded = vmap(random.fold_in)(random.split(key, 3), np.arange(3, dtype=np.int32))
    np.testing.assert_array_equal(
        data(folded),
        [[4165894930, 804218099], [3968330031, 3923691647], [915694800, 1641710144]],
    )
    # Raw and typed keys agree.
    np.testing.assert_array_equal(
        np.asarray(random.split(random.PRNGKey(0), 3)), data(random.split(key, 3))
    )


def test_structural_ops_on_keys_act_on_whole_keys():
    keys = random.split(random.key(0), (2, 3))
    d = SPLIT_2x3
    cases = [
        (keys.T, d.transpose(1, 0, 2)),
        (keys.reshape(3, 2), d.reshape(3, 2, 2)),
        (keys.reshape(-1), d.reshape(6, 2)),
        (keys.ravel(), d.reshape(6, 2)),
        (keys.flatten(), d.reshape(6, 2)),
        (keys[1], d[1]),
        (keys[0, 1:], d[0, 1:]),
        (keys[:, ::-2], d[:, ::-2]),
        (keys[..., 2], d[..., 2, :]),
        (keys[None, 1], d[None, 1]),
        (keys[np.array([1, 0, 1])], d[[1, 0, 1]]),
        (keys[1, np.array([-1, 0])], d[1, [-1, 0]]),
        (keys[:1].squeeze(), d[0]),
        (keys.copy(), d),
        (lax.broadcast_in_dim(keys[0, 0], (2, 2), ()), np.broadcast_to(d[0, 0], (2, 2, 2))),
        (lax.concatenate([keys, keys], 1), np.concatenate([d, d], 1)),
        (lax.rev(keys, (1,)), d[:, ::-1]),
        (lax.dynamic_slice(keys, (1, 1), (1, 2)), d[1:2, 1:3]),
        (lax.dynamic_update_slice(keys, keys[:1, :1], (1, 2)), _updated(d)),
        (lax.select_n(np.array([True, False, True]), keys[0], keys[1]), d[[1, 0, 1], [0, 1, 2]]),
        (jit(lambda k: k.T.reshape(6)[::2])(keys), d.transpose(1, 0, 2).reshape(6, 2)[::2]),
    ]
    for keys_out, expected in cases:
        assert isinstance(keys_out, PRNGKeyArray)
        np.testing.assert_array_equal(data(keys_out), expected)
    assert len(keys) == 2 and [k.shape for k in keys] == [(3,), (3,)]
    assert keys.block_until_ready() is keys


def _updated(d):
    out = d.copy()
    out[1, 2] = d[0, 0]
    return out


def test_key_equality_compares_whole_keys():
    keys = random.split(random.key(0), (2, 3))
    np.testing.assert_array_equal(np.asarray(keys == keys), np.ones((2, 3), bool))
    np.testing.assert_array_equal(np.asarray(keys != keys[0]), [[False] * 3, [True] * 3])
    same = random.wrap_key_data(np.array([[1, 2], [1, 3]], U32))
    np.testing.assert_array_equal(np.asarray(same == same[0]), [True, False])
    jaxpr = make_jaxpr(lambda a, b: a == b)(keys, keys)
    assert (
        str(jaxpr)
        == "{ lambda ; a:key<fry>[2,3] b:key<fry>[2,3]. let c:bool[2,3] = eq a b in (c,) }"
    )
    np.testing.assert_array_equal(
        np.asarray(jit(lambda a, b: a != b)(keys, keys)), np.zeros((2, 3), bool)
    )


def test_vmap_over_any_key_axis_matches_a_loop():
    keys = random.split(random.key(0), (2, 3))
    # Recorded from JAX: vmap(lambda k: normal(k[1]), in_axes=1)(keys).
    out = vmap(lambda k: random.normal(k[1]), in_axes=1)(keys)
    np.testing.assert_allclose(np.asarray(out), [-0.6219436, -1.0208853, 0.63737714], rtol=1e-6)
    loop = [random.normal(keys[1, j]) for j in range(3)]
    np.testing.assert_array_equal(np.asarray(out), np.asarray(loop))
    bits = vmap(vmap(lambda k: random.bits(k, (2,))), in_axes=1, out_axes=1)(keys)
    np.testing.assert_array_equal(
        np.asarray(bits),
        [
            [[3617712097, 783310428], [31327077, 89727312], [3875991361, 3918267949]],
            [[1146711402, 3152292334], [659940848, 3131054525], [3169945449, 2685904981]],
        ],
    )
    moved = vmap(lambda k: k, in_axes=1, out_axes=1)(keys)
    np.testing.assert_array_equal(data(moved), SPLIT_2x3)
    split = vmap(lambda k: random.split(k[1], (2, 3)), in_axes=1, out_axes=2)(keys)
    assert split.shape == (2, 3, 3)
    np.testing.assert_array_equal(data(split[..., 2]), data(random.split(keys[1, 2], (2, 3))))


def test_jit_takes_and_returns_key_arrays():
    key = random.key(0)
    reprs = []

    @jit
    def f(k, x):
        reprs.append(repr(k))
        return random.split(k), random.normal(k) * x

    for _ in range(3):  # later calls reuse the compiled executable
        keys, y = f(key, 2.0)
        assert isinstance(keys, PRNGKeyArray) and keys.shape == (2,)
        np.testing.assert_array_equal(data(keys), data(random.split(key)))
        np.testing.assert_allclose(float(y), 2 * 1.6226422, rtol=1e-6)
    assert reprs == ["JitTracer(key<fry>[])"]
    out = jit(lambda d: d["k"][1])({"k": random.split(key, 3)})
    np.testing.assert_array_equal(data(out), data(random.split(key, 3))[1])
    # A key array is one leaf, of a key type.
    assert make_jaxpr(lambda k: k)(random.split(key, 3)).in_avals == [
        ShapedArray((3,), random.key_dtype())
    ]
    assert jit(lambda k: k).eval_shape(key).dtype == random.key_dtype()
    lowered = jit(random.split).lower(key)
    assert "%arg0: tensor<2xui32>" in lowered.as_text()
    np.testing.assert_array_equal(data(lowered.compile()(key)), data(random.split(key)))
    moved = device_put(key)
    assert isinstance(moved, PRNGKeyArray) and np.array_equal(data(moved), [0, 0])


def test_control_flow_carries_keys():
    key = random.key(0)

    def body(carry, _):
        k1, k2 = random.split(carry)
        return k1, k2

    carry, ys = lax.scan(body, key, None, length=3)
    np.testing.assert_array_equal(data(carry), [683029726, 1624662641])
    np.testing.assert_array_equal(
        data(ys), [[928981903, 3453687069], [1353695780, 2116000888], [3531307783, 465290248]]
    )
    state = lax.while_loop(
        lambda c: c[1] < 3, lambda c: (random.fold_in(c[0], c[1]), c[1] + 1), (key, 0)
    )
    np.testing.assert_array_equal(data(state[0]), [276444683, 838309524])
    picked = lax.cond(False, lambda k: k, lambda k: random.fold_in(k, 1), key)
    np.testing.assert_array_equal(data(picked), [928981903, 3453687069])
    total, _ = lax.scan(lambda c, k: (c + random.normal(k), None), 0.0, random.split(key, 4))
    expected = sum(float(random.normal(k)) for k in random.split(key, 4))
    np.testing.assert_allclose(float(total), expected, rtol=1e-6)


def test_tangents_of_keys_are_float0():
    key = random.key(0)
    zero_tangent = np.zeros((), dtypes.float0)
    (y, k_out), (y_dot, k_dot) = jvp(
        lambda k, x: (random.normal(k) * x, k), (key, 1.0), (zero_tangent, 1.0)
    )
    np.testing.assert_allclose([float(y), float(y_dot)], [1.6226422] * 2, rtol=1e-6)
    assert isinstance(k_out, PRNGKeyArray) and np.array_equal(data(k_out), [0, 0])
    assert k_dot.dtype == dtypes.float0 and k_dot.shape == ()
    np.testing.assert_allclose(
        float(grad(lambda x, k: random.normal(k) * x)(1.0, key)), 1.6226422, rtol=1e-6
    )
    _, pullback = vjp(lambda k, x: random.normal(k) * x, key, 2.0)
    k_bar, x_bar = pullback(1.0)
    assert k_bar.dtype == dtypes.float0
    np.testing.assert_allclose(float(x_bar), 1.6226422, rtol=1e-6)
    assert grad(lambda k: 1.0, allow_int=True)(key).dtype == dtypes.float0
    with pytest.raises(
        TypeError, match=r"grad requires real- or complex-valued inputs .* got key<fry>"
    ):
        grad(lambda k: 1.0)(key)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda k: k + 1, TypeError, "add does not accept dtypes key<fry>, int32."),
        (lambda k: k == 1, TypeError, "equal does not accept dtypes key<fry>, int32."),
        (lambda k: lax.add(k, k), TypeError, "add does not accept dtype key<fry> at position 0"),
        (lambda k: -k, TypeError, "neg does not accept dtype key<fry>"),
        (lambda k: lax.max(k, k), TypeError, "max does not accept dtype key<fry> at position 0"),
        (
            lambda k: lax.bitcast_convert_type(k, np.float32),
            ValueError,
            "unexpected input: dtype=key<fry>",
        ),
        (lambda k: lax.lt(k, k), TypeError, "lt does not accept dtype key<fry> at position 0"),
        (
            lambda k: lax.convert_element_type(k, np.float32),
            ValueError,
            "Cannot convert_element_type from key<fry> to float32",
        ),
        (
            lambda k: random.normal(k),
            ValueError,
            r"normal accepts a single key, but was given a key array of shape \(2,\)",
        ),
    ],
)
def test_invalid_operations_on_keys_raise_jax_errors(call, error, message):
    keys = random.split(random.key(0))
    with pytest.raises(error, match=message):
        call(keys)
    with pytest.raises(error, match=message):
        jit(call)(keys)


def test_indexing_out_of_bounds_raises_index_error():
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
        random.split(random.key(0))[2]


def test_keys_do_not_convert_to_numpy():
    with pytest.raises(TypeError, match="PRNGKey dtype cannot be converted to a NumPy array"):
        np.asarray(random.key(0))


def test_key_reprs_match_jax():
    assert repr(random.key(0)) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    assert repr(random.split(random.key(0))) == (
        "Array((2,), dtype=key<fry>) overlaying:\n[[1797259609 2579123966]\n"
        " [ 928981903 3453687069]]"
    )
    assert str(random.key(1)) == "Array((), dtype=key<fry>) overlaying:\n[0 1]"


def test_jitted_calls_on_keys_take_the_cpp_path():
    step = jit(lambda k, x: (random.split(k)[0], x + random.normal(k, (3,))))
    key, x = random.key(7), np.zeros(3, np.float32)
    # The first call traces and compiles; the C++ registry meets key arrays there, so the
    # second call's signature is the one the C++ path keeps.
    step(key, x)
    first_key, first_x = step(key, x)
    python_path_calls = []
    jitted = step._jitted
    lookup = jitted._lookup
    jitted._lookup = lambda *a: (python_path_calls.append(a), lookup(*a))[1]
    try:
        again_key, again_x = step(key, x)
    finally:
        del jitted._lookup
    assert python_path_calls == []
    assert isinstance(again_key, PRNGKeyArray) and again_key.dtype == first_key.dtype
    np.testing.assert_array_equal(random.key_data(again_key), random.key_data(first_key))
    np.testing.assert_array_equal(np.asarray(again_x), np.asarray(first_x))


def test_key_arrays_pickle():

    keys = random.split(random.key(3), 4)
    again = pickle.loads(pickle.dumps(keys))
    assert isinstance(again, PRNGKeyArray) and again.dtype == keys.dtype and again.shape == (4,)
    np.testing.assert_array_equal(random.key_data(again), random.key_data(keys))
