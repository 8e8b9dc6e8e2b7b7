"""lamina.scipy.spatial.transform: Rotation and Slerp against scipy.spatial.transform, in
float32 and float64, under jit and vmap, as pytrees, and JAX 0.10.2's errors."""

import numpy as np
import pytest
from scipy.spatial import transform as sp_transform

import lamina.numpy as jnp
import lamina.scipy.spatial as spatial
from lamina.interpreters import enable_x64, jit, vmap
from lamina.ir.tree_util import tree_leaves, tree_structure
from lamina.scipy.spatial.transform import Rotation, Slerp

_rng = np.random.default_rng(0)
QUATS = _rng.standard_normal((5, 4))
VECTORS = _rng.standard_normal((5, 3))
SEQUENCES = ["xyz", "ZYX", "xzy", "XYX", "zxz"]


def _same_rotation(q, want, **tol):
    """Quaternions equal up to sign."""
    q, want = np.asarray(q), np.asarray(want)
    sign = np.sign(np.sum(q * want, axis=-1, keepdims=True))
    np.testing.assert_allclose(q * sign, want, **tol)


def test_public_names_are_jax():
    assert dir(spatial) == ["transform"]
    assert dir(spatial.transform) == ["Rotation", "Slerp"]
    assert Rotation._fields == ("quat",)
    assert Slerp._fields == ("times", "timedelta", "rotations", "rotvecs")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conversions_match_scipy(dtype):
    tol = {"atol": 2e-5} if dtype == np.float32 else {"atol": 1e-12}
    with enable_x64(dtype == np.float64):
        q = QUATS.astype(dtype)
        ours, want = Rotation.from_quat(q), sp_transform.Rotation.from_quat(QUATS)
        assert ours.as_quat().dtype == dtype
        np.testing.assert_allclose(ours.as_quat(), want.as_quat(), **tol)
        np.testing.assert_allclose(
            ours.as_quat(canonical=True, scalar_first=True),
            want.as_quat(canonical=True, scalar_first=True),
            **tol,
        )
        matrix, rotvec, mrp = want.as_matrix(), want.as_rotvec(), want.as_mrp()
        np.testing.assert_allclose(ours.as_matrix(), matrix, **tol)
        np.testing.assert_allclose(ours.as_rotvec(), rotvec, **tol)
        np.testing.assert_allclose(ours.as_rotvec(degrees=True), np.rad2deg(rotvec), rtol=2e-5)
        np.testing.assert_allclose(ours.as_mrp(), mrp, **tol)
        np.testing.assert_allclose(ours.magnitude(), want.magnitude(), **tol)
        np.testing.assert_allclose(ours.inv().as_quat(), want.inv().as_quat(), **tol)
        for seq in SEQUENCES:
            np.testing.assert_allclose(ours.as_euler(seq), want.as_euler(seq), **tol)
            angles = want.as_euler(seq, degrees=True)
            back = Rotation.from_euler(seq, angles.astype(dtype), degrees=True)
            expected = sp_transform.Rotation.from_euler(seq, angles, degrees=True)
            _same_rotation(back.as_quat(), expected.as_quat(), **tol)
        _same_rotation(Rotation.from_matrix(matrix.astype(dtype)).as_quat(), want.as_quat(), **tol)
        _same_rotation(Rotation.from_rotvec(rotvec.astype(dtype)).as_quat(), want.as_quat(), **tol)
        _same_rotation(Rotation.from_mrp(mrp.astype(dtype)).as_quat(), want.as_quat(), **tol)
        np.testing.assert_allclose(ours.apply(VECTORS.astype(dtype)), want.apply(VECTORS), **tol)
        np.testing.assert_allclose(
            ours[1].apply(VECTORS.astype(dtype), inverse=True),
            want[1].apply(VECTORS, inverse=True),
            **tol,
        )
        _same_rotation((ours * ours[::-1]).as_quat(), (want * want[::-1]).as_quat(), **tol)
        weights = np.arange(1.0, 6.0)
        np.testing.assert_allclose(
            ours.mean(weights).as_matrix(), want.mean(weights).as_matrix(), **tol
        )


def test_small_angles_single_rotations_and_identity():
    rotvec = np.array([1e-4, -2e-4, 5e-5])
    ours = Rotation.from_rotvec(np.float32(rotvec))
    want = sp_transform.Rotation.from_rotvec(rotvec)
    np.testing.assert_allclose(ours.as_quat(), want.as_quat(), rtol=1e-6)
    np.testing.assert_allclose(ours.as_rotvec(), rotvec, rtol=1e-4)
    assert ours.single and ours.as_matrix().shape == (3, 3)
    z90 = Rotation.from_euler("z", 90, degrees=True)
    np.testing.assert_allclose(z90.as_rotvec(), [0, 0, np.pi / 2], rtol=1e-6)
    np.testing.assert_array_equal(Rotation.identity().as_quat(), [0.0, 0.0, 0.0, 1.0])
    both = Rotation.concatenate([Rotation.from_quat(QUATS[:2]), Rotation.from_quat(QUATS[2:])])
    assert len(both) == 5 and not both.single and both[1:3].quat.shape == (2, 4)


def test_slerp_matches_scipy():
    times = np.array([0.0, 1.0, 3.0, 4.0])
    keys = sp_transform.Rotation.from_quat(QUATS[:4])
    want = sp_transform.Slerp(times, keys)(np.array([0.0, 0.3, 1.0, 2.2, 3.9, 4.0]))
    slerp = Slerp.init(times, Rotation.from_quat(np.float32(QUATS[:4])))
    ours = slerp(np.array([0.0, 0.3, 1.0, 2.2, 3.9, 4.0]))
    _same_rotation(ours.as_quat(), want.as_quat(), atol=2e-6)
    one = slerp(2.2)
    assert one.single
    _same_rotation(one.as_quat(), want[3].as_quat(), atol=2e-6)


def test_jit_vmap_and_pytree():
    q = np.float32(QUATS)
    euler = jit(lambda q: Rotation.from_quat(q).as_euler("xyz"))(q)
    want = sp_transform.Rotation.from_quat(QUATS)
    np.testing.assert_allclose(euler, want.as_euler("xyz"), atol=2e-5)
    rotvecs = vmap(lambda q: Rotation.from_quat(q).as_rotvec())(q)
    np.testing.assert_allclose(rotvecs, want.as_rotvec(), atol=2e-5)
    rotation = jit(lambda r: r.inv())(Rotation.from_quat(q))
    assert isinstance(rotation, Rotation)
    slerp = Slerp.init(np.arange(3.0), Rotation.from_quat(q[:3]))
    assert len(tree_leaves(slerp)) == 4
    assert str(tree_structure(slerp)) == (
        "PyTreeDef(CustomNode(namedtuple[Slerp], [*, *, CustomNode(namedtuple[Rotation], [*]), *]))"
    )  # recorded from JAX 0.10.2
    moved = jit(lambda s, t: s(t).as_quat())(slerp, jnp.array([0.5, 1.5]))
    np.testing.assert_allclose(moved, slerp(np.array([0.5, 1.5])).as_quat(), atol=1e-6)


def test_bad_input_raises_jax_errors():
    one, many = Rotation.from_quat(QUATS[0]), Rotation.from_quat(QUATS)
    # messages recorded from JAX 0.10.2
    with pytest.raises(TypeError, match="Single rotation is not subscriptable"):
        one[0]
    with pytest.raises(TypeError, match=r"Single rotation has no len\(\)."):
        len(one)
    with pytest.raises(ValueError, match="non-empty string of upto 3 characters, got xyzx"):
        Rotation.from_euler("xyzx", jnp.ones(4))
    with pytest.raises(ValueError, match="Expected consecutive axes to be different, got xxy"):
        Rotation.from_euler("xxy", jnp.ones(3))
    axes = r"to be from \['x', 'y', 'z'\] or \['X', 'Y', 'Z'\], got xYz"
    with pytest.raises(ValueError, match=axes):
        many.as_euler("xYz")
    with pytest.raises(ValueError, match="Expected 3 axes, got xy"):
        many.as_euler("xy")
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'm': 3 vs 2"):
        Rotation.from_euler("xyz", jnp.ones(2))
    with pytest.raises(NotImplementedError):
        Rotation.random(None)
    with pytest.raises(ValueError, match="Expected `weights` to be 1 dimensional"):
        many.mean(np.ones((5, 1)))
    with pytest.raises(TypeError, match="`rotations` must be a `Rotation` instance"):
        Slerp.init(np.arange(2.0), QUATS[:2])
    with pytest.raises(ValueError, match="`rotations` must be a sequence of at least 2"):
        Slerp.init(np.arange(1.0), many[:1])
    with pytest.raises(ValueError, match="got 5 rotations and 4 timestamps"):
        Slerp.init(np.arange(4.0), many)
    with pytest.raises(ValueError, match="`times` must be at most 1-dimensional"):
        Slerp.init(np.arange(5.0), many)(np.ones((2, 2)))
