"""Windowed reductions: reduce_window and its monoid forms, the select_and_* primitives
of their gradients, and the cumulative reductions."""
