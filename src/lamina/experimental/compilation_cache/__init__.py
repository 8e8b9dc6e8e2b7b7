"""`lamina.experimental.compilation_cache`: the persistent compilation cache
(`jax.experimental.compilation_cache`); its functions are in :mod:`.compilation_cache`."""

from lamina.experimental.compilation_cache import compilation_cache as compilation_cache
