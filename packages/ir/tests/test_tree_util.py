"""Tests of lamina.ir.tree_util and lamina.ir.tree (the jax.tree_util / jax.tree APIs).

Expected reprs, key strings and error messages were recorded from JAX 0.10.2.
"""

import collections
import dataclasses
import functools
import operator
import pickle
import typing

import numpy as np
import pytest

from lamina.ir import tree
from lamina.ir import tree_util as tu
from lamina.ir.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    Partial,
    PyTreeDef,
    SequenceKey,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from lamina.ir.trees.errors import equality_errors, equality_errors_pytreedef
from lamina.ir.trees.pytree import PyTreeRegistry

# ----------------------------------------------------------------------------- fixtures

Point = collections.namedtuple("Point", ["x", "y"])
Other = collections.namedtuple("Other", ["x", "y"])


class TypedPoint(typing.NamedTuple):
    a: int
    b: int


class SubPoint(Point):
    pass


class Box:
    """A custom node: two children and a string auxiliary datum."""

    def __init__(self, a, b, tag="aux"):
        self.a, self.b, self.tag = a, b, tag

    def __eq__(self, other):
        return type(other) is Box and (self.a, self.b, self.tag) == (other.a, other.b, other.tag)

    def __repr__(self):
        return f"Box({self.a!r}, {self.b!r})"


tu.register_pytree_node(Box, lambda b: ((b.a, b.b), b.tag), lambda tag, ch: Box(*ch, tag))


@dataclasses.dataclass
class Params:
    w: typing.Any
    b: typing.Any
    name: str = tree.static(default="lin")


tu.register_dataclass(Params)


class MyList(list):
    pass


class MyDict(dict):
    pass


class MyTuple(tuple):
    __slots__ = ()


a = np.arange(3.0)


def flat(t, **kw):
    leaves, td = tree_flatten(t, **kw)
    return leaves, repr(td)


# ------------------------------------------------------------------ flatten / unflatten

ROUND_TRIPS = [
    # (tree, leaves, repr of the structure, num_leaves, num_nodes)
    (1, [1], "PyTreeDef(*)", 1, 1),
    (None, [], "PyTreeDef(None)", 0, 1),
    ((1, {"a": 2}), [1, 2], "PyTreeDef((*, {'a': *}))", 2, 4),
    ([1, [2, 3], ()], [1, 2, 3], "PyTreeDef([*, [*, *], ()])", 3, 6),
    ({}, [], "PyTreeDef({})", 0, 1),
    ((7,), [7], "PyTreeDef((*,))", 1, 2),
    ((None,), [], "PyTreeDef((None,))", 0, 2),
    ({"b": 1, "a": 2, "c": None}, [2, 1], "PyTreeDef({'a': *, 'b': *, 'c': None})", 2, 4),
    ({1: "x", 0: "y"}, ["y", "x"], "PyTreeDef({0: *, 1: *})", 2, 3),
    ({(1, 2): 1, (0, 5): 2}, [2, 1], "PyTreeDef({(0, 5): *, (1, 2): *})", 2, 3),
    ({"a": {"b": 2}}, [2], "PyTreeDef({'a': {'b': *}})", 1, 3),
    ([[]], [], "PyTreeDef([[]])", 0, 2),
    (({},), [], "PyTreeDef(({},))", 0, 2),
    (Point(1, 2), [1, 2], "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))", 2, 3),
    (TypedPoint(1, 2), [1, 2], "PyTreeDef(CustomNode(namedtuple[TypedPoint], [*, *]))", 2, 3),
    (SubPoint(1, 2), [1, 2], "PyTreeDef(CustomNode(namedtuple[SubPoint], [*, *]))", 2, 3),
    (
        collections.OrderedDict([("b", 1), ("a", 2)]),
        [1, 2],
        "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))",
        2,
        3,
    ),
    (
        collections.defaultdict(list, {"b": 1, "a": 2}),
        [2, 1],
        "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))",
        2,
        3,
    ),
    (Box(1, (2, 3)), [1, 2, 3], "PyTreeDef(CustomNode(Box[aux], [*, (*, *)]))", 3, 5),
    (Params(1, 2), [1, 2], "PyTreeDef(CustomNode(Params[('lin',)], [*, *]))", 2, 3),
    (
        [1, (2, {"k": None}), Point(3, [4])],
        [1, 2, 3, 4],
        "PyTreeDef([*, (*, {'k': None}), CustomNode(namedtuple[Point], [*, [*]])])",
        4,
        10,
    ),
]


@pytest.mark.parametrize("case", ROUND_TRIPS, ids=lambda c: repr(c[2]))
def test_flatten_unflatten_round_trip(case):
    t, leaves, text, n_leaves, n_nodes = case
    got_leaves, td = tree_flatten(t)
    assert got_leaves == leaves
    assert repr(td) == text and str(td) == text
    assert (td.num_leaves, td.num_nodes) == (n_leaves, n_nodes)
    back = tree_unflatten(td, got_leaves)
    assert type(back) is type(t)
    assert back == t
    assert tree_leaves(t) == leaves
    assert tree_structure(t) == td
    assert tree_structure(back) == td


def test_unflatten_rebuilds_dicts_in_sorted_key_order():
    leaves, td = tree_flatten({"b": 1, "a": 2})
    assert list(tree_unflatten(td, leaves)) == ["a", "b"]
    assert list(tree_map(lambda x: x, {"b": 1, "a": 2})) == ["a", "b"]
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert list(tree_map(lambda x: x, od)) == ["b", "a"]


def test_defaultdict_keeps_its_default_factory():
    d = collections.defaultdict(list, {"b": 1, "a": 2})
    out = tree_map(lambda x: x * 10, d)
    assert type(out) is collections.defaultdict and out.default_factory is list
    assert dict(out) == {"a": 20, "b": 10}
    empty = collections.defaultdict(int)
    assert flat(empty) == ([], "PyTreeDef(CustomNode(defaultdict[(<class 'int'>, ())], []))")


def test_unflatten_accepts_any_iterable():
    td = tree_structure([1, (2, 3)])
    assert tree_unflatten(td, iter("abc")) == ["a", ("b", "c")]
    assert tree_unflatten(td, (x for x in [4, 5, 6])) == [4, (5, 6)]
    assert tree_unflatten(td, np.array([1, 2, 3])) == [1, (2, 3)]
    assert tree_unflatten(tree_structure(1), ["only"]) == "only"


def test_leaves_are_everything_unregistered():
    s = np.float32(1.5)
    assert flat(a) == ([a], "PyTreeDef(*)")
    leaves, _ = tree_flatten([a, s, "text", 3 + 4j, b"raw", {1, 2}])
    assert leaves[0] is a and leaves[1] is s and leaves[2:] == ["text", 3 + 4j, b"raw", {1, 2}]
    # Registration is by exact type: subclasses of list, dict and tuple are leaves.
    for x in (MyList([1, 2]), MyDict(a=1), MyTuple((1, 2))):
        leaves, td = tree_flatten(x)
        assert leaves == [x] and leaves[0] is x and repr(td) == "PyTreeDef(*)"


def test_none_is_an_empty_node():
    assert tree_leaves([None, 1, (None,)]) == [1]
    assert tree_map(lambda x: x + 1, [None, 1]) == [None, 2]
    assert tree_map(lambda x: x, None) is None
    assert flat(None, is_leaf=lambda x: x is None) == ([None], "PyTreeDef(*)")
    assert tree_map(lambda x: 0, [None, 1], is_leaf=lambda x: x is None) == [0, 0]


def test_is_leaf_stops_recursion():
    t = (1, (2, 3), [4, (5,)])
    assert flat(t, is_leaf=lambda x: isinstance(x, tuple)) == ([t], "PyTreeDef(*)")
    leaves, td = tree_flatten(t, is_leaf=lambda x: isinstance(x, tuple) and len(x) == 2)
    assert leaves == [1, (2, 3), 4, 5]
    assert repr(td) == "PyTreeDef((*, *, [*, (*,)]))"
    leaves, td = tree_flatten(
        [Box(1, [2, 3])], is_leaf=lambda x: isinstance(x, list) and len(x) == 2
    )
    assert leaves == [1, [2, 3]]
    assert repr(td) == "PyTreeDef([CustomNode(Box[aux], [*, *])])"
    is_seq = lambda x: isinstance(x, (list, tuple))  # noqa: E731
    assert tree_map(len, {"a": [1, 2], "b": (3,)}, is_leaf=is_seq) == {"a": 2, "b": 1}


def test_namedtuple_and_tuple_structures_differ():
    t, p, o = tree_structure((1, 2)), tree_structure(Point(1, 2)), tree_structure(Other(1, 2))
    assert t != p and p != o and t != o
    assert tree_structure(Point(5, 6)) == p
    assert tree_structure([1]) != tree_structure((1,))
    assert tree_unflatten(tree_structure(TypedPoint(1, 2)), [5, 6]) == TypedPoint(a=5, b=6)


def test_dict_key_sorting_failure_is_a_value_error():
    msg = "Comparator raised exception while sorting pytree dictionary keys."
    with pytest.raises(ValueError, match=msg):
        tree_flatten({1: 2, "a": 3})
    with pytest.raises(ValueError, match=msg):
        tree_structure({None: 1, "a": 2})


def test_unflatten_leaf_count_errors():
    td = tree_structure((1, {"a": 2}))
    with pytest.raises(ValueError) as e:
        tree_unflatten(td, [1])
    assert str(e.value) == "Too few leaves for PyTreeDef; expected 2, got 1"
    with pytest.raises(ValueError) as e:
        tree_unflatten(td, [1, 2, 3])
    assert str(e.value) == "Too many leaves for PyTreeDef; expected 2."
    with pytest.raises(ValueError, match="Too few leaves for PyTreeDef; expected 1, got 0"):
        tree_unflatten(tree_structure(1), [])
    with pytest.raises(ValueError, match=r"Too many leaves for PyTreeDef; expected 0\."):
        tree_unflatten(tree_structure(None), [1])


# -------------------------------------------------------------------------- PyTreeDef


def test_treedef_equality_and_hash():
    s = tree_structure
    assert s({"a": 1, "b": 2}) == s({"b": 3, "a": 4})
    assert s({"a": 1}) != s({"b": 1})
    assert s(Box(1, 2, "x")) != s(Box(1, 2, "y"))
    assert s(Box(1, 2, "x")) == s(Box(3, 4, "x"))
    assert s(collections.OrderedDict(a=1, b=2)) != s(collections.OrderedDict(b=2, a=1))
    assert s(collections.defaultdict(list, a=1)) != s(collections.defaultdict(int, a=1))
    assert s(1) != 1 and s(1) != s(None) and s(1) != "*"
    cache = {s({"x": [1, 2], "y": Point(1, None)}): "hit"}
    assert cache[s({"y": Point(7, None), "x": [8, 9]})] == "hit"
    assert hash(s(Box(1, 2))) == hash(s(Box(5, 6)))
    with pytest.raises(TypeError):
        _ = s(1) < s(2)


def test_treedef_with_unhashable_aux_data_still_hashes():
    td1, td2 = tree_structure(Box(1, 2, ["m"])), tree_structure(Box(3, 4, ["m"]))
    assert td1 == td2 and hash(td1) == hash(td2)
    assert repr(td1) == "PyTreeDef(CustomNode(Box[['m']], [*, *]))"


def test_treedef_has_no_public_constructor():
    with pytest.raises(TypeError):
        PyTreeDef()


def test_children_and_node_data():
    td = tree_structure(
        (
            1,
            {"b": [2, None], "a": Point(3, 4)},
            Box(5, 6),
            collections.OrderedDict(z=1, y=2),
            collections.defaultdict(int, b=1),
        )
    )
    assert [repr(c) for c in td.children()] == [
        "PyTreeDef(*)",
        "PyTreeDef({'a': CustomNode(namedtuple[Point], [*, *]), 'b': [*, None]})",
        "PyTreeDef(CustomNode(Box[aux], [*, *]))",
        "PyTreeDef(CustomNode(OrderedDict[('z', 'y')], [*, *]))",
        "PyTreeDef(CustomNode(defaultdict[(<class 'int'>, ('b',))], [*]))",
    ]
    assert tu.treedef_children(td) == td.children()
    assert td.node_data() == (tuple, None)
    assert [c.node_data() for c in td.children()] == [
        None,
        (dict, ["a", "b"]),
        (Box, "aux"),
        (collections.OrderedDict, ("z", "y")),
        (collections.defaultdict, (int, ("b",))),
    ]
    assert tree_structure(Point(1, 2)).node_data() == (Point, None)
    assert tree_structure(None).node_data() == (type(None), None)
    assert tree_structure([]).node_data() == (list, None)
    assert tree_structure({}).node_data() == (dict, [])
    assert tree_structure(1).children() == [] and tree_structure(None).children() == []


def test_treedef_is_leaf_and_treedef_tuple():
    assert tu.treedef_is_leaf(tree_structure(1))
    assert tu.treedef_is_leaf(tree_structure(None))
    assert tu.treedef_is_leaf(tree_structure(()))
    assert not tu.treedef_is_leaf(tree_structure((1,)))
    tt = tu.treedef_tuple([tree_structure(1), tree_structure([1, 2]), tree_structure(None)])
    assert repr(tt) == "PyTreeDef((*, [*, *], None))"
    assert (tt.num_leaves, tt.num_nodes) == (3, 6)
    assert tt == tree_structure((0, [0, 0], None))
    assert repr(tu.treedef_tuple([])) == "PyTreeDef(())"
    assert tu.treedef_tuple(iter([tree_structure(1)])).unflatten([9]) == (9,)


def test_compose():
    outer = tree_structure([1, 2])
    assert repr(outer.compose(tree_structure({"a": 1}))) == "PyTreeDef([{'a': *}, {'a': *}])"
    composed = tree_structure([1, None]).compose(tree_structure((1, 2)))
    assert repr(composed) == "PyTreeDef([(*, *), None])"
    assert composed.num_leaves == 2
    assert tree_structure([1, 2]).compose(tree_structure(None)).num_leaves == 0
    assert composed.unflatten("ab") == [("a", "b"), None]


def test_walk():
    td = tree_structure([1, (2, 3)])
    assert td.walk(lambda children, data: tuple(children), lambda x: x * 10, [1, 2, 3]) == (
        10,
        (20, 30),
    )
    td = tree_structure({"a": [1, 2], "p": Point(1, 2), "n": None})
    out = td.walk(lambda c, d: (c, d), None, [1, 2, 3, 4])
    assert out == ((((1, 2), None), ((), None), ((3, 4), Point)), ["a", "n", "p"])
    with pytest.raises(ValueError, match="Too few leaves for PyTreeDef"):
        tree_structure([1, 2]).walk(lambda c, d: c, None, [1])
    with pytest.raises(ValueError, match="Too many leaves for PyTreeDef"):
        tree_structure([1, 2]).walk(lambda c, d: c, None, [1, 2, 3])


def test_from_node_data_and_children():
    reg = tu.default_registry
    make = PyTreeDef.from_node_data_and_children
    s = tree_structure
    assert repr(make(reg, (list, None), [s(1), s(None)])) == "PyTreeDef([*, None])"
    assert repr(make(reg, (dict, ["b", "a"]), [s(1), s((1, 2))])) == (
        "PyTreeDef({'b': *, 'a': (*, *)})"
    )
    assert repr(make(reg, (Box, "aux"), [s(1), s((1, 2))])) == (
        "PyTreeDef(CustomNode(Box[aux], [*, (*, *)]))"
    )
    assert make(reg, (Point, None), [s(1), s(2)]) == s(Point(1, 2))
    assert make(reg, None, []) == s(1)
    assert make(reg, (type(None), None), []) == s(None)
    td = s({"x": [1, Point(2, 3)], "y": Box(4, 5)})
    assert make(reg, td.node_data(), td.children()) == td
    assert make(reg, (tuple, None), [s(1)]).num_leaves == 1
    with pytest.raises(RuntimeError, match=r"Could not find type: <class 'int'>\."):
        make(reg, (int, None), [])


def test_from_iterable_tree():
    assert tree_structure([1, (2, 3)]).from_iterable_tree([5, [6, 7]]) == [5, (6, 7)]
    td = tree_structure({"a": 1, "b": (2, 3)})
    assert td.from_iterable_tree([5, [6, 7]]) == {"a": 5, "b": (6, 7)}
    with pytest.raises(ValueError, match="Arity mismatch between trees"):
        tree_structure([1, 2]).from_iterable_tree([5])


@pytest.mark.parametrize(
    "t",
    [
        1,
        None,
        {"a": [1]},
        (1, {"b": [2, None], "a": (3, 4)}),
        collections.OrderedDict(z=1, y=(2, 3)),
        collections.defaultdict(list, b=1),
        Partial(operator.add, 1),
        Point(1, 2),
        Box(1, 2),
        Params(1, 2),
    ],
)
def test_treedef_pickles(t):
    td = tree_structure(t)
    back = pickle.loads(pickle.dumps(td))
    assert back == td and hash(back) == hash(td) and repr(back) == repr(td)
    rebuilt = back.unflatten(tree_leaves(t))
    assert type(rebuilt) is type(t) and tree_flatten(rebuilt) == tree_flatten(t)


def test_flatten_up_to():
    td = tree_structure((1, {"a": 2}))
    assert td.flatten_up_to((1, {"a": (2, 3)})) == [1, (2, 3)]
    assert td.flatten_up_to((None, {"a": None})) == [None, None]
    assert tree_structure([1, 2]).flatten_up_to([Point(1, 2), 3]) == [Point(1, 2), 3]
    assert tree_structure(Point(1, 2)).flatten_up_to(Point(1, (2, 3))) == [1, (2, 3)]
    assert tree_structure(()).flatten_up_to(()) == []
    assert tree_structure([None]).flatten_up_to([None]) == []


FLATTEN_UP_TO_ERRORS = [
    ((1, {"a": 2}), (1, 2), "Expected dict, got 2."),
    ((1, {"a": 2}), [1, {"a": 2}], "Expected tuple, got [1, {'a': 2}]."),
    (
        (1, {"a": 2}),
        (1, {"b": 2}),
        "Dict key mismatch; expected keys: ['a']; present keys: ['b'].",
    ),
    (
        (1, {"a": 2}),
        (1, {"a": 2}, 3),
        "Tuple arity mismatch: 3 != 2; tuple: (1, {'a': 2}, 3).",
    ),
    ([1, 2], [1], "List arity mismatch: 1 != 2; list: [1]."),
    ([1, 2], (1, 2), "Expected list, got (1, 2)."),
    (
        {"a": 1},
        {"a": 1, "b": 2},
        "Dict key mismatch; expected keys: ['a']; present keys: ['a', 'b'].",
    ),
    ({"a": 1}, collections.OrderedDict(a=1), "Expected dict, got OrderedDict([('a', 1)])."),
    (Point(1, 2), (1, 2), "Expected named tuple, got (1, 2)."),
    (
        Point(1, 2),
        Other(1, 2),
        f"Named tuple type mismatch: expected type: {Point!r}, tuple: Other(x=1, y=2).",
    ),
    (
        Box(1, 2),
        Box(1, 2, "other"),
        "Mismatch custom node data: 'aux' != 'other'; value: Box(1, 2).",
    ),
    (Box(1, 2), (1, 2), f"Custom node type mismatch: expected type: {Box!r}, value: (1, 2)."),
    (
        collections.OrderedDict(a=1, b=2),
        collections.OrderedDict(b=1, a=2),
        "Mismatch custom node data: ('a', 'b') != ('b', 'a'); "
        "value: OrderedDict([('b', 1), ('a', 2)]).",
    ),
    ((), [], "Expected tuple, got []."),
]


@pytest.mark.parametrize("case", FLATTEN_UP_TO_ERRORS, ids=lambda c: c[2][:40])
def test_flatten_up_to_errors(case):
    prefix, full, message = case
    with pytest.raises(ValueError) as e:
        tree_structure(prefix).flatten_up_to(full)
    assert str(e.value) == message


def test_flatten_up_to_none_explains_old_behaviour():
    with pytest.raises(ValueError) as e:
        tree_structure(None).flatten_up_to(1)
    assert str(e.value) == (
        "Expected None, got 1.\n\nIn previous releases of JAX, flatten-up-to used to consider "
        "None to be a tree-prefix of non-None values. To obtain the previous behavior, you can "
        "usually write:\n  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
        "is_leaf=lambda x: x is None)"
    )


def test_custom_arity_mismatch():
    class Var:
        def __init__(self, *xs):
            self.xs = xs

        def __repr__(self):
            return f"Var{self.xs!r}"

    tu.register_pytree_node(Var, lambda v: (v.xs, None), lambda _, xs: Var(*xs))
    with pytest.raises(ValueError) as e:
        tree_structure(Var(1, 2)).flatten_up_to(Var(1, 2, 3))
    assert str(e.value) == "Custom type arity mismatch: 3 != 2; value: Var(1, 2, 3)."


# ---------------------------------------------------------------------------- tree_map


def test_tree_map_several_trees():
    assert tree_map(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)]) == [11, (22, 33)]
    assert tree_map(lambda x, y: (x, y), {"a": 1, "b": 2}, {"b": 3, "a": 4}) == {
        "a": (1, 4),
        "b": (2, 3),
    }
    # The first tree is a prefix: the others may be deeper below its leaves.
    assert tree_map(lambda x, y: (x, y), [1, 2], [None, 3]) == [(1, None), (2, 3)]
    assert tree_map(lambda x, y: y, (1, 2), ((3, 4), {"k": 5})) == ((3, 4), {"k": 5})
    assert tree_map(lambda x, y: x, 1, (1,)) == 1
    calls = []
    tree_map(lambda x: calls.append(x), {"b": [2, 3], "a": 1})
    assert calls == [1, 2, 3]


TREE_MAP_ERRORS = [
    (
        (1, 2),
        (1, 2, 3),
        "pytree structure error: different lengths of tuple at key path\n    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type tuple of "
        "length 2, but the full pytree has a subtree of the same type but of length 3.",
    ),
    (
        (1, 2),
        [1, 2],
        "pytree structure error: different types at key path\n    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'tuple'>\nbut at the same key path the full pytree has a subtree of "
        "different type\n    <class 'list'>.",
    ),
    (
        {"a": 1},
        {"b": 1},
        "pytree structure error: different pytree metadata at key path\n    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'dict'>\nwith metadata\n    ('a',)\nbut at the same key path the full "
        "pytree has a subtree of the same type but with metadata\n    ('b',)\nso the diff in "
        "the metadata at these pytree nodes is\n    - ('a',)\n    ?   ^\n\n    + ('b',)\n"
        "    ?   ^\n",
    ),
    (
        [1, [2]],
        [1, 2],
        "pytree structure error: different types at key path\n    tree_map tree[1]\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'list'>\nbut at the same key path the full pytree has a subtree of "
        "different type\n    <class 'int'>.",
    ),
    (
        {"a": 1, "b": 2},
        {"a": 1},
        "pytree structure error: different numbers of pytree children at key path\n"
        "    tree_map tree\nAt that key path, the prefix pytree tree_map tree has a subtree "
        "of type\n    <class 'dict'>\nwith 2 child keys\n    a b\nbut at the same key path "
        "the full pytree has a subtree of the same type but with 1 child keys\n    a\n"
        "so the symmetric difference on key sets is\n    b",
    ),
    (
        Box(1, 2),
        Box(1, 2, "bar"),
        "pytree structure error: different pytree metadata at key path\n    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        f"    {Box}\nwith metadata\n    aux\nbut at the same key path the full pytree has a "
        "subtree of the same type but with metadata\n    bar\nso the diff in the metadata "
        "at these pytree nodes is\n    - aux\n    + bar",
    ),
    (
        {"a": {"b": [1, 2]}},
        {"a": {"b": [1, 2, 3]}},
        "pytree structure error: different lengths of list at key path\n"
        "    tree_map tree['a']['b']\nAt that key path, the prefix pytree tree_map tree has a "
        "subtree of type list of length 2, but the full pytree has a subtree of the same "
        "type but of length 3.",
    ),
    (
        [1, None],
        [1, 2],
        "pytree structure error: different types at key path\n    tree_map tree[1]\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'NoneType'>\nbut at the same key path the full pytree has a subtree of "
        "different type\n    <class 'int'>.",
    ),
    (
        collections.OrderedDict(a=1, b=2),
        collections.OrderedDict(b=1),
        "pytree structure error: different numbers of pytree children at key path\n"
        "    tree_map tree\nAt that key path, the prefix pytree tree_map tree has a subtree "
        "of type\n    <class 'collections.OrderedDict'>\nwith 2 child keys\n    a b\nbut at "
        "the same key path the full pytree has a subtree of the same type but with 1 child "
        "keys\n    b\nso the symmetric difference on key sets is\n    a",
    ),
]


@pytest.mark.parametrize("case", TREE_MAP_ERRORS, ids=lambda c: c[2].split("\n")[0][24:60])
def test_tree_map_structure_errors(case):
    t1, t2, message = case
    with pytest.raises(ValueError) as e:
        tree_map(lambda x, y: x, t1, t2)
    assert str(e.value) == message
    assert e.value.__cause__ is None and e.value.__suppress_context__


def test_tree_map_with_path_error_names_itself():
    with pytest.raises(ValueError) as e:
        tu.tree_map_with_path(lambda p, x, y: x, [1, 2], [1])
    assert str(e.value).startswith(
        "pytree structure error: different lengths of list at key path\n"
        "    tree_map_with_path tree\n"
    )


def test_equality_errors():
    errs = list(equality_errors({"a": [1, 2], "b": (1,)}, {"a": [1, 2, 3], "b": [1]}))
    assert errs == [
        ((DictKey("a"),), "list of length 2", "list of length 3", "the lengths do not match"),
        ((DictKey("b"),), "<class 'tuple'>", "<class 'list'>", "their Python types differ"),
    ]
    assert list(equality_errors([1, {"k": 2}], [3, {"k": 4}])) == []
    assert list(equality_errors({"a": 1, "b": 2}, {"a": 1})) == [
        (
            (),
            "<class 'dict'> with 2 children",
            "<class 'dict'> with 1 child",
            "the numbers of children do not match, with the symmetric difference of key "
            "sets: {'b'}",
        )
    ]
    errs = list(equality_errors_pytreedef(tree_structure({"a": 1}), tree_structure({"b": 1})))
    assert errs == [
        (
            (),
            "<class 'dict'> with pytree metadata ('a',)",
            "<class 'dict'> with pytree metadata ('b',)",
            "the pytree node metadata does not match",
        )
    ]


# --------------------------------------------------------------------------- key paths


def _path_tree():
    class KW:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tu.register_pytree_with_keys(
        KW,
        lambda k: (((GetAttrKey("a"), k.a), (DictKey("bee"), k.b)), None),
        lambda aux, ch: KW(*ch),
    )
    return {
        "a": [1, (2, Point(3, 4))],
        "b": Box(5, 6),
        "c": Params(7, 8),
        "d": collections.OrderedDict(z=9, y=10),
        "e": collections.defaultdict(int, {3: 11}),
        "f": KW(12, 13),
        "g": Partial(print, 14, k=15),
        "h": None,
    }


def test_flatten_with_path_and_keystr():
    t = _path_tree()
    pairs, td = tree_flatten_with_path(t)
    assert td == tree_structure(t)
    got = [(keystr(p), keystr(p, simple=True, separator="/"), x) for p, x in pairs]
    assert got == [
        ("['a'][0]", "a/0", 1),
        ("['a'][1][0]", "a/1/0", 2),
        ("['a'][1][1].x", "a/1/1/x", 3),
        ("['a'][1][1].y", "a/1/1/y", 4),
        ("['b'][<flat index 0>]", "b/0", 5),
        ("['b'][<flat index 1>]", "b/1", 6),
        ("['c'].w", "c/w", 7),
        ("['c'].b", "c/b", 8),
        ("['d']['z']", "d/z", 9),
        ("['d']['y']", "d/y", 10),
        ("['e'][3]", "e/3", 11),
        ("['f'].a", "f/a", 12),
        ("['f']['bee']", "f/bee", 13),
        ("['g'][<flat index 0>][0]", "g/0/0", 14),
        ("['g'][<flat index 1>]['k']", "g/1/k", 15),
    ]
    assert pairs[3][0] == (DictKey("a"), SequenceKey(1), SequenceKey(1), GetAttrKey("y"))
    assert [keystr(p, simple=True) for p, _ in pairs][:3] == ["a0", "a10", "a11x"]


def test_leaves_and_map_with_path():
    assert tu.tree_leaves_with_path([1, None, 2]) == [
        ((SequenceKey(0),), 1),
        ((SequenceKey(2),), 2),
    ]
    assert tu.tree_leaves_with_path(5) == [((), 5)]
    assert tu.tree_leaves_with_path(None) == []
    assert tu.tree_map_with_path(lambda p, x: (keystr(p), x), {"a": [1, 2]}) == {
        "a": [("['a'][0]", 1), ("['a'][1]", 2)]
    }
    assert tu.tree_map_with_path(lambda p, x, y: x + y, (1, 2), (10, 20)) == (11, 22)


def test_with_path_is_leaf():
    t = [1, [2, 3]]
    pairs, td = tree_flatten_with_path(
        t, is_leaf=lambda p, x: len(p) == 1 and isinstance(x, list), is_leaf_takes_path=True
    )
    assert pairs == [((SequenceKey(0),), 1), ((SequenceKey(1),), [2, 3])]
    assert repr(td) == "PyTreeDef([*, *])"
    pairs, td = tree_flatten_with_path(t, is_leaf=lambda x: isinstance(x, list) and len(x) == 2)
    assert pairs == [((), [1, [2, 3]])] and repr(td) == "PyTreeDef(*)"


def test_key_entries():
    cases = [
        (SequenceKey(0), "SequenceKey(idx=0)", "[0]"),
        (DictKey("a"), "DictKey(key='a')", "['a']"),
        (DictKey(1), "DictKey(key=1)", "[1]"),
        (DictKey((1, "x")), "DictKey(key=(1, 'x'))", "[(1, 'x')]"),
        (DictKey("it's"), 'DictKey(key="it\'s")', '["it\'s"]'),
        (GetAttrKey("x"), "GetAttrKey(name='x')", ".x"),
        (FlattenedIndexKey(3), "FlattenedIndexKey(key=3)", "[<flat index 3>]"),
    ]
    for k, r, s in cases:
        assert repr(k) == r and str(k) == s
        assert pickle.loads(pickle.dumps(k)) == k
        assert hash(type(k)(*k.__reduce__()[1])) == hash(k)
    assert SequenceKey(1).idx == 1 and DictKey("q").key == "q"
    assert GetAttrKey("n").name == "n" and FlattenedIndexKey(2).key == 2
    assert SequenceKey(idx=3) == SequenceKey(3) and SequenceKey(True) == SequenceKey(1)
    assert SequenceKey(np.int64(3)).idx == 3
    assert SequenceKey(0) != FlattenedIndexKey(0) and DictKey(0) != SequenceKey(0)
    assert DictKey("a") != "a" and GetAttrKey("a") != DictKey("a")
    assert len({DictKey("a"), DictKey("a"), SequenceKey(0)}) == 2
    assert SequenceKey.__match_args__ == ("idx",) and GetAttrKey.__match_args__ == ("name",)
    match DictKey("k"):
        case SequenceKey(idx=i):
            raise AssertionError(i)
        case DictKey(key=k):
            assert k == "k"
    with pytest.raises(AttributeError):
        SequenceKey(1).idx = 2
    with pytest.raises(TypeError):
        SequenceKey("a")
    with pytest.raises(TypeError):
        GetAttrKey(1)
    with pytest.raises(TypeError):
        FlattenedIndexKey("x")
    with pytest.raises(TypeError):
        _ = SequenceKey(1) < SequenceKey(2)
    with pytest.raises(TypeError, match="unhashable"):
        hash(DictKey([1]))


def test_keystr():
    path = (DictKey("a"), SequenceKey(0), GetAttrKey("x"), FlattenedIndexKey(2))
    assert keystr(path) == "['a'][0].x[<flat index 2>]"
    assert keystr(path, simple=True) == "a0x2"
    assert keystr(path, simple=True, separator=".") == "a.0.x.2"
    assert keystr((DictKey("a"), SequenceKey(0)), separator="/") == "['a']/[0]"
    assert keystr(()) == ""
    assert keystr(("raw", 1), simple=True, separator=".") == "raw.1"
    assert keystr([DictKey("a")]) == "['a']"


# ------------------------------------------------------------------------- registration


def test_register_pytree_node_class():
    @tu.register_pytree_node_class
    class Pair:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten(self):
            return (self.x, self.y), "pair"

        @classmethod
        def tree_unflatten(cls, aux, children):
            assert aux == "pair" and type(children) is tuple
            return cls(*children)

    leaves, td = tree_flatten(Pair(1, [2]))
    assert leaves == [1, 2] and repr(td) == "PyTreeDef(CustomNode(Pair[pair], [*, [*]]))"
    out = tree_map(lambda v: v * 3, Pair(1, [2]))
    assert type(out) is Pair and (out.x, out.y) == (3, [6])
    assert [keystr(p) for p, _ in tu.tree_leaves_with_path(Pair(1, 2))] == [
        "[<flat index 0>]",
        "[<flat index 1>]",
    ]


def test_register_pytree_with_keys_class():
    @tu.register_pytree_with_keys_class
    class Named:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten_with_keys(self):
            return ((GetAttrKey("x"), self.x), (GetAttrKey("y"), self.y)), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    assert [keystr(p) for p, _ in tu.tree_leaves_with_path(Named(1, 2))] == [".x", ".y"]
    assert tree_leaves(Named(1, (2, 3))) == [1, 2, 3]
    assert tree_map(lambda v: -v, Named(1, 2)).y == -2


def test_custom_flatten_may_return_any_iterable():
    class Lazy:
        def __init__(self, *xs):
            self.xs = xs

    tu.register_pytree_node(Lazy, lambda v: (iter(v.xs), None), lambda _, xs: Lazy(*xs))
    leaves, td = tree_flatten(Lazy(1, 2))
    assert leaves == [1, 2] and repr(td) == "PyTreeDef(CustomNode(Lazy[None], [*, *]))"
    assert tree_unflatten(td, [3, 4]).xs == (3, 4)


def test_registering_twice_is_an_error():
    class Once:
        pass

    tu.register_pytree_node(Once, lambda o: ((), None), lambda a, c: Once())
    for nodetype in (Once, list, tuple, dict, type(None), collections.OrderedDict, Partial):
        with pytest.raises(ValueError) as e:
            tu.register_pytree_node(nodetype, lambda o: ((), None), lambda a, c: None)
        assert str(e.value) == f"Duplicate custom PyTreeDef type registration for {nodetype!r}."
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
        tu.register_static(Once)


def test_register_dataclass_as_decorator():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: typing.Any
        y: typing.Any
        op: str = tree.static(default="add")

    m = Op(1, np.arange(2))
    leaves, td = tree_flatten(m)
    assert leaves[0] == 1 and leaves[1] is m.y
    assert repr(td) == "PyTreeDef(CustomNode(Op[('add',)], [*, *]))"
    assert tree_unflatten(td, [5, 6]) == Op(5, 6, "add")
    assert tree_structure(Op(1, 2, "mul")) != td
    assert [keystr(p) for p, _ in tu.tree_leaves_with_path(m)] == [".x", ".y"]
    assert dataclasses.fields(Op)[2].metadata["static"] is True


def test_register_dataclass_explicit_fields_and_drop_fields():
    @dataclasses.dataclass
    class WithDerived:
        a: int
        b: int
        c: int = dataclasses.field(default=0, init=False)

    assert tu.register_dataclass(WithDerived, ["a", "b"], []) is WithDerived
    assert flat(WithDerived(1, 2)) == ([1, 2], "PyTreeDef(CustomNode(WithDerived[()], [*, *]))")
    assert tree_unflatten(tree_structure(WithDerived(1, 2)), [3, 4]) == WithDerived(3, 4)

    @dataclasses.dataclass
    class Dropped:
        a: int
        b: int = 7

    tu.register_dataclass(Dropped, ["a"], [], drop_fields=["b"])
    assert flat(Dropped(1, 2)) == ([1], "PyTreeDef(CustomNode(Dropped[()], [*]))")
    assert tree_unflatten(tree_structure(Dropped(1, 2)), [3]) == Dropped(3, 7)


def test_register_dataclass_on_a_plain_class():
    class Plain:
        def __init__(self, x, y):
            self.x, self.y = x, y

    tu.register_dataclass(Plain, ["x"], ["y"])
    pairs, td = tree_flatten_with_path(Plain(1, "m"))
    assert pairs == [((GetAttrKey("x"),), 1)]
    assert repr(td) == "PyTreeDef(CustomNode(Plain[('m',)], [*]))"
    back = tree_unflatten(td, [5])
    assert (back.x, back.y) == (5, "m")
    assert tree_structure(Plain(2, "m")) == td and tree_structure(Plain(2, "n")) != td


def test_register_dataclass_errors():
    @dataclasses.dataclass
    class D:
        a: int
        b: int
        c: int = dataclasses.field(default=0, init=False)

    with pytest.raises(ValueError) as e:
        tu.register_dataclass(D, ["a"], ["c"])
    assert str(e.value) == (
        "data_fields and meta_fields must include all dataclass fields with ``init=True`` "
        "and only them. Missing fields: {'b'}. Add them to drop_fields to suppress this "
        "error. Unexpected fields: {'c'}."
    )
    with pytest.raises(ValueError) as e:
        tu.register_dataclass(D, ["a", "b"], ["b"])
    assert str(e.value) == (
        "data_fields and meta_fields must not overlap. Overlapping fields: {'b'}."
    )
    with pytest.raises(TypeError) as e:
        tu.register_dataclass(D, ["a"], None)
    assert str(e.value) == (
        "register_dataclass: data_fields and meta_fields must both be specified when either "
        "is specified. Got data_fields=['a'] meta_fields=None."
    )

    class NotDC:
        pass

    with pytest.raises(TypeError) as e:
        tu.register_dataclass(NotDC)
    assert str(e.value) == (
        "register_dataclass: data_fields and meta_fields are required when nodetype is not "
        f"a dataclass. Got nodetype={NotDC!r}."
    )


def test_register_static():
    @tu.register_static
    class Config:
        def __init__(self, n):
            self.n = n

        def __eq__(self, other):
            return type(other) is Config and other.n == self.n

        def __hash__(self):
            return hash(self.n)

        def __repr__(self):
            return f"Config({self.n})"

    c = Config(3)
    leaves, td = tree_flatten((c, 1))
    assert leaves == [1]
    assert repr(td) == "PyTreeDef((CustomNode(Config[Config(3)], []), *))"
    assert tree_unflatten(td, [2])[0] is c
    assert tree_structure(Config(3)) == tree_structure(Config(3))
    assert tree_structure(Config(3)) != tree_structure(Config(4))
    assert tu.tree_leaves_with_path([c]) == []


def test_registration_reaches_registries_made_earlier_and_later():

    before = PyTreeRegistry(enable_none=False)

    class Late:
        def __init__(self, v):
            self.v = v

    tu.register_pytree_node(Late, lambda x: ((x.v,), None), lambda _, c: Late(*c))
    after = PyTreeRegistry()
    assert before.flatten([Late(1), None])[0] == [1, None]
    assert after.flatten([Late(1), None])[0] == [1]
    assert repr(before.flatten(None)[1]) == "PyTreeDef(*)"


def test_is_tree_node_and_flatten_one_level():
    assert tu.is_tree_node(list) and tu.is_tree_node(type(None)) and tu.is_tree_node(Point)
    assert tu.is_tree_node(Box) and tu.is_tree_node(collections.OrderedDict)
    assert not tu.is_tree_node(int) and not tu.is_tree_node(MyList)
    assert tu.flatten_one_level({"b": 1, "a": 2}) == ((2, 1), ("a", "b"))
    assert tu.flatten_one_level((1, 2)) == ((1, 2), None)
    assert tu.flatten_one_level(None) == ((), None)
    assert tu.flatten_one_level(Box(1, 2)) == ((1, 2), "aux")
    assert tu.flatten_one_level(collections.OrderedDict(b=1, a=2)) == ([1, 2], ("b", "a"))
    children, aux = tu.flatten_one_level(Point(1, 2))
    assert list(children) == [1, 2] and aux is Point
    assert tu.flatten_one_level_with_keys({"b": 1, "a": 2}) == (
        ((DictKey("a"), 2), (DictKey("b"), 1)),
        ("a", "b"),
    )
    assert tu.flatten_one_level_with_keys([5, 6]) == (
        ((SequenceKey(0), 5), (SequenceKey(1), 6)),
        None,
    )
    keyed, _ = tu.flatten_one_level_with_keys(Box(1, 2))
    assert list(keyed) == [(FlattenedIndexKey(0), 1), (FlattenedIndexKey(1), 2)]
    keyed, _ = tu.flatten_one_level_with_keys(Point(1, 2))
    assert list(keyed) == [(GetAttrKey("x"), 1), (GetAttrKey("y"), 2)]
    for f in (tu.flatten_one_level, tu.flatten_one_level_with_keys):
        with pytest.raises(ValueError) as e:
            f(1)
        assert str(e.value) == "can't tree-flatten type: <class 'int'>"


# ------------------------------------------------------------------------------ Partial


def _f(a, b, c=0):
    return a + 100 * b + 10000 * c


def test_partial_is_a_pytree():
    p = Partial(_f, 1, c=3)
    assert isinstance(p, functools.partial) and p(2) == 30201
    leaves, td = tree_flatten(p)
    assert leaves == [1, 3]
    assert repr(td) == f"PyTreeDef(CustomNode(Partial[{_f!r}], [(*,), {{'c': *}}]))"
    q = tree_map(lambda x: x * 10, p)
    assert type(q) is Partial and q.func is _f and q.args == (10,) and q.keywords == {"c": 30}
    assert q(2) == 300210
    assert repr(Partial(_f)) == f"Partial({_f!r})"
    assert flat(Partial(_f)) == ([], f"PyTreeDef(CustomNode(Partial[{_f!r}], [(), {{}}]))")
    assert tree_structure(Partial(_f, 1)) == tree_structure(Partial(_f, 2))
    assert tree_structure(Partial(_f, 1)) != tree_structure(Partial(_f, 1, c=1))


def test_partial_of_a_partial_keeps_the_inner_one_static():
    inner = functools.partial(_f, 1)
    q = Partial(inner, 2)
    assert repr(q) == f"Partial(_HashableCallableShim({inner!r}), 2)"
    assert q(c=5) == 50201
    assert tree_leaves(q) == [2]
    assert q.func.func is _f and q.func.args == (1,) and q.args == (2,)
    assert tree_structure(Partial(inner, 0)) == tree_structure(q)
    # Distinct (though alike) functools.partial objects compare by identity.
    assert tree_structure(Partial(functools.partial(_f, 1))) != tree_structure(
        Partial(functools.partial(_f, 1))
    )
    nested = Partial(Partial(_f, 1), 2)
    assert nested(3) == 30201 and tree_leaves(nested) == [2]


def test_partial_pickles():
    p = pickle.loads(pickle.dumps(Partial(operator.add, 1)))
    assert type(p) is Partial and p(2) == 3
    q = pickle.loads(pickle.dumps(Partial(functools.partial(_f, 1), 2)))
    assert q(3) == 30201


# ------------------------------------------------------------- reductions and reshaping


def test_tree_reduce():
    is_tuple = lambda x: isinstance(x, tuple)  # noqa: E731
    assert tu.tree_reduce(operator.add, [1, (2, 3)]) == 6
    assert tu.tree_reduce(operator.add, [1, 2, 3], 10) == 16
    assert tu.tree_reduce(operator.add, [], None) is None
    assert tu.tree_reduce(lambda acc, x: [*acc, x], {"b": 2, "a": 1}, []) == [1, 2]
    assert tu.tree_reduce(lambda acc, x: acc + len(x), [(1, 2), [(3,)]], 0, is_tuple) == 3
    with pytest.raises(TypeError, match="reduce\\(\\) of empty iterable with no initial value"):
        tu.tree_reduce(operator.add, [])


def test_tree_reduce_associative():
    assert tu.tree_reduce_associative(operator.add, [1, 2, 3]) == 6
    assert tu.tree_reduce_associative(lambda x, y: (x, y), [1, 2, 3, 4, 5]) == (
        (1, 2),
        (3, (4, 5)),
    )
    assert tu.tree_reduce_associative(operator.add, [], identity=0) == 0
    assert tu.tree_reduce_associative(operator.add, [7]) == 7
    with pytest.raises(TypeError) as e:
        tu.tree_reduce_associative(operator.add, [])
    assert str(e.value) == "Must specify identity for parallel reduction of empty sequence."


def test_tree_all_and_all_leaves():
    assert tu.tree_all([1, True, None]) and not tu.tree_all([1, 0]) and tu.tree_all([])
    assert tu.tree_all([[1], None], is_leaf=lambda x: x is None) is False
    assert tu.all_leaves([1, 2, a])
    assert not tu.all_leaves([1, None]) and not tu.all_leaves([1, (2,)])
    assert tu.all_leaves([1, (2,)], is_leaf=lambda x: isinstance(x, tuple))
    assert tu.all_leaves([1, None], is_leaf=lambda x: x is None)
    assert tu.all_leaves([]) and tu.all_leaves(iter([1, "a"]))


def test_tree_transpose():
    outer, inner = tree_structure([0, 0]), tree_structure((0, 0, 0))
    x = [(1, 2, 3), (4, 5, 6)]
    assert tu.tree_transpose(outer, inner, x) == ([1, 4], [2, 5], [3, 6])
    assert tu.tree_transpose(outer, None, x) == ([1, 4], [2, 5], [3, 6])
    d = {"a": [1, 2], "b": [3, 4]}
    got = tu.tree_transpose(tree_structure({"a": 0, "b": 0}), tree_structure([0, 0]), d)
    assert got == [{"a": 1, "b": 3}, {"a": 2, "b": 4}]
    with pytest.raises(TypeError) as e:
        tu.tree_transpose(outer, tree_structure((0, 0)), x)
    assert str(e.value) == (
        "Mismatch\nPyTreeDef([(*, *, *), (*, *, *)])\n != \nPyTreeDef([(*, *), (*, *)])"
    )


def test_tree_broadcast():
    assert tu.tree_broadcast([1, {"a": 2}], [(3, 4), {"a": [5, 6]}]) == [(1, 1), {"a": [2, 2]}]
    assert tu.tree_broadcast(1, {"a": [1, 2], "b": None}) == {"a": [1, 1], "b": None}
    assert tu.broadcast_prefix((1, 2), ([0, 0], 0)) == [1, 1, 2]
    with pytest.raises(ValueError) as e:
        tu.tree_broadcast([1, 2], [3, 4, 5])
    assert str(e.value) == (
        "pytree structure error: different lengths of list at key path\n"
        "    broadcast_prefix prefix_tree\nAt that key path, the prefix pytree "
        "broadcast_prefix prefix_tree has a subtree of type list of length 2, but the full "
        "pytree has a subtree of the same type but of length 3."
    )


# ----------------------------------------------------------------------- the public face

JAX_TREE_UTIL_NAMES = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
    "PyTreeDef", "SequenceKey", "all_leaves", "default_registry", "flatten_one_level",
    "flatten_one_level_with_keys", "is_tree_node", "keystr", "register_dataclass",
    "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_static", "tree_all", "tree_broadcast",
    "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path",
    "tree_map", "tree_map_with_path", "tree_reduce", "tree_reduce_associative",
    "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
    "treedef_is_leaf", "treedef_tuple",
]  # fmt: skip

JAX_TREE_NAMES = [
    "all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
    "map_with_path", "reduce", "reduce_associative", "static", "structure", "transpose",
    "unflatten",
]  # fmt: skip


def test_public_names_match_jax():
    assert sorted(tu.__all__) == sorted(JAX_TREE_UTIL_NAMES)
    assert sorted(tree.__all__) == sorted(JAX_TREE_NAMES)
    for name in JAX_TREE_UTIL_NAMES:
        assert hasattr(tu, name), name
    for name in JAX_TREE_NAMES:
        assert hasattr(tree, name), name


def test_jax_tree_api():
    t = {"b": [1, 2], "a": (3, None)}
    leaves, td = tree.flatten(t)
    assert leaves == [3, 1, 2] and tree.structure(t) == td
    assert tree.unflatten(td, leaves) == t
    assert tree.leaves(t) == [3, 1, 2]
    assert tree.map(lambda x, y: x * y, t, t) == {"b": [1, 4], "a": (9, None)}
    assert tree.reduce(operator.add, t) == 6 and tree.reduce(operator.add, t, 4) == 10
    assert tree.reduce_associative(operator.mul, t) == 6
    assert tree.all(t) and not tree.all([0])
    assert tree.transpose(tree.structure([0, 0]), None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert tree.broadcast((1, 2), ([0, 0], 0)) == ([1, 1], 2)
    assert [keystr(p) for p, _ in tree.leaves_with_path(t)] == ["['a'][0]", "['b'][0]", "['b'][1]"]
    assert tree.flatten_with_path([5])[0] == [((SequenceKey(0),), 5)]
    assert tree.map_with_path(lambda p, x: len(p), t) == {"b": [2, 2], "a": (2, None)}


def test_tree_static_field():
    f = tree.static(default=3, metadata={"doc": "n"})
    assert f.default == 3 and dict(f.metadata) == {"static": True, "doc": "n"}
    assert dict(tree.static().metadata) == {"static": True}


def test_registering_a_type_already_met_as_a_leaf():
    class Seen:
        def __init__(self, v):
            self.v = v

    s = Seen(1)
    assert tree_leaves([s]) == [s]  # remembered as a leaf type...
    tu.register_pytree_node(Seen, lambda x: ((x.v,), None), lambda _, c: Seen(*c))
    assert tree_leaves([s]) == [1]  # ...and forgotten on registration
    assert tree_leaves(s, is_leaf=lambda x: False) == [1]

    Pair = collections.namedtuple("Pair", "p q")
    assert repr(tree_structure(Pair(1, 2))) == "PyTreeDef(CustomNode(namedtuple[Pair], [*, *]))"
    tu.register_pytree_node(Pair, lambda x: ((x.q,), x.p), lambda p, c: Pair(p, *c))
    leaves, td = tree_flatten(Pair(1, 2))
    assert leaves == [2] and repr(td) == "PyTreeDef(CustomNode(Pair[1], [*]))"


def test_registry_register_dataclass_node_registers_in_that_registry():
    # jaxlib's PyTreeRegistry method (flax.nnx registers through it): children are the
    # data fields, the auxiliary data the meta fields' values.
    @dataclasses.dataclass
    class Node:
        weight: object
        name: str

    registry = tu.default_registry
    registry.register_dataclass_node(Node, ["weight"], ["name"])
    leaves, treedef = registry.flatten(Node(3, "w"))
    assert leaves == [3]
    assert tu.tree_leaves(Node(4, "w")) == [4]  # the default registry is tree_util's
    rebuilt = tu.tree_unflatten(treedef, [5])
    assert (rebuilt.weight, rebuilt.name) == (5, "w")
    assert tu.tree_flatten_with_path(Node(3, "w"))[0] == [((tu.GetAttrKey("weight"),), 3)]
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
        registry.register_dataclass_node(Node, ["weight"], ["name"])
