"""Foreign-function targets: handlers registered with XLA's custom-call registry.

A handler is a C function compiled against XLA's FFI headers (shipped with jaxlib, see
:func:`include_dir`), handed over as a ``PyCapsule`` holding its address. Registering
it under a name makes ``stablehlo.custom_call @name`` run it; ``lamina.ffi.ffi_call``
emits such calls. Registration goes through jaxlib's ``xla_client``, which keeps
registrations for a platform whose client does not exist yet until it starts.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any, NotRequired, TypedDict

import jaxlib
from jaxlib import xla_client

__all__ = [
    "TypeRegistration",
    "include_dir",
    "pycapsule",
    "register_ffi_target",
    "register_ffi_target_as_batch_partitionable",
    "register_ffi_type",
    "register_ffi_type_id",
]


def register_ffi_target(
    name: str, fn: Any, platform: str = "cpu", api_version: int = 1, **kwargs: Any
) -> None:
    """Register the handler ``fn`` (a PyCapsule, or a dict from FFI stage names such as
    ``"execute"`` to capsules) as the custom-call target ``name`` on ``platform``.
    ``api_version`` 1 is the typed FFI, 0 the older untyped custom-call API; other
    keyword arguments go to ``xla_client.register_custom_call_target``."""
    return xla_client.register_custom_call_target(name, fn, platform, api_version, **kwargs)


class TypeRegistration(TypedDict):
    """An FFI user type: ``type_id`` (a capsule of its ``XLA_FFI_TypeId``) and, optionally,
    ``type_info`` (a capsule of its ``XLA_FFI_TypeInfo``)."""

    type_id: Any
    type_info: NotRequired[Any]


def register_ffi_type_id(name: str, obj: Any, platform: str = "cpu") -> None:
    """Refused: jaxlib 0.10.2 registers types only through :func:`register_ffi_type`."""
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def register_ffi_type(
    name: str, type_registration: TypeRegistration, platform: str = "cpu"
) -> None:
    """Register the user type ``name`` (see :class:`TypeRegistration`) for FFI handlers
    on ``platform``."""
    return xla_client.register_custom_type(name, type_registration, platform=platform)


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    """Declare the target ``name`` batch partitionable: a sharded call may run it on each
    shard of its leading (batch) dimensions independently."""
    xla_client.register_custom_call_as_batch_partitionable(name)


def pycapsule(funcptr):
    """A ``PyCapsule`` holding the address of ``funcptr`` (a function of a library loaded
    with ``ctypes``), as :func:`register_ffi_target` takes it."""
    destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = (ctypes.c_void_p, ctypes.c_char_p, destructor)
    return new_capsule(funcptr, None, destructor(0))


def include_dir() -> str:
    """The folder of the C++ headers jaxlib ships (``xla/ffi/api/ffi.h``, ...)."""
    if jaxlib.__file__ is not None:
        root = os.path.dirname(os.path.abspath(jaxlib.__file__))
    elif getattr(jaxlib, "__path__", None):
        root = next(iter(jaxlib.__path__))
    else:
        raise RuntimeError("Cannot determine jaxlib directory: it has no __file__ or __path__")
    return os.path.join(root, "include")
