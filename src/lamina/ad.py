"""`lamina.ad`: the markers of `jax.ad`, used with ``VJP.with_refs``: per argument,
``GradValue()`` asks for the cotangent as a value and ``DontWant()`` for none; the
result holds ``DidntWant()`` for the latter and ``GradRef()`` where a cotangent was
added into a ``Ref``."""

from lamina.interpreters import DidntWant, DontWant, GradRef, GradValue

__all__ = ["DidntWant", "DontWant", "GradRef", "GradValue"]
