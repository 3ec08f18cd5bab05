"""The configuration manifold of a floating base (Pinocchio's free flyer): q = [p, quaternion x, y, z, w,
joints], v = [base linear velocity, base angular velocity (both in the base frame), joint rates].

  qdot(q, v)            dq/dt: p' = R v_lin, quat' = 1/2 quat (x) (w, 0), joints' = rates
  velocity(q, qd)       the inverse map v(q, dq/dt) (exact for a unit quaternion)
  integrate(q, v, dt)   q (+) v dt on the manifold: the base moves by the SE(3) exponential of the body
                        twist v dt (Pinocchio's integrate), the quaternion product keeps unit norm
  normalise(q)          the quaternion scaled to unit norm

Arrays are (nq,) / (nv,) or (N, nq) / (N, nv). A fixed base has q = joints and v = rates.
"""
from __future__ import annotations

import numpy as np

__all__ = ["qdot", "velocity", "integrate", "normalise", "quat_multiply", "rotation"]


def quat_multiply(a, b):
    """Hamilton product of quaternions stored (x, y, z, w), over leading axes."""
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz], axis=-1)


def rotation(quat):
    """Rotation matrices (..., 3, 3) of quaternions (x, y, z, w) divided by their norm."""
    x, y, z, w = np.moveaxis(np.asarray(quat, float), -1, 0)
    s = 2.0 / (x * x + y * y + z * z + w * w)
    return np.stack([np.stack([1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)], -1),
                     np.stack([s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)], -1),
                     np.stack([s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)], -1)], -2)


def qdot(q, v, floating=True):
    """dq/dt from the speeds v: p' = R v_lin, quat' = 1/2 quat (x) (w, 0), joints' = rates (see the module
    docstring)."""
    q, v = np.asarray(q, float), np.asarray(v, float)
    if not floating:
        return v.copy()
    R = rotation(q[..., 3:7])
    out = np.empty(q.shape)
    out[..., :3] = np.einsum("...ij,...j->...i", R, v[..., :3])
    w = np.concatenate([v[..., 3:6], np.zeros(v.shape[:-1] + (1,))], axis=-1)
    out[..., 3:7] = 0.5 * quat_multiply(q[..., 3:7], w)
    out[..., 7:] = v[..., 6:]
    return out


def velocity(q, qd, floating=True):
    """The speeds v from q and dq/dt, the inverse of `qdot` (exact for a unit quaternion)."""
    q, qd = np.asarray(q, float), np.asarray(qd, float)
    if not floating:
        return qd.copy()
    quat = q[..., 3:7]
    R = rotation(quat)
    out = np.empty(q.shape[:-1] + (q.shape[-1] - 1,))
    out[..., :3] = np.einsum("...ji,...j->...i", R, qd[..., :3])
    conj = quat * np.array([-1, -1, -1, 1.0])
    w = 2 * quat_multiply(conj, qd[..., 3:7]) / np.sum(quat * quat, axis=-1, keepdims=True)
    out[..., 3:6] = w[..., :3]
    out[..., 6:] = qd[..., 7:]
    return out


def _skew(w):
    z = np.zeros(w.shape[:-1])
    return np.stack([np.stack([z, -w[..., 2], w[..., 1]], -1), np.stack([w[..., 2], z, -w[..., 0]], -1),
                     np.stack([-w[..., 1], w[..., 0], z], -1)], -2)


def integrate(q, v, dt=1.0, floating=True):
    """q (+) v dt (see the module docstring)."""
    q, v = np.asarray(q, float), np.asarray(v, float) * dt
    if not floating:
        return q + v
    out = np.empty(q.shape)
    vl, w = v[..., :3], v[..., 3:6]
    th = np.linalg.norm(w, axis=-1)[..., None, None]
    small = th < 1e-6
    ths = np.where(small, 1.0, th)
    a = np.where(small, 0.5 - th ** 2 / 24, (1 - np.cos(ths)) / ths ** 2)
    b = np.where(small, 1.0 / 6 - th ** 2 / 120, (ths - np.sin(ths)) / ths ** 3)
    W = _skew(w)
    V = np.eye(3) + a * W + b * W @ W
    R0 = rotation(q[..., 3:7])
    out[..., :3] = q[..., :3] + np.einsum("...ij,...j->...i", R0, np.einsum("...ij,...j->...i", V, vl))
    half = 0.5 * th[..., 0, 0]
    sinc = np.where(small[..., 0, 0], 0.5 - th[..., 0, 0] ** 2 / 48, np.sin(half) / np.where(small[..., 0, 0], 1.0, th[..., 0, 0]))
    dq = np.concatenate([w * sinc[..., None], np.cos(half)[..., None]], axis=-1)
    out[..., 3:7] = normalise_quat(quat_multiply(q[..., 3:7], dq))
    out[..., 7:] = q[..., 7:] + v[..., 6:]
    return out


def normalise_quat(quat):
    """Quaternions (..., 4) divided by their norm."""
    return quat / np.linalg.norm(quat, axis=-1, keepdims=True)


def normalise(q, floating=True):
    """q with its base quaternion scaled to unit norm."""
    q = np.array(q, float)
    if floating:
        q[..., 3:7] = normalise_quat(q[..., 3:7])
    return q
