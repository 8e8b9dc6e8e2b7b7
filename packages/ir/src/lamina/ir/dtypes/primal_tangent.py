"""Primal-tangent dtypes: an extended dtype stored as one primal dtype whose tangents
have another dtype (``PrimalTangentDType{f32/bf16}``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from lamina.ir.dtypes.kinds import ExtendedDType, extended, short_dtype_name

__all__ = ["PrimalTangentDType", "primal_tangent_dtype", "primal_tangent_dtype_scalar"]


class primal_tangent_dtype_scalar(extended):
    """The scalar-type category of primal-tangent dtypes."""


@dataclasses.dataclass(frozen=True, eq=True)
class PrimalTangentDType(ExtendedDType):
    """Elements stored as ``primal_dtype`` scalars, with tangents of ``tangent_dtype``."""

    primal_dtype: Any
    tangent_dtype: Any
    name: str
    type = primal_tangent_dtype_scalar

    @property
    def physical_element_dtype(self):  # type: ignore[override]
        return self.primal_dtype

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return self.name


def _dtype(d) -> Any:
    return d if isinstance(d, ExtendedDType) else np.dtype(d)


def primal_tangent_dtype(
    primal_dtype, tangent_dtype, name: str | None = None
) -> PrimalTangentDType:
    """The extended dtype of ``primal_dtype`` values whose tangents are
    ``tangent_dtype``; named ``name`` or ``PrimalTangentDType{<primal>/<tangent>}``."""
    primal, tangent = _dtype(primal_dtype), _dtype(tangent_dtype)
    default = f"PrimalTangentDType{{{short_dtype_name(primal)}/{short_dtype_name(tangent)}}}"
    return PrimalTangentDType(primal, tangent, name or default)
