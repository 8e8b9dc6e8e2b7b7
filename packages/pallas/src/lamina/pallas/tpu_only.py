"""Names of ``jax.experimental.pallas`` that only TPU or Mosaic GPU kernels use
(semaphores, global buffers, reference selection): here they say so."""

from __future__ import annotations

__all__ = ["get_global", "select_ref", "semaphore_read", "semaphore_signal", "semaphore_wait"]


def _unsupported(name: str):
    def f(*args, **kwargs):
        raise NotImplementedError(
            f"pl.{name} needs the TPU (Mosaic) or Mosaic GPU backend, which lamina.pallas "
            "does not have; interpret mode and Triton kernels do not use it."
        )

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``pl.{name}`` (TPU and Mosaic GPU only)."
    return f


get_global = _unsupported("get_global")
select_ref = _unsupported("select_ref")
semaphore_read = _unsupported("semaphore_read")
semaphore_signal = _unsupported("semaphore_signal")
semaphore_wait = _unsupported("semaphore_wait")
