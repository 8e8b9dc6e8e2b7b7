"""PartitionSpec against the behaviour recorded from JAX 0.10.2."""

import pickle

import pytest

from lamina.sharding import P, PartitionSpec


def test_p_is_partition_spec():
    assert P is PartitionSpec


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        # recorded from JAX 0.10.2
        (P(), "P()"),
        (P(None), "P(None,)"),
        (P(()), "P(None,)"),
        (P(["x", "y"]), "P(('x', 'y'),)"),
        (P(("x",), None), "P('x', None)"),
        (P("x", None, ("x", "y")), "P('x', None, ('x', 'y'))"),
        (P("x", P.UNCONSTRAINED), "P('x', UNCONSTRAINED)"),
        (P("x", unreduced={"y"}), "P('x', unreduced={'y'})"),
        (P("x", reduced={"y"}, unreduced={"z"}), "P('x', unreduced={'z'}, reduced={'y'})"),
    ],
)
def test_repr(spec, text):
    assert repr(spec) == text
    assert str(spec) == text


def test_equality_and_hash():
    assert P("x") == P("x") and hash(P("x")) == hash(P("x"))
    assert P(("x",)) == P("x")
    assert P("x") != P("x", None)
    assert P("x") != ("x",)


def test_sequence_behaviour():
    spec = P("x", None, ("a", "b"))
    assert len(spec) == 3
    assert spec[1] is None and spec[0:1] == ("x",)
    assert list(spec) == ["x", None, ("a", "b")]
    assert spec.index(None) == 1 and spec.count("x") == 1
    assert spec.index(["a", "b"]) == 2


def test_add():
    assert P("x") + P("y") == P("x", "y")
    assert P("x") + ("y",) == P("x", "y")  # noqa: RUF005 (P's __add__ under test)
    assert ("y",) + P("x") == P("y", "x")  # noqa: RUF005
    assert P("x", unreduced={"u"}) + P("y") == P("x", "y", unreduced={"u"})


def test_update_and_normalized():
    assert P("x").update(partitions=("y",)) == P("y")
    assert P("x", P.UNCONSTRAINED)._normalized_spec_for_aval(3) == P("x", None, None)


def test_pickle():
    spec = P("x", ("a", "b"), unreduced={"c"})
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert pickle.loads(pickle.dumps(P.UNCONSTRAINED)) is P.UNCONSTRAINED


def test_unreduced_guards_indexing():
    spec = P("x", unreduced={"y"})
    assert spec.partitions == ("x",)
    with pytest.raises(ValueError, match=r"Using pspec\[\.\.\.\] is dangerous"):
        spec[0]
    with pytest.raises(ValueError, match=r"Using \*pspec is dangerous"):
        list(spec)


def test_bad_input():
    # messages recorded from JAX 0.10.2
    with pytest.raises(
        ValueError,
        match=r"partitions cannot overlap with unreduced axes passed to PartitionSpec\. "
        r"Got partitions: \('x',\) and unreduced axes: frozenset\(\{'x'\}\)",
    ):
        P("x", unreduced={"x"})
    with pytest.raises(
        TypeError,
        match=r"unreduced argument of PartitionSpec should of type `frozenset` or `set`",
    ):
        P("x", unreduced=["x"])
    with pytest.raises(ValueError, match="cannot overlap"):
        P(unreduced={"a"}, reduced={"a"})
    with pytest.raises(TypeError, match=r"Subclassing `jax\.P` is prohibited"):

        class Sub(P):
            pass


def test_rank_check():
    with pytest.raises(
        ValueError,
        match=r"PartitionSpec P\('x', 'y'\) is only valid for values of rank at least 2, "
        r"but was applied to a value of rank 1\.",
    ):
        P("x", "y")._check_compatible_wrt_shape((8,))
    with pytest.raises(ValueError, match=r"For scalars the PartitionSpec should be P\(\)"):
        P("x")._check_compatible_wrt_shape(())
