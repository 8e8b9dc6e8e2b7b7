"""The ir tests check lamina.ir alone. Other layers imported into the same pytest process
add value readers to the parser and rules to JAX's primitives; the fixtures here take
those away again for the length of a test, for the tests that check what lamina.ir does
without them, so that they do not depend on which layers the process has loaded."""

import pytest

from lamina.ir.core.primitives import abstract_eval_rules, default_registry
from lamina.ir.parsing import parse_params


def _from_another_layer(reader) -> bool:
    module = getattr(reader, "__module__", None) or type(reader).__module__
    return module.startswith("lamina.") and not module.startswith("lamina.ir")


@pytest.fixture
def ir_readers_only(monkeypatch):
    """The parser reads values and params with the readers lamina.ir registers only."""
    for table in (parse_params.value_readers, parse_params.param_readers):
        for key, reader in list(table.items()):
            if _from_another_layer(reader):
                monkeypatch.delitem(table, key)


@pytest.fixture
def known_by_name_only(monkeypatch):
    """``known_by_name_only(name)``: the JAX primitive ``name`` as lamina.ir alone has it,
    a placeholder without an abstract evaluation rule, even where a loaded layer defines
    it."""

    def make(name):
        primitive = default_registry.lookup(name)
        if default_registry.is_placeholder(primitive):
            return
        if primitive in abstract_eval_rules:
            monkeypatch.delitem(abstract_eval_rules, primitive)
        placeholders = default_registry._placeholders | {name}
        monkeypatch.setattr(default_registry, "_placeholders", placeholders)

    return make
