"""Shardings in types: over a mesh with ``Explicit`` axes, an array's ``ShapedArray``
records how its dimensions are split (``f32[8@x,4]``), and each primitive's sharding
rule gives its results' layouts from its operands'.

A rule, registered with ``Primitive.def_sharding``, is ``rule(*avals, **params)`` and
returns the spec entries of the result (a tuple, one entry per dimension: ``None``, a
mesh axis name or a tuple of names), or a list of them for several results. Rules run
only when some operand's type carries a sharding; a primitive without a rule gives
results whose types carry none."""

from __future__ import annotations

from lamina.ir.core.vma import vma_of

__all__ = [
    "ShardingTypeError",
    "broadcasting_spec",
    "check_divisible",
    "context_mesh",
    "def_elementwise_sharding",
    "device_count_error",
    "mismatch_extra",
    "register_context_mesh",
    "register_reshard",
    "register_type_placement",
    "register_value_sharding",
    "reshard_to",
    "same_type",
    "sharding_rules",
    "spec_of",
    "type_placements",
    "typed_operands",
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
    return tuple(out)


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
