"""Moving values between the host and devices: ``device_put``, ``device_get``,
``block_until_ready`` and ``live_arrays``.

Host values become arrays through jaxlib's ``batched_device_put``, which copies (or, on
CPU, for suitably aligned NumPy arrays, aliases) host memory into device buffers
without a computation. Their types follow JAX: Python ``int``/``float``/``complex``
give weakly typed arrays of the default dtype (``OverflowError`` for an ``int`` out of
its range), Python ``bool`` a strong ``bool``; NumPy arrays and scalars keep their
dtype, made canonical (64-bit types become 32-bit ones unless x64 mode is on).

jaxlib canonicalizes the dtype of what it is given by itself, whatever ``aval`` says,
so values are converted to the dtype of their ``aval`` here first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
from jaxlib import _jax, xla_client

from lamina.interpreters.core.tracing import JAX_ARRAY_ABSTRACTIFY, Tracer
from lamina.interpreters.runtime import backend
from lamina.interpreters.runtime.device_put_primitive import device_put_p, traced_device_put
from lamina.interpreters.runtime.extended import is_extended_value, wrap_physical
from lamina.interpreters.runtime.partitioning import check_fits
from lamina.interpreters.runtime.sharding import Sharding, sharding_for_device
from lamina.ir import ShapedArray, dtypes, spec_placement, tree_util

__all__ = [
    "block_until_ready",
    "copy_to_host_async",
    "device_get",
    "device_put",
    "live_arrays",
    "place",
    "put_on_device",
]

ArrayImpl = xla_client.ArrayImpl
# An array that exists keeps its dtype in promotion (an allowed explicit 64-bit one too).
dtypes.register_uncanonicalized_type(ArrayImpl)
dtypes.register_uncanonicalized_type(Tracer)
_VALID_DTYPES = frozenset(dtypes.ALL_DTYPES)
_PYTHON_SCALARS = (bool, int, float, complex)  # bool first: it is an int too


def host_value(x: Any) -> tuple[np.ndarray, ShapedArray]:
    """``x`` (a Python or NumPy scalar, or a NumPy array) as a NumPy array of its
    canonical dtype, with its abstract value."""
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype not in _VALID_DTYPES:
            raise TypeError(
                f"Dtype {x.dtype} is not a valid JAX array type. Only arrays of numeric "
                "types are supported by JAX."
            )
        value = np.asarray(x, dtypes.canonicalize_dtype(x.dtype))
        return value, ShapedArray(value.shape, value.dtype)
    if isinstance(x, _PYTHON_SCALARS):
        python_type = next(t for t in _PYTHON_SCALARS if isinstance(x, t))
        dtype = dtypes.scalar_type_to_dtype(python_type, x)
        return np.asarray(x, dtype), ShapedArray((), dtype, weak_type=python_type is not bool)
    if hasattr(x, "__jax_array__"):
        raise ValueError(JAX_ARRAY_ABSTRACTIFY)
    if isinstance(x, str):
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")
    raise TypeError(
        f"Cannot interpret value of type {type(x)} as an abstract array; it does not have "
        "a dtype attribute"
    )


def placement(device: Any) -> tuple[Any, bool]:
    """(sharding, committed) for a ``device=`` argument."""
    if device is None:
        return sharding_for_device(backend.default_device()), False
    if isinstance(device, xla_client.Device):
        return sharding_for_device(device), True
    if isinstance(device, Sharding):
        return device, True
    sharding = spec_placement(device)  # a PartitionSpec over the mesh in force
    if sharding is not None:
        return sharding, True
    raise TypeError(
        f"device_put's device must be a Device, a Sharding or None, got {device!r} "
        f"of type {type(device).__name__}"
    )


def _put_host_value(value: np.ndarray, aval: ShapedArray, sharding, committed: bool,
                    x64: bool = False, copy: bool = False):  # fmt: skip
    devices = list(sharding._addressable_device_assignment)
    if sharding.is_fully_replicated:
        pieces = [value] * len(devices)
    else:
        indices = sharding.addressable_devices_indices_map(aval.shape)
        pieces = [value[indices[d]] for d in devices]
    return xla_client.batched_device_put(
        aval, sharding, pieces, devices, committed, copy,
        enable_x64=x64 or dtypes.x64_enabled(),
    )  # fmt: skip


def place(x: Any, sharding, committed: bool = False):
    """``x`` (an array or a host value, not of an extended dtype) laid out by
    ``sharding``, moved straight there (not through the default device)."""
    if type(x) is ArrayImpl:
        if x._sharding is sharding or x._sharding == sharding:
            return x
        return copy_array(x, sharding, committed=committed)
    value, aval = host_value(x)
    return _put_host_value(value, aval, sharding, committed)


def copy_array(x, sharding, committed: bool = True):
    """``x`` placed by ``sharding``: buffers copied device to device when the layout is
    the same (reused when the devices are too), else through the host."""
    x._check_if_deleted()
    aval = x.aval
    if getattr(aval, "type_sharding", None) is not None:  # the new layout gives the type
        aval = ShapedArray(aval.shape, aval.dtype, aval.weak_type, aval.vma)
    same_layout = sharding.num_devices == x.sharding.num_devices and (
        sharding.num_devices == 1
        or sharding._to_xla_hlo_sharding(x.ndim) == x.sharding._to_xla_hlo_sharding(x.ndim)
    )
    if not same_layout:
        return _put_host_value(x._value, aval, sharding, committed, x64=True)
    copies = xla_client.batched_copy_array_to_devices_with_sharding(
        [x],
        [sharding._internal_device_list],
        [sharding],
        [xla_client.ArrayCopySemantics.REUSE_INPUT],
    )
    copy = copies[0]
    if copy is x or copy._committed != committed or aval is not x.aval:  # a new array, as asked
        pieces = [copy] if sharding.num_devices == 1 else copy._arrays
        copy = ArrayImpl(aval, sharding, pieces, committed=committed, _skip_checks=True)
    return copy


@contextlib.contextmanager
def _explicit(kind: str) -> Iterator[None]:
    """Within the block, jaxlib's transfer guards count transfers as explicit ones
    (``kind`` is "explicit_device_put" or "explicit_device_get")."""
    state = _jax.guard_lib.thread_local_state()
    previous = getattr(state, kind)
    setattr(state, kind, True)
    try:
        yield
    finally:
        setattr(state, kind, previous)


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: bool | None = None) -> Any:  # fmt: skip
    """Put every leaf of the pytree ``x`` on a device, as an array.

    With ``device=None`` values go to the default device *uncommitted* (later
    computations may move them) and arrays are returned as they are; with a device or a
    sharding, the results are *committed* to it. Its transfers are explicit ones for
    the ``jax_transfer_guard`` options.
    """
    del src, donate, may_alias  # accepted for JAX compatibility; copies are cheap here
    with _explicit("explicit_device_put"):
        return put_on_device(x, device)


def put_on_device(x: Any, device: Any = None) -> Any:
    """:func:`device_put` for lamina's own (implicit) transfers."""
    leaves, tree = tree_util.tree_flatten(x)
    if any(isinstance(leaf, Tracer) for leaf in leaves):
        return tree_util.tree_unflatten(tree, traced_device_put(leaves, device))
    sharding, committed = placement(device)

    def put(leaf):
        if isinstance(leaf, ArrayImpl):
            return leaf if device is None else copy_array(leaf, sharding)
        if is_extended_value(leaf):  # PRNG keys: their data moves
            return wrap_physical(leaf.dtype, put(leaf._base_array))
        if getattr(leaf, "dtype", None) == dtypes.float0:  # stays on the host, as in JAX
            return np.zeros(np.shape(leaf), dtypes.float0)
        value, aval = host_value(leaf)
        if sharding.num_devices > 1:
            check_fits(sharding, aval.shape, "device_put args")
        return _put_host_value(value, aval, sharding, committed)

    return tree_util.tree_map(put, x)


def _device_put_impl(*xs, devices, srcs, copy_semantics):
    """The impl rule of ``device_put_p``: each value moved as :func:`device_put` does."""
    del srcs, copy_semantics
    with _explicit("explicit_device_put"):
        return [put_on_device(x, device) for x, device in zip(xs, devices, strict=True)]


device_put_p.def_impl(_device_put_impl)


def device_put_value(
    value: np.ndarray, *, weak_type: bool = False, device: Any = None, dtype: Any = None
):
    """One NumPy array on a device, keeping its (canonicalized) dtype and ``weak_type``.
    A ``dtype`` that is not canonical (a 64-bit one explicitly requested with x64 off
    and allowed by ``jax_explicit_x64_dtypes``) is kept: ``value`` is converted to it.
    The array owns a copy of ``value`` (as ``jnp.array`` and ``jnp.asarray`` do in JAX,
    never sharing host memory on CPU), so it can be donated."""
    sharding, committed = placement(device)
    if dtype is not None and dtypes.canonicalize_dtype(dtype) != dtype:
        value = np.asarray(value, dtype)
        aval = ShapedArray(value.shape, value.dtype, weak_type=weak_type)
        return _put_host_value(value, aval, sharding, committed, x64=True, copy=True)
    value, aval = host_value(value)
    aval = aval.update(weak_type=weak_type)
    return _put_host_value(value, aval, sharding, committed, copy=True)


def device_get(x: Any) -> Any:
    """Every array leaf of the pytree ``x`` as a (read-only) NumPy array; other leaves
    are returned as they are. Copies to the host all start before any is waited for."""
    with _explicit("explicit_device_get"):
        for leaf in tree_util.tree_leaves(x):
            if isinstance(leaf, ArrayImpl):
                leaf.copy_to_host_async()
        return tree_util.tree_map(lambda v: v._value if isinstance(v, ArrayImpl) else v, x)


def copy_to_host_async(x: Any) -> Any:
    """Start copying every array leaf of the pytree ``x`` to the host (a later
    ``device_get`` or ``np.asarray`` then waits less); returns ``x`` unchanged. Leaves
    that are not arrays with a ``copy_to_host_async`` method are left alone."""
    for leaf in tree_util.tree_leaves(x):
        copy = getattr(leaf, "copy_to_host_async", None)
        if isinstance(leaf, ArrayImpl) and copy is not None:
            copy()
    return x


def block_until_ready(x: Any) -> Any:
    """Wait until every array in the pytree ``x`` has its value computed; returns ``x``."""
    arrays = []
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, ArrayImpl):
            arrays.append(leaf)
        elif hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    xla_client.batched_block_until_ready(arrays)
    return x


def live_arrays(platform: str | None = None) -> list:
    """The arrays alive on ``platform``'s devices (default: the default backend)."""
    return backend.get_backend(platform).live_arrays()
