"""Sorting and searching, set operations, choosing and taking elements (``where``,
``take``, ``nonzero``, ...) and the index helpers (``tril_indices``, ``unravel_index``,
...)."""
