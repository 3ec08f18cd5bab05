"""A derived spatial tree (mechsym.spatial.TreeSystem) as a model of the hard-contact protocol.

The tree already has the protocol's entry points (mass_matrix, bias, frame_position, frame_jacobian,
frame_bias, with the free flyer's layout); this adds the names the contact code reads (frames, q_names with
a floating base's columns base.x ... base.qw as docs/conventions.md (Spatial trees) names them, v_names,
the actuated joints: every joint speed), the configuration rate and normalisation of mechsym.spatial.manifold, and `contact_terms`
(H, C, the contact frames' Jacobians and biases in one generated call) for the simulation's hot path.
"""
from __future__ import annotations

from mechsym.core.freejoint import Q_NAMES
from mechsym.spatial import manifold

__all__ = ["TreeModel"]

BASE_V = ("vx", "vy", "vz", "wx", "wy", "wz")


class TreeModel:
    """`system`: a TreeSystem; `base`: the column prefix of a floating base (docs/conventions.md: 'base')."""

    def __init__(self, system, base="base"):
        system.check_integrable("a contact run")
        self.system = system
        self.nq, self.nv = system.nq, system.nv
        self.floating = system.floating
        self.frames = list(system.frame_names)
        self.contact_frames = tuple(system.contact_frames)
        joints = [n for n in system.joint_names if n != system.joint_names[0] or not self.floating]
        if self.floating:
            self.q_names = [f"{base}.{c}" for c in Q_NAMES] + joints
            self.v_names = [f"{base}.{c}" for c in BASE_V] + [f"{j}d" for j in joints]
            self.actuated = tuple(range(6, self.nv))
        else:
            self.q_names = list(joints)
            self.v_names = [f"{j}d" for j in joints]
            self.actuated = tuple(range(self.nv))
        self.joint_names = joints

    # The integrator carries the quaternion with round-off off the unit sphere; the generated code uses the
    # rotation of q/|q| anyway, so each call gets the normalised q (the tree refuses |q| - 1 > 1e-6).
    def mass_matrix(self, q):
        """The tree's mass matrix H (nv, nv) at the normalised q."""
        return self.system.mass_matrix(self.normalise(q))

    def bias(self, q, v):
        """The tree's bias C(q, v) v + g(q) (nv,) at the normalised q."""
        return self.system.bias(self.normalise(q), v)

    def frame_position(self, q, frame):
        """World position (3,) of `frame`'s origin at the normalised q."""
        return self.system.frame_position(self.normalise(q), frame)

    def frame_jacobian(self, q, frame):
        """(6, nv) world-aligned Jacobian of `frame` at its origin, linear rows first."""
        return self.system.frame_jacobian(self.normalise(q), frame)

    def frame_bias(self, q, v, frame):
        """(6,) classical acceleration of `frame`'s origin at zero accelerations (linear, then angular)."""
        return self.system.frame_bias(self.normalise(q), v, frame)

    def contact_terms(self, q, v):
        """(H, bias, J (nc, 6, nv), frame biases (nc, 6)) of `contact_frames`, one generated call."""
        return self.system.contact_terms(self.normalise(q), v)

    def com(self, q):
        """The centre of mass (3,) in the world at the normalised q."""
        return self.system.com(self.normalise(q))

    def qdot(self, q, v):
        """dq/dt from the speeds v (the free-flyer map of mechsym.spatial.manifold)."""
        return manifold.qdot(q, v, self.floating)

    def normalise(self, q):
        """q with a floating base's quaternion scaled to unit norm."""
        return manifold.normalise(q, self.floating)

    def energy(self, q, v):
        """Kinetic plus potential energy (J) at the normalised q."""
        q = self.normalise(q)
        return self.system.kinetic_energy(q, v) + self.system.potential_energy(q)
