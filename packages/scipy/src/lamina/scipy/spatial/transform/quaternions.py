"""Unit quaternions `(x, y, z, w)` (scalar last) on the last axis of arrays, with any
leading batch axes: conversions to and from the other rotation representations, and
composition."""

from __future__ import annotations

import numpy as np

from lamina import numpy as jnp

SMALL_ANGLE = 1e-3  # below it, series replace the ratios of sines and angles
EULER_EPS = 1e-7  # a middle Euler angle this close to 0 or pi is a gimbal lock


def vector_norm(v):
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def normalize(quat):
    return quat / vector_norm(quat)[..., None]


def compose(p, q):
    """The quaternion product p q: the rotation q followed by p."""
    cross = jnp.cross(p[..., :3], q[..., :3])
    vector = p[..., 3:] * q[..., :3] + q[..., 3:] * p[..., :3] + cross
    scalar = p[..., 3] * q[..., 3] - jnp.sum(p[..., :3] * q[..., :3], axis=-1)
    return jnp.concatenate([vector, scalar[..., None]], axis=-1)


def inverse(quat):
    return quat * jnp.array([-1, -1, -1, 1], dtype=quat.dtype)


def magnitude(quat):
    return 2.0 * jnp.arctan2(vector_norm(quat[..., :3]), jnp.abs(quat[..., 3]))


def canonical(quat):
    """The sign of `quat` whose first nonzero entry, in the order w, x, y, z, is positive."""
    neg, zero = quat < 0, quat == 0
    flip = (
        neg[..., 3]
        | (zero[..., 3] & neg[..., 0])
        | (zero[..., 3] & zero[..., 0] & neg[..., 1])
        | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2])
    )
    return jnp.where(flip[..., None], -quat, quat)


def to_matrix(quat):
    x, y, z, w = (quat[..., i] for i in range(4))
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [
        [x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
        [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
        [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2],
    ]
    return jnp.stack([jnp.stack(row, axis=-1) for row in rows], axis=-2)


def from_matrix(matrix):
    """The quaternion of a rotation matrix, computed from its largest diagonal entry
    or its trace, whichever is largest, for accuracy."""
    m = matrix
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        parts = [None] * 4
        parts[i] = 1 - trace + 2 * m[..., i, i]
        parts[j] = m[..., j, i] + m[..., i, j]
        parts[k] = m[..., k, i] + m[..., i, k]
        parts[3] = m[..., k, j] - m[..., j, k]
        candidates.append(jnp.stack(parts, axis=-1))
    candidates.append(
        jnp.stack(
            [
                m[..., 2, 1] - m[..., 1, 2],
                m[..., 0, 2] - m[..., 2, 0],
                m[..., 1, 0] - m[..., 0, 1],
                1 + trace,
            ],
            axis=-1,
        )
    )
    decision = jnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], axis=-1)
    choice = jnp.argmax(decision, axis=-1)
    stacked = jnp.stack(candidates, axis=-2)
    quat = jnp.take_along_axis(stacked, choice[..., None, None], axis=-2)[..., 0, :]
    return normalize(quat)


def to_mrp(quat):
    sign = jnp.where(quat[..., 3:] < 0, -1.0, 1.0)
    return sign * quat[..., :3] / (1.0 + sign * quat[..., 3:])


def from_mrp(mrp):
    squared_plus_1 = jnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
    quat = jnp.concatenate([2 * mrp[..., :3], 2 - squared_plus_1], axis=-1)
    return quat / squared_plus_1


def to_rotvec(quat, degrees):
    quat = jnp.where(quat[..., 3:] < 0, -quat, quat)  # w >= 0: angle in [0, pi]
    angle = 2.0 * jnp.arctan2(vector_norm(quat[..., :3]), quat[..., 3])
    angle2 = angle * angle
    small = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    large = angle / jnp.sin(angle / 2)
    scale = jnp.where(angle <= SMALL_ANGLE, small, large)
    if degrees:
        scale = jnp.rad2deg(scale)
    return scale[..., None] * quat[..., :3]


def from_rotvec(rotvec, degrees):
    if degrees:
        rotvec = jnp.deg2rad(rotvec)
    angle = vector_norm(rotvec)
    angle2 = angle * angle
    small = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    large = jnp.sin(angle / 2) / angle
    scale = jnp.where(angle <= SMALL_ANGLE, small, large)
    return jnp.concatenate([scale[..., None] * rotvec, jnp.cos(angle / 2)[..., None]], axis=-1)


def elementary(axis, angle):
    """The rotation by `angle` about the coordinate axis `axis` (0, 1, 2)."""
    half = angle / 2.0
    zero = jnp.zeros_like(angle)
    parts = [zero, zero, zero, jnp.cos(half)]
    parts[axis] = jnp.sin(half)
    return jnp.stack(parts, axis=-1)


def from_euler(angles, axes, intrinsic, degrees):
    """Compose elementary rotations about `axes` by `angles` (last axis), about the
    rotating frame when `intrinsic`, the fixed one otherwise."""
    if degrees:
        angles = jnp.deg2rad(angles)
    result = elementary(axes[0], angles[..., 0])
    for n, axis in enumerate(axes[1:], start=1):
        step = elementary(axis, angles[..., n])
        result = compose(result, step) if intrinsic else compose(step, result)
    return result


def to_euler(quat, axes, extrinsic, degrees):
    """Euler angles about `axes` (three, consecutive ones different) of `quat`."""
    first, third = (0, 2) if extrinsic else (2, 0)
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    q = [quat[..., n] for n in range(4)]
    if symmetric:
        a, b, c, d = q[3], q[i], q[j], q[k] * sign
    else:
        a, b, c, d = q[3] - q[j], q[i] + q[k] * sign, q[j] + q[3], q[k] * sign - q[i]
    middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    case = jnp.where(jnp.abs(middle - np.pi) <= EULER_EPS, 2, 0)
    case = jnp.where(jnp.abs(middle) <= EULER_EPS, 1, case)
    half_sum = jnp.arctan2(b, a)
    half_diff = jnp.arctan2(d, c)
    angles = [None, middle, jnp.zeros_like(middle)]
    # In a gimbal lock only the sum (case 1) or difference (case 2) is determined.
    angles[0] = jnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    angles[first] = jnp.where(case == 0, half_sum - half_diff, angles[first])
    angles[third] = jnp.where(case == 0, half_sum + half_diff, angles[third])
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - np.pi / 2
    angles = jnp.stack(angles, axis=-1)
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return jnp.rad2deg(angles) if degrees else angles


def rotate(matrix, vectors, inverse):
    """`matrix @ v` (or its transpose) for each vector, broadcasting batch axes."""
    if inverse:
        matrix = jnp.swapaxes(matrix, -1, -2)
    return jnp.matmul(matrix, vectors[..., None])[..., 0]
