"""What jaxlib's C++ ``pjit`` dispatch needs from lamina, shared by ``jit`` and eager
primitive dispatch.

``_jax.pjit(name, fun, cache_miss, static_argnums, static_argnames, cache_key,
registry, shard_arg, cache)`` makes a callable that, for arguments it has seen before
(same tree structure under :data:`registry`, same shapes, dtypes, weak types, static
values and trace context), runs the cached executable entirely in C++. On a miss it
calls ``cache_miss(*args, **kwargs)``, which returns ``(outputs, FastpathData or None,
False)``: the :class:`FastpathData` (read by field name) says how to run the
executable next time. :func:`shard_arg` is called for arguments that are not arrays
yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from jaxlib import _jax, xla_client

from lamina.interpreters.runtime.extended import wrap_physical
from lamina.interpreters.runtime.transfer import copy_array, place, put_on_device

__all__ = ["CacheKey", "FastpathData", "register_extended_class", "registry", "shard_arg"]

ArrayImpl = xla_client.ArrayImpl

# The C++ path's own pytree registry: the built-in containers, and concrete arrays of
# extended dtypes (PRNG keys) as nodes over their physical data, so that the executable,
# which takes and returns that data, runs on them without Python.
registry = _jax.pytree.PyTreeRegistry()
_extended_classes: set[type] = set()


def register_extended_class(cls: type) -> None:
    """Make arrays of class ``cls`` (of an extended dtype) nodes of :data:`registry`."""
    if cls not in _extended_classes:
        registry.register_node(
            cls,
            lambda x: ((x._base_array,), x.aval.dtype),
            lambda dtype, children: wrap_physical(dtype, children[0]),
        )
        _extended_classes.add(cls)


class FastpathData(NamedTuple):
    xla_executable: Any
    out_pytree_def: Any
    in_shardings: Sequence[Any]
    out_shardings: Sequence[Any]
    out_avals: Sequence[Any]
    out_committed: Sequence[bool]
    kept_var_bitvec: Sequence[bool]
    in_device_local_layouts: Sequence[Any]
    const_args: Sequence[Any]


class CacheKey:
    """Which pjit callables may share C++ cache entries: none (compared by identity)."""

    __slots__ = ("__weakref__",)


def shard_arg(x, sharding, layout):
    """The C++ path's hook for arguments that are not arrays already (NumPy, scalars)."""
    if type(x) is ArrayImpl:
        if x._sharding is sharding or x._sharding == sharding:
            return x
        return copy_array(x, sharding, committed=False)
    if sharding.num_devices > 1:
        return place(x, sharding)
    a = put_on_device(x)
    return a if a._sharding == sharding else copy_array(a, sharding, committed=False)
