"""lax.random_gamma_grad and the incomplete gamma functions bit for bit as JAX 0.10.2
computes them on CPU (float32 and float64, over alpha from 1e-3 to 1e4 and x from the
smallest normal to the largest finite value, across the switch between the power series
and the continued fraction), and the implicit gradients of the gamma-family samplers
built on random_gamma_grad. The recorded values (IEEE bit patterns in hex) are at the
end of the file."""

import ml_dtypes
import numpy as np
import pytest

import lamina.random as random
from lamina import lax
from lamina.interpreters import enable_x64, eval_shape, grad, jit, jvp, vmap

DTYPES = {"float32": np.float32, "float64": np.float64}


def _grid(dtype):
    """alpha x x, then the switch points: x = alpha, one ulp above and below, x = 1."""
    fi = np.finfo(dtype)
    alphas = np.array([1e-3, 0.01, 0.1, 0.5, 1.0, 1.5, 3.0, 10.0, 100.0, 1000.0, 1e4], dtype)
    xs = np.array([fi.tiny, 1e-30, 1e-10, 1e-3, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0, 100.0, 999.0,
                   1e4, 1e5, 1e30, fi.max / 2], dtype)  # fmt: skip
    a, x = (g.ravel() for g in np.meshgrid(alphas, xs, indexing="ij"))
    above, below = np.nextafter(alphas, dtype(np.inf)), np.nextafter(alphas, dtype(0))
    a = np.concatenate([a, alphas, alphas, alphas, alphas])
    x = np.concatenate([x, alphas, above, below, np.ones_like(alphas)])
    return a, x


def _small_grid(dtype):
    alphas = np.array([0.01, 0.5, 1.0, 3.0, 30.0, 500.0], dtype)
    xs = np.array([1e-5, 0.3, 1.0, 2.5, 3.0, 40.0, 600.0], dtype)
    return [g.ravel() for g in np.meshgrid(alphas, xs, indexing="ij")]


def _from_bits(text, dtype):
    bits = np.array([int(word, 16) for word in text.split()], np.uint64)
    return bits.astype(np.uint32 if dtype == np.float32 else np.uint64).view(dtype)


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_random_gamma_grad_is_bit_identical_to_jax(dtype_name):
    dtype = DTYPES[dtype_name]
    want = _from_bits(RANDOM_GAMMA_GRAD[dtype_name], dtype)
    with enable_x64(dtype == np.float64):
        a, x = _grid(dtype)
        got = np.asarray(jit(lax.random_gamma_grad)(a, x))
        # One element at a time, as the samplers' gradients evaluate it on CPU; XLA's
        # scalar code rounds a few results differently from its vectorised code.
        mapped = np.asarray(
            jit(lambda a, x: lax.map(lambda ax: lax.random_gamma_grad(*ax), (a, x)))(a, x)
        )
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)
    for index, bits in RANDOM_GAMMA_GRAD_MAPPED[dtype_name].items():
        want[index] = _from_bits(bits, dtype)[0]
    np.testing.assert_array_equal(mapped, want)


def test_random_gamma_grad_eager_and_jitted_round_as_jax_does():
    a = np.array([0.3, 2.0, 5.0, 40.0], np.float32)
    x = np.array([0.1, 3.5, 2.0, 45.0], np.float32)
    eager = [0.7894046306610107, 1.4187779426574707, 0.6308028101921082, 1.0644750595092773]
    jitted = [0.7894045114517212, 1.4187779426574707, 0.6308027505874634, 1.0644750595092773]
    np.testing.assert_array_equal(lax.random_gamma_grad(a, x), np.float32(eager))
    np.testing.assert_array_equal(jit(lax.random_gamma_grad)(a, x), np.float32(jitted))


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_incomplete_gamma_functions_are_bit_identical_to_jax(dtype_name):
    dtype = DTYPES[dtype_name]
    names = ["igamma", "igammac", "igamma_grad_a"]
    with enable_x64(dtype == np.float64):
        every = jit(lambda a, x: [getattr(lax, name)(a, x) for name in names])
        got = every(*_small_grid(dtype))
    for name, value in zip(names, got, strict=True):
        want = _from_bits(INCOMPLETE_GAMMA[name, dtype_name], dtype)
        np.testing.assert_array_equal(np.asarray(value), want, err_msg=name)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_half_precision_is_computed_in_float32_as_jax_does(dtype):
    a = np.array([0.3, 1.0, 2.5, 7.0], dtype)
    x = np.array([0.2, 3.0, 1.5, 9.0], dtype)
    got = np.asarray(lax.random_gamma_grad(a, x))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.view(np.uint16), HALF_PRECISION_BITS[np.dtype(dtype).name])


# ------------------------------------------------------------------ sampler gradients

ALPHA = [0.05, 0.7, 1.0, 2.5, 40.0, 900.0]
BETA = [3.0, 0.3, 1.5, 0.01, 7.0, 2.0]


def _total(v):
    return lax.reduce_sum(v, tuple(range(v.ndim)))


def _sample_total(sampler_name, key, a):
    return _total(getattr(random, sampler_name)(key, a, dtype=a.dtype))


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_gamma_and_loggamma_gradients_are_bit_identical_to_jax(dtype_name):
    dtype = DTYPES[dtype_name]
    recorded = [(k[0], k[2]) for k in SAMPLE_GRADIENT_BITS if k[1] == dtype_name]
    for name, seed in recorded:
        with enable_x64(dtype == np.float64):
            got = grad(_sample_total, argnums=2)(name, random.key(seed), np.array(ALPHA, dtype))
        want = _from_bits(SAMPLE_GRADIENT_BITS[name, dtype_name, seed], dtype)
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{name}, seed {seed}")


def test_beta_and_dirichlet_gradients_are_bit_identical_to_jax():
    # Jitted, as recorded: JAX's eager and jitted gradients differ in the last bit.
    dtype_name, dtype = "float32", np.float32
    weights = np.arange(6, dtype=dtype)

    @jit
    def gradients(key, a, b):
        da, db = grad(lambda a, b: _total(random.beta(key, a, b, dtype=dtype)), (0, 1))(a, b)
        return da, db, grad(lambda a: _total(random.dirichlet(key, a, dtype=dtype) * weights))(a)

    for seed in (0, 1, 42):
        got = gradients(random.key(seed), np.array(ALPHA, dtype), np.array(BETA, dtype))
        for name, value in zip(("beta_a", "beta_b", "dirichlet"), got, strict=True):
            want = np.array(SAMPLE_GRADIENTS[name, dtype_name, seed], dtype)
            np.testing.assert_array_equal(np.asarray(value), want, err_msg=name)


# ------------------------------------------------------------------ transformations, errors


def test_forward_derivatives_go_through_the_loops():
    a, x = np.array([0.6, 2.0, 7.0]), np.array([0.3, 4.5, 6.0])  # series, fraction, series
    step = 1e-6
    with enable_x64():
        f = jit(lax.random_gamma_grad)
        _, tangent = jit(lambda a, x: jvp(lax.random_gamma_grad, (a, x), (a * 0 + 1, x)))(a, x)
        central = np.asarray(f(a + step, x + step * x)) - np.asarray(f(a - step, x - step * x))
    np.testing.assert_allclose(np.asarray(tangent), central / (2 * step), rtol=1e-6)


def test_reverse_mode_fails_as_in_jax():
    with pytest.raises(
        ValueError, match=r"^Reverse-mode differentiation does not work for lax.while_loop"
    ):
        grad(lambda a: lax.random_gamma_grad(a, np.float32(2.0)))(np.float32(1.5))


def test_vmap_matches_a_loop():
    a = np.array([0.3, 2.0, 5.0, 40.0], np.float32)
    x = np.array([0.1, 3.5, 2.0, 45.0], np.float32)
    got = np.asarray(jit(vmap(lax.random_gamma_grad, in_axes=(0, None)))(a, x))
    one_row = jit(lax.random_gamma_grad)
    want = np.stack([np.asarray(one_row(np.full_like(x, ai), x)) for ai in a])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got.shape == (4, 4)


def test_operands_broadcast_and_bad_dtypes_raise():
    column, row = np.float32([[1.0], [2.0]]), np.float32([[0.5, 1.5, 3.0]])
    out = eval_shape(lax.random_gamma_grad, column, row)
    assert out.shape == (2, 3) and out.dtype == np.float32
    assert eval_shape(lax.random_gamma_grad, np.float32(2), np.float32([0.5, 1.5])).shape == (2,)
    with pytest.raises(
        TypeError, match=r"^random_gamma_grad does not accept dtype int32 at position 0\."
    ):
        lax.random_gamma_grad(np.int32(1), np.int32(2))
    with pytest.raises(
        TypeError, match=r"requires arguments to have the same dtypes, got float32, float16"
    ):
        lax.random_gamma_grad(np.float32(1), np.float16(2))
    with pytest.raises(TypeError, match=r"^random_gamma_grad takes 2 arguments \(a, x\), got 1$"):
        lax.random_gamma_grad(np.float32(1))


# ------------------------------------------------------------------ recorded from JAX 0.10.2

RANDOM_GAMMA_GRAD = {
    "float32": """
    08a9747d 15a99a4a 3616a948 40cadd46 43499b02 43e6fef8 44154e38 4434ffc1 44558eac
    446f7776 4478d61b 447b9e94 447c6bd7 447d0504 00000000 00000000 07079644 1407b615
    3471373a 3f22aa7d 41a24b65 423ab7a0 427205e0 42933213 42aea3d0 42c5d730 42d04f53
    42d6b986 42db855a 42e0253a 00000000 00000000 05594830 12599294 32c22689 3d84ee19
    4009672d 40a3d486 40d94865 4107ee2e 4128aa00 414e8f4e 416e7e9f 418a8703 419d0f37
    41af7df1 00000000 00000000 042ebeff 112f3994 319e7bb3 3c63b721 3f027fff 3fab2e61
    3ff06a6b 4020c2cd 405bf9d5 409c7418 40d179de 410dde8b 4132c637 41579f3f 00000000
    00000000 03af84c7 10b0344c 31212347 3bf055e1 3e941b9c 3f4e9631 3f963754 3fd0db3f
    4016da53 4067b8ff 40a62735 40ef84e0 411c9a3d 41417141 00000000 00000000 036ac5c5
    106be307 30d96b59 3ba6553b 3e56c96f 3f1b933f 3f671303 3fa46eba 3ff554f0 404536d5
    40933ebf 40dbfd92 4112ca61 41379fc0 00000000 00000000 02ec3f43 0fedc18d 305e7c63
    3b326375 3df99489 3ec09a0f 3f142a79 3f5b4848 3facc8e8 40164b4e 407117b5 40bfe727
    4104a108 41297221 00000000 00000000 020f8054 0f10e037 2f8b83ce 3a72c138 3d406c7b
    3e23858d 3e84d7bf 3ed12b68 3f345f5b 3fb464a6 40261a0b 40965871 40dee0eb 41143138
    00000000 00000000 00000000 0d6f215c 2df316c5 38f18c5a 3be28454 3cd9393b 3d3cd50e
    3da070e1 3e19a318 3ece5308 3f8036cc 4023ebd3 40950102 40dd6d8e 00000000 00000000
    00000000 0bc5453b 2c52a47e 3767cb51 3a7174e7 3b79152f 3be25ea5 3c4ba81b 3cd90a20
    3da041c7 3e6bd5fd 3f7fe961 4023c34a 4094de74 00000000 00000000 00000000 0a229902
    2ab57952 35d85589 38f171d1 3a01cec2 3a7171e3 3adf4642 3b79116a 3c4ba456 3d3ca13e
    3e6ba80d 3f8002b1 4023bdde 00000000 00000000 40cadd46 4083055c 4009672d 3fab2e61
    3f963754 3f8ec83c 3f874cad 3f82274a 3f8036cc 3f80052e 3f8002b1 40cadd46 4083055c
    4009672d 3fab2e61 3f96374e 3f8ec839 3f874caf 3f822748 3f80367e 3f80047a 3f800e5f
    40cadd44 4083055b 4009672c 3fab2e5e 3f963753 3f8ec83a 3f874cad 3f82274f 3f8036c4
    3f80051d 3f80024b 44154e38 427205e0 40d94865 3ff06a6b 3f963754 3f671303 3f142a79
    3e84d7bf 3d3cd50e 3be25ea5 3a7171e3
    """,
    "float64": """
    014599d9b1759d5c 3ab533493c0330d3 3ec2d52923f0b6d3 40195ba8cd7c5a4f 4069336062fe8a9b
    407cdfdfeab3df2e 4082a9c8a86ce699 40869ff80eeacce2 408ab1d58f295713 408deeeef3d13270
    408f1abfc6fd572b 408f73d2a54b4a16 408f8d7b32739d6b 408fa0a08e85025d 4090b69cccba1e78
    0000000000000000 011147f8da58e6d7 3a80f6c27d3c691f 3e8e26e742b2657a 3fe4554f52b06d8b
    4034496c238d5fb5 404756f2a0a6fbf6 404e40b6439fd0d1 405266425a4dc3a5 4055d479f12c0adc
    4058bae603fb35a7 405a09e75fad9766 405ad730c03cc9e8 405b70ab62fb64d2 405c04a74dc62d93
    4065346e160c4b04 0000000000000000 00dba7ba04cfc22f 3a4b32527e978b7b 3e5844d11c57ec5e
    3fb09dc2e8c95b46 40012ce57916fa49 40147a906d1b162e 401b290ba0556b43 4020fdc5bc4c2c12
    402515402ebf9aed 4029d1e9be076ebf 402dcfd1213bce16 403150e06d5f3c1a 4033a1e6d669bac0
    4035efbe00fc92dc 4053e0156d04a524 0000000000000000 00b6237698bc23c8 3a25e732822c9030
    3e33cf765fb4e245 3f8c76e43d8b6b76 3fe04fffe0e7e813 3ff565cbd57e419f 3ffe0d4d058d792c
    40041859751528cb 400b7f3ab2835af2 40138e830b9548e4 401a2f3ae4bbfbfc 4021bbd14222ea9b
    402658c6ce54d820 402af3e7d4e2bd1a 4051c2a0c5eec818 0000000000000000 00a6268dba3ba0e4
    3a160689874aaeff 3e242468d026cdf1 3f7e0abc1b4a9fd3 3fd2837363de8e92 3fe9d2c5de6a3b05
    3ff2c6ea065b9973 3ffa1b6881bf451e 4002db4a885ff3c3 400cf71ffd525c08 4014c4e7175c732c
    401df09c178a4c06 40239347a697e1fe 40282e2849f42265 405169e7b9f2df2f 0000000000000000
    009d8bba92c1f6d1 3a0d7c60d83794bb 3e1b2d6b29342327 3f74caa75ab23ea7 3fcad92dc05977eb
    3fe37267a666733f 3fece25ffff1a31d 3ff48dd7b739c641 3ffeaaa3ff39e78c 4008a6da943acb4d
    401267d83d6e5011 401b7fb20d993de9 4022594c2532cbdd 4026f3f82f3ef54a 405142a0c5eec818
    0000000000000000 008d91a0868864bf 39fdb831945ec843 3e0bcf8c69885b5c 3f664c6e7a9db6ff
    3fbf329104cdad3b 3fd81341cd3a89e7 3fe2854f0ebd8809 3feb690878932537 3ff5991ce42f3e11
    4002c969a95d548b 400e22f6a8786ce7 4017fce4c13ab8d2 40209420ee584e19 40252e440cf62823
    405109e7b9f2df30 0000000000000000 0071c4c9cdb672bc 39e21c06e7c5e8b4 3df17079a853c13a
    3f4e5826bbad7025 3fa80d8f322b72a6 3fc470b17f6ae38d 3fd09af7fa04523c 3fda256cb85788da
    3fe68beb31823ae3 3ff68c94c4e1a84a 4004c341575cca34 4012cb0e16ea617c 401bdc1d58971451
    40228627052639a5 4050b4d9e915d15f 0000000000000000 003c852ff8577486 39ade42b7708030d
    3dbe62d897051408 3f1e318b18903fa8 3f7c57bc126f852c 3f9b49cc9b96ae9a 3fa7d72ec608148e
    3fb476134187cb54 3fc43532b4f0a8f6 3fd9ca6097cd9ead 3ff006d55d40c992 40047d6a1bed7a66
    4012a0203dde1ba1 401badb1e8b0da70 40501e8d92b78b7c 0000000000000000 0000000000000000
    3978a8a7697fc71b 3d8a548fbbd1b771 3eecf96a055296f2 3f4e2e9ce3f290e5 3f6f22a5e9c0baf6
    3f7c4bd4a2342848 3f8975035aa7959a 3f9b21440ac719a5 3fb40838d7e7aaf3 3fcd7abfbbd1ed9a
    3feffd4475aec52c 400478691e6f644c 40129bce80b775cf 404f15cc4fc2c780 0000000000000000
    0000000000000000 39445320547b7c4e 3d56af2a3ba2848a 3ebb0ab0db26170e 3f1e2e3a1fb9880d
    3f4039d83f5af75e 3f4e2e3c4578ac97 3f5be8c80c3b6a72 3f6f222d23a85d93 3f89748a948f3838
    3fa7942779b8ed90 3fcd75012a9b4d20 3ff0001179f80c3e 400477bc3e20bab9 404def027476a315
    0000000000000000 40195ba8cd7c5a4f 401060ab542df6da 40012ce57916fa49 3ff565cbd57e419f
    3ff2c6ea065b9973 3ff1d90707497185 3ff0e9951b89f0d5 3ff044e8b5534bdf 3ff006d55d40c992
    3ff000aec7b6ca98 3ff0001179f80c3e 40195ba8cd7c5a50 401060ab542df6db 40012ce57916fa4a
    3ff565cbd57e41a0 3ff2c6ea065b9994 3ff1d90707497176 3ff0e9951b89f0e2 3ff044e8b5534bf2
    3ff006d55d40c9b3 3ff000aec7b6cae4 3ff0001179f8206f 40195ba8cd7c5a4d 401060ab542df6da
    40012ce57916fa4a 3ff565cbd57e419f 3ff2c6ea065b9972 3ff1d90707497185 3ff0e9951b89f0d5
    3ff044e8b5534be3 3ff006d55d40c9bc 3ff000aec7b6ca87 3ff0001179f80fbe 4082a9c8a86ce699
    404e40b6439fd0d1 401b290ba0556b43 3ffe0d4d058d792c 3ff2c6ea065b9973 3fece25ffff1a31d
    3fe2854f0ebd8809 3fd09af7fa04523c 3fa7d72ec608148e 3f7c4bd4a2342848 3f4e2e3c4578ac97
    """,
}
# Where JAX's one-element-at-a-time evaluation (lax.map) rounds differently: index: bits.
RANDOM_GAMMA_GRAD_MAPPED = {
    "float32": {196: "3f800476", 197: "3f800e4d"},
    "float64": {},
}
INCOMPLETE_GAMMA = {
    ("igamma", "float32"): """
        3f657669 3f7dad86 3f7f6ec2 3f7fef63 3f7ff749 3f800000 3f800000 3b69d916 3f0fb95c
        3f57bb3e 3f7982d7 3f7c5673 3f800000 3f800000 3727c573 3e84b374 3f21d2a1 3f6afc7b
        3f734128 3f800000 3f800000 25402723 3b6be577 3da4750b 3ee99150 3f13a9cf 3f800000
        3f800000 00000000 00000000 08ee1be4 1bb06f37 1f49f9db 3f74ef00 3f800000 00000000
        00000000 00000000 00000000 00000000 00000000 3f7fff32
    """,
    ("igamma", "float64"): """
        3fecaeca82584975 3fefb5adce424f4f 3fefedd83818bc32 3feffdec5820ee29 3feffee9238be947
        3ff0000000000000 3ff0000000000000 3f6d3b224c0f6ead 3fe1f72b37279ca1 3feaf767a741088d
        3fef305ad1e7a5c2 3fef8ace65ff563f 3ff0000000000000 3ff0000000000000 3ee4f8aea9acf2c9
        3fd0966f2c7907f5 3fe43a54e4e98864 3fed5f8f47ed617b 3fee6824f33314f5 3ff0000000000000
        3ff0000000000000 3ca804de5ae704ab 3f6d7caf301d08cd 3fb48ea1e23ea7d9 3fdd322a79094bac
        3fe2753a1332322a 3fefffffffffffe0 3ff0000000000000 1a1004d790de0062 35eb27da05c21c9b
        391dc391588c4c36 3b760df3ac5dfa77 3be93f4ab1f16f2a 3fee9ddee1fd1775 3ff0000000000000
        0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000
        0000000000000000 3fefffe64c241cbd
    """,
    ("igammac", "float32"): """
        3dd44cb8 3c149e80 3b113e4d 3984ea06 390b6e48 1ca386d7 00000000 3f7f1627 3ee08d48
        3e211309 3ccfa52f 3c6a6337 20dd0341 00000000 3f7fff58 3f3da646 3ebc5aac 3da81c2a
        3d4bed80 229cbca2 00000000 3f800000 3f7f141b 3f6b715f 3f0b3758 3ed8ac5d 2780b9e0
        00000000 3f800000 3f800000 3f800000 3f800000 3f800000 3d310ffe 00000000 3f800000
        3f800000 3f800000 3f800000 3f800000 3f800000 374d9998
    """,
    ("igammac", "float64"): """
        3fba89abed3db458 3f82948c6f6c2c40 3f6227c7e743ce65 3f309d3ef88eb7a3 3f216dc7416b89ae
        3b9470db7263c127 08d864bb057ee7f9 3fefe2c4ddb3f091 3fdc11a991b0c6be 3fc4226162fbddcd
        3f99f4a5c30b47cd 3f8d4c66802a7046 3c1ba0666649f17d 097ebb1c878b39e1 3fefffeb07515653
        3fe7b4c869c37c06 3fd78b56362cef37 3fb50385c094f425 3fa97db0ccceb0b0 3c539792499b1a2c
        09d4dd4d0d12bfff 3feffffffffffffe 3fefe28350cfe2f7 3fed6e2bc3b82b05 3fe166eac37b5a2a
        3fdb158bd99b9bc5 3cf0173be4f3a241 0aecbfa6e535ec64 3ff0000000000000 3ff0000000000000
        3ff0000000000000 3ff0000000000000 3ff0000000000000 3fa62211e02e88b4 14238898daf3b405
        3ff0000000000000 3ff0000000000000 3ff0000000000000 3ff0000000000000 3ff0000000000000
        3ff0000000000000 3ee9b3dbe3428148
    """,
    ("igamma_grad_a", "float32"): """
        c11d115c bf68a3af be653b39 bcd344a0 bc5df51b a005370c 80000000 bd28ccf1 bf45441e
        bec798c4 bda3ca66 bd417f14 a21cd29b 80000000 b8fa4f09 bee1fa61 bedd0bac be170caa
        bdc598d1 a3a81eac 80000000 a71959bb bc12396b bdda0759 be7d0c54 be728080 a833ae7d
        80000000 80000000 80000000 89cb83ab 9c5cebd3 9fea8d7b bc8346d0 80000000 80000000
        80000000 80000000 80000000 80000000 80000000 b61e3478
    """,
    ("igamma_grad_a", "float64"): """
        c023a229d03d4743 bfed147213a3dcbd bfcca75eb6dd9977 bf9a6891478a3338 bf8bbea0bc9fb1c3
        bc00a6e1e9b80007 8944623a38089e46 bfa5199db36670d5 bfe8a883274d9467 bfd8f317ff43655f
        bfb4794c917ea00f bfa82fe2524af668 bc439a5225aac809 89b00f997048eb72 bf1f49e181b4dd36
        bfdc3f4cdf8b6b1d bfdba175a6f8dc1c bfc2e1966f80e091 bfb8b31b287985c9 bc7503d38bb9a46d
        8a02317cb119a639 bce32b32c0131e9e bf82472da08d359d bfbb40eb8f3f5fb1 bfcfa18aa45510f3
        bfce500f510df4b5 bd0675cf58c923d1 8b13ad82e6aea02c 9a4de58dc1e0414a b60f60f7ad0ef5d2
        b9397086f39884f3 bb8b9d8a53979e11 bbfd51c10e85aba4 bf9068e76f658f05 943d707fa1fc6d8f
        8000000000000000 8000000000000000 8000000000000000 8000000000000000 8000000000000000
        8000000000000000 bec3c7063c9d0782
    """,
}
HALF_PRECISION_BITS = {
    "float16": [15577, 16320, 14987, 15522],
    "bfloat16": [16283, 16376, 16209, 16276],
}

# Implicit gradients of gamma and loggamma samples: d sum(samples) / d a, as bits.
SAMPLE_GRADIENT_BITS = {
    ("gamma", "float32", 0): """
        405c1da7 3fd4c556 3f27d3d9 3fb881c0 3f884851 3f807b3f
    """,
    ("loggamma", "float32", 0): """
        423ac1c7 3fa7f927 3fef1057 3e9cf564 3cc1bce2 3a91218d
    """,
    ("gamma", "float32", 1): """
        2a20cb0c 3fa6ff43 3fd87317 3f8e3490 3f90847e 3f7fadd2
    """,
    ("loggamma", "float32", 1): """
        44323e86 3fda0550 3f478b2b 3ed2768c 3cb60a01 3a91dfcf
    """,
    ("gamma", "float32", 42): """
        3c10dc58 3f9ced9a 3fd130f0 3f56317e 3f71f99b 3f7e6a32
    """,
    ("loggamma", "float32", 42): """
        433d81b1 3fe753c0 3f506f95 3f08ecbf 3cda38bb 3a9298ad
    """,
    ("gamma", "float64", 7): """
        39079e6bba73f446 3fd30059ea4af3c7 3fe0dfca7ca9d64c 3fef4d699f9826f3
        3ff072b03f5dcae8 3ff02cc40a6ce995
    """,
}
# beta: d sum / d (a, b); dirichlet: d sum(samples * arange(6)) / d alpha.
SAMPLE_GRADIENTS = {
    ("beta_a", "float32", 0): [
        0.8611933588981628,
        6.417089934984688e-06,
        0.16327130794525146,
        4.648394169581849e-11,
        0.003183264285326004,
        2.0830607354582753e-06,
    ],
    ("beta_b", "float32", 0): [
        -0.005879957228899002,
        -6.776408554287627e-05,
        -0.22991475462913513,
        -2.4054668301687343e-07,
        -0.01615932583808899,
        -0.0011066790902987123,
    ],
    ("dirichlet", "float32", 0): [
        -0.017723312601447105,
        -0.006830696947872639,
        -0.0020095673389732838,
        -0.0029138203244656324,
        -0.0010407818481326103,
        6.662910163868219e-05,
    ],
    ("beta_a", "float32", 1): [
        8.621724191471003e-06,
        0.2840622663497925,
        0.08710493892431259,
        1.7959910339462104e-31,
        0.003366558812558651,
        3.779904773182352e-06,
    ],
    ("beta_b", "float32", 1): [
        -1.1953498635364213e-08,
        -0.1840662658214569,
        -0.16331543028354645,
        -1.561277642797862e-27,
        -0.018797995522618294,
        -0.001492199720814824,
    ],
    ("dirichlet", "float32", 1): [
        -7.382905927879972e-16,
        -0.005376859102398157,
        -0.005196254700422287,
        -0.0022491486743092537,
        -0.0011020413367077708,
        7.221568375825882e-05,
    ],
    ("beta_a", "float32", 42): [
        0.011533533222973347,
        2.5345856556668878e-05,
        0.19692827761173248,
        0.0,
        0.004209300968796015,
        1.6030791130106081e-06,
    ],
    ("beta_b", "float32", 42): [
        -2.721678356465418e-05,
        -0.0003098777960985899,
        -0.24225477874279022,
        0.0,
        -0.019816027954220772,
        -0.0009716079221107066,
    ],
    ("dirichlet", "float32", 42): [
        -4.713673479272984e-05,
        -0.005215422250330448,
        -0.005191813223063946,
        -0.001756664365530014,
        -0.0009662884403951466,
        5.4603478929493576e-05,
    ],
}
