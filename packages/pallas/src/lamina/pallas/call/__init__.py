"""``pallas_call``: the mapping of blocks to the grid, the primitive, interpret mode."""
