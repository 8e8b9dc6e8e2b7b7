"""Shape primitives beyond the core: pad, concatenate, split, squeeze, expand_dims, rev,
broadcast, tile, collapse, full.
"""

__all__: list[str] = []
