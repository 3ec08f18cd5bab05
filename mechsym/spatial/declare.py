"""Declaring a 3-D tree of rigid bodies: parameters, bodies (links) with inertia, the joints between them,
and frames fixed on bodies.

A declaration is plain data, checked by `Tree.check()` (every later stage calls it) which reports all the
problems together. Conventions (those of URDF and Pinocchio):

* every body has a frame; its centre of mass and inertia (about the centre of mass, axes of the body
  frame) are given in it;
* a joint's `origin` (xyz, rpy: roll-pitch-yaw as URDF reads them, R = Rz(yaw) Ry(pitch) Rx(roll)) places
  the child's frame in the parent's when the joint coordinate is zero; the joint then rotates about, or
  slides along, its unit `axis` given in the child's frame;
* the root body has either no joint (a fixed base: its frame is the world frame) or a `Free` joint (a
  floating base in Pinocchio's free-flyer layout, see mechsym.freejoint);
* gravity is the parameter g (default 9.81 m/s^2) along -z of the world frame.

A numeric value may be a number, the name of a declared parameter or a sympy expression of parameters;
rotations (rpy, axes) are numbers only, so that they fold into the generated code.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from mechsym.errors import InputError, ModelError
from mechsym.freejoint import rotation

__all__ = ["Tree", "Revolute", "Prismatic", "Fixed", "Free", "rpy_matrix"]


def exact(x, tol=1e-10):
    """A number of the declaration as sympy folds it: round-off of exact rotations removed (6e-17 -> 0,
    1 - 1e-16 -> 1), so that zeros drop out of the generated code."""
    x = float(x)
    r = round(x)
    if abs(x - r) < tol:
        return sp.Integer(int(r))
    return sp.Float(x)


def _rotation_about(u, c, s):
    """Rodrigues' rotation about the unit axis u, with c = cos and s = sin of the angle."""
    ux = [[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]]
    return [[sp.expand(c * (1 if i == j else 0) + s * ux[i][j] + (1 - c) * u[i] * u[j]) for j in range(3)]
            for i in range(3)]


_ZERO3 = (sp.Integer(0),) * 3
_EYE = [[sp.Integer(int(i == j)) for j in range(3)] for i in range(3)]


class _Joint:
    """A joint's physics for the recursions: its coordinates and speeds (nq, nv), its motion subspace S
    (nv columns (lin, ang) in the child frame), the motion it adds to the child frame at coordinates q
    (R_J, p_J in the joint frame) and its columns in the world (kind "R" for a rotation about the unit
    vector u through the joint origin, "P" for a translation along u)."""

    def unit_axis(self):
        return [exact(c) for c in self.axis]


@dataclass(frozen=True)
class Revolute(_Joint):
    """A hinge about the unit `axis` of the child frame; `limits` (lower, upper) in rad, informative."""

    name: str
    axis: tuple = (0.0, 0.0, 1.0)
    limits: tuple | None = None
    nq = 1
    nv = 1

    def subspace(self):
        """The motion subspace: one column (lin 0, ang the unit axis) in the child frame."""
        return [(list(_ZERO3), self.unit_axis())]

    def motion(self, q, let):
        """(R_J, p_J) at coordinate q: the rotation by q[0] about the axis, no translation; `let` names
        temporaries."""
        c, s = let(sp.cos(q[0])), let(sp.sin(q[0]))
        return _rotation_about(self.unit_axis(), c, s), list(_ZERO3)

    def world_columns(self, R0, p0, vec):
        """One column of kind 'R': the axis in the world (R0 u) through the joint origin p0."""
        u = self.unit_axis()
        return [("R", vec([sum(R0[i][n] * u[n] for n in range(3)) for i in range(3)]), p0)]


@dataclass(frozen=True)
class Prismatic(_Joint):
    """A slide along the unit `axis` of the child frame; `limits` (lower, upper) in m, informative."""

    name: str
    axis: tuple = (0.0, 0.0, 1.0)
    limits: tuple | None = None
    nq = 1
    nv = 1

    def subspace(self):
        """The motion subspace: one column (lin the unit axis, ang 0) in the child frame."""
        return [(self.unit_axis(), list(_ZERO3))]

    def motion(self, q, let):
        """(R_J, p_J) at coordinate q: no rotation, the translation q[0] along the axis."""
        return _EYE, [u * q[0] for u in self.unit_axis()]

    def world_columns(self, R0, p0, vec):
        """One column of kind 'P': the axis in the world (R0 u), at the joint origin p0."""
        u = self.unit_axis()
        return [("P", vec([sum(R0[i][n] * u[n] for n in range(3)) for i in range(3)]), p0)]


@dataclass(frozen=True)
class Fixed:
    """A rigid attachment: the child is merged into its parent (its frame stays a named frame)."""

    name: str
    nq = 0
    nv = 0


@dataclass(frozen=True)
class Free(_Joint):
    """The floating base: 7 coordinates (position, quaternion x, y, z, w) and 6 speeds (linear and
    angular velocity in the base frame), Pinocchio's free flyer: the maps of
    mechsym.freejoint.FreeJoint("local")."""

    name: str = "root_joint"
    nq = 7
    nv = 6

    def subspace(self):
        """The motion subspace: six columns, translations along x, y, z then rotations about them (body frame)."""
        e = [[sp.Integer(int(i == j)) for i in range(3)] for j in range(3)]
        return [(e[k], list(_ZERO3)) for k in range(3)] + [(list(_ZERO3), e[k]) for k in range(3)]

    def motion(self, q, let):
        """(R_J, p_J) at q = [p, quaternion x, y, z, w]: the rotation of q/|q| and the translation p."""
        R = rotation(q[3:7], let)                            # the rotation of q/|q| (mechsym.freejoint)
        return [[R[i, j] for j in range(3)] for i in range(3)], list(q[:3])

    def world_columns(self, R0, p0, vec):
        """Six columns: kind 'P' along then kind 'R' about the base frame's axes (columns of R0) at p0."""
        cols = [[R0[i][c] for i in range(3)] for c in range(3)]
        return [("P", u, p0) for u in cols] + [("R", u, p0) for u in cols]


@dataclass(frozen=True)
class BodyDecl:
    name: str
    parent: str | None
    joint: object | None
    origin_xyz: tuple
    origin_R: np.ndarray = field(compare=False)
    mass: sp.Expr
    com: tuple
    inertia: sp.Matrix = field(compare=False)


@dataclass(frozen=True)
class FrameDecl:
    name: str
    body: str
    xyz: tuple
    R: np.ndarray = field(compare=False)


def rpy_matrix(rpy) -> np.ndarray:
    """URDF's roll-pitch-yaw rotation Rz(yaw) Ry(pitch) Rx(roll), numeric."""
    r, p, y = (float(a) for a in rpy)
    cr, sr, cp, sp_, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp_ * sr - sy * cr, cy * sp_ * cr + sy * sr],
                     [sy * cp, sy * sp_ * sr + cy * cr, sy * sp_ * cr - cy * sr],
                     [-sp_, cp * sr, cp * cr]])


class Tree:
    """A tree of rigid bodies. Bodies are added parent first; `body(...)` returns the body's name."""

    def __init__(self, name: str):
        self.name = name
        self.parameters = {}          # name -> (symbol, default, unit)
        self.bodies = {}              # name -> BodyDecl, in declaration order
        self.frames = {}              # name -> FrameDecl (extra frames; every body is a frame too)
        self.parameter("g", 9.81, "m/s^2")

    # -- parameters -------------------------------------------------------------------------------------
    def parameter(self, name: str, default: float, unit: str = "") -> sp.Symbol:
        """Declare a run-time parameter (a symbol of the generated code) with its default value."""
        if name in self.parameters:
            raise InputError(f"tree '{self.name}': parameter '{name}' declared twice")
        default = float(default)
        if not math.isfinite(default):
            raise InputError(f"tree '{self.name}': parameter '{name}' has a non-finite default {default}")
        symbol = sp.Symbol(name, real=True)
        self.parameters[name] = (symbol, default, unit)
        return symbol

    def _value(self, value, what):
        if isinstance(value, str):
            if value not in self.parameters:
                raise InputError(f"tree '{self.name}': {what} refers to unknown parameter '{value}'")
            return self.parameters[value][0]
        if isinstance(value, sp.Basic):
            known = {s for s, _, _ in self.parameters.values()}
            unknown = value.free_symbols - known
            if unknown:
                raise InputError(f"tree '{self.name}': {what} uses undeclared symbols {sorted(map(str, unknown))}")
            return value
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise InputError(f"tree '{self.name}': {what} is not a number or parameter: {value!r}") from None
        if not math.isfinite(v):
            raise InputError(f"tree '{self.name}': {what} is not finite ({v})")
        return sp.Float(v) if v != int(v) else sp.Integer(int(v))

    def _vec3(self, values, what):
        values = tuple(values)
        if len(values) != 3:
            raise InputError(f"tree '{self.name}': {what} needs 3 values, got {len(values)}")
        return tuple(self._value(v, f"{what}[{i}]") for i, v in enumerate(values))

    # -- bodies and frames --------------------------------------------------------------------------
    def body(self, name, parent=None, joint=None, xyz=(0, 0, 0), rpy=(0, 0, 0), mass=0.0, com=(0, 0, 0),
             inertia=(0, 0, 0, 0, 0, 0)) -> str:
        """Add body `name` attached to `parent` by `joint` placed at (xyz, rpy) in the parent's frame.
        `inertia` is (ixx, iyy, izz, ixy, ixz, iyz) or a 3x3 matrix about the centre of mass."""
        where = f"body '{name}'"
        if name in self.bodies or name in self.frames:
            raise InputError(f"tree '{self.name}': {where} declared twice")
        if parent is None:
            if self.bodies:
                raise InputError(f"tree '{self.name}': {where} has no parent, but the root is "
                                 f"'{next(iter(self.bodies))}' (a tree has one root)")
            if joint is not None and not isinstance(joint, Free):
                raise InputError(f"tree '{self.name}': the root {where} takes no joint (fixed base) or Free()")
        else:
            if parent not in self.bodies:
                raise InputError(f"tree '{self.name}': {where}: unknown parent body '{parent}'")
            if not isinstance(joint, (Revolute, Prismatic, Fixed)):
                raise InputError(f"tree '{self.name}': {where} needs a Revolute, Prismatic or Fixed joint to "
                                 f"'{parent}', got {joint!r}")
        if joint is not None:
            names = {b.joint.name for b in self.bodies.values() if b.joint is not None}
            if joint.name in names:
                raise InputError(f"tree '{self.name}': joint '{joint.name}' declared twice")
        if isinstance(joint, (Revolute, Prismatic)):
            axis = np.asarray(joint.axis, float)
            if axis.shape != (3,) or not np.all(np.isfinite(axis)):
                raise InputError(f"tree '{self.name}': joint '{joint.name}' axis must be 3 finite numbers")
            n = np.linalg.norm(axis)
            if n < 1e-12:
                raise InputError(f"tree '{self.name}': joint '{joint.name}' has a zero axis")
            joint = type(joint)(joint.name, tuple(axis / n), joint.limits)
        if isinstance(inertia, (list, tuple)) and len(inertia) == 6:
            ixx, iyy, izz, ixy, ixz, iyz = inertia
            inertia = ((ixx, ixy, ixz), (ixy, iyy, iyz), (ixz, iyz, izz))
        rows = [tuple(r) for r in inertia]
        if len(rows) != 3 or any(len(r) != 3 for r in rows):
            raise InputError(f"tree '{self.name}': {where} inertia must be 6 values or a 3x3 matrix")
        inertia = sp.Matrix([[self._value(v, f"{where} inertia") for v in r] for r in rows])
        R = rpy_matrix(self._numbers(rpy, f"{where} rpy"))
        self.bodies[name] = BodyDecl(name, parent, joint, self._vec3(xyz, f"{where} xyz"), R,
                                     self._value(mass, f"{where} mass"), self._vec3(com, f"{where} com"), inertia)
        return name

    def frame(self, name, body, xyz=(0, 0, 0), rpy=(0, 0, 0)) -> str:
        """A named frame fixed on `body` at (xyz, rpy) in the body's frame."""
        if name in self.frames or name in self.bodies:
            raise InputError(f"tree '{self.name}': frame '{name}' declared twice")
        if body not in self.bodies:
            raise InputError(f"tree '{self.name}': frame '{name}': unknown body '{body}'")
        self.frames[name] = FrameDecl(name, body, self._vec3(xyz, f"frame '{name}' xyz"),
                                      rpy_matrix(self._numbers(rpy, f"frame '{name}' rpy")))
        return name

    def _numbers(self, values, what):
        try:
            out = [float(v) for v in values]
        except (TypeError, ValueError):
            raise InputError(f"tree '{self.name}': {what} must be numbers (rotations fold into the code)") from None
        if len(out) != 3 or not all(math.isfinite(v) for v in out):
            raise InputError(f"tree '{self.name}': {what} must be 3 finite numbers")
        return out

    # -- queries ------------------------------------------------------------------------------------
    @property
    def root(self) -> BodyDecl:
        """The first declared body (the one attached to the world)."""
        return next(iter(self.bodies.values()))

    @property
    def limits(self) -> dict:
        """joint name -> (lower, upper) of the joints that declare limits."""
        return {b.joint.name: b.joint.limits for b in self.bodies.values()
                if isinstance(b.joint, (Revolute, Prismatic)) and b.joint.limits is not None}

    @property
    def floating(self) -> bool:
        """Whether the root hangs on a Free joint (a floating base)."""
        return bool(self.bodies) and isinstance(self.root.joint, Free)

    def defaults(self) -> dict:
        """Parameter name -> its declared default value."""
        return {n: d for n, (_, d, _) in self.parameters.items()}

    def resolve_parameters(self, overrides=None) -> dict:
        """Default values with `overrides` (name -> number) applied; unknown names and bad values refused."""
        values = self.defaults()
        for name, value in dict(overrides or {}).items():
            if name not in values:
                raise InputError(f"tree '{self.name}': unknown parameter '{name}' (known: {', '.join(values)})")
            try:
                v = float(value)
            except (TypeError, ValueError):
                raise InputError(f"parameter '{name}': not a number: {value!r}") from None
            if not math.isfinite(v):
                raise InputError(f"parameter '{name}' is not finite ({value})")
            values[name] = v
        self.check_values(values)
        return values

    def check_values(self, values: dict):
        """Masses non-negative and inertias symmetric positive semi-definite at these parameter values
        (semi: a massless link or a point mass is allowed); the error names the body."""
        subs = {self.parameters[n][0]: v for n, v in values.items()}
        problems = []
        for b in self.bodies.values():
            if b is self.root and not self.floating:
                continue
            m = float(sp.sympify(b.mass).xreplace(subs))
            inertia = np.array(b.inertia.xreplace(subs), dtype=float)
            problems += _inertia_problems(b.name, m, inertia)
        if problems:
            raise ModelError(self.name, problems)

    def check(self):
        """Every problem of the declaration, together: a body-less tree, a free root without mass."""
        problems = []
        if not self.bodies:
            problems.append("no bodies")
        if problems:
            raise ModelError(self.name, problems)
        self.check_values(self.defaults())


def _inertia_problems(body, m, inertia):
    problems = []
    if not math.isfinite(m) or m < 0:
        problems.append(f"body '{body}' has a negative mass {m:g} kg")
    if not np.all(np.isfinite(inertia)):
        problems.append(f"body '{body}' has a non-finite inertia")
        return problems
    if not np.allclose(inertia, inertia.T, rtol=0, atol=1e-12 * max(1.0, np.abs(inertia).max())):
        problems.append(f"body '{body}' has a non-symmetric inertia")
        return problems
    ev = np.linalg.eigvalsh(inertia)
    tol = 1e-12 * max(1.0, np.abs(ev).max())
    if ev[0] < -tol:
        problems.append(f"body '{body}' has an inertia that is not positive semi-definite "
                        f"(principal moments {', '.join(f'{e:.6g}' for e in ev)} kg m^2)")
    return problems
