"""``DisabledSafetyCheck``: a check of export or deserialization that the user turns
off (the platform check, or the stability check of one custom call target)."""

from __future__ import annotations

import re

__all__ = ["DisabledSafetyCheck"]


class DisabledSafetyCheck:
    """A safety check to skip. Make one with :meth:`platform` (run on a platform the
    function was not exported for) or :meth:`custom_call` (export a custom call whose
    target has no compatibility guarantee)."""

    def __init__(self, _impl: str):
        self._impl = _impl

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        """Allow calling the exported function on a platform it was not exported for."""
        return DisabledSafetyCheck("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        """Allow exporting custom calls to ``target_name``."""
        return DisabledSafetyCheck(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        """The custom call target this allows, or None."""
        m = re.match(r"custom_call:(.+)$", self._impl)
        return m.group(1) if m else None

    def __str__(self):
        return self._impl

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self) -> int:
        return hash(self._impl)
