"""Cumulative reductions, reduce_window and the select_and_scatter/gather primitives of
their gradients.
"""

__all__: list[str] = []
