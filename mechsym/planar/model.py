"""Declaring a planar mechanism: parameters, bodies with named points, joints, coordinates and loads.

A declaration is plain data. Nothing here solves anything: `Mechanism.check()` (called by every later
stage) reports all the problems of a declaration together, and the later stages (topology, kinematics,
equations) read the frozen pieces.

Conventions (see docs/conventions.md): every body has a frame; points and the centre of mass are given in
it. The fixed body's frame is the frame the mechanism is solved in. The joint types, with their
reactions' conventions, are mechsym.planar.joints'.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from mechsym.core.errors import InputError, ModelError
from mechsym.core.forces import TIME, ElementDeclaration
from mechsym.core.parameters import Declaration, apply_overrides, default_problems
from mechsym.planar.joints import JointType, Prismatic, Revolute, Slot, Vec2, Weld


@dataclass(frozen=True)
class Body:
    """A rigid planar body: mass, centroidal inertia, centre of mass and named points in its frame.

    `guess` is the approximate angle of the body frame used to start assembly (it picks the branch).
    """

    name: str
    mass: sp.Expr
    inertia: sp.Expr
    com: Vec2
    points: dict
    guess: float = 0.0

    def point(self, name: str) -> Vec2:
        """A named point (x, y) in the body frame."""
        return self.points[name]


@dataclass(frozen=True)
class Coordinate:
    """A generalised coordinate: the relative motion of a joint (angle of a revolute, travel of a
    prismatic). `force` names its conjugate generalised force (motor torque, actuator or friction force);
    None means the coordinate is passive (no force acts along it)."""

    name: str
    joint: str
    force: str | None
    unit: str
    guess_at: float = 0.0


@dataclass(frozen=True)
class PointForce:
    """A force (components in the fixed frame) applied at a named point of a body."""

    body: str
    point: str
    force: Vec2


@dataclass(frozen=True)
class BodyTorque:
    """A pure torque (counter-clockwise positive) applied to a body."""

    body: str
    torque: sp.Expr


def load_values(load) -> tuple:
    """The expressions of a load: a force's two components, or a torque."""
    return tuple(load.force) if isinstance(load, PointForce) else (load.torque,)


def describe_load(load) -> str:
    """A load as an error message names it."""
    if isinstance(load, PointForce):
        return f"the force at point '{load.point}' of body '{load.body}'"
    return f"the torque on body '{load.body}'"


@dataclass(frozen=True)
class Branch:
    """A stated assembly condition: `expr` (in point coordinates) must stay positive."""

    expr: sp.Expr
    description: str


@dataclass(frozen=True)
class Quantity:
    """What a named-quantity symbol stands for: `kind` "position" or "velocity" (of `point` of `body`,
    component `axis` 0 or 1) or "angle" or "rate" (of `body`)."""

    kind: str
    body: str
    point: str | None = None
    axis: int = 0


@dataclass
class Mechanism(ElementDeclaration, Declaration):
    """A planar mechanism under construction. Build it with the methods below, then hand it to
    `mechsym.derive` (or the CLI). The first body declared with `fixed=True` is the frame of reference.
    Parameters and gravity follow mechsym.core.parameters.Declaration: gravity is a parameter g = 9.81
    m/s^2 along -y of that frame unless `gravity_down` declares it otherwise or `no_gravity` removes it
    (a horizontal mechanism)."""

    DOWN = (0, -1)

    name: str
    bodies: dict = field(default_factory=dict)
    joints: dict = field(default_factory=dict)
    coordinates: list = field(default_factory=list)
    loads: list = field(default_factory=list)
    branches: list = field(default_factory=list)
    elements: list = field(default_factory=list)
    quantities: dict = field(default_factory=dict)
    fixed: str | None = None
    doc: str = ""
    valid: tuple | None = None  # (low, high, note) of valid_between

    def __post_init__(self):
        self._init_parameters()

    def _system(self, backend):
        from mechsym.planar.system import System

        return System(self, backend)

    # -- bodies -------------------------------------------------------------------------------------
    def body(self, name, mass=0, inertia=0, com=(0, 0), points=None, guess=0.0, fixed=False):
        """Declare a rigid body; returns its name.

        mass [kg] and inertia [kg m^2] (about the centre of mass) are numbers or expressions in parameters;
        com is the centre of mass (x, y) [m] and `points` maps point names to (x, y) [m], both in the
        body's own frame. guess: the body frame's approximate angle [rad] at the coordinates' guess_at
        values (assembly starts there, so it picks the branch). fixed=True makes it the frame of
        reference. A point mass is a body with inertia=0 (its com at the point); a massless link has
        mass=0 and inertia=0."""
        if name in self.bodies:
            self._problems.append(f"body '{name}' declared twice")
        pts = {k: _vec(v) for k, v in (points or {}).items()}
        self.bodies[name] = Body(name, sp.sympify(mass), sp.sympify(inertia), _vec(com), pts, float(guess))
        if fixed:
            if self.fixed is not None:
                self._problems.append(f"bodies '{self.fixed}' and '{name}' are both fixed")
            else:
                self.fixed = name
        return name

    def bar(self, name, ends, length, density, points=None, guess=0.0):
        """A uniform slender bar along its frame's x axis from `ends[0]` (origin) to `ends[1]`:
        mass density*length [density in kg/m], centroidal inertia m l^2/12. `points` adds points (x, y)
        [m] in the bar's frame; guess: the bar's approximate angle [rad]. Returns the name. A length that
        is a number must be positive (a bar of length 0 joins its two ends into one point)."""
        value = sp.sympify(length)
        if value.is_number and not (value.is_real and value > 0):
            self._problems.append(f"bar '{name}' from '{ends[0]}' to '{ends[1]}' has length {value}; a bar's length "
                                  "must be positive")
        m = density * length
        pts = {ends[0]: (0, 0), ends[1]: (length, 0)}
        pts.update(points or {})
        return self.body(name, m, m * length**2 / 12, (length / 2, 0), pts, guess)

    def ground(self, name="ground", points=None):
        """The fixed body (the frame of reference, massless); `points` (x, y) [m] in that frame."""
        return self.body(name, 0, 0, (0, 0), points, fixed=True)

    # -- joints -------------------------------------------------------------------------------------
    def revolute(self, name, body1, point1, body2, point2=None):
        """Pin `point1` of `body1` to `point2` (default: the same name) of `body2`."""
        return self._joint(Revolute(name, body1, point1, body2, point2 or point1))

    def prismatic(self, name, body1, point1, body2, point2=None, axis=(1, 0), angle=0):
        """A slide: `point2` (default: the same name as point1) of `body2` moves on the line through
        `point1` of `body1` along `axis`, a direction (x, y) in body1's frame (it turns with body1; for
        a guide on the ground it is in the fixed frame), and the two bodies keep the relative angle
        `angle` [rad] (body2's angle minus body1's; 0: body2's frame parallel to body1's). Reactions:
        JOINT.fn, the force of body1 on body2 along the axis turned +90 degrees, and JOINT.m, the moment.
        As a coordinate its value is the travel of point2 along the axis [m]."""
        return self._joint(Prismatic(name, body1, point1, body2, point2 or point1, _vec(axis), sp.sympify(angle)))

    def slot(self, name, body1, point1, body2, point2=None, axis=(1, 0)):
        """A pin in a slot: `point2` (default: point1's name) of `body2` moves on the line through
        `point1` of `body1` along `axis` (x, y) in body1's frame, and turns freely. Reaction JOINT.fn,
        frictionless, along the axis turned +90 degrees. A slot cannot be a coordinate."""
        return self._joint(Slot(name, body1, point1, body2, point2 or point1, _vec(axis)))

    def weld(self, name, body1, point1, body2, point2=None, angle=0):
        """A fixed joint: `point2` (default: point1's name) of `body2` is held at `point1` of `body1`, and
        body2 keeps the relative angle `angle` [rad] (its angle minus body1's). Reactions JOINT.fx, JOINT.fy
        (the force of body1 on body2) and JOINT.m (the moment). A weld cannot be a coordinate."""
        return self._joint(Weld(name, body1, point1, body2, point2 or point1, sp.sympify(angle)))

    def add_joint(self, joint: JointType) -> str:
        """Declare a joint of any type (a JointType); revolute(), prismatic(), slot() and weld() call this."""
        if not isinstance(joint, JointType):
            raise InputError(f"mechanism '{self.name}': {joint!r} is not a joint (a mechsym.planar.joints.JointType)")
        return self._joint(joint)

    def plate(self, name, corners, density, points=None, guess=0.0):
        """A uniform flat plate (a ternary or larger link) whose outline is the polygon through `corners`
        (point name -> (x, y) [m] in the plate's frame, in order around the outline, three or more, not
        self-intersecting); `density` is its mass per area [kg/m^2]. Mass density*area, the centre of
        mass at the polygon's centroid and the centroidal inertia from the polygon's second moment
        (Green's theorem over its edges; either orientation). `points` adds points that are not corners.
        Returns the name."""
        corners = {k: _vec(v) for k, v in dict(corners).items()}
        if len(corners) < 3:
            self._problems.append(f"plate '{name}' needs three or more corners, got {len(corners)}")
            return self.body(name, 0, 0, (0, 0), {**corners, **(points or {})}, guess)
        mass, com, inertia = polygon_properties(list(corners.values()), density, self._default_values())
        return self.body(name, mass, inertia, com, {**corners, **(points or {})}, guess)

    def _default_values(self) -> dict:
        return {p.symbol: p.default for p in self.parameters.values()}

    def _joint(self, joint):
        if joint.name in self.joints:
            self._problems.append(f"joint '{joint.name}' declared twice")
        self.joints[joint.name] = joint
        return joint.name

    # -- coordinates and loads ----------------------------------------------------------------------
    def coordinate(self, name, joint, force=None, guess_at=0.0):
        """Make the relative motion of `joint` a generalised coordinate named `name`, driven by the
        generalised force `force` (a torque for a revolute, a force for a prismatic), or passive.
        `guess_at` is the coordinate value at which the bodies' guess angles describe the mechanism."""
        unit = getattr(self.joints.get(joint), "drive_unit", None) or "rad"
        self.coordinates.append(Coordinate(name, joint, force, unit, float(guess_at)))
        return sp.Symbol(name, real=True)

    def force(self, body, point, fx, fy):
        """A force (fx, fy) [N], components in the fixed frame, applied at the named point of `body`: numbers
        or expressions in the parameters, the named quantities (`position`, `velocity`, `angle`, `rate`)
        and the time `mechsym.core.forces.TIME`."""
        self.loads.append(PointForce(body, point, _vec((fx, fy))))

    def torque(self, body, value):
        """A pure torque [N m] on `body`, counter-clockwise positive: a number or an expression as in
        `force`."""
        self.loads.append(BodyTorque(body, sp.sympify(value)))

    # -- named quantities, for loads and force-element laws --------------------------------------------
    def position(self, body, point) -> sp.Matrix:
        """The position (x, y) [m] of a named point of a body in the fixed frame, as symbols a load or an
        element's law may use (the equations put the exact expression in their place)."""
        return sp.Matrix([self._quantity(f"{body}.{point}.{c}", Quantity("position", body, point, i))
                          for i, c in enumerate("xy")])

    def velocity(self, body, point) -> sp.Matrix:
        """The velocity (vx, vy) [m/s] of a named point of a body in the fixed frame, as `position`."""
        return sp.Matrix([self._quantity(f"{body}.{point}.v{c}", Quantity("velocity", body, point, i))
                          for i, c in enumerate("xy")])

    def angle(self, body) -> sp.Symbol:
        """The angle [rad] of a body's frame (counter-clockwise from the fixed frame's x axis), as `position`."""
        return self._quantity(f"{body}.angle", Quantity("angle", body))

    def rate(self, body) -> sp.Symbol:
        """The angular velocity [rad/s] of a body, as `position`."""
        return self._quantity(f"{body}.omega", Quantity("rate", body))

    def _quantity(self, name, quantity):
        sym = sp.Symbol(name, real=True)
        self.quantities[sym] = quantity
        return sym

    @staticmethod
    def at(point: str) -> sp.Matrix:
        """Symbolic position of a named point, for writing branch conditions."""
        return sp.Matrix(sp.symbols(f"{point}_x {point}_y", real=True))

    def branch(self, expr, description):
        """State an assembly condition that must stay positive (e.g. a point above a line), in the point
        coordinates of `at()`. It checks the branch that assembly reached (an error names the condition
        when it fails) and never picks one: the bodies' guess angles pick the branch."""
        self.branches.append(Branch(sp.sympify(expr), description))

    def valid_between(self, low, high, note):
        """Say that the declaration describes the machine only while its driven coordinate lies in
        [low, high) modulo 2 pi (a walker whose supporting foot is held on the ground for one step): an
        inverse analysis at coordinates outside it warns, with `note` saying what to use there instead."""
        self.valid = (float(low), float(high), note)

    def check_valid(self, theta):
        """One UserWarning when a coordinate of `theta` lies outside the window of `valid_between`."""
        if self.valid is None:
            return
        low, high, note = self.valid
        offset = np.mod(np.asarray(theta, float) - low, 2 * np.pi)
        outside = (offset > high - low + 1e-9) & (offset < 2 * np.pi - 1e-9)
        if np.any(outside):
            import warnings

            first = np.asarray(theta, float).ravel()[np.flatnonzero(outside.ravel())[0]]
            warnings.warn(f"mechanism '{self.name}' holds for {self.coordinates[0].name} in [{low:.6g}, {high:.6g}) "
                          f"mod 2 pi only, not at {first:.6g} ({int(outside.sum())} samples outside): {note}",
                          UserWarning, stacklevel=3)

    # -- reading ------------------------------------------------------------------------------------
    @property
    def moving_bodies(self) -> list:
        """Names of the bodies other than the fixed one."""
        return [b for b in self.bodies if b != self.fixed]

    def point_owner(self, point: str) -> list:
        """Names of the bodies that declare a point of this name."""
        return [b.name for b in self.bodies.values() if point in b.points]

    def resolve_parameters(self, overrides=None) -> dict:
        """Parameter values (name -> float) with `overrides` applied and checked."""
        values, problems = apply_overrides(self.parameters, overrides)
        if problems:
            raise InputError(f"mechanism '{self.name}': " + "; ".join(problems))
        subs = numeric_subs(self.parameters, values)
        for body in self.bodies.values():
            if body.name == self.fixed:
                continue
            m, inertia = float(body.mass.xreplace(subs)), float(body.inertia.xreplace(subs))
            if m < 0 or inertia < 0:
                problems.append(f"body '{body.name}' has negative mass or inertia (m={m:g}, I={inertia:g})")
        if problems:
            raise InputError(f"mechanism '{self.name}': " + "; ".join(problems))
        return values

    def check(self):
        """Raise ModelError listing every structural problem of the declaration."""
        problems = list(self._problems)
        if self.fixed is None:
            problems.append("no fixed body (declare one with ground() or body(..., fixed=True))")
        symbols = {p.symbol for p in self.parameters.values()}
        for j in self.joints.values():
            for body, point in ((j.body1, j.point1), (j.body2, j.point2)):
                if body not in self.bodies:
                    problems.append(f"joint '{j.name}' names unknown body '{body}'")
                elif point not in self.bodies[body].points:
                    problems.append(f"joint '{j.name}' names unknown point '{point}' of body '{body}'")
            if j.body1 == j.body2:
                problems.append(f"joint '{j.name}' joins body '{j.body1}' to itself")
            problems += j.problems()
        for c in self.coordinates:
            joint = self.joints.get(c.joint)
            if joint is None:
                problems.append(f"coordinate '{c.name}' names unknown joint '{c.joint}'")
            elif joint.drive_unit is None:
                problems.append(f"coordinate '{c.name}': joint '{c.joint}' is a {type(joint).__name__.lower()}, "
                                "which cannot be driven; drive a revolute or prismatic")
        names = [c.name for c in self.coordinates]
        if len(set(names)) != len(names):
            problems.append("a coordinate is declared twice")
        if not self.coordinates:
            problems.append("no coordinate declared (use coordinate(name, joint, force))")
        for sym, quantity in self.quantities.items():
            if quantity.body not in self.bodies:
                problems.append(f"the named quantity '{sym}' names unknown body '{quantity.body}'")
            elif quantity.point is not None and quantity.point not in self.bodies[quantity.body].points:
                problems.append(f"the named quantity '{sym}' names unknown point '{quantity.point}' of body "
                                f"'{quantity.body}'")
        known = symbols | set(self.quantities) | {TIME}
        for load in self.loads:
            if load.body not in self.bodies:
                problems.append(f"a load names unknown body '{load.body}'")
            elif isinstance(load, PointForce) and load.point not in self.bodies[load.body].points:
                problems.append(f"a force names unknown point '{load.point}' of body '{load.body}'")
            stray = set().union(*(sp.sympify(e).free_symbols for e in load_values(load))) - known
            if stray:
                problems.append(f"{describe_load(load)} uses {sorted(map(str, stray))}, which are neither parameters "
                                "nor named quantities (write a load with the parameters, the mechanism's position(), "
                                "velocity(), angle() and rate() and mechsym.core.forces.TIME)")
        problems += self.element_problems({b.name: set(b.points) for b in self.bodies.values()},
                                          {j.name for j in self.joints.values() if isinstance(j, Revolute)},
                                          symbols | set(self.quantities))
        for body in self.bodies.values():
            exprs = [body.mass, body.inertia, *body.com] + [c for p in body.points.values() for c in p]
            stray = set().union(*(e.free_symbols for e in exprs)) - symbols
            if stray:
                problems.append(f"body '{body.name}' uses undeclared symbols {sorted(map(str, stray))}")
        problems += default_problems(self.parameters)
        if problems:
            raise ModelError(self.name, problems)


def polygon_properties(vertices, density, defaults=None):
    """(mass, centre of mass, centroidal inertia) of a uniform lamina bounded by the polygon `vertices`
    ((x, y) in order), as expressions. With c_i = x_i y_(i+1) - x_(i+1) y_i over the edges:
    2A = sum c_i, 6A C = sum (v_i + v_(i+1)) c_i, 12 J_O = sum c_i (x_i^2 + x_i x_(i+1) + x_(i+1)^2 +
    y_i^2 + y_i y_(i+1) + y_(i+1)^2); I = density J_O - m |C|^2. A clockwise outline (negative area at
    the parameters' `defaults`) is turned around."""
    v = [(sp.sympify(x), sp.sympify(y)) for x, y in vertices]
    try:
        clockwise = float(_signed_area(v).xreplace(defaults or {})) < 0
    except TypeError:  # undeclared symbols: Mechanism.check() names them
        clockwise = False
    if clockwise:
        v = v[::-1]
    area = _signed_area(v)
    cx = cy = j_o = sp.Integer(0)
    for (x0, y0), (x1, y1) in zip(v, v[1:] + v[:1]):
        c = x0 * y1 - x1 * y0
        cx, cy = cx + (x0 + x1) * c, cy + (y0 + y1) * c
        j_o += c * (x0**2 + x0 * x1 + x1**2 + y0**2 + y0 * y1 + y1**2)
    com = (sp.simplify(cx / (6 * area)), sp.simplify(cy / (6 * area)))
    mass = sp.sympify(density) * area
    inertia = sp.simplify(sp.sympify(density) * j_o / 12 - mass * (com[0] ** 2 + com[1] ** 2))
    return sp.simplify(mass), com, inertia


def _signed_area(v):
    return sum((x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(v, v[1:] + v[:1])), sp.Integer(0)) / 2


def numeric_subs(parameters: dict, values) -> dict:
    """{symbol: sympy Float} of parameter values (name -> number), for `float(expr.xreplace(subs))`: the
    exact value of a parameter expression, a hundred times faster than sympy's subs."""
    return {p.symbol: sp.Float(float(values[name])) for name, p in parameters.items()}


def _vec(v) -> Vec2:
    try:
        x, y = v
    except (TypeError, ValueError):
        raise InputError(f"expected a pair (x, y), got {v!r}") from None
    return (sp.sympify(x), sp.sympify(y))
