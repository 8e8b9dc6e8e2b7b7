"""JAX's rule dicts (``ad.primitive_jvps``, ``batching.primitive_batchers``, ...) as
views of lamina's rule tables.

Libraries written for JAX register a primitive's rules by setting entries of dicts keyed
by primitive. A :class:`RuleRegistry` is such a dict: setting an entry also registers
the rule (adapted to lamina's signature where the two differ) in the matching table of
``lamina.ir``, which the interpreters read; deleting one removes it there. Reading gives
the rule that was set, or else the table's own rule where both signatures agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lamina.ir import Primitive, RuleTable

__all__ = ["RuleRegistry"]


class RuleRegistry(dict):
    """A dict of rules keyed by primitive backed by ``table``: ``adapt(primitive, rule)``
    is what the table gets (the rule itself by default). With ``reads_table``, the
    table's rules of primitives not set here are readable too."""

    def __init__(
        self,
        table: RuleTable,
        adapt: Callable[[Primitive, Any], Any] | None = None,
        *,
        reads_table: bool = True,
    ):
        super().__init__()
        self.table = table
        self.adapt = adapt
        self.reads_table = reads_table

    def __setitem__(self, primitive: Primitive, rule) -> None:
        super().__setitem__(primitive, rule)
        self.table[primitive] = rule if self.adapt is None else self.adapt(primitive, rule)

    def __delitem__(self, primitive: Primitive) -> None:
        if not super().__contains__(primitive) and not self._in_table(primitive):
            raise KeyError(primitive)
        super().pop(primitive, None)
        if primitive in self.table:
            del self.table[primitive]

    def __missing__(self, primitive: Primitive):
        if self._in_table(primitive):
            return self.table[primitive]
        raise KeyError(primitive)

    def __contains__(self, primitive) -> bool:
        return super().__contains__(primitive) or self._in_table(primitive)

    def get(self, primitive, default=None):
        try:
            return self[primitive]
        except KeyError:
            return default

    def update(self, *args, **kwargs) -> None:
        for primitive, rule in dict(*args, **kwargs).items():
            self[primitive] = rule

    def _in_table(self, primitive) -> bool:
        return self.reads_table and primitive in self.table
