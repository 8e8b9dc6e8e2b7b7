import numpy as np
import pytest

from lamina.ir import MissingRuleError, Primitive, PrimitiveRegistry, ShapedArray
from lamina.ir.core import primitives
from lamina.ir.core.primitives import abstract_eval_rules, jvp_rules
from lamina.ir.effects import Effect, EffectTypeSet, is_ordered, ordered_effects


def test_registry_by_name_first_wins():
    registry = PrimitiveRegistry()
    first = Primitive("neg", registry=registry)
    Primitive("neg", registry=registry)
    assert registry.lookup("neg") is first
    assert "neg" in registry and registry.lookup("pos") is None
    assert registry.names() == ["neg"]


def test_rules_are_held_in_tables():
    p = Primitive("double", registry=None)

    @p.def_abstract_eval
    def _(x):
        return x

    aval = ShapedArray((2,), np.float32)
    assert p.abstract_eval(aval) == aval
    assert abstract_eval_rules[p] is not None
    p.def_jvp(lambda primals, tangents: (primals, tangents))
    assert p in jvp_rules


def test_missing_rule_names_primitive_and_rule():
    p = Primitive("mystery", registry=None)
    with pytest.raises(MissingRuleError, match="Differentiation rule for primitive 'mystery'"):
        jvp_rules[p]
    with pytest.raises(NotImplementedError, match=r"Abstract evaluation rule .*'mystery'"):
        p.abstract_eval(ShapedArray((), np.float32))


def test_bind_without_interpreter_says_what_to_do(monkeypatch):
    monkeypatch.setattr(primitives, "_bind_handler", None)  # as before lamina.interpreters loads
    p = Primitive("lonely", registry=None)
    with pytest.raises(RuntimeError, match=r"lamina\.interpreters"):
        p.bind(1.0)


def test_bad_primitive_name():
    with pytest.raises(TypeError, match="name"):
        Primitive("", registry=None)


class _PrintEffect(Effect):
    pass


class _StateEffect(Effect):
    pass


def test_effect_type_sets():
    ordered_effects.add_type(_PrintEffect)
    assert is_ordered(_PrintEffect())
    assert not is_ordered(_StateEffect())
    types = EffectTypeSet([_StateEffect])
    effects = [_PrintEffect(), _StateEffect()]
    assert [type(e) for e in types.filter_in(effects)] == [_StateEffect]
    assert [type(e) for e in types.filter_not_in(effects)] == [_PrintEffect]
    with pytest.raises(TypeError, match="Effect"):
        types.add_type(int)
