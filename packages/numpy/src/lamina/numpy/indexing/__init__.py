"""``x[idx]`` and ``x.at[idx]``: parsing an index, planning the gather or scatter, and
the lax program it becomes."""
