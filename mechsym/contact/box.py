"""A rigid box as a free-flying body in closed form (the hard-contact model protocol, mechsym.contact.hard):
a worked example of the protocol on the one free-body model, mechsym.spatial.floating.

Pinocchio's free-flyer layout: q = [x, y, z, qx, qy, qz, qw] (centre and body-to-world quaternion),
v = [v, w]: the centre's linear velocity and the angular velocity, both in the body frame. With the frame at
the centre of mass, the free body's Newton-Euler (mechsym.spatial.floating.bias, linear "local") gives

    H = diag(m I, I_c),   C v + g = [m w x v + m g R^T e_z,  w x I_c w]

and a point c (body frame) has world position p + R c, Jacobian [R, -R [c]x] (linear) over [0, R]
(angular), and classical acceleration at v' = 0: R (w x (v + w x c)) (linear), 0 (angular).
Frames: 'centre' and the eight corners 'corner[+-][+-][+-]' (signs of x, y, z in the body frame).
"""
from __future__ import annotations

import itertools

import numpy as np

from mechsym.core.errors import InputError
from mechsym.spatial import floating
from mechsym.core.freejoint import FreeJoint
from mechsym.core.quaternion import rotation_matrix

__all__ = ["RigidBox"]

FREE = FreeJoint("local")


def _skew(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


class RigidBox:
    """A uniform box of `mass` (kg) and full side lengths `size` (m) under gravity g along -z."""

    nq, nv = 7, 6
    actuated = ()

    def __init__(self, mass=1.0, size=(0.4, 0.3, 0.2), g=9.81):
        size = np.asarray(size, float)
        if not (np.isfinite(mass) and mass > 0) or size.shape != (3,) or not np.all(size > 0):
            raise InputError(f"box: mass and the three sides must be positive, got {mass}, {size}")
        self.mass, self.size, self.g = float(mass), size, float(g)
        a, b, c = size
        self.inertia = mass / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
        self.points = {"centre": np.zeros(3)}
        for sx, sy, sz in itertools.product((1, -1), repeat=3):
            name = "corner" + "".join("+" if s > 0 else "-" for s in (sx, sy, sz))
            self.points[name] = 0.5 * size * np.array([sx, sy, sz])
        self.frames = list(self.points)

    def _point(self, frame):
        try:
            return self.points[frame]
        except KeyError:
            raise InputError(f"box has no frame '{frame}' (frames: {', '.join(self.frames)})") from None

    def mass_matrix(self, q):
        """H = diag(m I, I_c) (6, 6); constant (q is accepted for the model protocol)."""
        H = np.zeros((6, 6))
        H[:3, :3] = self.mass * np.eye(3)
        H[3:, 3:] = self.inertia
        return H

    def bias(self, q, v):
        """C v + g (6,) in body coordinates: the free body's bias (mechsym.spatial.floating.bias)."""
        lin, ang = floating.bias(self.mass, self.inertia, (0.0, 0.0, -self.g), rotation_matrix(q[3:7]), v[:3], v[3:],
                                 FREE.linear)
        return np.array([*lin, *ang])

    def frame_position(self, q, frame):
        """World position (3,) of the point `frame`: p + R c."""
        return q[:3] + rotation_matrix(q[3:7]) @ self._point(frame)

    def frame_jacobian(self, q, frame):
        """(6, 6) world-aligned Jacobian of the point `frame`: [R, -R [c]x] (linear) over [0, R] (angular)."""
        R = rotation_matrix(q[3:7])
        J = np.zeros((6, 6))
        J[:3, :3] = R
        J[:3, 3:] = -R @ _skew(self._point(frame))
        J[3:, 3:] = R
        return J

    def frame_bias(self, q, v, frame):
        """(6,) classical acceleration of the point `frame` at v' = 0: R (w x (v + w x c)), then 0 (angular)."""
        R = rotation_matrix(q[3:7])
        c = self._point(frame)
        w = v[3:]
        return np.concatenate([R @ np.cross(w, v[:3] + np.cross(w, c)), np.zeros(3)])

    def qdot(self, q, v):
        """[R v, quaternion rate 1/2 q (x) (w, 0)]: the free joint's map (mechsym.core.freejoint)."""
        return FREE.qdot(q, v)

    def normalise(self, q):
        """A copy of q with the quaternion scaled to unit norm."""
        return FREE.normalise(q)

    def energy(self, q, v):
        """Kinetic plus potential energy (J), the potential zero at z = 0."""
        return 0.5 * v @ self.mass_matrix(q) @ v + self.mass * self.g * q[2]
