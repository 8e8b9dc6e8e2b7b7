"""``jax._src.ad_util``: the ``stop_gradient`` primitive (``lamina.lax``'s)."""

from lamina.lax import stop_gradient_p

__all__ = ["stop_gradient_p"]
