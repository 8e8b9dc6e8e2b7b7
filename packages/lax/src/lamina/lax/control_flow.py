"""Control flow: cond, switch, while_loop, fori_loop, scan, map, associative_scan,
custom_root, custom_linear_solve. The primitives live in ``control_flow_cond``,
``control_flow_scan`` and ``control_flow_loops``; this module re-exports them.
"""

from lamina.lax.control_flow_assoc import associative_scan
from lamina.lax.control_flow_cond import cond, cond_p, switch
from lamina.lax.control_flow_loops import fori_loop, while_loop, while_p
from lamina.lax.control_flow_map import map
from lamina.lax.control_flow_scan import scan, scan_p
from lamina.lax.control_flow_solve import custom_linear_solve, custom_root, linear_solve_p

__all__: list[str] = [
    "associative_scan",
    "cond",
    "cond_p",
    "custom_linear_solve",
    "custom_root",
    "fori_loop",
    "linear_solve_p",
    "map",
    "scan",
    "scan_p",
    "switch",
    "while_loop",
    "while_p",
]
