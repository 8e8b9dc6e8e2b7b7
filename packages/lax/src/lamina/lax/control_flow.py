"""Control flow: cond, switch, while_loop, fori_loop, scan, map, associative_scan,
custom_root, custom_linear_solve.
"""

__all__: list[str] = []
