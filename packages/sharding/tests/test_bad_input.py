"""Specs that do not fit the values or the mesh, given to device_put, jit, the sharding
constraint and shard_map: JAX 0.10.2's error types and messages (recorded from JAX
0.10.2 with 8 CPU devices)."""

import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import device_put, devices, jit
from lamina.sharding import AxisType, Mesh, NamedSharding, P, shard_map

MESH = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"), (AxisType.Auto,) * 2)
X = np.arange(32.0, dtype=np.float32).reshape(8, 4)


def _ns(spec: str) -> str:
    return (
        f"NamedSharding(mesh=Mesh('x': 2, 'y': 4, axis_types=(Auto, Auto)), spec={spec}, "
        "memory_kind=device)"
    )


def _raises(error, fn) -> str:
    with pytest.raises(error) as info:
        fn()
    return str(info.value)


def test_rank_errors_name_what_they_lay_out():
    s = _ns("P('x', 'y')")
    two = NamedSharding(MESH, P("x", "y"))
    assert _raises(ValueError, lambda: device_put(np.arange(8.0), two)) == (
        f"One of device_put args is incompatible with its sharding annotation {s}: Sharding "
        f"{s} is only valid for values of rank at least 2, but was applied to a value of "
        "rank 1."
    )
    s = _ns("P('x', 'y', None)")
    three = NamedSharding(MESH, P("x", "y", None))
    assert _raises(ValueError, lambda: jit(lambda a: a, in_shardings=three)(X)) == (
        f"One of pjit arguments with pytree key path a is incompatible with its sharding "
        f"annotation {s}: Sharding {s} is only valid for values of rank at least 3, but was "
        "applied to a value of rank 2."
    )
    constrained = jit(lambda a: lax.with_sharding_constraint(a, three))
    assert _raises(ValueError, lambda: constrained(X)) == (
        f"One of with_sharding_constraint arguments is incompatible with its sharding "
        f"annotation {s}: Sharding {s} is only valid for values of rank at least 3, but was "
        "applied to a value of rank 2."
    )
    s = _ns("P('x',)")
    total = jit(lambda a: lax.reduce_sum(a, (0, 1)), out_shardings=NamedSharding(MESH, P("x")))
    assert _raises(ValueError, lambda: total(X)) == (
        f"One of pjit outputs with pytree key path result is incompatible with its sharding "
        f"annotation {s}: Sharding {s} is only valid for values of rank at least 1, but was "
        "applied to a value of rank 0. For scalars the PartitionSpec should be P()"
    )


def test_uneven_constraint_is_padded_as_jax():
    four = NamedSharding(MESH, P("y"))
    out = jit(lambda a: lax.with_sharding_constraint(lax.slice(a, (0, 0), (6, 4)), four))(X)
    np.testing.assert_array_equal(out, X[:6])


def test_indivisible_and_unknown_axes():
    s = _ns("P('y',)")
    message = (
        f"Sharding {s} implies that array axis 0 is partitioned 4 times, but "
        "the dimension size is 6 (full shape: (6,), per-dimension tiling factors: [4] should "
        "evenly divide the shape)"
    )
    four = NamedSharding(MESH, P("y"))
    assert _raises(ValueError, lambda: device_put(np.arange(6.0), four)) == message
    fixed = jit(lambda a: a, in_shardings=four)
    assert _raises(ValueError, lambda: fixed(np.arange(6.0))) == message
    assert _raises(ValueError, lambda: NamedSharding(MESH, P("q"))) == (
        "Resource axis: q of P('q',) is not found in mesh: ('x', 'y')."
    )


def test_shard_map_indivisible_names_the_argument():
    f = shard_map(lambda a: a, mesh=MESH, in_specs=P("y"), out_specs=P("y"))
    assert _raises(ValueError, lambda: f(np.arange(6.0, dtype=np.float32))) == (
        "shard_map applied to the function '<lambda>' was given argument arrays with axis "
        "sizes that are not evenly divisible by the corresponding mesh axis sizes:\n\nThe mesh "
        "given has shape (2, 4) with corresponding axis names ('x', 'y').\n\nthe passed "
        "args[0] of shape float32[6], where args[0] is bound to <lambda>'s parameter 'a', "
        "corresponds to in_specs of value P('y',), which maps array axis 0 (of size 6) to mesh "
        "axis 'y' (of size 4), but 4 does not evenly divide 6\n\nArray arguments' axis sizes "
        "must be evenly divisible by the mesh axis or axes indicated by the corresponding "
        "elements of the argument's in_specs entry. Consider checking that in_specs are "
        "correct, and if so consider changing the mesh axis sizes or else padding the input "
        "and adapting '<lambda>' appropriately."
    )

    def g(a, *rest):
        return a

    h = shard_map(g, mesh=MESH, in_specs=(P("x"), P("y"), P(("x", "y"))), out_specs=P("x"))
    args = (np.ones(8, np.float32), np.ones(6, np.float32), np.ones(4, np.float32))
    message = _raises(ValueError, lambda: h(*args))
    assert (
        "* the passed args[1] of shape float32[6], where args[1] is the index 0 component of "
        "g's varargs parameter 'rest', corresponds to in_specs[1] of value P('y',), which maps "
        "array axis 0 (of size 6) to mesh axis 'y' (of size 4), but 4 does not evenly divide 6"
    ) in message
    assert (
        "* the passed args[2] of shape float32[4], where args[2] is the index 1 component of "
        "g's varargs parameter 'rest', corresponds to in_specs[2] of value P(('x', 'y'),), "
        "which maps array axis 0 (of size 4) to mesh axes ('x', 'y') (of total size 8), but 8 "
        "does not evenly divide 4"
    ) in message
