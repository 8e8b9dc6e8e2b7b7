"""The table of JAX 0.10.2's primitives (``lamina.ir.core.known_primitives``, recorded
from JAX 0.10.2 by tools/record_primitive_table.py) and the placeholders a registry
makes from it."""

import pytest

from lamina.ir import (
    JaxprTypeError,
    Primitive,
    PrimitiveRegistry,
    check_jaxpr,
    default_registry,
    parse_jaxpr,
    shared_names_rules,
)
from lamina.ir.core.known_primitives import PRIMITIVES
from lamina.ir.core.primitives import pp_param_rules
from lamina.ir.parsing.parser import JaxprSyntaxError


def test_the_table_holds_jax_primitives():
    # Recorded from JAX 0.10.2: some names and whether they have several results.
    assert len(PRIMITIVES) >= 300
    assert PRIMITIVES["add"][0] is False
    assert PRIMITIVES["scan"][0] is True
    assert PRIMITIVES["jit"][1]["jaxpr"] == "closed_jaxpr"
    assert PRIMITIVES["remat2"][1]["jaxpr"] == "jaxpr"
    assert PRIMITIVES["custom_jvp_call"][1]["call_jaxpr"] == "closed_jaxpr"
    for name in ("psum", "sort", "while", "cond", "pallas_call", "shard_map"):
        assert name in PRIMITIVES


def test_names_jax_knows_are_looked_up_as_placeholders():
    registry = PrimitiveRegistry({"frob": (True, {"body": "jaxpr"}), "plain": (False, {})})
    assert "frob" in registry and "nope" not in registry
    assert registry.names() == []  # no layer defines them
    assert registry.known_names() == ["frob", "plain"]
    frob = registry.lookup("frob")
    assert frob.name == "frob" and frob.multiple_results is True
    assert registry.lookup("frob") is frob
    assert registry.is_placeholder(frob)
    assert registry.param_kind("frob", "body") == "jaxpr"
    assert registry.param_kind("frob", "other") is None
    assert registry.lookup("nope") is None


def test_the_defining_layer_gets_the_placeholder():
    registry = PrimitiveRegistry({"frob": (True, {})})
    placeholder = registry.lookup("frob")
    defined = Primitive("frob", registry=registry)
    assert defined is placeholder
    assert not registry.is_placeholder(defined)
    assert registry.names() == ["frob"]
    assert "multiple_results" not in vars(defined)  # the layer decides, not the table
    # A second primitive of that name is another object, as before.
    assert Primitive("frob", registry=registry) is not defined
    assert registry.lookup("frob") is defined


def test_subclasses_take_the_placeholder_as_their_class():
    class Special(Primitive):
        pass

    registry = PrimitiveRegistry({"frob": (False, {})})
    placeholder = registry.lookup("frob")
    defined = Special("frob", registry=registry)
    assert defined is placeholder and type(defined) is Special


def test_primitives_outside_registries_take_no_placeholder():
    class Users(Primitive):
        def __init__(self, name, *, registry=None):
            super().__init__(name, registry=registry)

    placeholder = default_registry.lookup("cumlogsumexp")
    assert Users("cumlogsumexp") is not placeholder
    assert Primitive("cumlogsumexp", registry=None) is not placeholder
    assert default_registry.lookup("cumlogsumexp") is placeholder


CUMLOGSUMEXP = """{ lambda ; a:f32[3]. let
    b:f32[3] = cumlogsumexp[axis=0 reverse=False] a
  in (b,) }"""  # recorded from JAX 0.10.2


def test_parsing_uses_the_table():
    text = CUMLOGSUMEXP
    jaxpr = parse_jaxpr(text)
    assert jaxpr.eqns[0].primitive is default_registry.lookup("cumlogsumexp")
    assert str(jaxpr) == text
    with pytest.raises(JaxprSyntaxError, match="unknown primitive 'cumlogsumexp'"):
        parse_jaxpr(text, registry=PrimitiveRegistry())


def test_jit_prints_as_jax_prints_it_without_the_layer_defining_it():
    # Recorded from JAX 0.10.2: name= first, and the inner Jaxpr with the caller's names.
    text = """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b in (c,) }
    ] a b
    d:f32[] = sin c
  in (d,) }"""
    jaxpr = parse_jaxpr(text)
    jit = jaxpr.eqns[0].primitive
    assert shared_names_rules[jit] == "jaxpr"
    assert jit in pp_param_rules
    assert str(jaxpr) == text


def test_created_primitives_keep_the_written_order_and_names():
    text = """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = mycall[
      zeta=1
      alpha=2
      jaxpr={ lambda ; a:f32[] b:f32[]. let c:f32[] = add a b in (c,) }
    ] a b
    d:f32[] = other[
      zeta=1
      alpha=2
      inner={ lambda ; e:f32[]. let f:f32[] = neg e in (f,) }
    ] c
  in (d,) }"""
    jaxpr = parse_jaxpr(text, unknown_primitives="create")
    assert list(jaxpr.eqns[0].params) == ["zeta", "alpha", "jaxpr"]
    assert str(jaxpr) == text


def test_check_without_abstract_evaluation_counts_results(known_by_name_only):
    known_by_name_only("cumlogsumexp")
    check_jaxpr(parse_jaxpr(CUMLOGSUMEXP), registry=default_registry)
    two = "{ lambda ; a:f32[3]. let b:f32[3] c:f32[3] = cumlogsumexp[axis=0] a in (b, c) }"
    with pytest.raises(JaxprTypeError, match="binds 2 outputs but 'cumlogsumexp' has one result"):
        check_jaxpr(parse_jaxpr(two))
    unbound = "{ lambda ; a:f32[3]. let b:f32[3] = cumlogsumexp[axis=0] c in (b,) }"
    with pytest.raises(JaxprSyntaxError, match="'c' is not a variable in scope"):
        parse_jaxpr(unbound)


def test_key_types_of_jax_prng_implementations():
    # Recorded from JAX 0.10.2: key<fry> is the threefry key type.
    text = "{ lambda ; a:u32[]. let b:key<fry>[] = random_seed[impl=fry] a in (b,) }"
    jaxpr = parse_jaxpr(text)
    assert str(jaxpr.eqns[0].outvars[0].aval) == "key<fry>[]"
    assert str(jaxpr) == text
    assert parse_jaxpr(text) == jaxpr
