"""A plain-text picture of how an array is laid out over devices: one cell per block,
sized like the block, naming the devices that hold it (JAX draws the same table with
the ``rich`` package)."""

from __future__ import annotations

from collections.abc import Sequence

from lamina.interpreters import Sharding, first_device

__all__ = ["sharding_table", "visualize_array_sharding", "visualize_sharding"]

_ROW_TO_COLUMN = 2.5  # a text line is about 2.5 characters tall


def _block_number(size: int, index) -> int:
    if isinstance(index, int):
        return index
    if index.start is None and index.stop is None:
        return 0
    return index.start // (index.stop - index.start)


def _extent(size: int, index) -> int:
    if isinstance(index, int):
        return 1
    return size if index.start is None and index.stop is None else index.stop - index.start


def sharding_table(shape: Sequence[int], sharding: Sharding, *, scale: float = 1.0,
                   min_width: int = 9, max_width: int = 80) -> str:  # fmt: skip
    """The table :func:`visualize_sharding` prints, as a string."""
    shape = tuple(shape)
    if not 1 <= len(shape) <= 2:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    base_height = int(10 * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    platform = first_device(sharding).platform.upper()
    owners: dict[tuple, set] = {}
    widths: dict[tuple, int] = {}
    heights: dict[tuple, int] = {}
    for device, index in sharding.devices_indices_map(shape).items():
        cell = tuple(_block_number(n, i) for n, i in zip(shape, index, strict=True))
        fractions = [_extent(n, i) / n for n, i in zip(shape, index, strict=True)]
        if len(shape) == 1:
            cell, height = (0, *cell), 1
        else:
            height = int(fractions[0] * base_height)
        width = int(fractions[-1] * base_width * _ROW_TO_COLUMN)
        owners.setdefault(cell, set()).add(device.id)
        widths[cell] = min(max(width, min_width), max_width)
        heights[cell] = height
    rows = max(r for r, _ in owners) + 1
    cols = max(c for _, c in owners) + 1
    labels = {
        cell: f"{platform} " + ",".join(str(i) for i in sorted(ids)) for cell, ids in owners.items()
    }
    # A cell is its label padded to its width (less the two border columns), centred.
    inner = {cell: max(widths[cell] - 2, len(labels[cell])) for cell in owners}
    col_widths = [max(inner[r, c] for r in range(rows)) for c in range(cols)]
    # Padding above and below a label, as for a cell of ``height`` lines with borders.
    above = [max(max((heights[r, c] - 2) // 2, 0) for c in range(cols)) for r in range(rows)]
    below = [max(max((heights[r, c] - 2) - (heights[r, c] - 2) // 2, 0) for c in range(cols))
             for r in range(rows)]  # fmt: skip

    def rule(left: str, cross: str, right: str) -> str:
        return left + cross.join("─" * w for w in col_widths) + right

    lines = [rule("┌", "┬", "┐")]
    for r in range(rows):
        for line in range(above[r] + 1 + below[r]):
            cells = []
            for c in range(cols):
                text = labels[r, c] if line == above[r] else ""
                left = (col_widths[c] - len(text)) // 2
                cells.append(" " * left + text + " " * (col_widths[c] - len(text) - left))
            lines.append("│" + "│".join(cells) + "│")
        if r < rows - 1:
            lines.append(rule("├", "┼", "┤"))
    lines.append(rule("└", "┴", "┘"))
    return "\n".join(lines)


def visualize_sharding(shape: Sequence[int], sharding: Sharding, *, use_color: bool = True,
                       scale: float = 1.0, min_width: int = 9, max_width: int = 80,
                       color_map=None) -> None:  # fmt: skip
    """Print how an array of ``shape`` (1 or 2 dimensions) is laid out by
    ``sharding``. ``use_color`` and ``color_map`` are accepted; the table is plain."""
    del use_color, color_map
    print(sharding_table(shape, sharding, scale=scale, min_width=min_width, max_width=max_width))


def visualize_array_sharding(arr, **kwargs) -> None:
    """Print how ``arr`` is laid out over its devices (see :func:`visualize_sharding`)."""
    visualize_sharding(arr.shape, arr.sharding, **kwargs)
