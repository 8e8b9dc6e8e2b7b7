"""`lamina.extend.pallas`: hooks for Pallas backends (`jax.extend.pallas`)."""

from lamina.pallas import GridMapping, register_lowering_rule

__all__ = ["GridMapping", "register_lowering_rule"]
