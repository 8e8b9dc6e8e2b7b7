"""``auto_axes`` and ``explicit_axes``: run a function with some mesh axes switched to
``Auto`` (XLA chooses the layouts along them) or to ``Explicit`` (the types record
them), resharding its arguments on the way in and its results on the way out."""

from __future__ import annotations

import functools

from lamina.interpreters import typeof
from lamina.ir import register_auto_axes, tree_util
from lamina.sharding.axis_types import AxisType
from lamina.sharding.mesh import EMPTY_ABSTRACT_MESH
from lamina.sharding.mesh_context import get_abstract_mesh, use_abstract_mesh
from lamina.sharding.named_sharding import NamedSharding
from lamina.sharding.partition_spec import PartitionSpec
from lamina.sharding.reshard import reshard

__all__ = ["auto_axes", "explicit_axes"]


def _switched_mesh(axes, kind, name, shardings=None):
    """(the mesh in force, it with ``axes`` of type ``kind``, the axes), or ``None``
    when neither the context nor ``shardings`` names a mesh."""
    current = get_abstract_mesh()
    named = EMPTY_ABSTRACT_MESH
    for s in tree_util.tree_leaves(shardings, is_leaf=lambda s: isinstance(s, PartitionSpec)):
        if isinstance(s, NamedSharding):
            mesh = s.mesh.abstract_mesh
            if not named.empty and named != mesh:
                raise ValueError(
                    f"Shardings passed to {name} should have the same mesh. Got one mesh "
                    f"{named} and another {s.mesh}"
                )
            named = mesh
    if named.empty and current.empty:
        return None
    if not named.empty and not current.empty and named != current:
        raise ValueError(
            f"Context mesh {current} must match the mesh passed to shardings {named}. "
            "Recommended approach is to use `jax.set_mesh` context manager."
        )
    mesh = current if not current.empty else named
    axes = mesh.axis_names if axes is None else axes if isinstance(axes, tuple) else (axes,)
    for a in axes:
        if mesh._name_to_type[a] == AxisType.Manual:
            raise NotImplementedError(
                "Going from `Manual` AxisType to `Auto` or `Explicit` AxisType is not "
                "allowed. Please file a bug at https://github.com/jax-ml/jax/issues with "
                "your use case"
            )
    return mesh, mesh.update_axis_types(dict.fromkeys(axes, kind)), axes


def _explicit_spec(x, mesh) -> PartitionSpec:
    """The spec of ``x``'s type keeping only the axes ``mesh`` has as ``Explicit``."""
    explicit = set(mesh.explicit_axes)
    entries = []
    for e in typeof(x).sharding.spec:
        names = e if isinstance(e, tuple) else (e,)
        kept = tuple(n for n in names if n in explicit)
        entries.append(None if not kept else kept[0] if len(kept) == 1 else kept)
    return PartitionSpec(*entries)


def _keyword(kwargs, given, name):
    if given is not None:
        return given
    if name not in kwargs:
        raise TypeError(f"Missing required keyword argument: '{name}'")
    return kwargs.pop(name)


def _with_auto_axes(fun, axes, out_sharding):
    @functools.wraps(fun)
    def run(*args, **kwargs):
        target = _keyword(kwargs, out_sharding, "out_sharding")
        switch = _switched_mesh(axes, AxisType.Auto, "auto_axes", target)
        if switch is None:
            return fun(*args, **kwargs)
        old, new, names = switch
        if set(old.auto_axes) == set(names):
            return fun(*args, **kwargs)
        with use_abstract_mesh(new):
            specs = tree_util.tree_map(lambda a: _explicit_spec(a, new), args)
            out = fun(*reshard(args, specs), **kwargs)
        return reshard(out, target)

    return run


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """``f`` run with the mesh axes ``axes`` (default: all) of type ``Auto``; its
    results are resharded to ``out_sharding`` (given here or as a keyword argument
    of the call). Usable as a decorator with or without arguments."""
    if f is None:
        return lambda g: _with_auto_axes(g, axes, out_sharding)
    return _with_auto_axes(f, axes, out_sharding)


def _with_explicit_axes(fun, axes, in_sharding):
    @functools.wraps(fun)
    def run(*args, **kwargs):
        target = _keyword(kwargs, in_sharding, "in_sharding")
        switch = _switched_mesh(axes, AxisType.Explicit, "explicit_axes")
        if switch is None:
            raise ValueError(
                "Context mesh cannot be empty. Please use `jax.set_mesh` API to enter into "
                "a mesh context when using `explicit_axes` API."
            )
        _, new, _ = switch
        with use_abstract_mesh(new):
            out = fun(*reshard(args, target), **kwargs)
        outer = get_abstract_mesh()
        specs = tree_util.tree_map(lambda o: _explicit_spec(o, outer), out)
        return reshard(out, specs)

    return run


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """``f`` run with the mesh axes ``axes`` (default: all) of type ``Explicit``, its
    arguments resharded to ``in_sharding`` (given here or as a keyword argument of the
    call); its results come back with those axes automatic again."""
    if f is None:
        return lambda g: _with_explicit_axes(g, axes, in_sharding)
    return _with_explicit_axes(f, axes, in_sharding)


def _auto_explicit_axes(fun, out_sharding):
    """``fun`` with the Explicit axes of the mesh in force made Auto (``fun`` itself
    when it has none), as JAX's NumPy functions taking ``out_sharding=`` run."""
    axes = get_abstract_mesh().explicit_axes
    if not axes:
        return fun
    return auto_axes(fun, axes=tuple(axes), out_sharding=out_sharding)


register_auto_axes(_auto_explicit_axes)
