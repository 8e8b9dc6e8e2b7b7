"""``Exported``: a function lowered to StableHLO together with what is needed to call
it later (its argument and result types and pytrees, platforms, effects, the
calling-convention version), serializable to bytes and back (``deserialize``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from lamina.export.artifact_check import check_artifact
from lamina.export.calling import call_exported
from lamina.export.safety_checks import DisabledSafetyCheck
from lamina.export.serialization import read_exported, write_exported
from lamina.export.shape_poly import SymbolicScope, symbolic_shape
from lamina.interpreters import default_backend, mlir
from lamina.sharding import NamedSharding

__all__ = [
    "Exported",
    "default_export_platform",
    "deserialize",
    "expected_signature",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
]

# The calling-convention versions this library writes and reads (JAX 0.10.2's).
minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10


def default_export_platform() -> str:
    """The platform exports are made for by default: the default backend's
    (``'cpu'``, ``'cuda'``, ``'rocm'`` or ``'tpu'``)."""
    platform = default_backend()
    return {"gpu": "cuda"}.get(platform, platform)


@dataclasses.dataclass(frozen=True)
class Exported:
    """A function lowered to StableHLO for some platforms, with its calling convention.

    ``in_avals`` / ``out_avals`` are the flat argument and result types, ``in_tree`` /
    ``out_tree`` their pytrees (the arguments as ``(args, kwargs)``);
    ``mlir_module_serialized`` is the module as a StableHLO portable artifact, whose
    ``main`` takes only the arguments listed in ``module_kept_var_idx``.
    """

    fun_name: str
    in_tree: Any
    in_avals: tuple
    out_tree: Any
    out_avals: tuple
    _has_named_shardings: bool
    _in_named_shardings: tuple
    _out_named_shardings: tuple
    in_shardings_hlo: tuple
    out_shardings_hlo: tuple
    nr_devices: int
    platforms: tuple[str, ...]
    ordered_effects: tuple
    unordered_effects: tuple
    disabled_safety_checks: Sequence[DisabledSafetyCheck]
    mlir_module_serialized: bytes
    calling_convention_version: int
    module_kept_var_idx: tuple[int, ...]
    uses_global_constants: bool
    _get_vjp: Callable[[Exported], Exported] | None

    def mlir_module(self, serialized: bool = True) -> Any:
        """The module as text (or, with ``serialized=False``, as an MLIR module)."""
        context = mlir.make_ir_context()
        module = mlir.stablehlo.deserialize_portable_artifact(context, self.mlir_module_serialized)
        if not serialized:
            return module
        with context:
            return mlir.module_to_string(module, enable_debug_info=True)

    def __str__(self):
        return f"Exported(fun_name={self.fun_name}, ...)"

    def in_shardings_jax(self, mesh) -> Sequence[Any]:
        """The shardings of the arguments on ``mesh`` (None where unspecified)."""
        return _on_mesh(self._in_named_shardings, mesh)

    def out_shardings_jax(self, mesh) -> Sequence[Any]:
        """The shardings of the results on ``mesh`` (None where unspecified)."""
        return _on_mesh(self._out_named_shardings, mesh)

    def has_vjp(self) -> bool:
        """Whether this export can give its VJP (``vjp()``)."""
        return self._get_vjp is not None

    def vjp(self) -> Exported:
        """The export of this function's VJP: it takes the primal arguments (flat) and a
        cotangent per result, and returns a cotangent per argument."""
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        return self._get_vjp(self)

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The bytes of this export, holding ``vjp_order`` orders of its VJP too (2
        allows second-order reverse-mode differentiation after deserializing)."""
        return bytearray(write_exported(self, vjp_order))

    def call(self, *args, **kwargs):
        """Run the exported function on arrays of its argument types and pytree (inside
        ``jit`` too, and differentiable in reverse mode)."""
        return call_exported(self)(*args, **kwargs)


def _on_mesh(shardings, mesh) -> tuple:
    return tuple(
        None if s is None else NamedSharding(mesh, s.spec, memory_kind=s.memory_kind)
        for s in shardings
    )


def _hlo_sharding(sharding, aval):
    if sharding is None:
        return None
    try:
        return sharding._to_xla_hlo_sharding(aval.ndim)
    except Exception as e:  # a sharding of untrusted bytes that does not fit the type
        raise ValueError(f"the sharding {sharding} does not fit {aval.str_short()}: {e}") from None


def _hlo_shardings(shardings, avals) -> tuple:
    """The ``HloSharding`` of each named sharding (None where unspecified)."""
    return tuple(map(_hlo_sharding, shardings, avals))


def _shape_parser(scope: SymbolicScope):
    """Reads serialized shapes (dimensions as strings: ``3``, ``b``, ``2*b``) into
    shapes whose symbolic dimensions share ``scope``."""

    def parse(dims: Sequence[str]) -> tuple:
        text = ", ".join(dims)
        try:
            shape = tuple(symbolic_shape(text, scope=scope)) if dims else ()
        except Exception as e:  # a malformed shape string of untrusted bytes
            raise ValueError(f"cannot read the shape ({text}): {e}") from None
        if len(shape) != len(dims) or any(isinstance(d, int) and d < 0 for d in shape):
            raise ValueError(f"cannot read the shape ({text})")
        return shape

    return parse


def expected_signature(fields) -> tuple[int, int]:
    """How many inputs and results the module's ``main`` has by the calling convention:
    the platform index (several platforms), a token per ordered effect, the kept
    arguments; a token per ordered effect, the results."""
    n_tokens = len(fields["ordered_effects"])
    n_platform = 1 if len(fields["platforms"]) > 1 else 0
    n_in = n_platform + n_tokens + len(fields["module_kept_var_idx"])
    return n_in, n_tokens + len(fields["out_avals"])


def _from_fields(fields: dict[str, Any]) -> Exported:
    vjp = fields.pop("vjp")
    signature = check_artifact(fields["mlir_module_serialized"])
    if (signature.num_inputs, signature.num_results) != expected_signature(fields):
        n_in, n_out = expected_signature(fields)
        raise ValueError(
            f"the serialized module's main takes {signature.num_inputs} inputs and gives "
            f"{signature.num_results} results, but the export describes {n_in} and {n_out}"
        )
    return Exported(
        **fields,
        _has_named_shardings=True,
        in_shardings_hlo=_hlo_shardings(fields["_in_named_shardings"], fields["in_avals"]),
        out_shardings_hlo=_hlo_shardings(fields["_out_named_shardings"], fields["out_avals"]),
        _get_vjp=None if vjp is None else (lambda _: _from_fields(dict(vjp))),
    )


def deserialize(blob: bytes | bytearray) -> Exported:
    """The ``Exported`` that ``Exported.serialize`` (lamina's or JAX's) wrote into
    ``blob``; malformed bytes raise ``ValueError``. Only deserialize trusted bytes: the
    module may call any custom call target registered in the process."""
    return _from_fields(read_exported(blob, _shape_parser(SymbolicScope())))
