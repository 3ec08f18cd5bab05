"""Declaring a 3-D tree of rigid bodies: parameters, bodies (links) with inertia, the joints between them
(classes of mechsym.spatial.joints), and frames fixed on bodies.

A declaration is plain data, checked by `Tree.check()` (every later stage calls it) which reports all the
problems together. Conventions (those of URDF and Pinocchio):

* every body has a frame; its centre of mass and inertia (about the centre of mass, axes of the body
  frame) are given in it;
* a joint's `origin` (xyz, rpy: roll-pitch-yaw as URDF reads them, R = Rz(yaw) Ry(pitch) Rx(roll)) places
  the child's frame in the parent's when the joint coordinate is zero; the joint then moves the child
  frame as its class says (a Revolute rotates about, a Prismatic slides along, its unit `axis` given in
  the child's frame);
* the root body has either no joint (a fixed base: its frame is the world frame) or a root-only joint
  (`Free`: a floating base in Pinocchio's free-flyer layout, see mechsym.core.freejoint); a root-only joint
  may also attach the first moving body to a fixed root (a URDF's "world" link and its floating joint);
* a joint may mimic another (`Mimic`: its coordinate is ratio * the other's + offset), checked by
  `check_mimics` (a missing or fixed joint, a cycle);
* loops are closed by joints between two frames of two bodies (`close`: the tree is then the spanning tree of
  a closed-loop mechanism, mechsym.spatial.loops), and joint coordinates may be driven (`drive`);
* parameters and gravity follow the protocol of every declaration (mechsym.core.parameters.Declaration):
  gravity is the parameter g (default 9.81 m/s^2) along -z of the world frame (`gravity_down`,
  `no_gravity`).

A numeric value may be a number, the name of a declared parameter or a sympy expression of parameters;
rotations (rpy, axes) are numbers only, so that they fold into the generated code.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from mechsym.core.errors import InputError, ModelError
from mechsym.core.forces import TIME, ElementDeclaration
from mechsym.core.parameters import Declaration, apply_overrides, default_problems
from mechsym.spatial.joints import Joint, Revolute

__all__ = ["Tree", "rpy_matrix", "inertia_violation", "check_size"]


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
    loose_inertia: bool = False     # taken as given (a URDF's, checked when read): no positivity check


@dataclass(frozen=True)
class Closure:
    """A loop-closing joint: `joint` between frame `frame_a` (on the first body) and `frame_b` (on the
    second), named `loop` in messages."""
    loop: str
    frame_a: str
    frame_b: str
    joint: object


@dataclass(frozen=True)
class Drive:
    """A driven joint coordinate and the name of its generalised force (torque or force)."""
    coordinate: str
    force: str


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


class Tree(ElementDeclaration, Declaration):
    """A tree of rigid bodies. Bodies are added parent first; `body(...)` returns the body's name.
    Parameters (each a run-time symbol of the generated code) and gravity follow
    mechsym.core.parameters.Declaration; `check()` reports a bad default or a name declared twice.
    Force elements (mechsym.core.forces.ElementDeclaration: spring, damper, ...) join two ends (body, frame):
    a frame fixed on the body, the body's own name for its origin; their laws are of the element's
    measure and rate and the parameters (mechsym.spatial.elements)."""

    DOWN = (0, 0, -1)

    def __init__(self, name: str):
        self.name = name
        self.bodies = {}              # name -> BodyDecl, in declaration order
        self.frames = {}              # name -> FrameDecl (extra frames; every body is a frame too)
        self.elements = []            # force elements (mechsym.core.forces)
        self.closures = {}            # loop name -> Closure (a closed-loop mechanism's cut joints)
        self.drives = []              # Drive: the driven coordinates, in order
        self._joint_names = set()
        self._init_parameters()

    def derived(self, backend=None, contact_frames=()):
        """This tree's TreeSystem (what mechsym.derive returns for it), with the Jacobians and biases of
        `contact_frames` among its contact terms; with closed loops (`close`), its LoopSystem
        (mechsym.spatial.loops)."""
        if self.closures:
            if contact_frames:
                raise InputError(f"tree '{self.name}': contact frames on a closed-loop mechanism are not supported")
            from mechsym.spatial.loops import LoopSystem

            return LoopSystem(self, backend)
        from mechsym.spatial.system import TreeSystem

        return TreeSystem(self, contact_frames, backend)

    def _value(self, value, what):
        if isinstance(value, str):
            if value not in self.parameters:
                raise InputError(f"tree '{self.name}': {what} refers to unknown parameter '{value}'")
            return self.parameters[value].symbol
        if isinstance(value, sp.Basic):
            known = {p.symbol for p in self.parameters.values()}
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
             inertia=(0, 0, 0, 0, 0, 0), loose_inertia=False) -> str:
        """Add body `name` attached to `parent` by `joint` placed at (xyz, rpy) in the parent's frame.
        `inertia` is (ixx, iyy, izz, ixy, ixz, iyz) or a 3x3 matrix about the centre of mass;
        `loose_inertia` takes it as given (not checked positive semi-definite: a reader that checked it)."""
        where = f"body '{name}'"
        if name in self.bodies or name in self.frames:
            raise InputError(f"tree '{self.name}': {where} declared twice")
        if parent is None:
            if self.bodies:
                raise InputError(f"tree '{self.name}': {where} has no parent, but the root is "
                                 f"'{next(iter(self.bodies))}' (a tree has one root)")
            if joint is not None and not (isinstance(joint, Joint) and joint.root_only):
                raise InputError(f"tree '{self.name}': the root {where} takes no joint (fixed base) or a root "
                                 f"joint such as Free(), got {joint!r}")
        else:
            if parent not in self.bodies:
                raise InputError(f"tree '{self.name}': {where}: unknown parent body '{parent}'")
            if not isinstance(joint, Joint) or (joint.root_only and not self._attaches_first(parent)):
                raise InputError(f"tree '{self.name}': {where} needs a joint to '{parent}' (Revolute, Prismatic, "
                                 f"Fixed or another mechsym.spatial.Joint that is not root-only; a root-only joint "
                                 f"attaches only the root, or the first moving body to a fixed root), got {joint!r}")
        if joint is not None:
            if joint.name in self._joint_names:
                raise InputError(f"tree '{self.name}': joint '{joint.name}' declared twice")
            joint = joint.checked(f"tree '{self.name}'")
        if isinstance(inertia, (list, tuple)) and len(inertia) == 6:
            ixx, iyy, izz, ixy, ixz, iyz = inertia
            inertia = ((ixx, ixy, ixz), (ixy, iyy, iyz), (ixz, iyz, izz))
        rows = [tuple(r) for r in inertia]
        if len(rows) != 3 or any(len(r) != 3 for r in rows):
            raise InputError(f"tree '{self.name}': {where} inertia must be 6 values or a 3x3 matrix")
        inertia = sp.Matrix([[self._value(v, f"{where} inertia") for v in r] for r in rows])
        R = rpy_matrix(self._numbers(rpy, f"{where} rpy"))
        self.bodies[name] = BodyDecl(name, parent, joint, self._vec3(xyz, f"{where} xyz"), R,
                                     self._value(mass, f"{where} mass"), self._vec3(com, f"{where} com"), inertia,
                                     bool(loose_inertia))
        if joint is not None:
            self._joint_names.add(joint.name)
        return name

    def _attaches_first(self, parent) -> bool:
        """Whether a body on `parent` would be the first moving body, on the fixed root."""
        return (parent == self.root.name and self.root.joint is None
                and all(b.joint is None or b.joint.merges_into_parent for b in self.bodies.values()))

    def frame(self, name, body, xyz=(0, 0, 0), rpy=(0, 0, 0)) -> str:
        """A named frame fixed on `body` at (xyz, rpy) in the body's frame."""
        if name in self.frames or name in self.bodies:
            raise InputError(f"tree '{self.name}': frame '{name}' declared twice")
        if body not in self.bodies:
            raise InputError(f"tree '{self.name}': frame '{name}': unknown body '{body}'")
        self.frames[name] = FrameDecl(name, body, self._vec3(xyz, f"frame '{name}' xyz"),
                                      rpy_matrix(self._numbers(rpy, f"frame '{name}' rpy")))
        return name

    def close(self, loop, frame_a, frame_b, joint) -> str:
        """Close a loop by `joint` (a mechsym.spatial.Joint with `closure_rows`) between frame `frame_a` of one
        body (the joint's first body) and frame `frame_b` of another (its second): at the assembled
        configuration the two frames coincide up to the joint's own motion (a body's name is its frame)."""
        where = f"tree '{self.name}': loop '{loop}'"
        if loop in self.closures:
            raise InputError(f"{where} declared twice")
        if not isinstance(joint, Joint) or joint.root_only or joint.mimic is not None:
            raise InputError(f"{where} needs a closing joint (Revolute, Prismatic, Cylindrical, Universal, "
                             f"Spherical, Planar or Fixed), got {joint!r}")
        if joint.name in self._joint_names:
            raise InputError(f"{where}: joint '{joint.name}' declared twice")
        joint = joint.checked(where)
        try:
            joint.closure_rows()
        except NotImplementedError:
            raise InputError(f"{where}: joint '{joint.name}' ({type(joint).__name__}) cannot close a loop") from None
        bodies = []
        for f in (frame_a, frame_b):
            if f in self.bodies:
                bodies.append(f)
            elif f in self.frames:
                bodies.append(self.frames[f].body)
            else:
                raise InputError(f"{where}: joint '{joint.name}': unknown frame '{f}'")
        if bodies[0] == bodies[1]:
            raise InputError(f"{where}: joint '{joint.name}' joins frames '{frame_a}' and '{frame_b}' of one body "
                             f"'{bodies[0]}' (a closure joins two bodies)")
        self.closures[loop] = Closure(loop, frame_a, frame_b, joint)
        self._joint_names.add(joint.name)
        return loop

    def drive(self, coordinate, force="torque") -> str:
        """Drive the joint coordinate `coordinate` (a tree joint's, by its name in q: the joint's name for one
        coordinate; or a closing joint's, by a name of its `closure_coordinates`); `force` names its
        generalised force in results."""
        if any(d.coordinate == coordinate for d in self.drives):
            raise InputError(f"tree '{self.name}': coordinate '{coordinate}' driven twice")
        self.drives.append(Drive(coordinate, force))
        return coordinate

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
                if b.joint is not None and b.joint.limits is not None}

    @property
    def floating(self) -> bool:
        """Whether the tree has a floating base: a floating joint (Free) on the root, or on the first moving
        body of a fixed root."""
        return any(b.joint is not None and b.joint.floating for b in self.bodies.values())

    def mimics(self) -> dict:
        """mimic joint -> (the joint whose coordinate it follows, ratio, offset), chains of mimics followed to
        a joint with a coordinate (`check_mimics` reports what cannot be followed)."""
        joints = {b.joint.name: b.joint for b in self.bodies.values() if b.joint is not None}
        out = {}
        for name, joint in joints.items():
            if joint.mimic is None:
                continue
            ratio, offset, seen, at = 1.0, 0.0, [name], joint
            while at.mimic is not None:
                of, k, o = at.mimic
                ratio, offset = ratio * k, offset + ratio * o
                if of not in joints:
                    raise InputError(f"tree '{self.name}': joint '{seen[-1]}' mimics '{of}', which does not exist")
                if of in seen:
                    raise InputError(f"tree '{self.name}': mimic cycle {' -> '.join(seen + [of])}")
                seen.append(of)
                at = joints[of]
            if at.nq != 1 or at.nv != 1:
                raise InputError(f"tree '{self.name}': joint '{seen[-2]}' mimics '{seen[-1]}', which has "
                                 f"{at.nq} coordinates (a mimicked joint has one)")
            out[name] = (seen[-1], ratio, offset)
        return out

    def check_mimics(self):
        """An InputError naming the joints when a mimic joint follows a missing or fixed joint, or a cycle."""
        self.mimics()

    def resolve_parameters(self, overrides=None) -> dict:
        """Default values with `overrides` (name -> number) applied and checked as a planar mechanism's
        (mechsym.core.parameters.apply_overrides: unknown names, non-numbers, non-finite, non-positive lengths,
        masses, inertias and densities refused), then the bodies' masses and inertias at those values."""
        values, problems = apply_overrides(self.parameters, overrides)
        if problems:
            raise InputError(f"tree '{self.name}': " + "; ".join(problems))
        self.check_values(values)
        return values

    def check_values(self, values: dict):
        """Masses non-negative and inertias symmetric positive semi-definite at these parameter values
        (semi: a massless link or a point mass is allowed); the error names the body."""
        subs = {self.parameters[n].symbol: v for n, v in values.items()}
        problems = []
        for b in self.bodies.values():
            if b is self.root and not self.floating:
                continue
            m = float(sp.sympify(b.mass).xreplace(subs))
            inertia = np.array(b.inertia.xreplace(subs), dtype=float)
            problems += _inertia_problems(b.name, m, inertia, b.loose_inertia)
        if problems:
            raise ModelError(self.name, problems)

    def check(self):
        """Every problem of the declaration, together: a body-less tree, a parameter declared twice or with a
        bad default (non-finite, a non-positive length or mass, ...), then a body's mass or inertia."""
        problems = list(self._problems)
        if not self.bodies:
            problems.append("no bodies")
        problems += self._element_problems()
        problems += default_problems(self.parameters)
        if problems:
            raise ModelError(self.name, problems)
        self.check_values(self.defaults())
        self.check_mimics()


    def _element_problems(self) -> list:
        """The force elements' ends and joints, and a law of the time (a tree's functions have no time)."""
        points = {name: {name} for name in self.bodies}
        for f in self.frames.values():
            points[f.body].add(f.name)
        revolutes = {b.joint.name for b in self.bodies.values() if isinstance(b.joint, Revolute)}
        problems = self.element_problems(points, revolutes, {p.symbol for p in self.parameters.values()})
        return problems + [f"{e.kind} '{e.name}' depends on the time; on a tree an element's law is of its measure, "
                           "its rate and the parameters" for e in self.elements if TIME in e.law.free_symbols]


def inertia_violation(inertia):
    """(by how much the principal moments violate the triangle inequality, a negative moment included, in
    kg m^2; the principal moments) of a symmetric 3x3 inertia: 0 for a physical body."""
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    excess = max(0.0, -moments[0], moments[2] - moments[0] - moments[1])
    return float(excess), moments


def _inertia_problems(body, m, inertia, loose=False):
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
    if ev[0] < -tol and not loose:
        problems.append(f"body '{body}' has an inertia that is not positive semi-definite "
                        f"(principal moments {', '.join(f'{e:.6g}' for e in ev)} kg m^2)")
    return problems


def check_size(tree: Tree):
    """Refuse up front, from the declaration alone, a tree whose derivation would pass the memory budget
    (mechsym.core.budget.check_tree): its joint columns summed over the paths of its moving bodies and of its
    bodies' frames to the root."""
    from mechsym.core.budget import check_tree

    depth, moving = {}, 0
    for b in tree.bodies.values():           # parents come first
        own = 0 if b.joint is None else (1 if b.joint.mimic is not None else b.joint.nv)
        depth[b.name] = own + (depth[b.parent] if b.parent is not None else 0)
        moving += depth[b.name] if own else 0
    check_tree(f"tree '{tree.name}'", moving + sum(depth.values()))
