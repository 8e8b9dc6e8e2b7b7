"""`lamina.lib`: the version of the jaxlib lamina runs on (`jax.lib`).

JAX 0.10.2's ``jax.lib`` holds only ``__version__``; its former ``xla_bridge`` and
``xla_client`` submodules are gone (their functions live in ``lamina.extend.backend``
and ``lamina`` itself).
"""

import jaxlib.version as _jaxlib_version

__version__ = _jaxlib_version.__version__
