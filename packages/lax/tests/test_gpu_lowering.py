"""Linear algebra lowered for CUDA (and ROCm) on a machine without a GPU: each
primitive's custom calls against those JAX 0.10.2 emits (recorded in
data/gpu_linalg_calls.json: target, operand and result types, layouts, aliases,
backend_config, ``num_batch_dims``), never a LAPACK target, and modules for several
platforms at once."""

import json
import pathlib
import re

import numpy as np
import pytest
from jaxlib.plugin_support import import_from_plugin

import lamina.lax.linalg as L
import lamina.lax.linalg._gpu_solver as gpu_solver
from lamina.interpreters import jit
from lamina.lax.linalg.decompositions import unpack_conjugate_pairs

RECORDED = json.loads(
    (pathlib.Path(__file__).parent / "data" / "gpu_linalg_calls.json").read_text()
)["calls"]

f32, c64, i32 = np.float32, np.complex64, np.int32


def z(shape, dtype=f32):
    return np.zeros(shape, dtype)


CASES = {
    "cholesky": (lambda x: L.cholesky(x, symmetrize_input=False), [z((4, 4))]),
    "cholesky_batched_c64": (
        lambda x: L.cholesky(x, symmetrize_input=False),
        [z((2, 3, 4, 4), c64)],
    ),
    "lu": (L.lu, [z((4, 4))]),
    "lu_rect_batched": (L.lu, [z((2, 5, 3))]),
    "lu_pivots_to_permutation": (lambda p: L.lu_pivots_to_permutation(p, 6), [z((2, 4), i32)]),
    "qr": (lambda x: L.qr(x, full_matrices=False), [z((4, 3))]),
    "qr_full": (lambda x: L.qr(x, full_matrices=True), [z((4, 3))]),
    "qr_wide": (lambda x: L.qr(x, full_matrices=False), [z((3, 5), c64)]),
    "qr_pivoting": (lambda x: L.qr(x, pivoting=True, full_matrices=False), [z((4, 3))]),
    "householder_product": (L.householder_product, [z((4, 3)), z((3,))]),
    "eigh": (lambda x: L.eigh(x, symmetrize_input=False), [z((4, 4))]),
    "eigh_upper_c64": (
        lambda x: L.eigh(x, lower=False, symmetrize_input=False),
        [z((2, 5, 5), c64)],
    ),
    "svd": (lambda x: L.svd(x, full_matrices=False), [z((4, 3))]),
    "svd_full": (lambda x: L.svd(x, full_matrices=True), [z((40, 50))]),
    "svd_econ_big": (lambda x: L.svd(x, full_matrices=False), [z((64, 40))]),
    "svd_nouv": (lambda x: L.svd(x, compute_uv=False), [z((5, 3))]),
    "svd_c64": (lambda x: L.svd(x, full_matrices=False), [z((3, 5), c64)]),
    "svd_gesvd": (lambda x: L.svd(x, full_matrices=False), [z((1100, 2000))]),
    "svd_gesvd_tall": (lambda x: L.svd(x, full_matrices=True), [z((2000, 1100))]),
    "svd_qr": (lambda x: L.svd(x, full_matrices=False, algorithm=L.SvdAlgorithm.QR), [z((6, 4))]),
    "triangular_solve": (
        lambda a, b: L.triangular_solve(a, b, left_side=True, lower=True),
        [z((4, 4)), z((4, 3))],
    ),
    "triangular_solve_conj": (
        lambda a, b: L.triangular_solve(
            a, b, left_side=False, lower=False, transpose_a=True, conjugate_a=True
        ),
        [z((3, 3), c64), z((4, 3), c64)],
    ),
    "tridiagonal": (L.tridiagonal, [z((4, 4))]),
    "tridiagonal_upper_c64": (lambda x: L.tridiagonal(x, lower=False), [z((2, 4, 4), c64)]),
    "tridiagonal_solve": (L.tridiagonal_solve, [z(4), z(4), z(4), z((4, 3))]),
    "tridiagonal_solve_small": (L.tridiagonal_solve, [z(2), z(2), z(2), z((2, 3))]),
    "tridiagonal_solve_perturbed": (
        lambda dl, d, du, b: L.tridiagonal_solve(dl, d, du, b, perturb_singular=True),
        [z(4), z(4), z(4), z((4, 3))],
    ),
    "ormqr": (
        lambda a, t, c: L.ormqr(a, t, c, left=True, transpose=True),
        [z((5, 3)), z(3), z((5, 2))],
    ),
    "cholesky_update": (L.cholesky_update, [z((4, 4)), z(4)]),
    "symmetric_product": (
        lambda a, c: L.symmetric_product(a, c, alpha=2.0, beta=0.5),
        [z((4, 3)), z((4, 4))],
    ),
    "symmetric_product_batched": (
        lambda a, c: L.symmetric_product(a, c, alpha=2.0, beta=0.5),
        [z((2, 4, 3)), z((2, 4, 4))],
    ),
    "eig": (L.eig, [z((4, 4))]),
    "eig_c64_right": (lambda x: L.eig(x, compute_left_eigenvectors=False), [z((2, 4, 4), c64)]),
}


def _lowered(fun, args, platforms=("cuda",)):
    return jit(fun).trace(*args).lower(lowering_platforms=platforms).as_text()


def _calls(text):
    calls = []
    for line in text.splitlines():
        m = re.search(r"(stablehlo\.custom_call @.*|\"?stablehlo\.triangular_solve.*)", line)
        if m:
            calls.append(re.sub(r"%[\w#]+", "%_", m.group(1)))
    return calls


def test_every_case_is_recorded():
    assert set(CASES) == set(RECORDED)


@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_custom_calls_are_jaxs(name):
    fun, args = CASES[name]
    text = _lowered(fun, args)
    assert "lapack_" not in text
    assert _calls(text) == RECORDED[name]


@pytest.mark.parametrize("name", ["schur", "hessenberg"])
def test_cpu_only_decompositions_refuse_cuda(name):
    # As in JAX 0.10.2, which has no GPU lowering for them.
    with pytest.raises(NotImplementedError, match=f"'{name}' not implemented for platform 'cuda'"):
        _lowered(getattr(L, name), [z((4, 4))])


def test_rocm_uses_the_hip_targets():
    text = _lowered(L.lu, [z((4, 4))], ("rocm",))
    assert "@hipsolver_getrf_ffi(" in text and "@hip_lu_pivots_to_permutation(" in text


def test_cpu_and_cuda_module_has_a_branch_for_each_library():
    text = _lowered(lambda x: L.cholesky(x, symmetrize_input=False), [z((3, 3))], ("cpu", "cuda"))
    assert '{jax.global_constant = "_platform_index"}' in text
    assert text.count('"stablehlo.case"') == 2
    assert text.index("@lapack_spotrf_ffi(") < text.index("@cusolver_potrf_ffi(")


def test_small_tridiagonal_solve_for_cuda_runs_anywhere():
    # Fewer than 3 rows: plain StableHLO (no custom call), so the CUDA module runs here.
    rng = np.random.default_rng(0)
    dl, d, du = (rng.standard_normal((3, 2)).astype(f32) for _ in range(3))
    d = d + 4
    dl[:, 0] = du[:, -1] = 0
    b = rng.standard_normal((3, 2, 4)).astype(f32)
    fn = jit(L.tridiagonal_solve).trace(dl, d, du, b).lower(lowering_platforms=("cuda",))
    out = np.asarray(fn.compile()(dl, d, du, b))
    for i in range(3):
        a = np.diag(d[i]) + np.diag(dl[i, 1:], -1) + np.diag(du[i, :-1], 1)
        np.testing.assert_allclose(out[i], np.linalg.solve(a, b[i]), rtol=1e-5)


@pytest.mark.parametrize("implementation, number", [(None, 0), ("QR", 1), ("JACOBI", 2)])
def test_eigh_passes_the_algorithm_to_the_kernel(implementation, number):
    # Recorded from JAX 0.10.2: 0 lets the kernel choose (Jacobi syevj for small
    # matrices), 1 is syevd, 2 is syevj.
    impl = None if implementation is None else L.EighImplementation[implementation]
    text = _lowered(lambda x: L.eigh(x, implementation=impl), [z((4, 4))])
    assert f"mhlo.backend_config = {{algorithm = {number} : ui8, lower = true}}" in text


def test_lowering_registers_the_plugin_targets_once_installed():

    if import_from_plugin("cuda", "_solver") is None:
        pytest.skip("needs the jax-cuda12 or jax-cuda13 plugin (the cuda12/cuda13 extras)")
    # The first GPU lowering registers the plugin's solver, linalg and sparse targets
    # for CUDA and loads its hybrid kernels; a failure there raises.
    for fun, args in [(L.eig, [z((4, 4))]), (L.tridiagonal_solve, CASES["tridiagonal_solve"][1])]:
        assert "custom_call @cu" in _lowered(fun, args)


GEEV = json.loads((pathlib.Path(__file__).parent / "data" / "gpu_linalg_calls.json").read_text())[
    "calls_with_cusolver_11701"
]


@pytest.fixture
def cusolver_11701(monkeypatch):

    monkeypatch.setattr(gpu_solver, "_cusolver_version", 11701)


@pytest.mark.parametrize(
    "name, shape, dtype", [("eig_geev", (4, 4), f32), ("eig_geev_c64_batched", (2, 3, 3), c64)]
)
def test_eig_uses_cusolver_geev_where_cusolver_has_it(cusolver_11701, name, shape, dtype):
    text = _lowered(lambda x: L.eig(x, compute_left_eigenvectors=False), [z(shape, dtype)])
    assert _calls(text) == GEEV[name]


def test_left_eigenvectors_take_the_hybrid_kernel(cusolver_11701):
    assert "@cuhybrid_eig_real(" in _lowered(L.eig, [z((4, 4))])
    with pytest.raises(NotImplementedError, match="Left eigenvectors are not supported"):
        _lowered(lambda x: L.eig(x, implementation=L.EigImplementation.CUSOLVER), [z((4, 4))])


def test_cusolver_eig_needs_cusolver_11_7_1():

    if gpu_solver.cusolver_version() >= 11701:
        pytest.skip("this machine's cuSOLVER has geev")

    def fun(x):
        impl = L.EigImplementation.CUSOLVER
        return L.eig(x, compute_left_eigenvectors=False, implementation=impl)

    with pytest.raises(RuntimeError, match=r"requires cusolver 11\.7\.1 or newer"):
        _lowered(fun, [z((4, 4))])


def test_geev_vectors_are_unpacked_as_lapack_packs_them():

    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 6, 6))
    w, v = np.linalg.eig(a)
    packed = np.empty_like(a)
    for b in range(2):  # LAPACK's packing: (re, im) columns for each conjugate pair
        j = 0
        while j < 6:
            if w[b, j].imag == 0:
                packed[b, :, j] = v[b, :, j].real
                j += 1
            else:
                packed[b, :, j], packed[b, :, j + 1] = v[b, :, j].real, v[b, :, j].imag
                j += 2
    assert np.any(w.imag != 0)
    (out,) = jit(unpack_conjugate_pairs)(w.astype(np.complex64), packed.astype(f32))
    np.testing.assert_allclose(np.asarray(out), v, rtol=1e-5, atol=1e-6)
