"""The frame `cg` and `bicgstab` share: argument checks and defaults, then the solver
run by `lax.custom_linear_solve`, so its derivatives are further solves."""

from __future__ import annotations

from functools import partial

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import device_put
from lamina.ir.tree_util import tree_leaves, tree_map, tree_structure
from lamina.scipy.sparse.linalg.tree_vectors import as_linear_map, identity


def _shapes(tree):
    return [np.shape(leaf) for leaf in tree_leaves(tree)]


def solve_iteratively(
    solver, A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None, check_symmetric=False
):
    """Solve `A x = b` with `solver(A, b, x0=, tol=, atol=, maxiter=, M=)`; returns
    `(x, None)`. With `check_symmetric`, the solve is its own transpose for real `b`."""
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    b, x0 = device_put((b, x0))
    if maxiter is None:
        maxiter = 10 * sum(leaf.size for leaf in tree_leaves(b))  # SciPy's default
    A = as_linear_map(A)
    M = as_linear_map(identity if M is None else M)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(
            "x0 and b must have matching tree structure: "
            f"{tree_structure(x0)} vs {tree_structure(b)}"
        )
    if _shapes(x0) != _shapes(b):
        raise ValueError(
            f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs {_shapes(b)}"
        )
    solve = partial(solver, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    symmetric = check_symmetric and not any(jnp.iscomplexobj(leaf) for leaf in tree_leaves(b))
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None
