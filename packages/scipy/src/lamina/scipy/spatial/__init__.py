"""lamina.scipy.spatial: `jax.scipy.spatial`, which holds `lamina.scipy.spatial.transform`
(3-D rotations)."""

from lamina.scipy.spatial import transform as transform

__all__ = ["transform"]


def __dir__():
    return list(__all__)
