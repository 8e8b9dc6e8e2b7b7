"""`lamina.experimental.multihost_utils`: exchanging host data between the processes of a
multi-process run (`jax.experimental.multihost_utils`)."""

from lamina.sharding.multihost_utils import *  # noqa: F403
from lamina.sharding.multihost_utils import __all__  # noqa: F401
