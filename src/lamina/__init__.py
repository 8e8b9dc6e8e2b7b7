"""lamina: a JAX-compatible array library built from thin layers on jaxlib.

``import lamina as jax`` gives the public API as the layers provide it.
"""

import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)

from lamina import dtypes, tree, tree_util
from lamina.tree_util import Partial

__version__ = "0.1.0"
__all__ = ["Partial", "dtypes", "tree", "tree_util"]
