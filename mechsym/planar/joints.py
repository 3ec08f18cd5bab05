"""The planar joint types: what each gives the constraints (its rows, written "second body minus first"),
the reactions that are their multipliers and, for a coordinate, the relative motion it drives. A new
joint type is one subclass of `JointType` (docs/joints.md); `Mechanism.joint` takes any.

Conventions (docs/conventions.md): a revolute joint's reaction is the force its first-named body exerts
on its second; a prismatic or slot joint's normal force is along the slide axis (given in the first body's
frame) turned +90 degrees.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

Vec2 = tuple  # a pair of sympy expressions


class JointType:
    """What every joint type gives (a new joint type is one subclass, see docs/joints.md): its bodies and
    points (`body1`, `point1`, `body2`, `point2`: its place in the joint graph), `rows(placed)` its
    constraint rows, written "second body minus first", `reaction_names` the unknowns that are their
    multipliers (the reactions, one per row, in the rows' order), `angle_rows` which of the rows are angles
    (the others are lengths), and, if it can be a generalised coordinate, `drive(placed)` the relative
    motion it drives with its `drive_unit` ("rad" or "m"). `placed` gives the bodies' symbolic placement
    (mechsym.planar.constraints.Placement). `problems()` lists what is wrong in the joint itself; `relative_angle`
    is the fixed angle of body2 relative to body1 if the joint holds one (None if the angle is free)."""

    constraint_count = 0
    reaction_names = ()
    angle_rows = ()
    drive_unit = None  # None: the joint cannot be a generalised coordinate
    relative_angle = None

    def rows(self, placed) -> list:
        """The constraint rows (sympy expressions that vanish when the joint holds), constraint_count of them."""
        raise NotImplementedError

    def drive(self, placed):
        """The relative motion this joint drives as a generalised coordinate (types with a drive_unit)."""
        raise NotImplementedError

    def problems(self) -> list:
        """What is wrong in the joint itself (none by default)."""
        return []


@dataclass(frozen=True)
class PointPair(JointType):
    """A joint between point `point1` of `body1` and point `point2` of `body2`: the place in the joint graph
    of every shipped joint type."""

    name: str
    body1: str
    point1: str
    body2: str
    point2: str


@dataclass(frozen=True)
class Revolute(PointPair):
    """A pin: point `point1` of `body1` coincides with point `point2` of `body2`. Unknowns fx, fy."""

    constraint_count = 2
    reaction_names = ("fx", "fy")
    drive_unit = "rad"

    def rows(self, placed):
        """The two points coincide: x and y of point2 minus point1."""
        p1, p2 = placed.point(self.body1, self.point1), placed.point(self.body2, self.point2)
        return [p2[0] - p1[0], p2[1] - p1[1]]

    def drive(self, placed):
        """The angle of body2 relative to body1."""
        return placed.angle(self.body2) - placed.angle(self.body1)


@dataclass(frozen=True)
class Prismatic(PointPair):
    """A slide: `point2` of `body2` moves on the line through `point1` of `body1` along `axis` (body1
    frame) and the two bodies keep their relative angle `angle`. Unknowns fn (along the slide normal) and m."""

    axis: Vec2
    angle: sp.Expr = sp.Integer(0)

    constraint_count = 2
    reaction_names = ("fn", "m")
    angle_rows = (1,)
    drive_unit = "m"

    @property
    def relative_angle(self):
        """The held angle of body2 relative to body1."""
        return self.angle

    def rows(self, placed):
        """point2 on the slide line (its offset along the normal), and the relative angle held."""
        _, n = placed.slide(self.body1, self.axis)
        p1, p2 = placed.point(self.body1, self.point1), placed.point(self.body2, self.point2)
        return [n.dot(p2 - p1), placed.angle(self.body2) - placed.angle(self.body1) - self.angle]

    def drive(self, placed):
        """The travel of point2 from point1 along the axis."""
        u, _ = placed.slide(self.body1, self.axis)
        return u.dot(placed.point(self.body2, self.point2) - placed.point(self.body1, self.point1))

    def problems(self):
        """A zero slide axis."""
        return _axis_problems(self)


@dataclass(frozen=True)
class Slot(PointPair):
    """A pin in a slot: `point2` of `body2` moves on the line through `point1` of `body1` along `axis`
    (body1 frame); rotation is free. Unknown fn (frictionless, along the slot normal)."""

    axis: Vec2

    constraint_count = 1
    reaction_names = ("fn",)

    def rows(self, placed):
        """point2 on the slot's line (its offset along the normal)."""
        _, n = placed.slide(self.body1, self.axis)
        return [n.dot(placed.point(self.body2, self.point2) - placed.point(self.body1, self.point1))]

    def problems(self):
        """A zero slot axis."""
        return _axis_problems(self)


@dataclass(frozen=True)
class Weld(PointPair):
    """A fixed joint: point `point2` of `body2` coincides with point `point1` of `body1` and the two bodies
    keep their relative angle `angle`. Unknowns fx, fy (the force of body1 on body2) and m (the moment)."""

    angle: sp.Expr = sp.Integer(0)

    constraint_count = 3
    reaction_names = ("fx", "fy", "m")
    angle_rows = (2,)

    @property
    def relative_angle(self):
        """The held angle of body2 relative to body1."""
        return self.angle

    def rows(self, placed):
        """The two points coincide, and the relative angle is held."""
        p1, p2 = placed.point(self.body1, self.point1), placed.point(self.body2, self.point2)
        return [p2[0] - p1[0], p2[1] - p1[1], placed.angle(self.body2) - placed.angle(self.body1) - self.angle]


def _axis_problems(joint):
    return [f"joint '{joint.name}' has a zero slide axis"] if all(sp.sympify(a) == 0 for a in joint.axis) else []


Joint = Revolute | Prismatic | Slot | Weld
