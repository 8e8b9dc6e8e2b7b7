"""lamina.scipy.spatial.transform: `jax.scipy.spatial.transform`, rotations in three
dimensions (`Rotation`) and their spherical interpolation (`Slerp`)."""

from lamina.scipy.spatial.transform.rotation import Rotation
from lamina.scipy.spatial.transform.slerp import Slerp

__all__ = ["Rotation", "Slerp"]


def __dir__():
    return list(__all__)
