"""``export``: a jitted function traced and lowered for given argument types and
platforms, its module checked and serialized as a StableHLO portable artifact, and
packed with its calling convention into an ``Exported``."""

from __future__ import annotations

from collections.abc import Sequence

from jaxlib import _jax

from lamina.export.artifact_check import trust_artifact
from lamina.export.exported import (
    Exported,
    default_export_platform,
    expected_signature,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
)
from lamina.export.safety_checks import DisabledSafetyCheck
from lamina.export.shape_poly import is_symbolic_dim
from lamina.export.sharding_serialization import abstract_named_sharding
from lamina.interpreters import ShapeDtypeStruct, ad, config, eval_jaxpr, jit, mlir, vjp

__all__ = ["export"]

# Custom call targets whose compatibility JAX guarantees: only these may be exported
# unless a DisabledSafetyCheck.custom_call allows another.
_LAPACK = [
    f"lapack_{t}{op}_ffi"
    for op, types in (
        ("potrf", "sdcz"), ("geqrf", "sdcz"), ("getrf", "sdcz"), ("gesdd", "sdcz"),
        ("geev", "sdcz"), ("gehrd", "sdcz"), ("gees", "sdcz"), ("trsm", "sdcz"),
        ("gtsv", "sdcz"),
    )
    for t in types
] + [
    "lapack_sorgqr_ffi", "lapack_dorgqr_ffi", "lapack_cungqr_ffi", "lapack_zungqr_ffi",
    "lapack_ssyevd_ffi", "lapack_dsyevd_ffi", "lapack_cheevd_ffi", "lapack_zheevd_ffi",
    "lapack_ssytrd_ffi", "lapack_dsytrd_ffi", "lapack_chetrd_ffi", "lapack_zhetrd_ffi",
]  # fmt: skip
_GPU_SOLVERS = [
    "cu_lu_pivots_to_permutation", "cusolver_getrf_ffi", "hip_lu_pivots_to_permutation",
    "hipsolver_getrf_ffi", "cusolver_geqrf_ffi", "cusolver_orgqr_ffi", "hipsolver_geqrf_ffi",
    "hipsolver_orgqr_ffi", "cusolver_potrf_ffi", "hipsolver_potrf_ffi", "cusolver_syevd_ffi",
    "hipsolver_syevd_ffi", "cusolver_gesvd_ffi", "cusolver_gesvdj_ffi", "hipsolver_gesvd_ffi",
    "hipsolver_gesvdj_ffi", "hipsolver_gesdd_ffi", "cusolver_sytrd_ffi", "hipsolver_sytrd_ffi",
    "cusparse_gtsv2_ffi",
]  # fmt: skip
STABLE_CUSTOM_CALL_TARGETS = frozenset(
    [
        *_LAPACK,
        *_GPU_SOLVERS,
        "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement",
        "cu_threefry2x32_ffi", "hip_threefry2x32_ffi", "Eigh", "Qr",
        "ProductOfElementaryHouseholderReflectors", "LuDecomposition", "ApproxTopK",
        "stablehlo.dynamic_approx_top_k", "tf.call_tf_function", "tpu_custom_call",
        "AllocateBuffer", "mosaic_gpu_v2", "stablehlo.dynamic_reduce_window",
        "stablehlo.dynamic_rng_bit_generator", "stablehlo.dynamic_top_k", "shape_assertion",
    ]
)  # fmt: skip


def _check_custom_calls(module, disabled_checks: Sequence[DisabledSafetyCheck]) -> None:
    allowed = set(STABLE_CUSTOM_CALL_TARGETS)
    allowed.update(t for c in disabled_checks if (t := c.is_custom_call()) is not None)
    bad = []

    def walk(op):
        if op.name == "stablehlo.custom_call":
            target = mlir.ir.StringAttr(op.attributes["call_target_name"]).value
            if "ALL" not in allowed and target not in allowed:
                bad.append(f"{op} at {op.location}")
        for region in op.regions:
            for block in region:
                for inner in block:
                    walk(inner.operation)

    walk(module.operation)
    if bad:
        raise ValueError(
            "Cannot serialize code with custom calls whose targets have no "
            "compatibility guarantees. "
            "See https://docs.jax.dev/en/latest/export/export.html"
            "#compatibility-guarantees-for-custom-calls. "
            "Examples are:\n" + "\n".join(bad) + ".\n"
        )


def _has_wrapped_main(module) -> bool:
    """Whether ``main`` already calls ``_wrapped_jax_export_main`` (symbolic shapes)."""
    try:
        mlir.ir.SymbolTable(module.operation)["_wrapped_jax_export_main"]
    except KeyError:
        return False
    return True


def _wrap_main(module) -> None:
    """As JAX's exports with ordered effects: ``main`` becomes the private
    ``_wrapped_jax_export_main``, and a new ``main`` of the same type calls it."""
    inner = mlir.ir.SymbolTable(module.operation)["main"]
    inner.attributes["sym_name"] = mlir.ir.StringAttr.get("_wrapped_jax_export_main")
    inner.attributes["sym_visibility"] = mlir.ir.StringAttr.get("private")
    ftype = mlir.ir.FunctionType(mlir.ir.TypeAttr(inner.attributes["function_type"]).value)
    with mlir.ir.InsertionPoint.at_block_begin(module.body):
        main = mlir.func.FuncOp("main", ftype)
    main.attributes["sym_visibility"] = mlir.ir.StringAttr.get("public")
    for name in ("arg_attrs", "res_attrs"):
        if name in inner.attributes:
            main.attributes[name] = inner.attributes[name]
    block = main.add_entry_block()
    with mlir.ir.InsertionPoint(block):
        callee = mlir.ir.FlatSymbolRefAttr.get("_wrapped_jax_export_main")
        call = mlir.func.CallOp(list(ftype.results), callee, list(block.arguments))
        mlir.func.ReturnOp(list(call.results))


def _serialized_module(lowered, uses_dim_vars: bool, disabled_checks) -> bytes:
    """The lowered module, marked with ``jax.uses_shape_polymorphism`` and checked, as
    a portable artifact of the StableHLO version at least 4 weeks old (as JAX's)."""
    context = mlir.make_ir_context()
    with context, mlir.ir.Location.unknown(context):
        module = mlir.ir.Module.parse(lowered.as_bytecode())
        module.operation.attributes["jax.uses_shape_polymorphism"] = mlir.ir.BoolAttr.get(
            uses_dim_vars
        )
        _check_custom_calls(module, disabled_checks)
        if lowered.ordered_effects and not _has_wrapped_main(module):
            _wrap_main(module)
        target = mlir.stablehlo.get_version_from_compatibility_requirement(
            mlir.stablehlo.StablehloCompatibilityRequirement.WEEK_4
        )
        # jaxlib's serializer, as JAX's: it also moves constants to the top of each
        # function, and keeps Shardy ops as they are
        return _jax.mlir.serialize_portable_artifact(module, target, True)


def _placement_shardings(placement, n_in: int, n_out: int, kept) -> tuple:
    """The number of devices of a call placed by ``placement``, and the sharding of
    each argument and result (None where unspecified)."""
    devices = getattr(placement, "devices", None)
    if devices is None:  # one device
        return 1, (None,) * n_in, (None,) * n_out
    ins = list(placement.in_shardings)
    if len(ins) != n_in:  # the shardings of the kept arguments only
        by_kept = dict(zip(kept, ins, strict=True))
        ins = [by_kept.get(i) for i in range(n_in)]
    return len(devices), tuple(ins), tuple(placement.out_shardings or (None,) * n_out)


def _spec(aval) -> ShapeDtypeStruct:
    return ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type)


def _vjp_getter(closed_jaxpr, in_shardings, out_shardings):
    """Exports the VJP of the function ``closed_jaxpr`` computes, for the same
    platforms and checks as its primal export; over several devices, its arguments
    laid out as the primal's arguments and results, its results as the arguments."""
    shardings = {}
    named = [abstract_named_sharding(s) for s in (*in_shardings, *out_shardings)]
    if named and all(s is not None for s in named):
        shardings = dict(in_shardings=(*in_shardings, *out_shardings), out_shardings=in_shardings)

    def get_vjp(primal: Exported) -> Exported:
        n_in = len(primal.in_avals)

        def fun_vjp_jax(*args_and_out_cts_flat_jax):
            args, cts = args_and_out_cts_flat_jax[:n_in], args_and_out_cts_flat_jax[n_in:]

            def primal_fun(*xs):
                return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *xs)

            _, pullback = vjp(primal_fun, *args)
            return pullback(list(cts))

        avals = [*primal.in_avals, *(ad.tangent_aval(a) for a in primal.out_avals)]
        return export(
            jit(fun_vjp_jax, **shardings),
            platforms=primal.platforms,
            disabled_checks=primal.disabled_safety_checks,
        )(*map(_spec, avals))

    return get_vjp


def export(
    fun_jit,
    *,
    platforms: Sequence[str] | None = None,
    disabled_checks: Sequence[DisabledSafetyCheck] = (),
):
    """Returns a function that exports ``fun_jit`` (the result of ``jit``) for the
    arguments it is given (arrays, or anything with ``shape`` and ``dtype`` such as
    ``ShapeDtypeStruct``), lowered for ``platforms`` (default: the default backend's)."""
    if not (hasattr(fun_jit, "trace") and hasattr(fun_jit, "lower")):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit}")

    def do_export(*args_specs, **kwargs_specs) -> Exported:
        version = config.jax_export_calling_convention_version
        if not (
            minimum_supported_calling_convention_version
            <= version
            <= maximum_supported_calling_convention_version
        ):
            raise ValueError(
                f"The requested export calling convention version {version} is outside the "
                f"range of supported versions [{minimum_supported_calling_convention_version}"
                f"..{maximum_supported_calling_convention_version}]"
            )
        lowering_platforms = tuple(platforms or (default_export_platform(),))
        traced = fun_jit.trace(*args_specs, **kwargs_specs)
        lowering = traced.lower(lowering_platforms=lowering_platforms)
        lowered = lowering.lowered_module
        if lowered.host_callbacks:
            raise NotImplementedError("serialization of host_callbacks is not yet implemented")
        closed = traced.jaxpr
        in_avals = tuple(closed.in_avals)
        out_avals = tuple(closed.out_avals)
        # Dimension variables and the platform index are the module's global constants.
        uses_dim_vars = len(lowering_platforms) > 1 or any(
            is_symbolic_dim(d) for a in in_avals for d in a.shape
        )
        effects = list(lowered.ordered_effects)
        nr_devices, in_shardings, out_shardings = _placement_shardings(
            lowering._placement, len(in_avals), len(out_avals), lowered.kept_var_idx
        )
        in_named = tuple(map(abstract_named_sharding, in_shardings))
        out_named = tuple(map(abstract_named_sharding, out_shardings))
        exp = Exported(
            fun_name=traced.fun_name,
            in_tree=traced.in_tree,
            in_avals=in_avals,
            out_tree=traced.out_tree,
            out_avals=out_avals,
            _has_named_shardings=True,
            _in_named_shardings=in_named,
            _out_named_shardings=out_named,
            # JAX 0.10.2 leaves these unset at export (its avals carry the shardings);
            # a deserialized export has them.
            in_shardings_hlo=(None,) * len(in_avals),
            out_shardings_hlo=(None,) * len(out_avals),
            nr_devices=nr_devices,
            platforms=lowering_platforms,
            ordered_effects=tuple(effects),
            unordered_effects=tuple(e for e in closed.effects if e not in effects),
            disabled_safety_checks=tuple(disabled_checks),
            mlir_module_serialized=_serialized_module(lowered, uses_dim_vars, disabled_checks),
            calling_convention_version=version,
            module_kept_var_idx=tuple(lowered.kept_var_idx),
            uses_global_constants=uses_dim_vars,
            _get_vjp=_vjp_getter(closed, in_shardings, out_shardings),
        )
        trust_artifact(exp.mlir_module_serialized, *expected_signature(vars(exp)))
        return exp

    return do_export
