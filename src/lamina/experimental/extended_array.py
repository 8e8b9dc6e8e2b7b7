"""``EArray``: JAX's array of a user-defined extended dtype, over its physical data.

lamina's only extended arrays are PRNG key arrays (``lamina.random.key``); arrays of
other extended dtypes are not built, so making an ``EArray`` raises.
"""

from __future__ import annotations

__all__ = ["EArray"]


class EArray:
    """An array of an extended dtype (``aval``) holding its physical ``data``."""

    __slots__ = ("_data", "aval")

    def __init__(self, aval, data):
        del aval, data
        raise NotImplementedError(
            "lamina.experimental.EArray: arrays of user-defined extended dtypes are not "
            "built; lamina's extended arrays are PRNG key arrays (lamina.random.key)"
        )
