"""The joints of a 3-D tree: each joint type is one class that carries all of its physics, so that adding a
joint type (a screw, a universal joint) is one class and no other module names a joint type.

What a joint gives (the recursions of mechsym.spatial.derive and the checks of mechsym.spatial.declare
read only these):

* `nq`, `nv`: its coordinates and speeds; `coordinate_names()`, `speed_names()` name them;
* `subspace()`: the motion subspace S, nv columns (lin, ang) in the child frame (constant in it);
* `motion(q, let)`: the motion (R_J, p_J) it adds to the child frame at its coordinates q;
* `world_columns(R0, p0, vec)`: its Jacobian columns in the world, one per speed, each a `Screw` (a
  rotation about an axis through a point, with a pitch) or a `Translation`;
* `checked(where)`: a normalised copy (a unit axis), or an InputError naming what is wrong;
* `root_only`: it attaches the root to the world and nothing else (the floating base's free joint);
  `floating`: its coordinates are mechsym.core.freejoint's free flyer (a unit quaternion the entry points check);
  `merges_into_parent`: rigid, the child is folded into its parent (no coordinates); `limits`;
  `mimic`: None, or (joint, ratio, offset): its one coordinate is ratio * that joint's + offset, so it has no
  coordinate of its own (`Mimic`); `rates_are_speeds`: dq/dt = v for its coordinates (mechsym.spatial.manifold
  integrates a tree whose joints all have it, the floating base aside);
* `integrate(q, dv)`: the coordinates moved by the speeds dv (numeric, (..., nq) and (..., nv)): q + dv
  where the rates are the speeds, the quaternion's exponential map for a `Spherical` joint;
* `closure_rows()`: the joint as a loop closure between two frames a (first body) and b (second body),
  (mechsym.spatial.loops): its position rows, each ("along", e), e . R_a^T (o_b - o_a) = 0 (the origins
  apart along no direction e of frame a), or ("perp", e_a, e_b), (R_a e_a) . (R_b e_b) = 0 (two axes
  kept perpendicular);
* `hinges(body)`: the joints the recursions move `body` by, each with the link it moves: the joint itself
  (body), or, for a joint whose subspace turns with its coordinates (`Universal`), constant-subspace joints
  through massless links of their own (mechsym.spatial.merge).

A joint's `axis` is given in the child frame (a closure's: in frame b, and equally in frame a when the loop
is closed at zero relative motion); the child frame's origin lies on it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import sympy as sp

from mechsym.core import quaternion
from mechsym.core.errors import InputError
from mechsym.core.freejoint import Q_NAMES, FreeJoint
from mechsym.core.quaternion import rotation_matrix
from mechsym.spatial.joint_geometry import (EYE, ZERO3, Screw, Translation, exact, normal_pair, rotation_about,
                                            unit_axis, world)

__all__ = ["Joint", "AxisJoint", "Revolute", "Prismatic", "Cylindrical", "Spherical", "Universal", "Fixed", "Free",
           "Mimic", "Planar"]

BASE_SPEEDS = ("vx", "vy", "vz", "wx", "wy", "wz")
AXES = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
POINT_ROWS = tuple(("along", e) for e in AXES)      # the origins of frames a and b coincide


def _angle_about(axis):
    """The closure coordinate (closure_coordinates) "the angle of frame b about `axis` from frame a"."""
    n1, n2 = normal_pair(axis)
    return ("angle", "a", tuple(axis), n1, n2, n1)


class Joint:
    """What every joint type gives (see the module docstring); a new joint type is one subclass, usually a
    frozen dataclass with a `name` field. Defaults: one coordinate and one speed named after the joint, no
    limits, attaching any body but the root, nothing to normalise."""

    nq = 1
    nv = 1
    root_only = False
    floating = False
    merges_into_parent = False
    limits = None
    mimic = None
    rates_are_speeds = True

    def checked(self, where) -> "Joint":
        """This joint normalised (a unit axis), or an InputError naming `where` and what is wrong."""
        return self

    def coordinate_names(self) -> list:
        """The names of its coordinates in q."""
        return [self.name] if self.nq == 1 else [f"{self.name}.{i}" for i in range(self.nq)]

    def speed_names(self) -> list:
        """The names of its speeds in v."""
        return [self.name] if self.nv == 1 else [f"{self.name}.{i}" for i in range(self.nv)]

    def subspace(self):
        """The motion subspace: nv columns (lin, ang) in the child frame."""
        raise NotImplementedError

    def motion(self, q, let):
        """(R_J, p_J): the rotation and translation the joint adds to the child frame at coordinates q;
        `let` names temporaries."""
        raise NotImplementedError

    def world_columns(self, R0, p0, vec):
        """Its Jacobian columns in the world (Screw or Translation), the child frame at (R0, p0)."""
        raise NotImplementedError

    def unit_axis(self):
        """The axis as exact sympy numbers."""
        return [exact(c) for c in self.axis]

    def integrate(self, q, dv):
        """The coordinates q (..., nq) moved by the speeds dv (..., nv): q + dv (rates are speeds)."""
        return np.asarray(q, float) + np.asarray(dv, float)

    def hinges(self, body) -> list:
        """[(joint, link it moves)]: this joint moving `body`."""
        return [(self, body)]

    def closure_rows(self) -> tuple:
        """Its rows as a loop closure (see the module docstring)."""
        raise NotImplementedError(f"joint '{self.name}' ({type(self).__name__}) cannot close a loop")

    def closure_coordinates(self) -> dict:
        """The coordinates it can be driven by as a loop closure: name -> ("travel", e), the origins' distance
        along e of frame a; or ("angle", side, u, n1, n2, m), atan2((R n2) . m', (R n1) . m') with R the
        rotation of frame `side` (a or b; u, n1 and n2 fixed in it, n2 = u x n1 on side a, n1 x u on side b)
        and m' = m fixed in the other frame: frame b's turn from frame a about u, its rate u' . (w_b - w_a)
        (u' = R u) where the closure rows hold. Empty: a closure drives none of its coordinates."""
        return {}


@dataclass(frozen=True)
class AxisJoint(Joint):
    """A joint of one coordinate along or about the `axis` of the child frame, with informative `limits`
    (lower, upper); `checked` makes the axis a unit vector."""

    name: str
    axis: tuple = (0.0, 0.0, 1.0)
    limits: tuple | None = None

    def checked(self, where):
        """A copy with a unit axis."""
        return dataclasses.replace(self, axis=unit_axis(self.axis, f"{where}: joint '{self.name}'"))


@dataclass(frozen=True)
class Revolute(AxisJoint):
    """A hinge about the unit `axis` of the child frame; `limits` (lower, upper) in rad, informative."""

    def subspace(self):
        """One column (lin 0, ang the unit axis) in the child frame."""
        return [(list(ZERO3), self.unit_axis())]

    def motion(self, q, let):
        """The rotation by q[0] about the axis, no translation."""
        c, s = let(sp.cos(q[0])), let(sp.sin(q[0]))
        return rotation_about(self.unit_axis(), c, s), list(ZERO3)

    def world_columns(self, R0, p0, vec):
        """One Screw of pitch 0: the axis in the world (R0 u) through the joint origin p0."""
        return [Screw(vec(world(R0, self.unit_axis())), p0)]

    def closure_rows(self):
        """The origins coincide (3 rows), the axis keeps its direction (2)."""
        n1, n2 = normal_pair(self.axis)
        return POINT_ROWS + (("perp", n1, self.axis), ("perp", n2, self.axis))

    def closure_coordinates(self):
        """The angle of frame b about the axis from frame a."""
        return {self.name: _angle_about(self.axis)}


@dataclass(frozen=True)
class Prismatic(AxisJoint):
    """A slide along the unit `axis` of the child frame; `limits` (lower, upper) in m, informative."""

    def subspace(self):
        """One column (lin the unit axis, ang 0) in the child frame."""
        return [(self.unit_axis(), list(ZERO3))]

    def motion(self, q, let):
        """No rotation, the translation q[0] along the axis."""
        return EYE, [u * q[0] for u in self.unit_axis()]

    def world_columns(self, R0, p0, vec):
        """One Translation along the axis in the world (R0 u)."""
        return [Translation(vec(world(R0, self.unit_axis())))]

    def closure_rows(self):
        """The origins apart along the axis only (2 rows), no relative rotation (3)."""
        n1, n2 = normal_pair(self.axis)
        return (("along", n1), ("along", n2), ("perp", n1, self.axis), ("perp", n2, self.axis), ("perp", n1, n2))

    def closure_coordinates(self):
        """The travel of frame b's origin along the axis from frame a's."""
        return {self.name: ("travel", self.axis)}


@dataclass(frozen=True)
class Cylindrical(AxisJoint):
    """A slide along and a turn about the unit `axis` of the child frame: coordinates JOINT.slide (m) and
    JOINT.angle (rad), speeds their rates; `limits` informative."""

    nq = 2
    nv = 2

    def coordinate_names(self):
        """JOINT.slide, JOINT.angle."""
        return [f"{self.name}.slide", f"{self.name}.angle"]

    speed_names = coordinate_names

    def subspace(self):
        """The translation along and the rotation about the axis (child frame)."""
        u = self.unit_axis()
        return [(u, list(ZERO3)), (list(ZERO3), u)]

    def motion(self, q, let):
        """The rotation by q[1] about the axis and the translation q[0] along it (they commute)."""
        c, s = let(sp.cos(q[1])), let(sp.sin(q[1]))
        u = self.unit_axis()
        return rotation_about(u, c, s), [x * q[0] for x in u]

    def world_columns(self, R0, p0, vec):
        """A Translation along and a Screw of pitch 0 about the axis in the world."""
        u = vec(world(R0, self.unit_axis()))
        return [Translation(u), Screw(u, p0)]

    def closure_rows(self):
        """The origins apart along the axis only (2 rows), the axis keeps its direction (2)."""
        n1, n2 = normal_pair(self.axis)
        return (("along", n1), ("along", n2), ("perp", n1, self.axis), ("perp", n2, self.axis))

    def closure_coordinates(self):
        """JOINT.slide (a Prismatic's travel) and JOINT.angle (a Revolute's angle)."""
        return {f"{self.name}.slide": ("travel", self.axis), f"{self.name}.angle": _angle_about(self.axis)}


@dataclass(frozen=True)
class Spherical(Joint):
    """A ball joint: its configuration the unit quaternion (x, y, z, w) of the child frame in the joint
    frame (mechsym.core.freejoint's quaternion, scalar last), its speeds the child's angular velocity
    relative to the parent, in the child frame (the free joint's angular part): coordinates JOINT.qx ...
    JOINT.qw, speeds JOINT.wx, JOINT.wy, JOINT.wz."""

    name: str
    nq = 4
    nv = 3
    rates_are_speeds = False

    def coordinate_names(self):
        """JOINT.qx, JOINT.qy, JOINT.qz, JOINT.qw."""
        return [f"{self.name}.{c}" for c in Q_NAMES[3:]]

    def speed_names(self):
        """JOINT.wx, JOINT.wy, JOINT.wz."""
        return [f"{self.name}.{c}" for c in BASE_SPEEDS[3:]]

    def subspace(self):
        """Rotations about the child frame's x, y and z."""
        return [(list(ZERO3), [sp.Integer(int(i == k)) for i in range(3)]) for k in range(3)]

    def motion(self, q, let):
        """The rotation of the quaternion q/|q|, no translation."""
        R = rotation_matrix(q[:4], let)
        return [[R[i, j] for j in range(3)] for i in range(3)], list(ZERO3)

    def world_columns(self, R0, p0, vec):
        """Hinges about the child frame's axes (columns of R0) through its origin."""
        return [Screw([R0[i][c] for i in range(3)], p0) for c in range(3)]

    def integrate(self, q, dv):
        """The quaternion turned by the rotation vector dv (child frame): q (x) exp(dv), unit norm."""
        return quaternion.integrate(q, dv)

    def closure_rows(self):
        """The origins coincide (3 rows)."""
        return POINT_ROWS


@dataclass(frozen=True)
class Universal(Joint):
    """A cross (Hooke's) joint: turns about `axis` (fixed on the first body: the parent's joint frame in a
    tree, frame a as a closure) and `axis2` (fixed on the second body: the child's frame, frame b), the two
    perpendicular. Coordinates and speeds JOINT.angle1, JOINT.angle2 (rad): the relative rotation is
    rot(axis, angle1) rot(axis2, angle2). In a tree its motion subspace turns with angle2, so the recursions
    move the body through two hinges (`hinges`) with the massless cross between them, a frame named
    JOINT.cross."""

    name: str
    axis: tuple = (1.0, 0.0, 0.0)
    axis2: tuple = (0.0, 1.0, 0.0)
    nq = 2
    nv = 2

    def checked(self, where):
        """Unit axes, perpendicular."""
        a = unit_axis(self.axis, f"{where}: joint '{self.name}'")
        b = unit_axis(self.axis2, f"{where}: joint '{self.name}' second")
        if abs(float(np.dot(a, b))) > 1e-9:
            raise InputError(f"{where}: joint '{self.name}': the universal joint's axes {a} and {b} are not "
                             f"perpendicular")
        return dataclasses.replace(self, axis=a, axis2=b)

    def coordinate_names(self):
        """JOINT.angle1, JOINT.angle2."""
        return [f"{self.name}.angle1", f"{self.name}.angle2"]

    speed_names = coordinate_names

    def hinges(self, body):
        """The hinge JOINT.angle1 about `axis` moving the cross JOINT.cross (massless, at the joint's origin),
        then the hinge JOINT.angle2 about `axis2` moving `body`."""
        return [(Revolute(f"{self.name}.angle1", self.axis), f"{self.name}.cross"),
                (Revolute(f"{self.name}.angle2", self.axis2), body)]

    def closure_rows(self):
        """The origins coincide (3 rows), the two axes stay perpendicular (1)."""
        return POINT_ROWS + (("perp", self.axis, self.axis2),)

    def closure_coordinates(self):
        """JOINT.angle1, the cross's turn about `axis` from frame a (where `axis2` of frame b points), and
        JOINT.angle2, frame b's turn about `axis2` from the cross (where frame a's `axis` points, seen from
        frame b): the relative rotation R_a^T R_b = rot(axis, angle1) rot(axis2, angle2)."""
        u1, u2 = self.axis, self.axis2
        u3 = tuple(float(x) for x in np.cross(u1, u2))
        return {f"{self.name}.angle1": ("angle", "a", u1, u2, u3, u2),
                f"{self.name}.angle2": ("angle", "b", u2, u1, u3, u1)}


@dataclass(frozen=True)
class Fixed(Joint):
    """A rigid attachment: the child is merged into its parent (its frame stays a named frame)."""

    name: str
    nq = 0
    nv = 0
    merges_into_parent = True

    def closure_rows(self):
        """The origins coincide (3 rows), no relative rotation (3)."""
        x, y, z = AXES
        return POINT_ROWS + (("perp", x, y), ("perp", y, z), ("perp", z, x))


@dataclass(frozen=True)
class Free(Joint):
    """The floating base: 7 coordinates (position, quaternion x, y, z, w) and 6 speeds (linear and
    angular velocity in the base frame), Pinocchio's free flyer: the maps of
    mechsym.core.freejoint.FreeJoint("local"). Its coordinates and speeds are named base.x ... base.qw and
    base.vx ... base.wz."""

    name: str = "root_joint"
    nq = 7
    nv = 6
    root_only = True
    floating = True

    def coordinate_names(self):
        """base.x, base.y, base.z, base.qx, base.qy, base.qz, base.qw."""
        return [f"base.{c}" for c in Q_NAMES]

    def speed_names(self):
        """base.vx ... base.wz."""
        return [f"base.{c}" for c in BASE_SPEEDS]

    def subspace(self):
        """Six columns, translations along x, y, z then rotations about them (body frame)."""
        e = [[sp.Integer(int(i == j)) for i in range(3)] for j in range(3)]
        return [(e[k], list(ZERO3)) for k in range(3)] + [(list(ZERO3), e[k]) for k in range(3)]

    def integrate(self, q, dv):
        """Pinocchio's integrate of the free flyer (mechsym.core.freejoint.FreeJoint("local"))."""
        return FreeJoint("local").integrate(q, dv)

    def motion(self, q, let):
        """At q = [p, quaternion x, y, z, w]: the rotation of q/|q| and the translation p."""
        R = rotation_matrix(q[3:7], let)                            # the rotation of q/|q| (mechsym.core.quaternion)
        return [[R[i, j] for j in range(3)] for i in range(3)], list(q[:3])

    def world_columns(self, R0, p0, vec):
        """Translations along, then hinges about, the base frame's axes (columns of R0) at p0."""
        cols = [[R0[i][c] for i in range(3)] for c in range(3)]
        return [Translation(u) for u in cols] + [Screw(u, p0) for u in cols]


@dataclass(frozen=True)
class Mimic(Joint):
    """A joint of one coordinate (`joint`: a Revolute or a Prismatic) that follows another: its coordinate is
    ratio * q_of + offset (URDF's mimic element, Pinocchio's JointModelMimic). It has no coordinate or speed
    of its own; the recursions move it by the expression and add its forces to the mimicked coordinate's."""

    joint: Joint
    of: str
    ratio: float = 1.0
    offset: float = 0.0
    nq = 0
    nv = 0

    @property
    def name(self):
        """The wrapped joint's name."""
        return self.joint.name

    @property
    def mimic(self):
        """(the mimicked joint's name, ratio, offset)."""
        return self.of, self.ratio, self.offset

    def checked(self, where):
        """The wrapped joint checked; one coordinate, a finite ratio and offset."""
        joint = self.joint.checked(where)
        if joint.nq != 1 or joint.nv != 1 or joint.mimic is not None:
            raise InputError(f"{where}: joint '{self.name}' mimics '{self.of}' but has {joint.nq} coordinates "
                             f"(a mimic joint has one)")
        for what, x in (("ratio", self.ratio), ("offset", self.offset)):
            if not np.isfinite(float(x)):
                raise InputError(f"{where}: joint '{self.name}': mimic {what} is not finite ({x})")
        return dataclasses.replace(self, joint=joint, ratio=float(self.ratio), offset=float(self.offset))

    def subspace(self):
        """The wrapped joint's column (its speed is ratio times the mimicked one's)."""
        return self.joint.subspace()

    def motion(self, q, let):
        """The wrapped joint's motion at its coordinate q[0] (= ratio * q_of + offset, given by the caller)."""
        return self.joint.motion(q, let)

    def world_columns(self, R0, p0, vec):
        """The wrapped joint's column."""
        return self.joint.world_columns(R0, p0, vec)


@dataclass(frozen=True)
class Planar(Joint):
    """Motion in the x-y plane of the joint frame (URDF's planar joint, Pinocchio's JointModelPlanar):
    coordinates x, y (m) and the angle theta about z (rad, one column where Pinocchio has cos and sin);
    speeds vx, vy (the child frame's velocity along its own x and y axes, as Pinocchio's) and the angular
    rate about z, so that x and y change at R(theta) (vx, vy)."""

    name: str
    nq = 3
    nv = 3
    rates_are_speeds = False

    def coordinate_names(self):
        """JOINT.x, JOINT.y, JOINT.theta."""
        return [f"{self.name}.{c}" for c in ("x", "y", "theta")]

    def speed_names(self):
        """JOINT.vx, JOINT.vy, JOINT.w."""
        return [f"{self.name}.{c}" for c in ("vx", "vy", "w")]

    def subspace(self):
        """Translations along x and y, the rotation about z (child frame)."""
        e = [[sp.Integer(int(i == j)) for i in range(3)] for j in range(3)]
        return [(e[0], list(ZERO3)), (e[1], list(ZERO3)), (list(ZERO3), e[2])]

    def motion(self, q, let):
        """The rotation by theta about z and the translation (x, y, 0)."""
        c, s = let(sp.cos(q[2])), let(sp.sin(q[2]))
        return rotation_about([0, 0, 1], c, s), [q[0], q[1], sp.Integer(0)]

    def world_columns(self, R0, p0, vec):
        """Translations along the child frame's x and y axes (columns of R0), the hinge about its z at p0."""
        cols = [[R0[i][c] for i in range(3)] for c in range(3)]
        return [Translation(cols[0]), Translation(cols[1]), Screw(cols[2], p0)]

    def closure_rows(self):
        """Frame b's origin in frame a's x-y plane (1 row), b's z axis along a's (2): b slides and turns in
        that plane."""
        x, y, z = AXES
        return (("along", z), ("perp", x, z), ("perp", y, z))
