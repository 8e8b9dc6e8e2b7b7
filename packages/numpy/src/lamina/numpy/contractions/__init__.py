"""Products of arrays (``matmul``, ``dot``, ``tensordot``, ``outer``, ``kron``, ...,
the diagonal reductions ``trace`` and ``diagonal``) and ``einsum``."""

from lamina.numpy.contractions.einsum_notation import (
    einsum,
    einsum_path,
)
from lamina.numpy.contractions.outer_and_diagonal import (
    cross,
    diagonal,
    kron,
    outer,
    trace,
)
from lamina.numpy.contractions.products import (
    dot,
    inner,
    matmul,
    matvec,
    tensordot,
    vdot,
    vecdot,
    vecmat,
)

__all__ = [
    "cross",
    "diagonal",
    "dot",
    "einsum",
    "einsum_path",
    "inner",
    "kron",
    "matmul",
    "matvec",
    "outer",
    "tensordot",
    "trace",
    "vdot",
    "vecdot",
    "vecmat",
]
