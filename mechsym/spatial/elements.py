"""Force elements on a tree (the classes of mechsym.core.forces): their generalised forces and columns written
over a Derivation's symbols, for the tree's generated functions (mechsym.spatial.system).

An end of a line element is a frame (a body's own name is its origin); its position and velocity are the
frame's world origin and the linear rows of its world-aligned Jacobian times v, so a force f at it is the
generalised force J_lin^T f (Pinocchio's convention for a force at a frame). A torsional element at a
revolute joint reads the joint's coordinate and speed and acts on that speed (a mimic joint's on the
coordinate it follows, times the ratio). The generalised forces Q join the bias: bias = C v + g - Q.
"""
from __future__ import annotations

from dataclasses import replace

import sympy as sp

from mechsym.core.forces import JointTorque, PointLoad

__all__ = ["TreeGeometry", "element_terms"]


class TreeGeometry:
    """The named quantities of a tree (mechsym.core.forces.Geometry) over a Derivation's q, v and p."""

    def __init__(self, d):
        self.d = d
        self._links = {link.joint.name: link for link in d.links}

    def position(self, body, point) -> sp.Matrix:
        """The frame `point`'s world origin."""
        return sp.Matrix(self.d.frame_pose(point)[1])

    def velocity(self, body, point) -> sp.Matrix:
        """The frame's origin velocity: the linear rows of its world-aligned Jacobian times v."""
        J = self.d.frame_jacobian(point)
        return sp.Matrix([sum((J[i][c] * v for c, v in enumerate(self.d.v) if J[i][c] != 0), sp.Integer(0))
                          for i in range(3)])

    def joint_angle(self, joint):
        """The joint's coordinate (a mimic joint's from the one it follows)."""
        return self.d.qj[self._links[joint].iq]

    def joint_rate(self, joint):
        """The joint's speed."""
        return self.d.vj[self._links[joint].iv]

    def torque(self, joint, value) -> list:
        """The generalised forces on v of a torque on a joint's speed."""
        tau = [sp.Integer(0)] * len(self.d.vj)
        tau[self._links[joint].iv] = value
        return self.d.reduced(tau)


def element_terms(d) -> tuple:
    """(Q: the elements' generalised forces on v, values: each element's measure, rate and force) as
    expressions over d's inputs, the element laws' parameters taken to d's p."""
    geo = TreeGeometry(d)
    Q = [sp.Integer(0)] * d.nv
    values = []
    for element in d.tree.elements:
        element = replace(element, law=element.law.xreplace(d._sub))
        force = d.s.let(element.force(geo))
        values += [element.measure(geo), element.rate(geo), force]
        for load in element.loads(geo):
            if isinstance(load, PointLoad):
                J = d.frame_jacobian(load.end.point)
                Q = [q + sum(J[i][c] * load.force[i] for i in range(3)) for c, q in enumerate(Q)]
            elif isinstance(load, JointTorque):
                Q = [q - t for q, t in zip(Q, geo.torque(load.joint, load.torque))]
    return Q, values
