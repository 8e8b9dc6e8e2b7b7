"""lamina.sharding has jax.sharding's public names (recorded with dir(jax.sharding) from
JAX 0.10.2), with JAX's signatures."""

import inspect

import lamina.sharding as sharding

# dir(jax.sharding) in JAX 0.10.2, without dunders.
JAX_NAMES = {
    "AbstractDevice",
    "AbstractMesh",
    "AxisType",
    "ManualAxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "get_mesh",
    "make_single_device_sharding",
    "reshard",
    "set_mesh",
    "use_abstract_mesh",
}

# inspect.signature in JAX 0.10.2 (annotations left out).
SIGNATURES = {
    "AbstractDevice": "(device_kind, num_cores, platform)",
    "AbstractMesh": "(axis_sizes, axis_names, axis_types=None, *, abstract_device=None)",
    "ManualAxisType": "(*, varying=frozenset(), unreduced=frozenset(), reduced=frozenset())",
    "Mesh": "(devices, axis_names, axis_types=None)",
    "NamedSharding": "(mesh, spec, memory_kind=None, _logical_device_ids=None)",
    "PartitionSpec": "(*partitions, unreduced=frozenset(), reduced=frozenset())",
    "auto_axes": "(f=None, /, *, axes=None, out_sharding=None)",
    "explicit_axes": "(f=None, /, *, axes=None, in_sharding=None)",
    "get_abstract_mesh": "()",
    "get_mesh": "()",
    "make_single_device_sharding": "(device, *, memory_kind=None)",
    "reshard": "(xs, out_shardings)",
    "set_mesh": "(mesh)",
    "use_abstract_mesh": "(mesh)",
}


def _plain(signature: inspect.Signature) -> str:
    params = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
    return str(signature.replace(parameters=params, return_annotation=inspect.Signature.empty))


def test_names():
    assert set(sharding.__all__) == JAX_NAMES
    for name in sharding.__all__:
        assert getattr(sharding, name) is not None


def test_signatures():
    for name, expected in SIGNATURES.items():
        assert _plain(inspect.signature(getattr(sharding, name))) == expected, name
