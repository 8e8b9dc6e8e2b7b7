"""``jax.experimental.pallas.triton``: the Triton backend's compiler params and the
operations of Triton kernels (masked ``load``/``store``, atomics, ``dot``, ...)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from lamina.lax import dot_general, tanh
from lamina.pallas.language.arithmetic import max_contiguous
from lamina.pallas.language.atomics import (
    atomic_add,
    atomic_and,
    atomic_cas,
    atomic_max,
    atomic_min,
    atomic_or,
    atomic_xchg,
    atomic_xor,
)
from lamina.pallas.language.memory import load, store

__all__ = [
    "CompilerParams",
    "approx_tanh",
    "atomic_add",
    "atomic_and",
    "atomic_cas",
    "atomic_max",
    "atomic_min",
    "atomic_or",
    "atomic_xchg",
    "atomic_xor",
    "debug_barrier",
    "dot",
    "elementwise_inline_asm",
    "load",
    "max_contiguous",
    "store",
]


@dataclasses.dataclass(frozen=True)
class CompilerParams:
    """How Triton compiles a kernel: warps per program and pipeline stages."""

    BACKEND: ClassVar[str] = "triton"
    num_warps: int | None = None
    num_stages: int | None = None

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


def approx_tanh(x):
    """``tanh(x)`` (a fast approximation on GPUs; exact here)."""
    return tanh(x)


def debug_barrier() -> None:
    """Synchronizes the threads of a program (nothing to do outside a GPU)."""


def dot(a, b, trans_a: bool = False, trans_b: bool = False, allow_tf32=None, precision=None):
    """The matrix product of ``a`` and ``b`` (each optionally transposed)."""
    lhs_contract = 0 if trans_a else a.ndim - 1
    rhs_contract = b.ndim - 1 if trans_b else 0
    return dot_general(a, b, (((lhs_contract,), (rhs_contract,)), ((), ())),
                       precision=precision)  # fmt: skip


def elementwise_inline_asm(asm: str, *, args, constraints: str, pack: int,
                           result_shape_dtypes):  # fmt: skip
    """Inline PTX assembly: only a GPU can run it."""
    raise NotImplementedError("elementwise_inline_asm runs only in compiled Triton kernels")
