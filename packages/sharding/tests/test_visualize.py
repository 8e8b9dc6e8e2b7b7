"""visualize_sharding's plain-text table: the layout JAX 0.10.2 draws with rich
(recorded with rich installed, no colour)."""

import numpy as np
import pytest

from lamina.interpreters import device_put
from lamina.sharding import (
    NamedSharding,
    P,
    make_mesh,
    sharding_table,
    visualize_array_sharding,
    visualize_sharding,
)

MESH = make_mesh((4, 2), ("x", "y"))

GRID = """\
┌───────┬───────┐
│ CPU 0 │ CPU 1 │
├───────┼───────┤
│ CPU 2 │ CPU 3 │
├───────┼───────┤
│ CPU 4 │ CPU 5 │
├───────┼───────┤
│ CPU 6 │ CPU 7 │
└───────┴───────┘"""

ROWS = """\
┌──────────┐
│ CPU 0,1  │
├──────────┤
│ CPU 2,3  │
├──────────┤
│ CPU 4,5  │
├──────────┤
│ CPU 6,7  │
└──────────┘"""

VECTOR = """\
┌───────┬───────┬───────┬───────┐
│CPU 0,1│CPU 2,3│CPU 4,5│CPU 6,7│
└───────┴───────┴───────┴───────┘"""

COLUMNS = """\
┌───────────┬───────────┐
│           │           │
│           │           │
│           │           │
│           │           │
│CPU 0,2,4,6│CPU 1,3,5,7│
│           │           │
│           │           │
│           │           │
│           │           │
└───────────┴───────────┘"""

TRANSPOSED = """\
┌───────┬───────┬───────┬───────┐
│       │       │       │       │
│ CPU 0 │ CPU 2 │ CPU 4 │ CPU 6 │
│       │       │       │       │
│       │       │       │       │
├───────┼───────┼───────┼───────┤
│       │       │       │       │
│ CPU 1 │ CPU 3 │ CPU 5 │ CPU 7 │
│       │       │       │       │
│       │       │       │       │
└───────┴───────┴───────┴───────┘"""


@pytest.mark.parametrize(
    ("shape", "spec", "table"),
    [
        ((8, 4), P("x", "y"), GRID),
        ((8, 4), P("x"), ROWS),
        ((32,), P("x"), VECTOR),
        ((8, 4), P(None, "y"), COLUMNS),
        ((8, 4), P("y", "x"), TRANSPOSED),
    ],
)
def test_tables_recorded_from_jax(shape, spec, table):
    assert sharding_table(shape, NamedSharding(MESH, spec)) == table


def test_visualize_array_sharding_prints(capsys):
    visualize_array_sharding(device_put(np.zeros((8, 4)), NamedSharding(MESH, P("x", "y"))))
    assert capsys.readouterr().out == GRID + "\n"
    visualize_array_sharding(device_put(np.zeros(5)))
    assert capsys.readouterr().out == "┌───────┐\n│ CPU 0 │\n└───────┘\n"


def test_only_one_or_two_dimensions():
    with pytest.raises(
        ValueError, match=r"`visualize_sharding` only works for shapes with 1 and 2 dimensions\."
    ):
        visualize_sharding((2, 2, 2), NamedSharding(MESH, P()))
