"""DLPack: sharing array buffers with other libraries (NumPy, PyTorch, CuPy, ...)
without copying.

``to_dlpack`` backs ``Array.__dlpack__``; ``from_dlpack`` takes any object with
``__dlpack__`` and ``__dlpack_device__`` and gives a lamina array sharing its memory.
jaxlib does the work: ``buffer_to_dlpack_managed_tensor`` and
``dlpack_managed_tensor_to_buffer``.
"""

from __future__ import annotations

import enum

import ml_dtypes
import numpy as np
from jaxlib import _jax, xla_client

from lamina.interpreters.runtime import backend
from lamina.interpreters.runtime.jax_in_process import without_jax_import
from lamina.interpreters.runtime.sharding import first_device
from lamina.interpreters.runtime.transfer import device_put
from lamina.ir import ShapedArray, dtypes

__all__ = [
    "SUPPORTED_DTYPES",
    "DLDeviceType",
    "dlpack_device",
    "from_dlpack",
    "is_supported_dtype",
    "to_dlpack",
]

# The element types that DLPack exchanges (as JAX 0.10.2 lists them).
SUPPORTED_DTYPES = frozenset(
    np.dtype(t)
    for t in (
        *(np.int8, np.int16, np.int32, np.int64),
        *(np.uint8, np.uint16, np.uint32, np.uint64),
        *(np.float16, ml_dtypes.bfloat16, np.float32, np.float64),
        *(np.complex64, np.complex128, np.bool_),
    )
)


def is_supported_dtype(dtype) -> bool:
    """Whether arrays of ``dtype`` can go through DLPack."""
    if dtype is None:  # np.dtype(None) would quietly mean float64
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in SUPPORTED_DTYPES


class DLDeviceType(enum.IntEnum):
    """Device types of the DLPack standard that lamina's platforms use."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLROCM = 10


_PLATFORMS = {
    DLDeviceType.kDLCPU: "cpu",
    DLDeviceType.kDLCUDA: "cuda",
    DLDeviceType.kDLCUDAHost: "cuda",
    DLDeviceType.kDLROCM: "rocm",
}


def _host_view(raw) -> np.ndarray:
    """jaxlib's host view of a single-device array (without letting it import JAX)."""
    with without_jax_import():
        return raw._single_device_array_to_np_array_did_copy()[0]


def _only_device(x):
    devices = x.sharding.device_set
    if len(devices) != 1:
        raise BufferError(
            "to_dlpack can only pack a dlpack tensor from an array on a singular device, "
            f"but an array with a Sharding over {len(devices)} devices was provided."
        )
    return first_device(x.sharding)


def dlpack_device(x) -> tuple[DLDeviceType, int]:
    """``x.__dlpack_device__()``: the DLPack device type and id of a one-device array."""
    device = _only_device(x)
    if device.platform == "cpu":
        return DLDeviceType.kDLCPU, 0
    if device.platform == "gpu" or device.client.platform in ("cuda", "rocm", "gpu"):
        version = device.client.platform_version
        if "rocm" in version:
            kind = DLDeviceType.kDLROCM
        elif x.sharding.memory_kind == "pinned_host":
            kind = DLDeviceType.kDLCUDAHost
        else:
            kind = DLDeviceType.kDLCUDA
        return kind, device.local_hardware_id
    raise BufferError(f"__dlpack__ device only supported for CPU and GPU, got {device.platform}")


def to_dlpack(x, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule for the one-device array ``x`` (``x.__dlpack__(...)``)."""
    x._check_if_deleted()
    source = _only_device(x)
    target = source
    if dl_device is not None and tuple(dl_device) != tuple(dlpack_device(x)):
        kind, hardware_id = dl_device
        if kind not in _PLATFORMS:
            raise BufferError(
                "The device specification passed to to_dlpack contains an unsupported "
                f"device type (DLDeviceType: {kind})"
            )
        target = backend.get_backend(_PLATFORMS[kind]).device_from_local_hardware_id(hardware_id)
    if target != source and copy is False:
        raise ValueError(
            f"Specified device={target!r} which requires a copy since the source device is "
            f"{source!r}, however copy=False. Set copy=True or copy=None to perform the "
            "requested operation."
        )
    if target != source or copy:
        semantics = xla_client.ArrayCopySemantics.ALWAYS_COPY
        sharding = xla_client.SingleDeviceSharding(target)
        (x,) = xla_client.batched_copy_array_to_devices_with_sharding(
            [x], [sharding._internal_device_list], [sharding], [semantics]
        )
    return _jax.buffer_to_dlpack_managed_tensor(x._arrays[0], stream=stream)


def from_dlpack(external, device=None, copy: bool | None = None):
    """A lamina array sharing the memory of ``external`` (anything with ``__dlpack__``
    and ``__dlpack_device__``), or a copy of it on ``device`` when one is given."""
    if not (hasattr(external, "__dlpack__") and hasattr(external, "__dlpack_device__")):
        raise TypeError(
            "The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods."
        )
    kind, hardware_id = external.__dlpack_device__()
    if kind not in _PLATFORMS:
        raise TypeError(
            "Array passed to from_dlpack is on unsupported device type "
            f"(DLDeviceType: {kind}, array: {external}"
        )
    source = backend.get_backend(_PLATFORMS[kind]).device_from_local_hardware_id(hardware_id)
    if device is not None and device != source and copy is False:
        raise ValueError(
            f"Specified device={device!r} which requires a copy since the source device is "
            f"{source!r}, however copy=False. Set copy=True or copy=None to perform the "
            "requested operation."
        )
    stream = None if kind != DLDeviceType.kDLCUDA else source.get_stream_for_external_ready_events()
    capsule = external.__dlpack__(stream=stream)
    raw = _jax.dlpack_managed_tensor_to_buffer(capsule, source, stream, copy, int(kind))
    # jaxlib's array has no aval: give it one (no copy), unless x64 mode wants a new dtype.
    shape, dtype = _shape_and_dtype(external, raw)
    if dtypes.canonicalize_dtype(dtype) == dtype:
        sharding = xla_client.SingleDeviceSharding(source)
        array = xla_client.ArrayImpl(
            ShapedArray(shape, dtype),
            sharding,
            [raw],
            committed=device is not None,
            _skip_checks=True,
        )
    else:
        value = _host_view(raw)
        array = device_put(value, source if device is not None else None)
    return array if device is None or device == source else device_put(array, device)


def _shape_and_dtype(external, raw) -> tuple[tuple[int, ...], np.dtype]:
    """Read from ``external`` when it speaks NumPy dtypes, else from a host view of
    ``raw`` (free on CPU)."""
    try:
        return tuple(external.shape), np.dtype(external.dtype)
    except (AttributeError, TypeError):
        view = _host_view(raw)
        return view.shape, view.dtype
