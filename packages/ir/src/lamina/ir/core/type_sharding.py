"""Shardings in types: over a mesh with ``Explicit`` axes, an array's ``ShapedArray``
records how its dimensions are split (``f32[8@x,4]``), and each primitive's sharding
rule gives its results' layouts from its operands'.

A rule, registered with ``Primitive.def_sharding``, is ``rule(*avals, **params)`` and
returns the spec entries of the result (a tuple, one entry per dimension: ``None``, a
mesh axis name or a tuple of names), or a list of them for several results. Rules run
only when some operand's type carries a sharding; a primitive without a rule gives
results whose types carry none."""

from __future__ import annotations

import math

from lamina.ir.core.vma import vma_of

__all__ = [
    "ShardingTypeError",
    "auto_axes_call",
    "broadcasting_spec",
    "check_divisible",
    "check_one_device_types",
    "context_mesh",
    "context_placements",
    "def_elementwise_sharding",
    "device_count_error",
    "mismatch_extra",
    "out_type_sharding",
    "padded_sharding",
    "register_auto_axes",
    "register_context_mesh",
    "register_context_placement",
    "register_out_sharding",
    "register_reshard",
    "register_spec_placement",
    "register_type_placement",
    "register_value_sharding",
    "reshard_to",
    "resized_spec",
    "same_type",
    "sharding_rules",
    "spec_of",
    "spec_placement",
    "type_placements",
    "typed_operands",
    "typed_result",
    "typed_str",
    "typed_value_aval",
    "with_type_sharding",
]


class ShardingTypeError(Exception):
    """Operands whose types' shardings a primitive cannot combine."""


sharding_rules: dict = {}


def typed_operands(avals) -> list:
    """The operands whose types carry a sharding."""
    return [a for a in avals if getattr(a, "type_sharding", None) is not None]


def same_type(a, b) -> bool:
    """Equal shapes, dtypes, splits over explicit mesh axes and (in a ``shard_map``
    body) varying manual axes: the types JAX's ``typematch`` takes as equal."""
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and vma_of(a) == vma_of(b)
        and (
            getattr(a, "type_sharding", None) is getattr(b, "type_sharding", None)
            or spec_of(a) == spec_of(b)
        )
    )


def mismatch_extra(a, b) -> str:
    """``, so ...``: how types ``a`` and ``b`` differ, as JAX's errors say it (nothing
    where only their splits differ)."""
    found = []
    if a.dtype != b.dtype:
        found.append("the dtypes do not match")
    if a.shape != b.shape:
        found.append("the shapes do not match")
    if vma_of(a) != vma_of(b):
        found.append("the manual axis types do not match")
    if len(found) < 2:
        return "".join(f", so {f}" for f in found)
    return ", so " + ", ".join(found[:-1]) + ", and " + found[-1]


def spec_of(aval) -> tuple:
    """The spec entries of ``aval``'s type (all ``None`` when it carries no sharding)."""
    s = getattr(aval, "type_sharding", None)
    if s is None:
        return (None,) * len(aval.shape)
    entries = tuple(s.spec)
    return entries + (None,) * (len(aval.shape) - len(entries))


def with_type_sharding(prim, avals, params, out):
    """``out`` (the primitive's abstract results) with the shardings its rule gives."""
    typed = typed_operands(avals)
    rule = sharding_rules.get(prim)
    if rule is None:
        return out
    if typed:
        base = typed[0].type_sharding
    else:  # untyped operands: a sharding asked for in the params types the result
        base = _param_sharding(params)
        if base is None:
            return out
    specs = rule(*avals, **params)
    make = type(base.spec)

    def attach(aval, entries):
        if entries is None or not hasattr(aval, "shape"):
            return aval
        return check_divisible(aval.update(sharding=base.update(spec=make(*entries))))

    if prim.multiple_results:
        return [attach(a, e) for a, e in zip(out, specs, strict=True)]
    return attach(out, specs)


def _param_sharding(params):
    """The sharding over explicit mesh axes a primitive's params ask for (``None``)."""
    for name in ("sharding", "out_sharding"):
        s = params.get(name)
        if getattr(getattr(s, "mesh", None), "explicit_axes", ()):
            return s
    return None


def check_divisible(aval):
    """``aval``, whose type's splits must divide its dimensions (JAX's ``ValueError``)."""
    s = aval.type_sharding
    sizes = dict(zip(s.mesh.axis_names, s.mesh.axis_sizes, strict=True))
    for d, (n, e) in enumerate(zip(aval.shape, spec_of(aval), strict=True)):
        if e is None:
            continue
        names = e if isinstance(e, tuple) else (e,)
        factor = 1
        for name in names:
            factor *= sizes.get(name, 1)
        if isinstance(n, int) and n % factor:
            raise ValueError(
                f"Sharding spec {tuple(names)} implies that array axis {d} is partitioned "
                f"{factor} times, but does not evenly divide the dimension size {n}. Got "
                f"shape: {tuple(aval.shape)} and sharding {s!r}"
            )
    return aval


def broadcasting_spec(*avals, name: str = "") -> tuple:
    """The rule of elementwise primitives: operands of the result's rank that split a
    dimension must split it alike; the result takes the split."""
    typed = [a for a in typed_operands(avals) if len(a.shape)]
    if not typed:
        return ()
    ndim = max(len(a.shape) for a in typed)
    out = [None] * ndim
    seen = [False] * ndim
    for a in typed:
        if len(a.shape) != ndim:
            continue
        for i, e in enumerate(spec_of(a)):
            if e is None:
                continue
            if seen[i] and out[i] != e:
                specs = ", ".join(str(spec_of(b)) for b in typed)
                raise ShardingTypeError(
                    f"{name} got incompatible shardings for broadcasting: {specs}."
                )
            out[i], seen[i] = e, True
    names = [n for e in out if e is not None for n in (e if isinstance(e, tuple) else (e,))]
    if len(names) != len(set(names)):  # one mesh axis would split two dimensions
        full = [a for a in typed if len(a.shape) == ndim]
        shape = [next((a.shape[i] for a in full if a.shape[i] != 1), 1) for i in range(ndim)]
        dims = ",".join(
            str(d) if e is None else f"{d}@{e}" if isinstance(e, str) else f"{d}@({','.join(e)})"
            for d, e in zip(shape, out, strict=True)
        )
        result = f"{full[0].str_short(True).split('[')[0]}[{dims}]"
        shown = ", ".join(a.str_short(True) for a in avals if hasattr(a, "shape"))
        raise ShardingTypeError(
            f"{name} operation with inputs: {shown} produces an illegally sharded result: {result}"
        )
    return tuple(out)


def padded_sharding(aval, like=None):
    """``aval``'s type sharding with one spec entry per dimension, as JAX shows it in
    messages (over ``like``'s mesh, unsplit, when ``aval``'s type carries none)."""
    s = aval.type_sharding if aval.type_sharding is not None else like
    return s.update(spec=type(s.spec)(*spec_of(aval)))


def typed_str(aval, like=None, short_dtypes: bool = False) -> str:
    """``aval`` with its mesh's axis types, as JAX's messages show it:
    ``float32[8@x,4]({Explicit: ('x', 'y')})`` (an untyped ``aval`` is over ``like``'s
    mesh when that mesh is in force, else over none)."""
    s = aval.type_sharding
    if s is None:  # an untyped array is over the mesh in force, if any
        place = _placement_rule[0]
        s = like if place is not None and place(aval.update(sharding=like)) else None
    groups: dict = {}
    if s is not None:
        for name, kind in zip(s.mesh.axis_names, s.mesh.axis_types, strict=True):
            groups.setdefault(kind.name, []).append(name)
    shown = ", ".join(f"{k}: {tuple(v)}" for k, v in groups.items())
    return f"{aval.str_short(short_dtypes)}({{{shown}}})"


def _ways(mesh, entry) -> int:
    """How many pieces the mesh axes of a spec entry cut a dimension into."""
    names = entry if isinstance(entry, tuple) else (entry,)
    return math.prod(mesh.shape[n] for n in names)


def resized_spec(aval, out_shape, name: str) -> tuple:
    """The rule of slicing-like primitives (slices, pads, windows): the result keeps
    ``aval``'s splits; a split dimension whose size changes must stay divisible by its
    mesh axes."""
    spec = spec_of(aval)
    if aval.type_sharding is None:
        return spec
    mesh = aval.type_sharding.mesh
    for n, m, e in zip(aval.shape, out_shape, spec, strict=True):
        if n != m and e is not None and m % _ways(mesh, e):
            raise ShardingTypeError(
                f"{name} on sharded dims where out dim ({m}) is not divisible by mesh axes "
                f"({_ways(mesh, e)}) with spec ({e}) is not implemented. Got input "
                f"type={aval.str_short(True)} and output shape={tuple(out_shape)}"
            )
    return spec


# The function giving the type sharding of a value with data (an array laid out over
# an explicit mesh): set by the sharding layer, which owns the sharding types.
_value_rule: list = [None]


def register_value_sharding(rule) -> None:
    """Make ``rule(x)`` the type sharding of array ``x`` (``None``: none)."""
    _value_rule[0] = rule


def typed_value_aval(x, aval):
    """``aval``, the type of array ``x``, with the sharding ``x``'s layout gives."""
    rule = _value_rule[0]
    if rule is None or aval.type_sharding is not None:
        return aval
    s = rule(x)
    return aval if s is None else aval.update(sharding=s)


def def_elementwise_sharding(prim) -> None:
    """Give ``prim`` the elementwise rule (:func:`broadcasting_spec`)."""
    prim.def_sharding(lambda *avals, **params: broadcasting_spec(*avals, name=prim.name))


# The function placing a type's sharding on the devices of the mesh in force (``None``
# when no mesh of that shape is set): set by the sharding layer.
_placement_rule: list = [None]


def register_type_placement(rule) -> None:
    """Make ``rule(aval)`` the concrete sharding of a type's sharding."""
    _placement_rule[0] = rule


def type_placements(avals):
    """The concrete shardings of ``avals``' types (``None`` where a type carries none),
    or ``None`` when none does: a ``jit``'s results take them."""
    rule = _placement_rule[0]
    if rule is None or not typed_operands(avals):
        return None
    found = [rule(a) if getattr(a, "type_sharding", None) is not None else None for a in avals]
    return found if any(s is not None for s in found) else None


def check_one_device_types(avals) -> None:
    """JAX's error for results typed over a mesh of several devices that a computation
    on one device would give (no ``set_mesh`` in force to lay them out)."""
    for aval in avals:
        s = getattr(aval, "type_sharding", None)
        if s is not None and s.mesh.size > 1:
            raise device_count_error(aval, 1)


# The function placing a bare ``PartitionSpec`` given as a device (``device_put(x,
# P("x"))``) on the mesh in force: set by the sharding layer.
_spec_placement_rule: list = [None]


def register_spec_placement(rule) -> None:
    """Make ``rule(x)`` the sharding a ``PartitionSpec`` ``x`` given as a device names
    (``None`` for anything else)."""
    _spec_placement_rule[0] = rule


def spec_placement(x):
    """The sharding ``x`` names when it is a ``PartitionSpec`` given as a device."""
    rule = _spec_placement_rule[0]
    return None if rule is None else rule(x)


# The function reading an ``out_sharding=`` argument (a ``PartitionSpec`` over the mesh in
# force, or a ``NamedSharding``) as a sharding over an abstract mesh: set by the sharding
# layer, which owns meshes and specs.
_out_sharding_rule: list = [None]


def register_out_sharding(rule) -> None:
    """Make ``rule(sharding, api_name)`` the reading of ``out_sharding=`` arguments."""
    _out_sharding_rule[0] = rule


def out_type_sharding(sharding, api_name: str):
    """``sharding`` (an ``out_sharding=`` argument) as a ``NamedSharding`` over the
    abstract mesh, with JAX's errors for what it cannot be; ``None`` for ``None``."""
    rule = _out_sharding_rule[0]
    if sharding is None or rule is None:
        return sharding
    return rule(sharding, api_name)


def typed_result(aval, sharding):
    """``aval`` typed by ``sharding`` (a primitive's sharding parameter) when that is a
    sharding over a mesh with ``Explicit`` axes; ``aval`` itself otherwise."""
    mesh = getattr(sharding, "mesh", None)
    if mesh is None or not getattr(mesh, "explicit_axes", ()):
        return aval
    if getattr(mesh, "abstract_mesh", mesh) is not mesh:  # a concrete mesh
        sharding = sharding.update(mesh=mesh.abstract_mesh)
    spec = tuple(sharding.spec) + (None,) * (len(aval.shape) - len(sharding.spec))
    sharding = sharding.update(spec=type(sharding.spec)(*spec))  # one entry per dimension
    for axis, (size, entry) in enumerate(zip(aval.shape, spec, strict=True)):
        if entry is not None and size % _ways(mesh, entry):
            names = entry if isinstance(entry, tuple) else (entry,)
            raise ValueError(
                f"Sharding spec {names} implies that array axis {axis} is partitioned "
                f"{_ways(mesh, entry)} times, but does not evenly divide the dimension size "
                f"{size}. Got shape: {tuple(aval.shape)} and sharding {sharding}"
            )
    return aval.update(sharding=sharding)


# The function giving the concrete mesh ``set_mesh`` put in force (``None`` when none):
# set by the sharding layer; a staged ``jit`` records it (its ``ctx_mesh``).
_context_mesh_rule: list = [None]


def register_context_mesh(rule) -> None:
    """Make ``rule()`` the mesh in force (``None`` when none is set)."""
    _context_mesh_rule[0] = rule


def context_mesh():
    """The mesh ``set_mesh`` put in force, or ``None``."""
    rule = _context_mesh_rule[0]
    return None if rule is None else rule()


# The function giving the sharding over the mesh in force that results whose types
# carry no sharding take (``None`` when no mesh of several devices is set): set by the
# sharding layer.
_context_placement_rule: list = [None]


def register_context_placement(rule) -> None:
    """Make ``rule(ndim)`` the layout of untyped results under ``set_mesh``."""
    _context_placement_rule[0] = rule


def context_placements(avals):
    """The shardings over the mesh in force that results of types ``avals`` take when
    nothing else lays them out (computations under ``set_mesh`` run on its devices), or
    ``None`` when no mesh of several devices is in force."""
    rule = _context_placement_rule[0]
    if rule is None or rule(0) is None:
        return None
    return [rule(a.ndim) for a in avals]


# The function laying a value out by a sharding or a spec (the ``reshard`` primitive):
# set by the sharding layer. ``grad`` starts from a cotangent typed as the output, and
# samplers given ``out_sharding`` lay their results out so.
_reshard_rule: list = [None]


def register_reshard(rule) -> None:
    """Make ``rule(x, sharding)`` lay ``x`` out by ``sharding`` (``jax.sharding.reshard``)."""
    _reshard_rule[0] = rule


def reshard_to(x, sharding):
    """``x`` laid out by ``sharding`` (a sharding or, under ``set_mesh``, a spec)."""
    rule = _reshard_rule[0]
    if rule is None:
        raise RuntimeError("resharding needs lamina.sharding to be loaded")
    return rule(x, sharding)


# The function running a function with the mesh's Explicit axes made Auto and laying
# its results out by a sharding (``auto_axes``): set by the sharding layer.
_auto_axes_rule: list = [None]


def register_auto_axes(rule) -> None:
    """Make ``rule(fun, out_sharding)`` the ``auto_axes`` of ``fun``."""
    _auto_axes_rule[0] = rule


def auto_axes_call(fun, out_sharding):
    """``fun`` run with the Explicit axes of the mesh in force made Auto (XLA lays the
    values out along them), its results laid out by ``out_sharding``."""
    rule = _auto_axes_rule[0]
    if rule is None:
        raise RuntimeError("out_sharding needs lamina.sharding to be loaded")
    return rule(fun, out_sharding)


def device_count_error(aval, count: int) -> ValueError:
    """JAX's error for a value typed over a mesh of other than ``count`` devices (the
    devices a computation runs on, with no mesh in force)."""
    mesh = aval.type_sharding.mesh
    kinds: dict = {}
    for name, kind in zip(mesh.axis_names, mesh.axis_types, strict=True):
        kinds.setdefault(kind.name, []).append(name)
    shown = ", ".join(f"{k}: {tuple(v)}" for k, v in kinds.items())
    return ValueError(
        f"Length of device assignment {count} is not equal to the size of the mesh "
        f"{mesh.size} of aval {aval.str_short(True)}({{{shown}}}). Please enter your `jit` "
        "into a mesh context via `jax.set_mesh`."
    )
