"""The free joint of a floating body: its configuration, its speeds and every map between them.

Configuration (Pinocchio's free flyer, for every floating body: a tree's base and a FloatingBody):

    q = (x, y, z, qx, qy, qz, qw)

the position of the body frame's origin (world) and the body-to-world rotation as a quaternion, scalar
LAST. The rotation of a quaternion is that of q/|q| (a quaternion a little off the unit sphere, as an
integrator carries it, still gives a rotation).

Speeds (6): linear then angular; the angular velocity w is always in the BODY frame (Euler's equations
then have a constant inertia). The linear velocity is either

* "local": the origin's velocity in the body frame (Pinocchio's free flyer; the trees use it), or
* "world": the origin's velocity in the world frame (the FloatingBody uses it). For a rolling body the
  body-frame velocity turns with the body, so the steady roll is not a constant state: measured on the
  rolling disc with "local", BDF took 498 right-hand sides and 109 Jacobians instead of 162 and 1 (the cart
  4801 against 2085) and the agreement with Exudyn went from 1.6e-11 to 1.2e-7.

`to_pinocchio` / `from_pinocchio` convert speeds (and accelerations) exactly between the two.

Numeric arrays carry the joint's entries on the LAST axis: q (..., 7), v (..., 6), quaternions (..., 4),
rotations (..., 3, 3). The quaternion maps are mechsym.core.quaternion's; `FreeJoint.qdot` also takes
sequences of sympy expressions (then it returns sympy), so the generated equations use the same maps.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from mechsym.core import quaternion
from mechsym.core.errors import InputError
from mechsym.core.quaternion import rotation_matrix

__all__ = ["FreeJoint", "Q_NAMES"]

Q_NAMES = ("x", "y", "z", "qx", "qy", "qz", "qw")
LINEAR = ("local", "world")


def _turn(R, vec, inverse=False):
    """R vec (or R^T vec) over leading axes."""
    if inverse:
        R = np.swapaxes(R, -1, -2)
    return np.matmul(R, vec[..., None])[..., 0]


def _skew(w):
    z = np.zeros(w.shape[:-1])
    return np.stack([np.stack([z, -w[..., 2], w[..., 1]], -1), np.stack([w[..., 2], z, -w[..., 0]], -1),
                     np.stack([-w[..., 1], w[..., 0], z], -1)], -2)


def _left_jacobian(w, th):
    """V(w) = I + (1 - cos t)/t^2 W + (t - sin t)/t^3 W^2 (t = th = |w|, W = [w]x): the exponential of a
    twist moves the origin by R V v_lin (a series for small t)."""
    th = th[..., None, None]
    small = th < 1e-6
    ths = np.where(small, 1.0, th)
    a = np.where(small, 0.5 - th ** 2 / 24, (1 - np.cos(ths)) / ths ** 2)
    b = np.where(small, 1.0 / 6 - th ** 2 / 120, (ths - np.sin(ths)) / ths ** 3)
    W = _skew(w)
    return np.eye(3) + a * W + b * W @ W


class FreeJoint:
    """The free joint of a floating body (see the module docstring): configuration q (7, Pinocchio's
    layout) and speeds v (6: linear then angular, the angular one in the body frame, the linear one in
    the body frame for `linear="local"` or the world frame for `linear="world"`), with the maps

      qdot(q, v)            dq/dt: p' = v (world) or R v (local), quat' = 1/2 quat (x) (w, 0)
      velocity(q, qd)       the speeds from dq/dt (the inverse of qdot, exact for a unit quaternion)
      integrate(q, v, dt)   the configuration after moving with constant speeds v for dt: "local" is the
                            SE(3) exponential of the body twist (Pinocchio's integrate of the free flyer),
                            "world" p + v dt and quat (x) exp(w dt) (Pinocchio's R3 x SO3)
      difference(q0, q1)    the speeds v with integrate(q0, v, 1) = q1 (Pinocchio's difference)
      neutral()             the origin, unrotated
      normalise(q)          the quaternion scaled to unit norm
      to_pinocchio(q, v)    (q, v in Pinocchio's free flyer) and from_pinocchio its inverse, exact
    """

    nq, nv = 7, 6
    q_names = Q_NAMES

    def __init__(self, linear: str = "local"):
        if linear not in LINEAR:
            raise InputError(f"free joint: linear velocity frame must be 'local' or 'world', got {linear!r}")
        self.linear = linear

    def __repr__(self):
        return f"FreeJoint(linear={self.linear!r})"

    @staticmethod
    def neutral():
        """The configuration at the origin, unrotated: (0, 0, 0, 0, 0, 0, 1)."""
        return np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])

    @staticmethod
    def normalise(q):
        """q (..., 7 or more) with its quaternion q[..., 3:7] scaled to unit norm (other entries unchanged)."""
        q = np.array(q, float)
        q[..., 3:7] = quaternion.normalise(q[..., 3:7])
        return q

    def qdot(self, q, v):
        """dq/dt (..., 7) from the speeds v (..., 6); sympy sequences give a tuple of 7 expressions."""
        if quaternion.symbolic(q, v):
            q, v = tuple(q), tuple(v)
            lin = sp.Matrix(v[:3]) if self.linear == "world" else rotation_matrix(q[3:7]) * sp.Matrix(v[:3])
            return (*lin, *quaternion.rate(q[3:7], v[3:6]))
        q, v = np.asarray(q, float), np.asarray(v, float)
        lin = v[..., :3] if self.linear == "world" else _turn(rotation_matrix(q[..., 3:7]), v[..., :3])
        rate = quaternion.rate(q[..., 3:7], v[..., 3:6])
        lin = np.broadcast_to(lin, rate.shape[:-1] + (3,))
        return np.concatenate([lin, rate], axis=-1)

    def velocity(self, q, qd):
        """The speeds v (..., 6) from q and dq/dt (..., 7): the inverse of `qdot`."""
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        quat = q[..., 3:7]
        lin = qd[..., :3] if self.linear == "world" else _turn(rotation_matrix(quat), qd[..., :3], inverse=True)
        w = 2 * quaternion.product(quaternion.conjugate(quat), qd[..., 3:7]) / np.sum(quat * quat, axis=-1, keepdims=True)
        lin = np.broadcast_to(lin, w.shape[:-1] + (3,))
        return np.concatenate([lin, w[..., :3]], axis=-1)

    def integrate(self, q, v, dt=1.0):
        """The configuration (..., 7) after the constant speeds v for the time dt (see the class docstring)."""
        q, v = np.asarray(q, float), np.asarray(v, float) * dt
        out = np.empty(np.broadcast_shapes(q.shape[:-1], v.shape[:-1]) + (7,))
        w = v[..., 3:6]
        th = np.linalg.norm(w, axis=-1)
        if self.linear == "world":
            out[..., :3] = q[..., :3] + v[..., :3]
        else:
            out[..., :3] = q[..., :3] + _turn(rotation_matrix(q[..., 3:7]), _turn(_left_jacobian(w, th), v[..., :3]))
        out[..., 3:7] = quaternion.integrate(q[..., 3:7], w, 1.0, th)
        return out

    def difference(self, q0, q1):
        """The speeds v (..., 6) that carry q0 to q1 in unit time (integrate(q0, v, 1) = q1), through the
        shorter of the two rotations."""
        q0, q1 = self.normalise(q0), self.normalise(q1)
        w = quaternion.log(quaternion.normalise(quaternion.product(quaternion.conjugate(q0[..., 3:7]), q1[..., 3:7])))
        out = np.empty(np.broadcast_shapes(q0.shape[:-1], q1.shape[:-1]) + (6,))
        dp = q1[..., :3] - q0[..., :3]
        if self.linear == "world":
            out[..., :3] = dp
        else:
            local = _turn(rotation_matrix(q0[..., 3:7]), dp, inverse=True)
            out[..., :3] = np.linalg.solve(_left_jacobian(w, np.linalg.norm(w, axis=-1)), local[..., None])[..., 0]
        out[..., 3:6] = w
        return out

    def to_pinocchio(self, q, v, a=None):
        """(q, v) and, given, the speeds' rate a (..., 6), in Pinocchio's free flyer (linear velocity and
        acceleration in the body frame: v_b = R^T v, a_b = R^T a - w x v_b, the rate of v_b)."""
        return self._convert(q, v, a, to_local=True)

    def from_pinocchio(self, q, v, a=None):
        """The inverse of `to_pinocchio`: (q, v) and, given, a in this joint's speeds."""
        return self._convert(q, v, a, to_local=False)

    def _convert(self, q, v, a, to_local):
        q, v = np.array(q, float), np.array(v, float)
        a = None if a is None else np.array(a, float)
        if self.linear == "world":
            R = rotation_matrix(q[..., 3:7])
            lin = _turn(R, v[..., :3], inverse=to_local)
            if a is not None:
                local = lin if to_local else v[..., :3]
                a_lin = a[..., :3] if to_local else a[..., :3] + np.cross(v[..., 3:6], local)
                a[..., :3] = _turn(R, a_lin, inverse=to_local)
                if to_local:
                    a[..., :3] -= np.cross(v[..., 3:6], local)
            v[..., :3] = lin
        return (q, v) if a is None else (q, v, a)
