"""``jax._src.dtypes``: the extended-dtype classes and promotion error of
``lamina.dtypes``."""

from lamina.dtypes import (
    DType,
    ExtendedDType,
    TypePromotionError,
    extended,
    finfo,
    supports_inf,
)

__all__ = ["DType", "ExtendedDType", "TypePromotionError", "extended", "finfo", "supports_inf"]
