"""``pallas_export_experimental``: the setting under which ``jax.export`` accepts
Pallas kernels."""

from __future__ import annotations

import contextlib

__all__ = ["pallas_export_experimental"]


@contextlib.contextmanager
def pallas_export_experimental(dynamic_shapes: bool):
    """Within this context, exporting functions with Pallas kernels is allowed."""
    yield
