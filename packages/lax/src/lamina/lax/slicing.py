"""Slicing: slice, dynamic_slice, dynamic_update_slice and their _in_dim / index_ helpers."""

__all__: list[str] = []
