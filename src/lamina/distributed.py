"""`lamina.distributed`: running one program over several processes (`jax.distributed`)."""

from lamina.sharding.distributed import initialize, is_initialized, shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]
