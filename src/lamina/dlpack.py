"""`lamina.dlpack`: arrays shared with other libraries through DLPack (`jax.dlpack`).

``from_dlpack(x)`` makes a lamina array of anything with ``__dlpack__`` and
``__dlpack_device__`` (NumPy arrays, PyTorch tensors, ...), sharing its memory where it
can; lamina arrays have ``__dlpack__`` themselves, so ``np.from_dlpack(array)`` works
the other way.
"""

from lamina.interpreters import dlpack as _dlpack

__all__ = ["from_dlpack", "is_supported_dtype"]

from_dlpack = _dlpack.from_dlpack
is_supported_dtype = _dlpack.is_supported_dtype
