"""`Rotation`: a rotation, or a batch of them, in three dimensions, held as unit
quaternions; a NamedTuple, so a pytree that passes through `jit` and `vmap`."""

from __future__ import annotations

import re
import typing

import numpy as np

from lamina import numpy as jnp
from lamina.interpreters import Array
from lamina.scipy.spatial.transform import quaternions as quats

_AXIS_INDEX = {"x": 0, "y": 1, "z": 2}


def _euler_axes(seq: str) -> tuple[list[int], bool]:
    """The axis indices of an Euler sequence and whether it is intrinsic (upper case)."""
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(
            f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq}"
        )
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return [_AXIS_INDEX[axis] for axis in seq.lower()], intrinsic


class Rotation(typing.NamedTuple):
    """Rotations in 3-D, as `scipy.spatial.transform.Rotation` (`quat`: unit quaternions
    `(x, y, z, w)` on the last axis; one rotation when it is a vector)."""

    quat: Array

    @classmethod
    def concatenate(cls, rotations: typing.Sequence):
        """The rotations of a sequence of `Rotation`s, in one object."""
        return cls(jnp.concatenate([rotation.quat for rotation in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles, degrees: bool = False):
        """From Euler angles about the axes of `seq` (up to 3 of 'xyz': extrinsic, or of
        'XYZ': intrinsic), in radians or `degrees`."""
        if not 1 <= len(seq) <= 3:
            raise ValueError(
                "Expected axis specification to be a non-empty string of upto 3 "
                f"characters, got {seq}"
            )
        axes, intrinsic = _euler_axes(seq)
        angles = jnp.atleast_1d(angles)
        if angles.shape[-1] != len(axes):
            raise ValueError(  # JAX's message, from its jnp.vectorize
                f"inconsistent size for core dimension 'm': {len(axes)} vs "
                f"{angles.shape[-1]} on vectorized function with excluded=frozenset() and "
                "signature='(m),(m),(),()->(n)'"
            )
        return cls(quats.from_euler(angles, axes, intrinsic, degrees))

    @classmethod
    def from_matrix(cls, matrix):
        """From rotation matrices (..., 3, 3)."""
        return cls(quats.from_matrix(jnp.asarray(matrix)))

    @classmethod
    def from_mrp(cls, mrp):
        """From Modified Rodrigues Parameters (..., 3)."""
        return cls(quats.from_mrp(jnp.asarray(mrp)))

    @classmethod
    def from_quat(cls, quat):
        """From quaternions (..., 4), scalar last; they are normalized."""
        return cls(quats.normalize(jnp.asarray(quat)))

    @classmethod
    def from_rotvec(cls, rotvec, degrees: bool = False):
        """From rotation vectors (..., 3): axis times angle (radians or `degrees`)."""
        return cls(quats.from_rotvec(jnp.asarray(rotvec), degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float):
        """The identity rotation (only a single one: `num` must be None)."""
        assert num is None
        return cls(jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key, num: int | None = None):
        """Not implemented, as in JAX."""
        raise NotImplementedError()

    def __getitem__(self, indexer):
        """The rotation(s) at `indexer`."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        """How many rotations this object holds."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other) -> Rotation:
        """`other` followed by this rotation."""
        return Rotation.from_quat(quats.compose(self.quat, other.quat))

    def apply(self, vectors, inverse: bool = False):
        """Rotate `vectors` (..., 3) by this rotation (by its inverse if `inverse`)."""
        return quats.rotate(self.as_matrix(), jnp.asarray(vectors), inverse)

    def as_euler(self, seq: str, degrees: bool = False):
        """Euler angles about the three axes of `seq` (see `from_euler`)."""
        if len(seq) != 3:
            raise ValueError(f"Expected 3 axes, got {seq}.")
        axes, intrinsic = _euler_axes(seq)
        return quats.to_euler(self.quat, axes, not intrinsic, degrees)

    def as_matrix(self):
        """Rotation matrices (..., 3, 3)."""
        return quats.to_matrix(self.quat)

    def as_mrp(self):
        """Modified Rodrigues Parameters (..., 3)."""
        return quats.to_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False):
        """Rotation vectors (..., 3) with angles in [0, pi] (radians or `degrees`)."""
        return quats.to_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False):
        """Quaternions (..., 4): with w >= 0 if `canonical`, `(w, x, y, z)` if
        `scalar_first`."""
        quat = quats.canonical(self.quat) if canonical else self.quat
        return jnp.roll(quat, shift=1, axis=-1) if scalar_first else quat

    def inv(self):
        """The inverse rotation(s)."""
        return Rotation(quats.inverse(self.quat))

    def magnitude(self):
        """The rotation angle(s), in [0, pi]."""
        return quats.magnitude(self.quat)

    def mean(self, weights=None):
        """The (weighted) mean rotation: the quaternion maximizing the weighted sum of
        squared dot products with these ones."""
        dtype = self.quat.dtype
        if weights is None:
            w = jnp.ones(self.quat.shape[0], dtype=dtype)
        else:
            w = jnp.asarray(weights, dtype=dtype)
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError(
                "Expected `weights` to have number of values equal to number of "
                f"rotations, got {w.shape[0]} values and {len(self)} rotations."
            )
        scatter = jnp.dot(w[np.newaxis, :] * self.quat.T, self.quat)
        _, vectors = jnp.linalg.eigh(scatter)
        return Rotation(vectors[:, -1])

    @property
    def single(self) -> bool:
        """Whether this object holds one rotation (not a batch)."""
        return self.quat.ndim == 1
