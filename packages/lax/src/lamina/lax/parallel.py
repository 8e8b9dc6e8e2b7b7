"""Collectives with vmap semantics: psum, pmean, pmax, pmin, all_gather, all_to_all,
ppermute, psum_scatter, axis_index, axis_size.
"""

__all__: list[str] = []
