"""The configuration manifold of a tree: q = [floating base (mechsym.core.freejoint.FreeJoint, Pinocchio's free
flyer: position, quaternion x, y, z, w), joints], v = [base linear and angular velocity (both in the base
frame), joint rates]; a fixed base has q = joints and v = rates.

  qdot(q, v)            dq/dt: the free joint's map for the base, joints' = rates
  velocity(q, qd)       the inverse map v(q, dq/dt) (exact for a unit quaternion)
  integrate(q, v, dt)   q (+) v dt: the base by the SE(3) exponential of its twist (Pinocchio's integrate),
                        the joints by v dt
  normalise(q)          the base quaternion scaled to unit norm

Arrays are (nq,) / (nv,) or (N, nq) / (N, nv).
"""
from __future__ import annotations

import numpy as np

from mechsym.core.freejoint import FreeJoint

__all__ = ["qdot", "velocity", "integrate", "normalise", "BASE"]

BASE = FreeJoint("local")


def _joined(base, rest):
    """[base, rest] along the last axis (rest broadcast over base's leading axes)."""
    if rest.shape[:-1] != base.shape[:-1]:
        rest = np.broadcast_to(rest, base.shape[:-1] + rest.shape[-1:])
    return np.concatenate([base, rest], axis=-1)


def qdot(q, v, floating=True):
    """dq/dt from the speeds v (see the module docstring)."""
    q, v = np.asarray(q, float), np.asarray(v, float)
    if not floating:
        return v.copy()
    return _joined(BASE.qdot(q[..., :7], v[..., :6]), v[..., 6:])


def velocity(q, qd, floating=True):
    """The speeds v from q and dq/dt, the inverse of `qdot` (exact for a unit quaternion)."""
    q, qd = np.asarray(q, float), np.asarray(qd, float)
    if not floating:
        return qd.copy()
    return _joined(BASE.velocity(q[..., :7], qd[..., :7]), qd[..., 7:])


def integrate(q, v, dt=1.0, floating=True):
    """q (+) v dt (see the module docstring)."""
    q, v = np.asarray(q, float), np.asarray(v, float)
    if not floating:
        return q + v * dt
    return _joined(BASE.integrate(q[..., :7], v[..., :6], dt), q[..., 7:] + v[..., 6:] * dt)


def normalise(q, floating=True):
    """q with its base quaternion scaled to unit norm."""
    return BASE.normalise(q) if floating else np.array(q, float)
