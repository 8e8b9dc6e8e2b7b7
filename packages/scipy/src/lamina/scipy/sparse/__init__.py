"""lamina.scipy.sparse: `jax.scipy.sparse`, which holds the iterative solvers of
`lamina.scipy.sparse.linalg`."""

from lamina.scipy.sparse import linalg as linalg

__all__ = ["linalg"]


def __dir__():
    return list(__all__)
