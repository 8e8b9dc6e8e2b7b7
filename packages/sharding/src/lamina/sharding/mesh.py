"""Meshes: devices arranged in a named N-dimensional grid (``Mesh``), and the same
grid without devices (``AbstractMesh``), which is what types and tracing see."""

from __future__ import annotations

import collections
import functools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from jaxlib import xla_client

from lamina.interpreters import devices as backend_devices
from lamina.interpreters import process_index
from lamina.sharding.axis_types import AxisType, normalize_axis_types
from lamina.sharding.mesh_state import entered_meshes

__all__ = ["AbstractDevice", "AbstractMesh", "BaseMesh", "Mesh", "make_mesh"]


class BaseMesh:
    """What concrete and abstract meshes share: questions about the axis types."""

    axis_names: tuple
    axis_types: tuple

    def _all(self, kind: AxisType) -> bool:
        return bool(self.axis_types) and all(t == kind for t in self.axis_types)

    are_all_axes_auto = property(lambda self: self._all(AxisType.Auto))
    are_all_axes_explicit = property(lambda self: self._all(AxisType.Explicit))
    are_all_axes_manual = property(lambda self: self._all(AxisType.Manual))

    def _axes_of(self, kind: AxisType) -> tuple:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types, strict=True) if t == kind)

    auto_axes = property(lambda self: self._axes_of(AxisType.Auto))
    explicit_axes = property(lambda self: self._axes_of(AxisType.Explicit))
    manual_axes = property(lambda self: self._axes_of(AxisType.Manual))

    @property
    def _name_to_type(self) -> dict:
        return dict(zip(self.axis_names, self.axis_types, strict=True))

    @property
    def shape(self) -> collections.OrderedDict:
        """Axis name -> axis size, in mesh order."""
        return collections.OrderedDict(self.shape_tuple)

    @property
    def shape_tuple(self) -> tuple:
        return tuple(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def empty(self) -> bool:
        return self.size == 0


class Mesh(BaseMesh):
    """Devices laid out in a grid whose axes have names.

    ``Mesh(devices, axis_names, axis_types=None)``: ``devices`` is an array (or
    sequence) of devices with one dimension per name; axis types default to ``Auto``.
    """

    def __init__(self, devices, axis_names, axis_types=None):
        devices = devices if isinstance(devices, np.ndarray) else np.array(devices, object)
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if any(name is None for name in axis_names):
            raise ValueError(f"Mesh axis names cannot be None. Got: {axis_names}")
        if devices.ndim != len(axis_names):
            raise ValueError(
                "Mesh requires the ndim of its first argument (`devices`) to equal the "
                "length of its second argument (`axis_names`), but got "
                f"devices.ndim == {devices.ndim} and len(axis_names) == {len(axis_names)}."
            )
        axis_types = normalize_axis_types(axis_names, axis_types, "Mesh")
        devices = devices.copy()
        devices.flags.writeable = False
        empty = not axis_names and devices.flat[0] is None
        set_field = object.__setattr__
        set_field(self, "devices", devices)
        set_field(self, "axis_names", axis_names)
        set_field(self, "axis_types", axis_types)
        set_field(self, "size", 0 if empty else math.prod(devices.shape))

    def __setattr__(self, name, value):
        raise AttributeError(f"Mesh is immutable: cannot set {name!r}")

    def _key(self) -> tuple:
        return (self._flat_devices_tuple, self.devices.shape, self.axis_names, self.axis_types)

    def __eq__(self, other) -> bool:
        return isinstance(other, Mesh) and (self is other or self._key() == other._key())

    def __hash__(self) -> int:
        return self._hash

    @functools.cached_property
    def _hash(self) -> int:
        return hash(self._key())

    def __reduce__(self):
        return Mesh, (self.devices, self.axis_names, self.axis_types)

    def update(self, devices=None, axis_names=None, axis_types=None) -> Mesh:
        return Mesh(
            self.devices if devices is None else devices,
            self.axis_names if axis_names is None else axis_names,
            self.axis_types if axis_types is None else axis_types,
        )

    # --- the older context-manager form: `with mesh:`
    def __enter__(self) -> Mesh:
        warnings.warn(
            "`with mesh:` context manager has been deprecated. Please use `with "
            "jax.set_mesh(mesh):` instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        entered_meshes.set_local((*entered_meshes.value, self))
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> bool:
        entered_meshes.set_local(entered_meshes.value[:-1])
        return False

    def __call__(self, fn):
        """Used as a decorator, the mesh is entered around each call of ``fn``."""

        @functools.wraps(fn)
        def within(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return within

    # --- shape and devices
    axis_sizes = property(lambda self: self.devices.shape)
    is_scalar = property(lambda self: self.size == 1 and not self.axis_names)

    @functools.cached_property
    def device_ids(self) -> np.ndarray:
        """The devices' ids, in the mesh's layout."""
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @functools.cached_property
    def _flat_devices_tuple(self) -> tuple:
        return tuple(self.devices.flat)

    @functools.cached_property
    def _flat_devices_set(self) -> set:
        return set(self.devices.flat)

    @functools.cached_property
    def _internal_device_list(self) -> xla_client.DeviceList:
        return xla_client.DeviceList(self._flat_devices_tuple)

    @functools.cached_property
    def local_devices(self) -> list:
        return [d for d in self.devices.flat if d.process_index == d.client.process_index()]

    @functools.cached_property
    def _local_devices_set(self) -> set:
        return set(self.local_devices)

    @functools.cached_property
    def is_multi_process(self) -> bool:
        return self.devices.size != len(self.local_devices)

    @property
    def local_mesh(self) -> Mesh:
        """The part of the mesh this process drives (the whole mesh in one process)."""
        if not self.is_multi_process:
            return self
        me = process_index()
        mine = np.vectorize(lambda d: d.process_index == me, otypes=[bool])(self.devices)
        ranges = []
        for axis in range(self.devices.ndim):
            other = tuple(a for a in range(self.devices.ndim) if a != axis)
            hit = np.flatnonzero(mine.any(axis=other))
            ranges.append(slice(int(hit[0]), int(hit[-1]) + 1))
        local = self.devices[tuple(ranges)]
        if local.size != len(self.local_devices):
            raise ValueError(
                "When passing host local inputs to pjit, devices connected to a single "
                "host must form a contiguous subcube of the global device mesh"
            )
        return Mesh(local, self.axis_names, self.axis_types)

    @functools.cached_property
    def abstract_mesh(self) -> AbstractMesh:
        """The mesh's axis names, sizes and types, and the kind of its devices."""
        if not self.axis_names:
            return EMPTY_ABSTRACT_MESH
        first = self.devices.flat[0]
        device = None
        if first is not None:
            cores = getattr(first, "num_cores", None) if first.platform == "tpu" else None
            if first.platform == "gpu":
                cores = getattr(first, "core_count", None)
            device = AbstractDevice(first.device_kind, cores, first.platform)
        return AbstractMesh(
            self.axis_sizes, self.axis_names, self.axis_types, abstract_device=device
        )

    def __str__(self) -> str:
        if self.empty:
            return "Mesh()"
        axes = ", ".join(f"'{name}': {size}" for name, size in self.shape_tuple)
        return f"Mesh({axes}, axis_types={self.axis_types})"

    def __repr__(self) -> str:
        if self.empty:
            return "Mesh(axis_sizes=(), axis_names=())"
        return (
            f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names!r}, "
            f"axis_types={self.axis_types})"
        )


@dataclass(frozen=True)
class AbstractDevice:
    """The kind of device a mesh is made of, without the devices."""

    device_kind: str
    num_cores: int | None
    platform: str

    def __repr__(self) -> str:
        return f"AbstractDevice({self._repr()})"

    def _repr(self) -> str:
        return (
            f"device_kind={self.device_kind}, num_cores={self.num_cores}, platform={self.platform}"
        )


def _not_implemented(name: str):
    def fail(self, *args):
        raise ValueError(f"AbstractMesh does not implement {name}")

    return fail


class AbstractMesh(BaseMesh):
    """A mesh's axis names, sizes and types, without devices.

    ``AbstractMesh(axis_sizes, axis_names, axis_types=None, *, abstract_device=None)``.
    """

    def __init__(self, axis_sizes, axis_names, axis_types=None, *, abstract_device=None):
        axis_sizes, axis_names = tuple(axis_sizes), tuple(axis_names)
        axis_types = normalize_axis_types(axis_names, axis_types, "AbstractMesh")
        set_field = object.__setattr__
        set_field(self, "axis_sizes", axis_sizes)
        set_field(self, "axis_names", axis_names)
        set_field(self, "axis_types", axis_types)
        set_field(self, "abstract_device", abstract_device)
        set_field(self, "size", math.prod(axis_sizes) if axis_sizes else 0)

    def __setattr__(self, name, value):
        raise AttributeError(f"AbstractMesh is immutable: cannot set {name!r}")

    def _key(self) -> tuple:
        return (self.axis_sizes, self.axis_names, self.axis_types, self.abstract_device)

    def __eq__(self, other) -> bool:
        return isinstance(other, AbstractMesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self):
        return _rebuild_abstract, self._key()

    def __repr__(self) -> str:
        axes = ", ".join(f"'{n}': {s}" for n, s in self.shape_tuple) or "()"
        device = "" if self.abstract_device is None else f", {self.abstract_device._repr()}"
        return f"AbstractMesh({axes}, axis_types={self.axis_types}{device})"

    def update(self, axis_sizes=None, axis_names=None, axis_types=None, **kwargs):
        kwargs.setdefault("abstract_device", self.abstract_device)
        return AbstractMesh(
            self.axis_sizes if axis_sizes is None else axis_sizes,
            self.axis_names if axis_names is None else axis_names,
            self.axis_types if axis_types is None else axis_types,
            **kwargs,
        )

    def update_axis_types(self, name_to_type: dict) -> AbstractMesh:
        return self.update(
            axis_types=tuple(
                name_to_type.get(n, t)
                for n, t in zip(self.axis_names, self.axis_types, strict=True)
            )
        )

    _internal_device_list = property(lambda self: None)
    abstract_mesh = property(lambda self: self)
    devices = property(_not_implemented("devices"))
    device_ids = property(_not_implemented("device_ids"))
    is_multi_process = property(_not_implemented("is_multi_process"))
    local_devices = property(_not_implemented("local_devices"))
    local_mesh = property(_not_implemented("local_mesh"))
    __enter__ = _not_implemented("__enter__")
    __exit__ = _not_implemented("__exit__")


def _rebuild_abstract(axis_sizes, axis_names, axis_types, abstract_device) -> AbstractMesh:
    return AbstractMesh(axis_sizes, axis_names, axis_types, abstract_device=abstract_device)


EMPTY_ABSTRACT_MESH = AbstractMesh((), ())
EMPTY_MESH = Mesh(np.empty((), dtype=object), ())


def make_mesh(
    axis_shapes: Sequence[int],
    axis_names: Sequence[str],
    axis_types: tuple[AxisType, ...] | None = None,
    *,
    devices: Sequence[xla_client.Device] | None = None,
) -> Mesh:
    """A mesh of ``axis_shapes`` over the first devices (``devices``, default all the
    backend's devices), its axes ``Explicit`` unless ``axis_types`` says otherwise."""
    axis_shapes, axis_names = tuple(axis_shapes), tuple(axis_names)
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(axis_names)
    axis_types = normalize_axis_types(axis_names, axis_types, "make_mesh")
    devices = list(backend_devices() if devices is None else devices)
    needed = math.prod(axis_shapes)
    if len(devices) < needed:
        raise ValueError(
            f"Number of devices {len(devices)} must be >= the product of mesh_shape {axis_shapes}"
        )
    grid = np.empty(needed, dtype=object)
    grid[:] = devices[:needed]
    return Mesh(grid.reshape(axis_shapes), axis_names, axis_types)
