"""The Jaxprs JAX 0.10.2 printed for real programs (recorded from JAX 0.10.2 by
tools/record_jaxpr_corpus.py into packages/ir/tests/data/jaxpr_corpus), read with the
whole library loaded: their primitives are the layers' objects, their params the layers'
types, and the checker runs the layers' abstract-evaluation rules on them."""

import pathlib

import numpy as np
import pytest

import lamina
import lamina.experimental.checkify
import lamina.extend.core.primitives
import lamina.interpreters
import lamina.lax
import lamina.lax.linalg
import lamina.nn
import lamina.numpy
import lamina.random
from lamina.core import eval_jaxpr
from lamina.ir import (
    ClosedJaxpr,
    Jaxpr,
    JaxprTypeError,
    ShapedArray,
    abstract_eval_rules,
    check_jaxpr,
    default_registry,
    parse_jaxpr,
)
from lamina.sharding import shard_map_p

CORPUS = pathlib.Path(__file__).parents[1] / "packages" / "ir" / "tests" / "data" / "jaxpr_corpus"
TEXTS = {p.stem: p.read_text().rstrip("\n") for p in sorted(CORPUS.glob("*.jaxpr"))}
NAMESPACES = (
    lamina.lax,
    lamina.lax.linalg,
    lamina.interpreters,
    lamina.extend.core.primitives,
)
EXPORTED = {
    id(getattr(m, a)): a for m in NAMESPACES for a in dir(m) if a.endswith("_p") and a[0] != "_"
}


def eqns_of(jaxpr):
    """Every equation of ``jaxpr`` and of the Jaxprs in its params, outermost first."""
    jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    for eqn in jaxpr.eqns:
        yield eqn
        stack = list(eqn.params.values())
        while stack:
            value = stack.pop()
            if isinstance(value, (Jaxpr, ClosedJaxpr)):
                yield from eqns_of(value)
            elif isinstance(value, (tuple, list)):
                stack.extend(value)


def first(jaxpr, name):
    return next(e for e in eqns_of(jaxpr) if e.primitive.name == name)


def test_the_corpus_is_there():
    assert len(TEXTS) >= 40


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_reads_prints_and_checks_with_the_layers_rules(name):
    text = TEXTS[name]
    jaxpr = parse_jaxpr(text)
    assert str(jaxpr) == text
    check_jaxpr(jaxpr, registry=default_registry)
    assert parse_jaxpr(text) == jaxpr
    for eqn in eqns_of(jaxpr):
        prim = eqn.primitive
        if prim.name == "shard_map":  # the sharding layer's
            assert prim is shard_map_p
            assert abstract_eval_rules.get(prim) is not None
            continue
        assert id(prim) in EXPORTED, prim.name
        assert abstract_eval_rules.get(prim) is not None, prim.name


def test_params_are_read_as_the_layers_types():
    jaxpr = parse_jaxpr(TEXTS["gather_scatter"])
    scatter = first(jaxpr, "scatter")
    assert scatter.params["dimension_numbers"] == lamina.lax.ScatterDimensionNumbers(
        (0,), (0,), (0,)
    )
    assert type(scatter.params["dimension_numbers"]) is lamina.lax.ScatterDimensionNumbers
    assert scatter.params["mode"] is lamina.lax.GatherScatterMode.FILL_OR_DROP
    gather = first(parse_jaxpr(TEXTS["svd_and_solve"]), "gather")
    numbers = gather.params["dimension_numbers"]
    assert numbers == lamina.lax.GatherDimensionNumbers((1,), (0,), (0,))
    assert type(numbers) is lamina.lax.GatherDimensionNumbers
    assert gather.params["mode"] is lamina.lax.GatherScatterMode.PROMISE_IN_BOUNDS
    seed = first(parse_jaxpr(TEXTS["random_keys"]), "random_seed")
    assert seed.params["impl"] is lamina.lax.PRNG_IMPLS["threefry2x32"]
    wrap = first(parse_jaxpr(TEXTS["random_raw_prngkey"]), "random_wrap")
    assert wrap.params["impl"] is lamina.lax.PRNG_IMPLS["threefry2x32"]
    callback = first(parse_jaxpr(TEXTS["debug_print_and_callback"]), "pure_callback")
    assert callback.params["result_avals"] == (ShapedArray((3,), np.dtype(np.float32)),)


def test_the_checker_runs_the_layers_rules():
    # lamina-ir alone has no rule for scatter; lax's says the output is f32[5,3].
    text = TEXTS["gather_scatter"].replace("q:f32[5,3] = scatter[", "q:f32[5,4] = scatter[")
    with pytest.raises(JaxprTypeError, match=r"f32\[5,4\] but 'scatter' produces f32\[5,3\]"):
        check_jaxpr(parse_jaxpr(text))


def test_collectives_over_named_axes_are_checked_for_structure():
    # The axis 'i' is shard_map's: psum's rule cannot run, its output count is checked.
    text = TEXTS["pmap_one_device"]
    assert "e:f32[3] = psum[axes=('i',)" in text
    bad = text.replace("e:f32[3] = psum", "e:f32[3] z:f32[3] = psum")
    with pytest.raises(JaxprTypeError, match="binds 2 outputs but 'psum' has one result"):
        check_jaxpr(parse_jaxpr(bad))


def test_custom_calls_read_from_text_evaluate_but_do_not_differentiate():
    x = np.array([0.0, 1.0, 3.0], np.float32)
    jvp_call = parse_jaxpr(TEXTS["custom_jvp_logaddexp"])
    (y,) = eval_jaxpr(jvp_call, [], x)
    np.testing.assert_allclose(y, np.logaddexp(x, np.float32(2.0)), rtol=1e-6)
    with pytest.raises(TypeError, match="names its rule '_logaddexp_jvp' but does not hold it"):
        lamina.grad(lambda x: eval_jaxpr(jvp_call, [], x)[0].sum())(x)
    vjp_call = parse_jaxpr(TEXTS["custom_vjp_call"])
    np.testing.assert_allclose(eval_jaxpr(vjp_call, [], x)[0], 2 * x)
    with pytest.raises(TypeError, match="custom_vjp_call of '_clip_gradient' was read from"):
        lamina.grad(lambda x: eval_jaxpr(vjp_call, [], x)[0].sum())(x)
