"""Products of arrays (``matmul``, ``dot``, ``tensordot``, ``outer``, ``kron``, ...,
the diagonal reductions ``trace`` and ``diagonal``) and ``einsum``."""
