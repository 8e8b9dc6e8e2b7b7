"""Mesh, AbstractMesh, make_mesh and the mesh context, against JAX 0.10.2 (recorded)."""

import pickle
import warnings

import numpy as np
import pytest

from lamina.interpreters import devices, jit
from lamina.sharding import (
    AbstractDevice,
    AbstractMesh,
    AxisType,
    ManualAxisType,
    Mesh,
    current_mesh,
    get_abstract_mesh,
    get_mesh,
    make_mesh,
    set_mesh,
    use_abstract_mesh,
)

CPU = AbstractDevice("cpu", None, "cpu")


def test_there_are_eight_devices():
    assert len(devices()) == 8


def test_make_mesh():
    mesh = make_mesh((4, 2), ("x", "y"))
    # recorded from JAX 0.10.2
    assert repr(mesh) == (
        "Mesh(axis_sizes=(4, 2), axis_names=('x', 'y'), axis_types=(Explicit, Explicit))"
    )
    assert str(mesh) == "Mesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit))"
    assert dict(mesh.shape) == {"x": 4, "y": 2} and list(mesh.shape) == ["x", "y"]
    assert mesh.axis_names == ("x", "y") and mesh.axis_sizes == (4, 2) and mesh.size == 8
    np.testing.assert_array_equal(mesh.device_ids, np.arange(8).reshape(4, 2))
    assert mesh.devices.shape == (4, 2) and mesh.devices[1, 0] == devices()[2]
    assert mesh.are_all_axes_explicit and not mesh.are_all_axes_auto
    assert mesh.explicit_axes == ("x", "y") and mesh.auto_axes == ()
    assert repr(mesh.abstract_mesh) == (
        "AbstractMesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
        "num_cores=None, platform=cpu)"
    )
    assert mesh.local_mesh is mesh and not mesh.is_multi_process
    assert mesh._internal_device_list == mesh._internal_device_list
    assert list(mesh._internal_device_list) == devices()


def test_make_mesh_devices_and_types():
    mesh = make_mesh((2, 2), ("x", "y"), devices=devices()[4:])
    np.testing.assert_array_equal(mesh.device_ids, [[4, 5], [6, 7]])
    np.testing.assert_array_equal(make_mesh((3,), ("x",)).device_ids, [0, 1, 2])
    auto = make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    assert auto.are_all_axes_auto and not auto.are_all_axes_explicit
    mixed = make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Manual))
    assert repr(mixed) == (
        "Mesh(axis_sizes=(2, 2), axis_names=('x', 'y'), axis_types=(Auto, Manual))"
    )
    assert mixed.manual_axes == ("y",)


def test_make_mesh_errors():
    # messages recorded from JAX 0.10.2
    with pytest.raises(
        ValueError, match=r"Number of devices 3 must be >= the product of mesh_shape \(2, 2\)"
    ):
        make_mesh((2, 2), ("x", "y"), devices=devices()[:3])
    with pytest.raises(ValueError, match=r"Number of devices 8 must be >= the product"):
        make_mesh((16,), ("x",))
    with pytest.raises(
        ValueError,
        match=r"Number of axis names should match the number of axis_types\. Got "
        r"axis_names=\('x', 'y'\) and axis_types=\(Auto,\)",
    ):
        make_mesh((2, 2), ("x", "y"), axis_types=AxisType.Auto)
    with pytest.raises(ValueError, match=r"devices\.ndim == 2 and len\(axis_names\) == 1\."):
        make_mesh((4, 2), ("x",))
    with pytest.raises(TypeError, match=r"must be of type `jax\.sharding\.AxisType`"):
        make_mesh((8,), ("x",), axis_types=("auto",))


def test_mesh_constructor():
    grid = np.array(devices()).reshape(4, 2)
    mesh = Mesh(grid, ("a", "b"))
    assert mesh.axis_types == (AxisType.Auto, AxisType.Auto)
    assert Mesh(devices(), "x").axis_names == ("x",)
    assert Mesh(devices(), "x") == Mesh(devices(), ("x",))
    assert hash(Mesh(devices(), "x")) == hash(Mesh(devices(), ("x",)))
    assert mesh != Mesh(grid, ("a", "b"), (AxisType.Explicit,) * 2)
    assert mesh != Mesh(grid.T, ("a", "b"))
    with pytest.raises(
        ValueError,
        match=r"Mesh requires the ndim of its first argument \(`devices`\) to equal the "
        r"length of its second argument \(`axis_names`\), but got devices\.ndim == 2 and "
        r"len\(axis_names\) == 1\.",
    ):
        Mesh(grid, ("x",))
    with pytest.raises(AttributeError):
        mesh.size = 3
    assert mesh.update(axis_names=("c", "d")).axis_names == ("c", "d")


def test_empty_mesh():
    assert repr(get_mesh()) == "Mesh(axis_sizes=(), axis_names=())"
    assert str(get_mesh()) == "Mesh()" and get_mesh().empty


def test_abstract_mesh():
    # recorded from JAX 0.10.2
    assert repr(AbstractMesh((2, 4), ("a", "b"))) == (
        "AbstractMesh('a': 2, 'b': 4, axis_types=(Auto, Auto))"
    )
    assert repr(AbstractMesh((2,), ("a",), axis_types=AxisType.Auto)) == (
        "AbstractMesh('a': 2, axis_types=(Auto,))"
    )
    assert repr(AbstractMesh((), ())) == "AbstractMesh((), axis_types=())"
    assert not AbstractMesh((), ()).are_all_axes_explicit
    assert repr(CPU) == "AbstractDevice(device_kind=cpu, num_cores=None, platform=cpu)"
    mesh = AbstractMesh((4, 2), ("x", "y"), (AxisType.Explicit,) * 2, abstract_device=CPU)
    assert mesh == make_mesh((4, 2), ("x", "y")).abstract_mesh
    assert mesh.size == 8 and mesh._internal_device_list is None
    assert mesh.update_axis_types({"y": AxisType.Auto}).axis_types == (
        AxisType.Explicit,
        AxisType.Auto,
    )
    assert pickle.loads(pickle.dumps(mesh)) == mesh
    with pytest.raises(ValueError, match="AbstractMesh does not implement devices"):
        _ = mesh.devices
    with pytest.raises(ValueError, match="AbstractMesh does not implement __enter__"), mesh:
        pass


def test_axis_type_and_manual_axis_type():
    assert list(AxisType) == [AxisType.Auto, AxisType.Explicit, AxisType.Manual]
    assert repr(AxisType.Auto) == "Auto" and str(AxisType.Explicit) == "AxisType.Explicit"
    assert repr(ManualAxisType()) == (
        "ManualAxisType(varying=frozenset(), unreduced=frozenset(), reduced=frozenset())"
    )
    with pytest.raises(ValueError, match="varying and unreduced cannot have common mesh axes"):
        ManualAxisType(varying={"x"}, unreduced={"x"})


def test_set_mesh():
    mesh = make_mesh((4, 2), ("x", "y"))
    assert get_abstract_mesh().empty
    with set_mesh(mesh):
        assert get_abstract_mesh() == mesh.abstract_mesh
        assert get_mesh() is mesh and current_mesh() is mesh
    assert get_abstract_mesh().empty and get_mesh().empty
    setter = set_mesh(mesh)  # the setter form lasts until changed
    try:
        assert get_mesh() is mesh
    finally:
        setter.__exit__(None, None, None)
    assert get_mesh().empty
    with pytest.raises(ValueError, match=r"Expected mesh of type `jax.sharding.Mesh`\. Got"):
        set_mesh(3)


def test_set_mesh_inside_jit_fails():
    mesh = make_mesh((8,), ("x",))

    def f(x):
        set_mesh(mesh)
        return x

    with pytest.raises(ValueError, match=r"`set_mesh` can only be used outside of `jax\.jit`\."):
        jit(f)(1.0)


def test_use_abstract_mesh():
    mesh = AbstractMesh((8,), ("x",))
    with use_abstract_mesh(mesh):
        assert get_abstract_mesh() is mesh
    assert get_abstract_mesh().empty
    with pytest.raises(ValueError, match=r"Expected mesh of type `jax\.sharding\.AbstractMesh`"):
        use_abstract_mesh(make_mesh((8,), ("x",)))
    with (
        set_mesh(make_mesh((8,), ("x",))),
        pytest.raises(ValueError, match="use_abstract_mesh cannot change the size"),
        use_abstract_mesh(AbstractMesh((4,), ("x",))),
    ):
        pass


def test_with_mesh_is_deprecated_and_sets_the_current_mesh():
    mesh = make_mesh((8,), ("x",))
    with pytest.warns(DeprecationWarning, match="`with mesh:` context manager has been"), mesh:
        assert current_mesh() is mesh
        assert get_abstract_mesh().empty  # as JAX 0.10.2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert mesh(lambda: current_mesh())() is mesh
    assert current_mesh().empty
