"""``ffi_call``: calling a foreign function (an XLA FFI custom-call target) from a program.

``ffi_call(target, result_shape_dtypes, ...)(*args, **attributes)`` binds one
``ffi_call`` equation, lowered to ``stablehlo.custom_call @target``. Its params are JAX
0.10.2's: the result types, the layouts (minor-to-major, as XLA takes them; the user
gives major-to-minor), input/output aliases, the custom-call API version (4: the typed
FFI, whose keyword attributes travel in ``mhlo.backend_config``), an opaque
``legacy_backend_config`` for older APIs, ``has_side_effect`` (an effect that keeps an
unused call in the program) and ``vmap_method``, how the call batches:

- ``sequential`` / ``sequential_unrolled``: a ``scan`` calling the target per element;
- ``expand_dims``: batched operands keep their batch axis first, unbatched operands get
  a leading axis of size 1, and the target is called once;
- ``broadcast_all``: as ``expand_dims``, unbatched operands broadcast to the batch size;
- ``legacy_vectorized``: one call, unbatched operands as they are;
- ``None``: no batching (``NotImplementedError`` under ``vmap``).

The call has no derivative: ``custom_jvp``/``custom_vjp`` give it one.
:func:`ffi_lowering` and :func:`build_ffi_lowering_function` make lowering rules for
primitives of one's own that lower to a target.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lamina.interpreters import (
    def_standard_impl,
    mlir_builders,
    moveaxis,
    shaped_abstractify,
    typeof,
)
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import (
    AbstractToken,
    Effect,
    Primitive,
    abstract_token,
    control_flow_allowed_effects,
    lowerable_effects,
    no_effects,
)
from lamina.lax.base.filling import broadcast
from lamina.lax.control_flow.scan import scan
from lamina.lax.linalg import _lapack

__all__ = ["build_ffi_lowering_function", "ffi_call", "ffi_call_p", "ffi_lowering"]

_VMAP_METHODS = [
    "sequential",
    "sequential_unrolled",
    "expand_dims",
    "broadcast_all",
    "legacy_vectorized",
    None,
]


# ---------------------------------------------------------------- layouts


def _shape(aval) -> tuple[int, ...]:
    return () if isinstance(aval, AbstractToken) else tuple(aval.shape)


def _layout_for_lowering(aval, layout=None) -> tuple[int, ...]:
    """A layout in XLA's minor-to-major order: row-major by default; a ``Layout``-like
    object (``major_to_minor``, ``tiling``) reversed; a sequence taken as minor-to-major."""
    if layout is None:
        return tuple(reversed(range(len(_shape(aval)))))
    if hasattr(layout, "major_to_minor"):
        if getattr(layout, "tiling", None) is not None:
            raise ValueError("The FFI does not support layouts with tiling")
        return tuple(layout.major_to_minor[::-1])
    return tuple(layout)


def _user_layouts(avals, layouts) -> tuple[tuple[int, ...], ...]:
    """``ffi_call``'s layouts (major-to-minor sequences) in minor-to-major order."""
    return tuple(
        _layout_for_lowering(a, lay if lay is None or hasattr(lay, "major_to_minor") else lay[::-1])
        for a, lay in zip(avals, layouts, strict=True)
    )


# ---------------------------------------------------------------- attributes


class HashableArray:
    """A NumPy array attribute, hashed and compared by value (params must hash)."""

    def __init__(self, val):
        self.val = np.array(val, copy=True)
        self.val.setflags(write=False)

    def __repr__(self):
        return f"HashableArray({self.val!r})"

    def __hash__(self):
        return hash((self.val.shape, self.val.dtype, self.val.tobytes()))

    def __eq__(self, other):
        return (
            isinstance(other, HashableArray)
            and self.val.shape == other.val.shape
            and self.val.dtype == other.val.dtype
            and np.array_equal(self.val, other.val)
        )


class FrozenDict(Mapping):
    """A dict attribute, immutable and hashable."""

    def __init__(self, d):
        self._d = dict(d)

    def __getitem__(self, key):
        return self._d[key]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def __hash__(self):
        return hash(tuple(sorted(self._d.items())))

    def __repr__(self):
        return f"FrozenDict({self._d!r})"


def _hashable_attributes(kwargs: dict) -> tuple[tuple[str, Any], ...]:
    out = []
    for k, v in sorted(kwargs.items()):
        if isinstance(v, np.ndarray):
            v = HashableArray(v)
        elif isinstance(v, dict):
            v = FrozenDict(v)
        else:
            try:
                hash(v)
            except TypeError as e:
                raise TypeError(f"Non-hashable keyword argument to ffi_call {k}: {v}") from e
        out.append((k, v))
    return tuple(out)


def _plain(v):
    if isinstance(v, HashableArray):
        return v.val
    if isinstance(v, FrozenDict):
        return dict(v)
    return v


def _scalar_attribute(value: np.generic | np.ndarray) -> ir.Attribute:
    element = mlir_builders.dtype_to_ir_type(value.dtype)
    if isinstance(element, ir.IntegerType):
        return ir.IntegerAttr.get(element, int(value))
    if isinstance(element, ir.FloatType):
        return ir.FloatAttr.get(element, float(value))
    raise TypeError(f"Unsupported scalar attribute type: {type(value)}")


def ir_attribute(value) -> ir.Attribute:
    """An MLIR attribute for a Python or NumPy value: Python ints are ``i64``, floats
    ``f64``, bools ``i1``; NumPy scalars keep their type, arrays become dense elements,
    dtypes types; strings, dicts and sequences map to their attribute kinds."""
    value = _plain(value)
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, ir.Type):
        return ir.TypeAttr.get(value)
    if isinstance(value, (str, bytes)):
        return ir.StringAttr.get(value)
    if isinstance(value, (bool, int, float, complex)):
        kinds = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}
        kind = next(k for t, k in kinds.items() if isinstance(value, t))
        return _scalar_attribute(np.array(value, kind))
    if isinstance(value, np.dtype):
        return ir.TypeAttr.get(mlir_builders.dtype_to_ir_type(value))
    if isinstance(value, np.generic):
        return _scalar_attribute(value)
    if isinstance(value, np.ndarray):
        if 0 in value.strides and value.size > 0:
            raise ValueError("NumPy arrays with zero strides are not supported as MLIR attributes")
        element = mlir_builders.dtype_to_ir_type(value.dtype)
        return ir.DenseElementsAttr.get(
            np.ascontiguousarray(value), type=element, shape=value.shape
        )
    if isinstance(value, Mapping):
        return ir.DictAttr.get({k: ir_attribute(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return ir.ArrayAttr.get([ir_attribute(v) for v in value])
    raise TypeError(f"No attribute handler defined for type: {type(value)}")


# ---------------------------------------------------------------- lowering


def _index_array(layout) -> ir.Attribute:
    return ir.DenseIntElementsAttr.get(
        np.atleast_1d(np.asarray(layout, dtype=np.int64)), type=ir.IndexType.get()
    )


def custom_call(
    call_target_name: str,
    *,
    result_types: Sequence[ir.Type],
    operands: Sequence[ir.Value],
    backend_config: str | bytes | dict | None = "",
    has_side_effect: bool = False,
    result_shapes: Sequence[ir.Value] | None = None,
    called_computations: Sequence[str] = (),
    api_version: int = 2,
    operand_output_aliases: dict[int, int] | None = None,
    operand_layouts: Sequence[Sequence[int]] | None = None,
    result_layouts: Sequence[Sequence[int]] | None = None,
    extra_attributes: dict[str, ir.Attribute] | None = None,
):
    """A ``stablehlo.custom_call`` op. A dict ``backend_config`` (the typed FFI's
    attributes) goes in ``mhlo.backend_config``, with API version 1 on the op itself
    (XLA reads the dict as the typed FFI); a string is the opaque config of older APIs."""
    operands = list(operands)
    if backend_config is None:
        config_attr = ir.StringAttr.get("")
    elif isinstance(backend_config, (str, bytes)):
        config_attr = ir.StringAttr.get(backend_config)
    elif isinstance(backend_config, dict):
        config_attr = ir.StringAttr.get("")
        api_version = 1
    else:
        raise ValueError(f"custom_call backend_config unexpected type: {backend_config}")
    attributes = {
        "call_target_name": ir.StringAttr.get(call_target_name),
        "has_side_effect": ir.BoolAttr.get(has_side_effect),
        "backend_config": config_attr,
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), api_version),
        "called_computations": ir.ArrayAttr.get(
            [ir.FlatSymbolRefAttr.get(name) for name in called_computations]
        ),
    }
    if operand_output_aliases is not None:
        attributes["output_operand_aliases"] = ir.ArrayAttr.get(
            [
                hlo.OutputOperandAlias.get(
                    output_tuple_indices=[out] if len(result_types) > 1 else [],
                    operand_index=operand,
                    operand_tuple_indices=[],
                )
                for operand, out in operand_output_aliases.items()
            ]
        )
    if extra_attributes is not None:
        attributes.update(extra_attributes)
    if result_shapes is not None:
        first = len(operands)
        attributes["indices_of_shape_operands"] = ir.DenseIntElementsAttr.get(
            np.arange(first, first + len(result_shapes), dtype=np.int64)
        )
        if operand_layouts is not None:
            operand_layouts = [*operand_layouts, *[(0,)] * len(result_shapes)]
        operands += list(result_shapes)
    if operand_layouts is not None:
        attributes["operand_layouts"] = ir.ArrayAttr.get([_index_array(x) for x in operand_layouts])
    if result_layouts is not None:
        attributes["result_layouts"] = ir.ArrayAttr.get([_index_array(x) for x in result_layouts])
    op = hlo.CustomCallOp.build_generic(
        results=list(result_types), operands=operands, attributes=attributes
    )
    if isinstance(backend_config, dict):
        op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(backend_config)
    return op


def build_ffi_lowering_function(
    call_target_name: str,
    *,
    operand_layouts=None,
    result_layouts=None,
    backend_config=None,
    skip_ffi_layout_processing: bool = False,
    **lowering_args: Any,
):
    """A function ``(ctx, *operands, **params) -> op`` that emits a custom call of
    ``call_target_name`` for a lowering rule: result types from ``ctx.avals_out``,
    row-major layouts unless given (minor-to-major), ``params`` as FFI attributes.
    Other keyword arguments (``has_side_effect``, ``api_version``, ...) go to the op."""

    def lower(ctx, *operands, **params):
        _lapack.register_targets()  # jaxlib's own CPU targets, registered as JAX does
        kwargs = dict(lowering_args)
        kwargs.setdefault("api_version", 4)
        if kwargs["api_version"] >= 4:
            if backend_config is not None and not isinstance(backend_config, dict):
                raise ValueError("When api_version > 4, backend_config must be a dictionary.")
            config = dict(backend_config or {})
            config.update({k: ir_attribute(v) for k, v in params.items()})
            kwargs["backend_config"] = config
        else:
            if params:
                raise ValueError(
                    "The use of ffi_call attributes requires a custom call API version "
                    f"of at least 4; got api_version={kwargs['api_version']}."
                )
            kwargs["backend_config"] = backend_config
        kwargs.setdefault("result_types", mlir_builders.ir_types(ctx.avals_out))
        if not skip_ffi_layout_processing:
            for key, given, avals in (
                ("operand_layouts", operand_layouts, ctx.avals_in),
                ("result_layouts", result_layouts, ctx.avals_out),
            ):
                given = [None] * len(avals) if given is None else given
                kwargs[key] = [
                    _layout_for_lowering(a, x) for a, x in zip(avals, given, strict=True)
                ]
        return custom_call(call_target_name, operands=operands, **kwargs)

    return lower


def ffi_lowering(
    call_target_name: str,
    *,
    operand_layouts=None,
    result_layouts=None,
    backend_config=None,
    skip_ffi_layout_processing: bool = False,
    **lowering_args: Any,
):
    """A lowering rule (for ``Primitive.def_lowering``) that lowers the primitive to a
    custom call of ``call_target_name``; see :func:`build_ffi_lowering_function`."""
    build = build_ffi_lowering_function(
        call_target_name,
        operand_layouts=operand_layouts,
        result_layouts=result_layouts,
        backend_config=backend_config,
        skip_ffi_layout_processing=skip_ffi_layout_processing,
        **lowering_args,
    )

    def rule(ctx, *operands, **params):
        return list(build(ctx, *operands, **params).results)

    return rule


# ---------------------------------------------------------------- the primitive


class FfiEffect(Effect):
    """The effect of an ``ffi_call`` with ``has_side_effect=True``."""

    def __eq__(self, other):
        return isinstance(other, FfiEffect)

    def __hash__(self):
        return hash(FfiEffect)

    def __str__(self):
        return "FFI"

    def __repr__(self):
        return "FfiEffect()"


ffi_effect = FfiEffect()
lowerable_effects.add_type(FfiEffect)
control_flow_allowed_effects.add_type(FfiEffect)

ffi_call_p = Primitive("ffi_call")
ffi_call_p.multiple_results = True
ffi_call_p.effectful = True
def_standard_impl(ffi_call_p)


def _abstract_eval(*avals, result_avals, has_side_effect, **_):
    return list(result_avals), ({ffi_effect} if has_side_effect else no_effects)


def _not_differentiable(*args, target_name, **_):
    raise ValueError(
        f"The FFI call to `{target_name}` cannot be differentiated. "
        "You can use `jax.custom_jvp` or `jax.custom_jvp` to add support."
    )


def _lowering(
    ctx,
    *operands,
    target_name,
    has_side_effect,
    input_layouts,
    output_layouts,
    input_output_aliases,
    custom_call_api_version,
    legacy_backend_config,
    attributes,
    **_,
):
    rule = ffi_lowering(
        target_name,
        has_side_effect=has_side_effect,
        operand_layouts=input_layouts,
        result_layouts=output_layouts,
        operand_output_aliases=dict(input_output_aliases),
        api_version=custom_call_api_version,
        backend_config=legacy_backend_config,
    )
    return rule(ctx, *operands, **{k: _plain(v) for k, v in attributes})


def _batched_layouts(layouts):
    """Layouts of operands or results that gained a leading (most major) batch axis."""
    return tuple(None if x is None else (*(n + 1 for n in x), 0) for x in layouts)


def _batching(axis_data, vals, dims, *, vmap_method, result_avals, **params):
    size = axis_data.size
    args = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims, strict=True)]
    batched_avals = tuple(
        a if isinstance(a, AbstractToken) else a.update(shape=(size, *a.shape))
        for a in result_avals
    )
    if vmap_method in ("sequential", "sequential_unrolled"):
        is_batched = [d is not None for d in dims]
        mapped = [a for a, b in zip(args, is_batched, strict=True) if b]

        def body(carry, xs):
            it = iter(xs)
            merged = [next(it) if b else a for a, b in zip(args, is_batched, strict=True)]
            outs = ffi_call_p.bind(
                *merged, vmap_method=vmap_method, result_avals=result_avals, **params
            )
            return carry, outs

        _, outs = scan(body, (), mapped, unroll=vmap_method == "sequential_unrolled")
        return list(outs), [0] * len(outs)
    if vmap_method not in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        raise NotImplementedError(
            "vmap is only supported for the ffi_call primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}."
        )
    params["output_layouts"] = _batched_layouts(params["output_layouts"])
    if vmap_method == "legacy_vectorized":
        params["input_layouts"] = tuple(
            lay if d is None else _batched_layouts([lay])[0]
            for lay, d in zip(params["input_layouts"], dims, strict=True)
        )
    else:
        lead = size if vmap_method == "broadcast_all" else 1
        args = [broadcast(a, (lead,)) if d is None else a for a, d in zip(args, dims, strict=True)]
        params["input_layouts"] = _batched_layouts(params["input_layouts"])
    outs = ffi_call_p.bind(*args, vmap_method=vmap_method, result_avals=batched_avals, **params)
    return list(outs), [0] * len(outs)


ffi_call_p.def_abstract_eval(_abstract_eval)
ffi_call_p.def_lowering(_lowering)
ffi_call_p.def_jvp(_not_differentiable)
ffi_call_p.def_batching(_batching)


# ---------------------------------------------------------------- ffi_call


def _result_avals(results) -> tuple:
    avals = []
    for i, r in enumerate(results):
        if r is abstract_token or isinstance(r, AbstractToken):
            avals.append(abstract_token)
            continue
        if not hasattr(r, "shape") or not hasattr(r, "dtype"):
            raise ValueError(
                "All elements of result_shape_dtypes must have 'shape' and 'dtype' "
                f"attributes. Got {r} at position {i}."
            )
        avals.append(shaped_abstractify(r).update(dtype=np.dtype(r.dtype)))
    return tuple(avals)


def _same_type(a, b) -> bool:
    if isinstance(a, AbstractToken) and isinstance(b, AbstractToken):
        return True
    return _shape(a) == _shape(b) and getattr(a, "dtype", None) == getattr(b, "dtype", None)


def ffi_call(
    target_name: str,
    result_shape_dtypes,
    *,
    has_side_effect: bool = False,
    vmap_method: str | None = None,
    input_layouts=None,
    output_layouts=None,
    input_output_aliases: dict[int, int] | None = None,
    custom_call_api_version: int = 4,
    legacy_backend_config: str | None = None,
):
    """A function calling the FFI target ``target_name`` on its positional arguments,
    with its keyword arguments as the handler's attributes. ``result_shape_dtypes`` (one
    object with ``shape`` and ``dtype``, or a sequence of them) gives the results: one
    array, or a sequence of arrays. Layouts are major-to-minor per operand/result;
    ``input_output_aliases`` maps an input index to the output that reuses its buffer."""
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(
            f"vmap_method must be on of the allowed methods {_VMAP_METHODS}, but got: {vmap_method}"
        )
    if isinstance(result_shape_dtypes, Sequence):
        multiple_results = True
        result_avals = _result_avals(result_shape_dtypes)
        out_layouts = output_layouts
    else:
        multiple_results = False
        result_avals = _result_avals([result_shape_dtypes])
        out_layouts = (output_layouts,)
    if custom_call_api_version >= 4 and legacy_backend_config is not None:
        raise ValueError(
            "The use of the legacy_backend_config parameter requires "
            f"custom_call_api_version < 4; got {custom_call_api_version}."
        )

    def wrapped(*args, **kwargs):
        in_avals = [typeof(x) for x in args]
        if input_layouts is None:
            in_lay = tuple(_layout_for_lowering(a) for a in in_avals)
        else:
            if len(input_layouts) != len(in_avals):
                raise ValueError(
                    f"The number of input arguments ({len(in_avals)}) must equal the "
                    f"number of input layouts ({len(input_layouts)})."
                )
            in_lay = _user_layouts(in_avals, input_layouts)
        if out_layouts is None:
            out_lay = tuple(_layout_for_lowering(a) for a in result_avals)
        else:
            if len(out_layouts) != len(result_avals):
                raise ValueError(
                    f"The number of outputs ({len(result_avals)}) must equal the "
                    f"number of output layouts ({len(out_layouts)})."
                )
            out_lay = _user_layouts(result_avals, out_layouts)
        aliases = []
        for i, o in sorted((input_output_aliases or {}).items()):
            i, o = int(i), int(o)
            mapping = f"input_output_aliases contains the mapping '{i}:{o}'"
            if i >= len(args):
                raise ValueError(
                    f"{mapping} with input index {i} outside the range [0, {len(args)})."
                )
            if o >= len(result_avals):
                raise ValueError(
                    f"{mapping} with output index {o} outside the range [0, {len(result_avals)})."
                )
            if not _same_type(in_avals[i], result_avals[o]):
                raise ValueError(
                    f"{mapping} referring to an input with abstract value {in_avals[i]} "
                    f"and an output with a different abstract value {result_avals[o]}."
                )
            if in_lay[i] != out_lay[o]:
                raise ValueError(
                    f"{mapping} referring to an input with layout {in_lay[i]} and an "
                    f"output with a different layout {out_lay[o]}."
                )
            aliases.append((i, o))
        results = ffi_call_p.bind(
            *args,
            result_avals=result_avals,
            vmap_method=vmap_method,
            target_name=target_name,
            has_side_effect=has_side_effect,
            input_layouts=in_lay,
            output_layouts=out_lay,
            input_output_aliases=tuple(aliases),
            custom_call_api_version=custom_call_api_version,
            legacy_backend_config=legacy_backend_config,
            attributes=_hashable_attributes(kwargs),
        )
        if not multiple_results:
            return results[0]
        return tuple(results) if isinstance(result_shape_dtypes, tuple) else results

    return wrapped
