"""Symbolic constraint equations of a mechanism in absolute coordinates.

Every moving body has three coordinates: its centre of mass (x, y) and its frame angle, all in the fixed
body's frame. Each joint adds constraint rows Phi_j(q) = 0 written "second body minus first body", and
each generalised coordinate adds a driving row d_k(q) - theta_k = 0. From the same expressions:

* the Jacobian Phi_q (kinematics: velocity coefficients Phi_q q' = E),
* gamma = d(Phi_q qd)/dq qd (kinematics: accelerations Phi_q qdd = E thetadd - gamma), and one order
  higher gamma3 (Phi_q q''' = -gamma3, for the exact Jacobian of the reduced ODE),
* the reaction columns of the Newton-Euler rows: grad Phi_j is exactly the generalised force of joint j's
  reaction on the two bodies (a pin's force of body1 on body2, a slide's normal force and moment), and
  grad d_k is the generalised force of coordinate k's torque or force. No separate statics is written.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import sympy as sp

from mechsym.core.errors import ModelError
from mechsym.planar.model import Mechanism
from mechsym.planar.topology import Topology


def rot(angle):
    """The planar rotation matrix of `angle` (sympy)."""
    c, s = sp.cos(angle), sp.sin(angle)
    return sp.Matrix([[c, -s], [s, c]])


def cross2(a, b):
    """The planar cross product a_x b_y - a_y b_x (positive when b is counter-clockwise of a)."""
    return a[0] * b[1] - a[1] * b[0]


def point_position(mech, poses, body_name, point_name) -> sp.Matrix:
    """World position of a named point of a body, given the body poses (CoM x, y and frame angle)."""
    body = mech.bodies[body_name]
    if body_name == mech.fixed:
        return sp.Matrix(body.points[point_name])
    x, y, th = poses[body_name]
    return sp.Matrix([x, y]) + rot(th) * (sp.Matrix(body.points[point_name]) - sp.Matrix(body.com))


class Placement:
    """The bodies placed by their symbolic coordinates: what a joint writes its rows with."""

    def __init__(self, mech, poses):
        self.mechanism, self.poses = mech, poses

    def point(self, body, point) -> sp.Matrix:
        """World position of a named point of a body."""
        return point_position(self.mechanism, self.poses, body, point)

    def angle(self, body):
        """The angle of a body's frame (0 for the fixed body)."""
        return self.poses[body][2]

    def slide(self, body, axis):
        """Unit vectors along `axis` (given in the body's frame) and normal to it (the axis turned +90
        degrees), in the world frame."""
        axis = sp.Matrix(axis)
        u = rot(self.angle(body)) * axis / sp.sqrt(axis.dot(axis))
        return u, sp.Matrix([-u[1], u[0]])


@dataclass(frozen=True)
class Constraints:
    mechanism: Mechanism
    topology: Topology
    bodies: tuple  # moving body names, in coordinate order
    q: tuple  # (x_b, y_b, th_b) per moving body
    qd: tuple
    qdd: tuple
    theta: tuple  # generalised coordinate symbols
    params: tuple  # parameter symbols in declaration order
    rows: tuple  # joint constraint expressions, then driving rows
    row_joint: tuple  # the joint each row belongs to
    n_joint_rows: int
    points: dict  # point name -> (x, y) expressions, from the first body that declares the point
    poses: dict  # body -> (x, y, angle) expressions (fixed body constants)
    reaction_names: tuple  # "JOINT.fx" ... one per joint row
    force_names: tuple  # generalised force names (None for passive coordinates)

    @property
    def n(self) -> int:
        """The number of absolute coordinates (3 per moving body)."""
        return len(self.q)

    @cached_property
    def jacobian(self) -> sp.Matrix:
        """Phi_q = d rows / d q (derived on demand: a compiled library loaded from the cache needs none)."""
        return sp.Matrix(self.rows).jacobian(sp.Matrix(self.q))

    @cached_property
    def gamma(self) -> tuple:
        """Acceleration terms: Phi_q qdd = E thetadd - gamma, gamma = d(Phi_q qd)/dq qd (derived on demand)."""
        qv, qd = sp.Matrix(self.q), sp.Matrix(self.qd)
        vel = self.jacobian * qd
        return tuple(vel.jacobian(qv) * qd)

    @cached_property
    def gamma3(self) -> tuple:
        """Third-order terms of a one-coordinate mechanism: Phi_q q''' = -gamma3(q, q', q''), written with
        the symbols qd for q' and qdd for q'' (derived on demand). Differentiating Phi_q q'' = -gamma(q, q')
        once more gives gamma3 = d(gamma(q, v))/dq v + 3 d(Phi_q w)/dq v at v = q', w = q''."""
        qv, v, w = sp.Matrix(self.q), sp.Matrix(self.qd), sp.Matrix(self.qdd)
        return tuple(sp.Matrix(self.gamma).jacobian(qv) * v + 3 * (self.jacobian * w).jacobian(qv) * v)

    def body_slice(self, body: str) -> slice:
        """The slice of q holding `body`'s x, y and angle."""
        i = self.bodies.index(body)
        return slice(3 * i, 3 * i + 3)


def derive_constraints(mech: Mechanism, topo: Topology) -> Constraints:
    """Build the symbolic constraints; pure sympy, no numbers."""
    bodies = tuple(mech.moving_bodies)
    q, qd, qdd, poses = [], [], [], {}
    for b in bodies:
        syms = sp.symbols(f"x_{b} y_{b} theta_{b}", real=True)
        q += syms
        qd += sp.symbols(f"xd_{b} yd_{b} thetad_{b}", real=True)
        qdd += sp.symbols(f"xdd_{b} ydd_{b} thetadd_{b}", real=True)
        poses[b] = syms
    zero = sp.Integer(0)
    poses[mech.fixed] = (zero, zero, zero)

    placed = Placement(mech, poses)
    rows, row_joint, reactions = [], [], []
    for j in mech.joints.values():
        new = list(j.rows(placed))
        if len(new) != j.constraint_count or len(j.reaction_names) != len(new):
            raise ModelError(mech.name, [f"joint '{j.name}' ({type(j).__name__}) gives {len(new)} rows for "
                                         f"{j.constraint_count} constraints and {len(j.reaction_names)} reactions"])
        rows += new
        row_joint += [j.name] * len(new)
        reactions += [f"{j.name}.{r}" for r in j.reaction_names]
    n_joint_rows = len(rows)

    theta = []
    for c in mech.coordinates:
        j = mech.joints[c.joint]
        sym = sp.Symbol(c.name, real=True)
        theta.append(sym)
        rows.append(j.drive(placed) - sym)
        row_joint.append(j.name)

    points = {}
    for bname, body in mech.bodies.items():
        for pname in body.points:
            points.setdefault(pname, tuple(placed.point(bname, pname)))

    params = tuple(p.symbol for p in mech.parameters.values())
    return Constraints(
        mech, topo, bodies, tuple(q), tuple(qd), tuple(qdd), tuple(theta), params, tuple(rows),
        tuple(row_joint), n_joint_rows, points, poses, tuple(reactions),
        tuple(c.force for c in mech.coordinates),
    )
