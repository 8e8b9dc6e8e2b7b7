"""lamina.ffi: FFI calls of jaxlib's own CPU handlers (LAPACK), checked against SciPy
and NumPy; Jaxprs, lowered text and error messages recorded from JAX 0.10.2."""

import ctypes
import os

import numpy as np
import pytest
import scipy.linalg
from jaxlib.cpu import _lapack

import lamina as jax
import lamina.numpy as jnp
from lamina import ffi
from lamina.extend.core import Primitive
from lamina.interpreters import def_standard_impl

X = np.array([[4.0, 3, 2], [2, 1, 5], [6, 7, 1]], np.float32)
XS = np.stack([X, X + 1, 2 * X])
COL_MAJOR = (1, 0)  # major-to-minor: the first axis varies fastest


def _lu_results(shape):
    return (
        jax.ShapeDtypeStruct(shape, np.float32),
        jax.ShapeDtypeStruct(shape[:-1], np.int32),
        jax.ShapeDtypeStruct(shape[:-2], np.int32),
    )


def _lu(x, vmap_method=None, target="lapack_sgetrf_ffi"):
    """LU factorization by jaxlib's LAPACK kernel (column-major matrices)."""
    return ffi.ffi_call(
        target,
        _lu_results(x.shape),
        input_layouts=[COL_MAJOR],
        output_layouts=[COL_MAJOR, None, None],
        vmap_method=vmap_method,
    )(x)


def _check_lu(x, lu, piv, info):
    want_lu, want_piv = scipy.linalg.lu_factor(x)
    np.testing.assert_allclose(lu, want_lu, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(piv, want_piv + 1)  # LAPACK pivots count from 1
    assert int(info) == 0


def test_the_names_are_jax_ffis():
    # dir(jax.ffi) of JAX 0.10.2, recorded.
    assert sorted(ffi.__all__) == [
        "build_ffi_lowering_function",
        "ffi_call",
        "ffi_lowering",
        "include_dir",
        "pycapsule",
        "register_ffi_target",
        "register_ffi_target_as_batch_partitionable",
        "register_ffi_type",
        "register_ffi_type_id",
    ]
    assert jax.ffi is ffi


def test_lapack_getrf_under_jit_matches_scipy():
    lu, piv, info = jax.jit(_lu)(X)
    assert (lu.dtype, piv.dtype, info.dtype) == (np.float32, np.int32, np.int32)
    _check_lu(X, lu, piv, info)


def test_eager_call_with_row_major_layouts_factors_the_transpose():
    # Row-major buffers read as column-major by LAPACK: the kernel factors X.T and
    # writes the factors transposed.
    lu, piv, info = ffi.ffi_call("lapack_sgetrf_ffi", _lu_results((3, 3)))(X)
    _check_lu(X.T, np.asarray(lu).T, piv, info)


def test_attributes_alias_and_cholesky():
    spd = X @ X.T + 3 * np.eye(3, dtype=np.float32)

    def chol(a):
        results = (jax.ShapeDtypeStruct(a.shape, a.dtype), jax.ShapeDtypeStruct((), np.int32))
        call = ffi.ffi_call(
            "lapack_spotrf_ffi",
            results,
            input_layouts=[COL_MAJOR],
            output_layouts=[COL_MAJOR, None],
            input_output_aliases={0: 0},
        )
        return call(a, uplo=np.uint8(ord("L")))

    factor, info = jax.jit(chol)(spd)
    np.testing.assert_allclose(np.tril(factor), np.linalg.cholesky(spd), rtol=1e-5)
    assert int(info) == 0
    # The custom call as JAX 0.10.2 lowers it (recorded): attributes in
    # mhlo.backend_config, the alias of a multi-result call by tuple index.
    text = jax.jit(chol).lower(spd).as_text()
    assert (
        '%0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0) {backend_config = "", '
        "mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : "
        "tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<"
        "output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], "
        "result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : "
        "(tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)"
    ) in text


def _solve_lower(a, b, vmap_method=None):
    """Solve ``a @ x = b`` for lower-triangular ``a`` (LAPACK trsm, ``b`` overwritten)."""
    call = ffi.ffi_call(
        "lapack_strsm_ffi",
        jax.ShapeDtypeStruct(b.shape, b.dtype),
        vmap_method=vmap_method,
        input_layouts=[COL_MAJOR, COL_MAJOR],
        output_layouts=COL_MAJOR,
        input_output_aliases={1: 0},
    )
    flag = lambda c: np.uint8(ord(c))  # noqa: E731
    return call(a, b, side=flag("L"), uplo=flag("L"), trans_x=flag("N"), diag=flag("N"))


A = np.tril(X) + 3 * np.eye(3, dtype=np.float32)
B = np.arange(6, dtype=np.float32).reshape(3, 2)
BS = np.stack([B, B + 1, B * 2])


# (Not expand_dims: trsm does not broadcast a batch of one matrix itself.)
@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "broadcast_all"])
def test_vmap_methods_with_an_unbatched_operand(method):
    out = jax.vmap(lambda b: _solve_lower(A, b, method))(BS)
    np.testing.assert_allclose(out, [np.linalg.solve(A, b) for b in BS], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "method",
    ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized"],
)
def test_vmap_methods_on_batched_matrices(method):
    lu, piv, info = jax.jit(jax.vmap(lambda x: _lu(x, method)))(XS)
    for i, x in enumerate(XS):
        _check_lu(x, lu[i], piv[i], info[i])
    # A batch axis elsewhere is moved to the front first.
    lu2, _, _ = jax.vmap(lambda x: _lu(x, method), in_axes=2)(XS.transpose(1, 2, 0))
    np.testing.assert_array_equal(lu2, lu)


def test_vmap_without_a_method_is_refused():
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        jax.vmap(_lu)(XS)


# Recorded from JAX 0.10.2.
_JAXPR = """\
{ lambda ; a:f32[3,3]. let
    b:f32[3,3] c:i32[3] d:i32[] = ffi_call[
      attributes=()
      custom_call_api_version=4
      has_side_effect=False
      input_layouts=((0, 1),)
      input_output_aliases=()
      legacy_backend_config=None
      output_layouts=((0, 1), (0,), ())
      result_avals=(ShapedArray(float32[3,3]), ShapedArray(int32[3]), ShapedArray(int32[]))
      target_name=lapack_sgetrf_ffi
      vmap_method=expand_dims
    ] a
  in (b, c, d) }"""
_VMAPPED_JAXPR = """\
{ lambda ; a:f32[2,3,3]. let
    b:f32[2,3,3] c:i32[2,3] d:i32[2] = ffi_call[
      attributes=()
      custom_call_api_version=4
      has_side_effect=False
      input_layouts=((1, 2, 0),)
      input_output_aliases=()
      legacy_backend_config=None
      output_layouts=((1, 2, 0), (1, 0), (0,))
      result_avals=(ShapedArray(float32[2,3,3]), ShapedArray(int32[2,3]), ShapedArray(int32[2]))
      target_name=lapack_sgetrf_ffi
      vmap_method=expand_dims
    ] a
  in (b, c, d) }"""
_SEQUENTIAL_JAXPR = """\
{ lambda a:f32[3,3]; b:f32[2,3,2]. let
    c:f32[2,3,2] = scan[
      jaxpr={ lambda ; d:f32[3,3] e:f32[3,2]. let
          f:f32[3,2] = ffi_call[
            attributes=(('diag', np.uint8(78)), ('side', np.uint8(76)), ('trans_x', np.uint8(78)), ('uplo', np.uint8(76)))
            custom_call_api_version=4
            has_side_effect=False
            input_layouts=((0, 1), (0, 1))
            input_output_aliases=((1, 0),)
            legacy_backend_config=None
            output_layouts=((0, 1),)
            result_avals=(ShapedArray(float32[3,2]),)
            target_name=lapack_strsm_ffi
            vmap_method=sequential
          ] d e
        in (f,) }
      length=2
      num_carry=0
      num_consts=1
      reverse=False
      unroll=1
    ] a b
  in (c,) }"""  # noqa: E501
_LOWERED = """\
module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x3xf32>) -> (tensor<3x3xf32> {jax.result_info = "result[0]"}, tensor<3xi32> {jax.result_info = "result[1]"}, tensor<i32> {jax.result_info = "result[2]"}) {
    %0:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%arg0) {backend_config = "", mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<i32>)
    return %0#0, %0#1, %0#2 : tensor<3x3xf32>, tensor<3xi32>, tensor<i32>
  }
}
"""  # noqa: E501


def test_jaxprs_and_lowering_are_jaxs():
    f = ffi.ffi_call(
        "lapack_sgetrf_ffi",
        _lu_results((3, 3)),
        input_layouts=[COL_MAJOR],
        output_layouts=[COL_MAJOR, None, None],
        vmap_method="expand_dims",
    )
    assert str(jax.make_jaxpr(f)(X)) == _JAXPR
    assert str(jax.make_jaxpr(jax.vmap(f))(XS[:2])) == _VMAPPED_JAXPR
    assert jax.jit(f).lower(X).as_text() == _LOWERED
    jaxpr = jax.make_jaxpr(jax.vmap(lambda b: _solve_lower(A, b, "sequential")))(BS[:2])
    assert str(jaxpr) == _SEQUENTIAL_JAXPR
    # expand_dims gives an unbatched operand a leading axis of one (recorded).
    jaxpr = jax.make_jaxpr(jax.vmap(lambda b: _solve_lower(A, b, "expand_dims")))(BS[:2])
    assert "c:f32[1,3,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a" in str(jaxpr)
    assert "input_layouts=((1, 2, 0), (1, 2, 0))" in str(jaxpr)


def test_attribute_kinds_lower_as_jaxs():
    call = ffi.ffi_call("some_target", jax.ShapeDtypeStruct((2,), np.float32))
    kwargs = dict(
        foo=1,
        bar=2.5,
        baz=np.ones(2, np.float32),
        s="hi",
        d=np.int8(3),
        t=True,
        l=(1, 2),
        dt=np.dtype(np.float32),
    )
    text = jax.jit(lambda x: call(x, **kwargs)).lower(X).as_text()
    # Recorded from JAX 0.10.2.
    assert (
        "mhlo.backend_config = {bar = 2.500000e+00 : f64, baz = dense<1.000000e+00> : "
        'tensor<2xf32>, d = 3 : i8, dt = f32, foo = 1 : i64, l = [1, 2], s = "hi", t = true}'
    ) in text
    jaxpr = jax.make_jaxpr(lambda x: call(x, baz=np.ones(2, np.float32), d=np.int8(3)))(X)
    assert (
        "attributes=(('baz', HashableArray(array([1., 1.], dtype=float32))), ('d', np.int8(3)))"
    ) in str(jaxpr)


def test_legacy_api_version_takes_an_opaque_config():
    call = ffi.ffi_call(
        "some_target",
        jax.ShapeDtypeStruct((2,), np.float32),
        custom_call_api_version=2,
        legacy_backend_config="opaque",
    )
    text = jax.jit(call).lower(X).as_text()
    assert '{api_version = 2 : i32, backend_config = "opaque", operand_layouts' in text
    with pytest.raises(ValueError, match="requires a custom call API version of at least 4"):
        jax.jit(lambda x: call(x, a=1)).lower(X)


def test_side_effects_keep_an_unused_call():
    def drop(has_side_effect):
        call = ffi.ffi_call(
            "lapack_sgetrf_ffi", _lu_results((3, 3)), has_side_effect=has_side_effect
        )
        return lambda x: (call(x), jnp.float32(1.0))[1]

    kept = jax.jit(drop(True)).lower(X).as_text()
    assert "custom_call @lapack_sgetrf_ffi" in kept and "has_side_effect = true" in kept
    assert "custom_call" not in jax.jit(drop(False)).lower(X).as_text()
    assert repr(set(jax.make_jaxpr(drop(True))(X).effects)) == "{FfiEffect()}"
    assert float(jax.jit(drop(True))(X)) == 1.0


def test_results_follow_result_shape_dtypes():
    spec = jax.ShapeDtypeStruct((3, 3), np.float32)
    ident = {"input_output_aliases": {0: 0}}
    one = ffi.ffi_call("lapack_sgetrf_ffi", _lu_results((3, 3)), **ident)(X)
    assert type(one) is tuple
    listed = ffi.ffi_call("lapack_sgetrf_ffi", list(_lu_results((3, 3))), **ident)(X)
    assert type(listed) is list
    single = ffi.ffi_call("lapack_sgetrf_ffi", [spec, *_lu_results((3, 3))[1:]])(X)[0]
    assert single.shape == (3, 3)


def test_no_derivative():
    with pytest.raises(ValueError, match=r"The FFI call to `lapack_sgetrf_ffi` cannot be diff"):
        jax.grad(lambda x: _lu(x)[0].sum())(X)
    with pytest.raises(ValueError, match="cannot be differentiated"):
        jax.jvp(_lu, (X,), (X,))


# Messages recorded from JAX 0.10.2.
_OUT = _lu_results((3, 3))


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: ffi.ffi_call("a", _OUT, vmap_method="foo"),
            "vmap_method must be on of the allowed methods ['sequential', "
            "'sequential_unrolled', 'expand_dims', 'broadcast_all', 'legacy_vectorized', "
            "None], but got: foo",
        ),
        (
            lambda: ffi.ffi_call("a", _OUT, legacy_backend_config="x"),
            "The use of the legacy_backend_config parameter requires "
            "custom_call_api_version < 4; got 4.",
        ),
        (
            lambda: ffi.ffi_call("a", _OUT, input_layouts=[None, None])(X),
            "The number of input arguments (1) must equal the number of input layouts (2).",
        ),
        (
            lambda: ffi.ffi_call("a", _OUT, output_layouts=[None])(X),
            "The number of outputs (3) must equal the number of output layouts (1).",
        ),
        (
            lambda: ffi.ffi_call("a", _OUT, input_output_aliases={1: 0})(X),
            "input_output_aliases contains the mapping '1:0' with input index 1 outside the "
            "range [0, 1).",
        ),
        (
            lambda: ffi.ffi_call("a", _OUT, input_output_aliases={0: 3})(X),
            "input_output_aliases contains the mapping '0:3' with output index 3 outside the "
            "range [0, 3).",
        ),
        (
            lambda: ffi.ffi_call("a", _OUT, input_output_aliases={0: 1})(X),
            "input_output_aliases contains the mapping '0:1' referring to an input with "
            "abstract value float32[3,3] and an output with a different abstract value "
            "int32[3].",
        ),
        (
            lambda: ffi.ffi_call("a", _OUT, input_output_aliases={0: 0}, input_layouts=[(1, 0)])(X),
            "input_output_aliases contains the mapping '0:0' referring to an input with layout "
            "(0, 1) and an output with a different layout (1, 0).",
        ),
        (
            lambda: ffi.ffi_call("a", [1, 2]),
            "All elements of result_shape_dtypes must have 'shape' and 'dtype' attributes. "
            "Got 1 at position 0.",
        ),
        (
            lambda: ffi.register_ffi_type_id("x", None),
            "register_ffi_type_id is not supported after jaxlib version 381.",
        ),
    ],
)
def test_bad_input(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message


def test_unhashable_attributes_are_refused():
    with pytest.raises(TypeError, match=r"Non-hashable keyword argument to ffi_call foo: \[1, 2\]"):
        ffi.ffi_call("a", _OUT)(X, foo=[1, 2])


def test_a_handler_capsule_registered_under_a_new_name():
    _lapack.initialize()  # the kernels look up SciPy's LAPACK routines
    capsule = _lapack.registrations()["lapack_sgetrf_ffi"]
    ffi.register_ffi_target("lamina_test_getrf", capsule, platform="cpu")
    lu, piv, info = jax.jit(lambda x: _lu(x, target="lamina_test_getrf"))(X)
    _check_lu(X, lu, piv, info)
    # An unregistered name fails when the program compiles, as in JAX.
    with pytest.raises(jax.errors.JaxRuntimeError, match="No FFI handler registered for nope"):
        _lu(X, target="nope")


def test_ffi_lowering_for_a_primitive_of_ones_own():
    getrf_p = Primitive("my_getrf")
    getrf_p.multiple_results = True
    getrf_p.def_abstract_eval(
        lambda a: [
            a,
            a.update(shape=a.shape[:-1], dtype=np.int32),
            a.update(shape=(), dtype=np.int32),
        ]
    )
    # Layouts here are XLA's minor-to-major: (0, 1) is column-major.
    getrf_p.def_lowering(
        ffi.ffi_lowering(
            "lapack_sgetrf_ffi", operand_layouts=[(0, 1)], result_layouts=[(0, 1), (0,), ()]
        )
    )
    def_standard_impl(getrf_p)
    _check_lu(X, *getrf_p.bind(X))
    _check_lu(X, *jax.jit(lambda x: getrf_p.bind(x))(X))


def test_pycapsule_holds_the_function_address():
    libc = ctypes.CDLL(None)
    capsule = ffi.pycapsule(libc.abs)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    assert get(capsule, None) == ctypes.cast(libc.abs, ctypes.c_void_p).value
    assert type(capsule).__name__ == "PyCapsule"


def test_include_dir_holds_the_ffi_headers():
    assert os.path.isfile(os.path.join(ffi.include_dir(), "xla", "ffi", "api", "ffi.h"))
