"""`Slerp`: spherical linear interpolation between key rotations at key times; a
NamedTuple, so a pytree."""

from __future__ import annotations

import typing

from lamina import numpy as jnp
from lamina.interpreters import Array
from lamina.scipy.spatial.transform.rotation import Rotation


class Slerp(typing.NamedTuple):
    """Interpolates rotations as `scipy.spatial.transform.Slerp`; build it with
    `Slerp.init(times, rotations)` and call it with the times to interpolate at."""

    times: Array
    timedelta: Array
    rotations: Rotation
    rotvecs: Array

    @classmethod
    def init(cls, times, rotations: Rotation):
        """The interpolator through `rotations` (at least two) at increasing `times`."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(
                "Expected times to be specified in a 1 dimensional array, got "
                f"{times.ndim} dimensions."
            )
        if times.shape[0] != len(rotations):
            raise ValueError(
                "Expected number of rotations to be equal to number of timestamps given, "
                f"got {len(rotations)} rotations and {times.shape[0]} timestamps."
            )
        starts = Rotation(rotations.as_quat()[:-1])
        ends = Rotation(rotations.as_quat()[1:])
        return cls(
            times=times,
            timedelta=jnp.diff(times),
            rotations=starts,
            rotvecs=(starts.inv() * ends).as_rotvec(),
        )

    def __call__(self, times):
        """The interpolated rotation(s) at `times` (a scalar or a vector)."""
        at = jnp.asarray(times, dtype=self.times.dtype)
        if at.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = at.ndim == 0
        at = jnp.atleast_1d(at)
        segment = jnp.maximum(jnp.searchsorted(self.times, at) - 1, 0)
        fraction = (at - self.times[segment]) / self.timedelta[segment]
        step = Rotation.from_rotvec(self.rotvecs[segment] * fraction[:, None])
        result = self.rotations[segment] * step
        return result[0] if single else result
