"""``jax._src.interpreters.ad``: ``jax.interpreters.ad`` and ``CustomVJPException``,
raised when a ``custom_vjp`` function is differentiated forwards."""

from lamina.interpreters import CustomVJPException
from lamina.interpreters.ad import *  # noqa: F403
from lamina.interpreters.ad import __all__ as _ad_names

__all__ = [*_ad_names, "CustomVJPException"]
