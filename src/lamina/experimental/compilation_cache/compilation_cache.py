"""`lamina.experimental.compilation_cache.compilation_cache`: choose and reset the
directory where compiled executables persist across processes.

The cache is trusted: anyone who can write to its directory can make this process run
their code, so never share it with anyone you do not trust.
"""

from lamina.interpreters import compilation_cache as _cache

__all__ = ["reset_cache", "set_cache_dir"]

set_cache_dir = _cache.set_cache_dir
reset_cache = _cache.reset_cache
