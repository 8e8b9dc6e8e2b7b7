"""Pytree structures in serialized exports: the ``PyTreeDef`` table of the schema, and
the registries of custom node types that may be serialized
(``register_pytree_node_serialization``, ``register_namedtuple_serialization``)."""

from __future__ import annotations

import collections
import json
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from lamina.export.flatbuffer import Builder, FlatbufferError, Table
from lamina.ir import tree_util

__all__ = [
    "read_pytreedef",
    "register_namedtuple_serialization",
    "register_pytree_node_serialization",
    "write_pytreedef",
]

# PyTreeDefKind of the schema.
LEAF, NONE, TUPLE, LIST, DICT, CUSTOM = range(6)
_KIND_OF_TYPE = {types.NoneType: NONE, tuple: TUPLE, list: LIST, dict: DICT}
# Fields of the PyTreeDef table.
_KIND, _CHILDREN, _CHILDREN_NAMES, _CUSTOM_NAME, _CUSTOM_AUXDATA = range(5)
_MAX_DEPTH = 500

# node type -> (serialized name, serialize auxdata)
serialization_registry: dict[type, tuple[str, Callable[[Any], bytes]]] = {}
# serialized name -> (node type, deserialize auxdata, from children)
deserialization_registry: dict[str, tuple[type, Callable[[bytes], Any], Callable]] = {}


def _registered_unflatten(nodetype: type) -> Callable:
    """Builds a node of ``nodetype`` from its auxdata and children with its pytree
    registration; ValueError when it has none."""
    try:
        tree_util.PyTreeDef.from_node_data_and_children(
            tree_util.default_registry, (nodetype, None), []
        )
    except RuntimeError:
        raise ValueError(
            "If `from_children` is not present, you must call first"
            f"`jax.tree_util.register_pytree_node` for `{nodetype}`"
        ) from None
    except Exception:  # registered; its auxdata just is not None
        pass

    def from_children(aux_data, children):
        leaf = tree_util.tree_structure(0)
        node = tree_util.PyTreeDef.from_node_data_and_children(
            tree_util.default_registry, (nodetype, aux_data), [leaf] * len(children)
        )
        return node.unflatten(children)

    return from_children


def register_pytree_node_serialization(
    nodetype: type,
    *,
    serialized_name: str,
    serialize_auxdata: Callable[[Any], bytes],
    deserialize_auxdata: Callable[[bytes], Any],
    from_children: Callable[[Any, Sequence[Any]], Any] | None = None,
) -> type:
    """Lets pytree nodes of ``nodetype`` appear in serialized ``in_tree``/``out_tree``,
    under ``serialized_name``, with their auxdata turned to and from bytes. Without
    ``from_children`` the node is rebuilt by its pytree registration. Returns
    ``nodetype`` (usable as a class decorator)."""
    if nodetype in serialization_registry:
        raise ValueError(
            f"Duplicate serialization registration for type `{nodetype}`. "
            "Previous registration was with serialized_name "
            f"`{serialization_registry[nodetype][0]}`."
        )
    if serialized_name in deserialization_registry:
        raise ValueError(
            "Duplicate serialization registration for "
            f"serialized_name `{serialized_name}`. "
            "Previous registration was for type "
            f"`{deserialization_registry[serialized_name][0]}`."
        )
    if from_children is None:
        from_children = _registered_unflatten(nodetype)
    serialization_registry[nodetype] = (serialized_name, serialize_auxdata)
    deserialization_registry[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def _is_namedtuple(nodetype) -> bool:
    fields = getattr(nodetype, "_fields", None)
    return (
        isinstance(nodetype, type)
        and issubclass(nodetype, tuple)
        and isinstance(fields, Sequence)
        and all(isinstance(f, str) for f in fields)
    )


def register_namedtuple_serialization(nodetype: type, *, serialized_name: str) -> type:
    """Lets a ``collections.namedtuple`` type appear in serialized pytrees (its field
    names are stored, as JSON)."""
    if not _is_namedtuple(nodetype):
        raise ValueError(
            "Use `jax.export.register_pytree_node_serialization` for "
            "types other than `collections.namedtuple`."
        )

    def from_children(aux_data, children):
        return nodetype(**dict(zip(aux_data, children, strict=True)))

    return register_pytree_node_serialization(
        nodetype,
        serialized_name=serialized_name,
        serialize_auxdata=lambda _: json.dumps(nodetype._fields).encode("utf-8"),
        deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")),
        from_children=from_children,
    )


def _ordered_dict_keys(keys) -> bytes:
    if isinstance(keys, Sequence) and all(isinstance(k, str) for k in keys):
        return json.dumps(list(keys)).encode("utf-8")
    raise NotImplementedError(
        "Serialization of collections.OrderedDict is supported only when the "
        f"keys are strings. Found keys: {keys}."
    )


register_pytree_node_serialization(
    collections.OrderedDict,
    serialized_name="collections.OrderedDict",
    serialize_auxdata=_ordered_dict_keys,
    deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")),
)


def write_array(b: Builder, write_one: Callable[[Builder, Any], int], items) -> int:
    """A vector of the tables (or strings) that ``write_one`` makes of ``items``."""
    return b.create_offset_vector([write_one(b, x) for x in items])


def _dict_key(b: Builder, k) -> int:
    if not isinstance(k, str):
        raise TypeError(
            "Serialization is supported only for dictionaries with string keys."
            f" Found key {k} of type {type(k)}."
        )
    return b.create_string(k)


def write_pytreedef(b: Builder, tree) -> int:
    """The PyTreeDef table of ``tree``."""
    node_data, children = tree.node_data(), tree.children()
    children_off = write_array(b, write_pytreedef, children) if children else 0
    names_off = name_off = aux_off = 0
    if node_data is None:
        kind = LEAF
    elif node_data[0] in _KIND_OF_TYPE:
        kind = _KIND_OF_TYPE[node_data[0]]
        if kind == DICT:
            names_off = write_array(b, _dict_key, node_data[1])
    elif node_data[0] in serialization_registry:
        kind = CUSTOM
        name, serialize_aux = serialization_registry[node_data[0]]
        name_off = b.create_string(name)
        aux = serialize_aux(node_data[1])
        if not isinstance(aux, bytes | bytearray):
            raise ValueError(
                "The custom serialization function for `node_type` must "
                f"return a `bytes` object. It returned a {type(aux)}."
            )
        aux_off = b.create_byte_vector(aux)
    else:
        raise ValueError(
            "Cannot serialize PyTreeDef containing an "
            f"unregistered type `{node_data[0]}`. "
            "Use `export.register_pytree_node_serialization` or "
            "`export.register_namedtuple_serialization`."
        )
    b.start_table(5)
    b.add_scalar(_KIND, "b", kind, 0)
    b.add_offset(_CHILDREN, children_off)
    b.add_offset(_CHILDREN_NAMES, names_off)
    b.add_offset(_CUSTOM_NAME, name_off)
    b.add_offset(_CUSTOM_AUXDATA, aux_off)
    return b.end_table()


def _to_pytree(t: Table, leaves: Iterator, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise FlatbufferError("pytree nested too deeply")
    kind = t.scalar(_KIND, "b")
    children = [_to_pytree(c, leaves, depth + 1) for c in t.tables(_CHILDREN)]
    if kind == LEAF:
        if children:
            raise FlatbufferError("a pytree leaf has children")
        leaf = next(leaves, None)
        if leaf is None:
            raise FlatbufferError("the pytree has more leaves than the function has values")
        return leaf[0]
    if kind == NONE:
        if children:
            raise FlatbufferError("a None pytree node has children")
        return None
    if kind == TUPLE:
        return tuple(children)
    if kind == LIST:
        return children
    if kind == DICT:
        names = t.strings(_CHILDREN_NAMES)
        if len(names) != len(children) or len(set(names)) != len(names):
            raise FlatbufferError("a dict pytree node's keys do not match its children")
        return dict(zip(names, children, strict=True))
    if kind == CUSTOM:
        name = t.string(_CUSTOM_NAME) or ""
        if name not in deserialization_registry:
            raise ValueError(
                "Cannot deserialize a PyTreeDef containing an "
                f"unregistered type `{name}`. "
                "Use `export.register_pytree_node_serialization` or "
                "`export.register_namedtuple_serialization`."
            )
        _, deserialize_aux, from_children = deserialization_registry[name]
        return from_children(deserialize_aux(t.bytes(_CUSTOM_AUXDATA) or b""), children)
    raise ValueError(f"Cannot deserialize PyTreeDef with unknown kind: {kind}")


def read_pytreedef(t: Table | None, leaves: Sequence[Any]):
    """The PyTreeDef that table ``t`` describes, which must have ``len(leaves)`` leaves
    (the values that stand at the leaves while it is rebuilt)."""
    if t is None:
        raise FlatbufferError("the serialized export lacks a pytree")
    it = iter((x,) for x in leaves)
    tree = _to_pytree(t, it, 0)
    if next(it, None) is not None:
        raise FlatbufferError("the pytree has fewer leaves than the function has values")
    return tree_util.tree_structure(tree)
