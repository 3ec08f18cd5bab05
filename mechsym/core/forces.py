"""Force elements: springs, dampers, spring-dampers and actuators along the line between two points, and
torsional spring-dampers at a joint; one set of classes for every model that declares them (the planar
`Mechanism`, the spatial `Tree`).

An element is plain data: its ends and its law, the tension (or the torque) as a sympy expression in the
element's measure (`LENGTH`, or `ANGLE` for a torsional element), its rate (`RATE`), the time (`TIME`),
the parameters and the model's named quantities. What the element needs from the model is a `Geometry`:
the exact symbolic position and velocity of a named point, and a revolute joint's angle and rate. From it
the element gives its measure, rate and force (the columns NAME.length, NAME.rate, NAME.force) and its
loads on the bodies (forces at points, torques), which the model's equations turn into generalised forces
like every other load. Nothing here is numeric.

Signs (docs/conventions.md): a line element's force is its tension, positive when it pulls its two ends
together (a stretched spring, a damper being extended); a torsional element's torque is positive when it
resists an increase of the joint's relative angle (the second body's angle minus the first's).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

import sympy as sp

TIME = sp.Symbol("t", real=True)         # time [s], in an actuator's force or a general load
LENGTH = sp.Symbol("length", real=True)  # a line element's length [m], in a declared law
ANGLE = sp.Symbol("angle", real=True)    # a torsional element's relative angle [rad], in a declared law
RATE = sp.Symbol("rate", real=True)      # the rate of the element's length [m/s] or angle [rad/s]



class Geometry(Protocol):
    """What an element reads from its model: exact symbolic expressions (sympy column vectors for points,
    in the world frame)."""

    def position(self, body: str, point: str) -> sp.Matrix:
        """The world position of a named point of a body."""

    def velocity(self, body: str, point: str) -> sp.Matrix:
        """The world velocity of a named point of a body."""

    def joint_angle(self, joint: str) -> sp.Expr:
        """A revolute joint's angle: its second body's relative to its first."""

    def joint_rate(self, joint: str) -> sp.Expr:
        """The rate of a revolute joint's angle."""


@dataclass(frozen=True)
class End:
    """A named point of a body: one end of a line element."""

    body: str
    point: str

    def __str__(self):
        return f"point '{self.point}' of body '{self.body}'"


@dataclass(frozen=True)
class PointLoad:
    """A force (world-frame components) at a named point of a body."""

    end: End
    force: tuple


class ElementLaw:
    """What every element shares: its law evaluated at its own measure (the symbol `measure_symbol`) and
    rate."""

    measure_symbol = None

    def force(self, geo: Geometry):
        """The element's force (or torque): its law at its measure and rate."""
        return self.law.xreplace({self.measure_symbol: self.measure(geo), RATE: self.rate(geo)})


@dataclass(frozen=True)
class Line(ElementLaw):
    """A force along the line between two points: a spring, damper, spring-damper or actuator (`kind`).
    `law` is the tension [N] in LENGTH, RATE, TIME, parameters and named quantities."""

    name: str
    kind: str
    a: End
    b: End
    law: sp.Expr

    columns = ("length", "rate", "force")
    units = ("m", "m/s", "N")
    measure_symbol = LENGTH

    def measure(self, geo: Geometry):
        """The length |b - a| [m] (exact)."""
        d = geo.position(self.b.body, self.b.point) - geo.position(self.a.body, self.a.point)
        return sp.sqrt(d.dot(d))

    def rate(self, geo: Geometry):
        """The length's rate: the relative velocity along the line (b - a) . (vb - va) / length [m/s]."""
        d = geo.position(self.b.body, self.b.point) - geo.position(self.a.body, self.a.point)
        v = geo.velocity(self.b.body, self.b.point) - geo.velocity(self.a.body, self.a.point)
        return d.dot(v) / self.measure(geo)

    def loads(self, geo: Geometry) -> list:
        """The tension T along the unit vector u from a to b: T u at a, -T u at b."""
        d = geo.position(self.b.body, self.b.point) - geo.position(self.a.body, self.a.point)
        u = d / self.measure(geo)
        tension = self.force(geo)
        return [PointLoad(self.a, tuple(tension * u)), PointLoad(self.b, tuple(-tension * u))]

    def problems(self, points: dict, revolutes=()) -> list:
        """Unknown bodies or points, and two ends on one body (`points`: body -> its point names)."""
        out = []
        for end in (self.a, self.b):
            if end.body not in points:
                out.append(f"{self.kind} '{self.name}' names unknown body '{end.body}'")
            elif end.point not in points[end.body]:
                out.append(f"{self.kind} '{self.name}' names unknown point '{end.point}' of body '{end.body}'")
        if self.a.body == self.b.body:
            out.append(f"{self.kind} '{self.name}' joins two points of body '{self.a.body}', which cannot move "
                       "apart; join points of two bodies")
        return out


@dataclass(frozen=True)
class JointTorque:
    """A torque at a joint that resists an increase of its relative angle (planar: -torque on its second
    body, +torque on its first; a tree: -torque on the joint's coordinate)."""

    joint: str
    torque: sp.Expr


@dataclass(frozen=True)
class Torsional(ElementLaw):
    """A torsional spring-damper at a revolute joint: `law` is the torque [N m] in ANGLE (the joint's
    relative angle: its second body's angle minus its first's, or a tree joint's coordinate), RATE, TIME,
    parameters and named quantities, positive resisting an increase of the angle."""

    name: str
    kind: str
    joint: str
    law: sp.Expr

    columns = ("angle", "rate", "torque")
    units = ("rad", "rad/s", "N m")
    measure_symbol = ANGLE

    def measure(self, geo: Geometry):
        """The joint's relative angle [rad]."""
        return geo.joint_angle(self.joint)

    def rate(self, geo: Geometry):
        """The relative angle's rate [rad/s]."""
        return geo.joint_rate(self.joint)

    def loads(self, geo: Geometry) -> list:
        """The torque at the joint, resisting its angle."""
        return [JointTorque(self.joint, self.force(geo))]

    def problems(self, points: dict, revolutes) -> list:
        """An unknown joint, or one that is not a revolute (`revolutes`: the names of the model's)."""
        return [] if self.joint in revolutes else [
            f"{self.kind} '{self.name}' names '{self.joint}', which is not a revolute joint of the model"]


Element = Line | Torsional


def coefficient(owner, kind: str, name: str, what: str, value, unit: str, doc: str):
    """A coefficient of an element: a number declares the parameter NAME_WHAT (default `value`, not
    negative, overridable by --param) and returns its symbol; an expression is used as given. A negative
    number is a problem of the declaration naming the element."""
    expr = sp.sympify(value)
    if not expr.is_number:
        return expr
    negative = not (expr.is_real and expr >= 0)
    if negative:
        owner._problems.append(f"{kind} '{name}': {doc} {float(expr) if expr.is_real else expr:g} {unit} must not be "
                               "negative")
    return owner.parameter(f"{name}_{what}", float(expr) if expr.is_real else 0.0, unit, f"{doc} of {kind} '{name}'",
                           positive=False, nonnegative=not negative)


def line_law(owner, kind, name, stiffness=None, free_length=None, damping=None, law=None):
    """The tension law of a line element from its coefficients (declared as parameters NAME_k, NAME_l0,
    NAME_c) or `law` given whole."""
    if law is not None:
        return sp.sympify(law)
    tension = sp.Integer(0)
    if stiffness is not None:
        k = coefficient(owner, kind, name, "k", stiffness, "N/m", "stiffness")
        l0 = coefficient(owner, kind, name, "l0", free_length if free_length is not None else 0, "m", "free length")
        tension += k * (LENGTH - l0)
    if damping is not None:
        tension += coefficient(owner, kind, name, "c", damping, "N s/m", "damping") * RATE
    return tension


def torsional_law(owner, name, stiffness=0, damping=0, free_angle=0, law=None):
    """The torque law of a torsional spring-damper: k (angle - angle0) + c rate, with NAME_k [N m/rad],
    NAME_c [N m s/rad] and NAME_angle0 [rad] declared as parameters, or `law` given whole."""
    if law is not None:
        return sp.sympify(law)
    kind = "torsional spring-damper"
    k = coefficient(owner, kind, name, "k", stiffness, "N m/rad", "stiffness")
    c = coefficient(owner, kind, name, "c", damping, "N m s/rad", "damping")
    angle0 = sp.sympify(free_angle)
    if angle0.is_number:
        angle0 = owner.parameter(f"{name}_angle0", float(angle0), "rad", f"free angle of {kind} '{name}'")
    return k * (ANGLE - angle0) + c * RATE


class ElementDeclaration:
    """The force-element methods of a declaration (the planar Mechanism, the spatial Tree): each declares
    its coefficients as parameters (`coefficient`) and adds the element to `self.elements`. Ends are
    (body, point) pairs; `law`, `force`: a sympy expression in LENGTH (ANGLE), RATE, TIME, parameters and
    the model's named quantities."""

    def spring(self, name, a, b, stiffness=None, free_length=0, law=None):
        """A linear spring between point a and point b: tension k (length - l0), with NAME_k [N/m] and
        NAME_l0 [m] declared as parameters; or the tension `law` (of LENGTH and RATE)."""
        if stiffness is None and law is None:
            self._problems.append(f"spring '{name}' has neither a stiffness nor a law")
        return self._line("spring", name, a, b, line_law(self, "spring", name, stiffness if law is None else None,
                                                             free_length, None, law))

    def damper(self, name, a, b, damping):
        """A linear damper between point a and point b: tension c rate, NAME_c [N s/m] a parameter."""
        return self._line("damper", name, a, b, line_law(self, "damper", name, damping=damping))

    def spring_damper(self, name, a, b, stiffness, damping, free_length=0):
        """A spring and a damper in parallel: tension k (length - l0) + c rate (NAME_k, NAME_l0, NAME_c)."""
        return self._line("spring-damper", name, a, b,
                          line_law(self, "spring-damper", name, stiffness, free_length, damping))

    def actuator(self, name, a, b, force):
        """An actuator between point a and point b: its tension `force` [N] (positive pulling the points
        together), an expression in TIME, LENGTH, RATE, parameters and named quantities."""
        return self._line("actuator", name, a, b, sp.sympify(force))

    def torsional(self, name, joint, stiffness=0, damping=0, free_angle=0, law=None):
        """A torsional spring-damper at the revolute `joint`: torque k (angle - angle0) + c rate resisting
        the joint's relative angle (NAME_k [N m/rad], NAME_c [N m s/rad], NAME_angle0 [rad] parameters),
        or the torque `law` (of ANGLE and RATE)."""
        element = Torsional(name, "torsional spring-damper", joint,
                            torsional_law(self, name, stiffness, damping, free_angle, law))
        return self._add_element(element)

    def _line(self, kind, name, a, b, law):
        ends = []
        for end in (a, b):
            try:
                body, point = end
            except (TypeError, ValueError):
                self._problems.append(f"{kind} '{name}': an end must be a (body, point) pair, got {end!r}")
                body, point = "?", "?"
            ends.append(End(str(body), str(point)))
        return self._add_element(Line(name, kind, ends[0], ends[1], law))

    def _add_element(self, element):
        own = {s.name: s for s in (TIME, LENGTH, ANGLE, RATE)}  # sp.Symbol("length") is LENGTH, whatever its assumptions
        law = element.law.xreplace({s: own[s.name] for s in element.law.free_symbols if s.name in own})
        element = replace(element, law=law)
        if any(e.name == element.name for e in self.elements):
            self._problems.append(f"force element '{element.name}' declared twice")
        self.elements.append(element)
        return element

    def element_problems(self, points: dict, revolutes, known) -> list:
        """What is wrong with the declared elements: their ends and joints (`points`: body -> its point
        names; `revolutes`: the revolute joints' names) and symbols in a law that are neither the law's own
        (LENGTH or ANGLE, RATE, TIME) nor `known` (the parameters and named quantities)."""
        out = []
        for e in self.elements:
            out += e.problems(points, revolutes)
            own = {e.measure_symbol, RATE, TIME}
            stray = e.law.free_symbols - own - set(known)
            if stray:
                out.append(f"{e.kind} '{e.name}' uses {sorted(map(str, stray))}, which are not parameters or named "
                           f"quantities (its law may use {', '.join(sorted(map(str, own)))})")
        return out
