"""`lamina.stages`: the stages of a jitted call (`jax.stages`).

``jit(f)`` is a :class:`Wrapped`; ``.trace(*args)`` gives a :class:`Traced`,
``.lower()`` a :class:`Lowered`, ``.compile()`` a :class:`Compiled`. Each stage's
``args_info`` describes the arguments with :class:`ArgInfo`. ``compile`` takes
:data:`CompilerOptions`, XLA option names mapped to values.
"""

from __future__ import annotations

from typing import Any, Protocol, Union, runtime_checkable

from lamina.interpreters import ArgInfo, Compiled, Lowered, Traced

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]

CompilerOptions = dict[str, Union[str, bool]]  # noqa: UP007 (as JAX spells it)


@runtime_checkable
class Wrapped(Protocol):
    """A function that can be called, traced and lowered: what ``jit`` returns."""

    def __call__(self, *args, **kwargs) -> Any: ...

    def trace(self, *args, **kwargs) -> Traced: ...

    def lower(self, *args, **kwargs) -> Lowered: ...
