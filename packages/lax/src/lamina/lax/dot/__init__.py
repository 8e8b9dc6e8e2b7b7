"""Dot products: dot_general with its precision options, and the ragged and scaled dots."""
