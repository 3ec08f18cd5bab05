"""Reading a URDF into a Tree, as Pinocchio reads it (its parser, src/parsers/urdf/model.cpp, on urdfdom).

The file is read with the standard library's XML parser: only the kinematic and inertial elements are
used, so meshes, `package://` paths, gazebo and transmission tags are never opened and never fail a read.
What becomes what (Pinocchio's reading of the same file, so that arrays compare without permutation):

* the root link is the base, fixed to the world, or floating (`floating=True`: a free joint named
  root_joint, Pinocchio's free flyer); children are visited depth first, the joints of one link in the order
  of their names (urdfdom keeps them in a sorted map, and Pinocchio walks that);
* revolute and continuous joints rotate (a continuous joint is one angle, one column: docs/conventions.md),
  prismatic joints slide, fixed joints merge their child into the parent (both stay named frames), planar
  joints move in the x-y plane of their frame (Pinocchio's reading: the axis is not used; x, y, theta); a
  floating joint from a fixed root link to its child is that child's free joint (a floating base);
* a link without an inertial element is massless (Pinocchio's Inertia::Zero);
* a mimic joint (`mimic="model"`, the default) follows its mimicked joint: its coordinate is multiplier * q +
  offset and it has none of its own (mechsym.spatial.joints.Mimic; Pinocchio's JointModelMimic);
  `mimic="independent"` reads it as a joint of its own (Pinocchio's default reading); a mimic element on a
  fixed joint means nothing and is ignored;
* inertias: a negative principal moment up to INERTIA_ROUNDOFF of the link's largest moment (or of a
  thousandth of the robot's) is round-off and passes; up to INERTIA_NEGLIGIBLE of the largest moment of the
  whole robot the value is read as it is (as Pinocchio reads it) with a one-line warning naming the link,
  or refused with `strict=True`; larger, it is refused. Principal moments that violate the triangle
  inequality beyond round-off (a part modelled by one moment, common in shipped files) are read as written,
  as Pinocchio reads them, and refused with `strict=True`;
* rotations: when every roll, pitch and yaw of the file that lies near a multiple of pi/2 equals it to the
  precision it is printed with (at least 4 decimals: 1.5708, 1.57079632679), those angles are read as the
  exact multiples, whose sines and cosines fold to exact zeros and ones; when one does not (1.57, or
  1.5707 beside 1.57079632679), the file is read literally (`as_read` writes the reading as a URDF);
* values become parameters with defaults, named LINK.m, LINK.cx, LINK.cy, LINK.cz, LINK.ixx, LINK.iyy,
  LINK.izz, LINK.ixy, LINK.ixz, LINK.iyz (inertial values, the centre of mass in the link frame after its
  inertial origin) and JOINT.x, JOINT.y, JOINT.z (the joint origin's translation: the link lengths).
  `symbolic` chooses which kinds stay run-time inputs of the generated code: a subset of
  {"mass", "com", "inertia", "length"} (default: all four; () folds every value into the code). Zeros (and
  a principal moment that is not positive) are always folded, and rotations are numbers of the code.

Refused, each with one line naming the element: a file that is not URDF (binary, SDF, not XML), a loop, a
mimic cycle or a mimic of a missing or fixed joint, a number that is not finite, a negative mass, an
inertia beyond the tolerances, a zero axis, an unknown joint type or link.
"""
from __future__ import annotations

import math
import os
import warnings
import xml.etree.ElementTree as ET
from decimal import Decimal, InvalidOperation

import numpy as np

from mechsym.core.errors import InputError
from mechsym.spatial.declare import Tree, inertia_violation
from mechsym.spatial.joints import Fixed, Free, Mimic, Planar, Prismatic, Revolute

__all__ = ["read_urdf", "as_read"]

KINDS = ("mass", "com", "inertia", "length")
MIMIC = ("model", "independent")
INERTIA_ROUNDOFF = 1e-9        # of the link's largest principal moment: passes silently
INERTIA_NEGLIGIBLE = 1e-6      # of the robot's largest principal moment: read with a warning
QUARTER = math.pi / 2
NEAR_QUARTER = 1e-2            # an angle this close to a multiple of pi/2 is meant to be one, or is not
MIN_DECIMALS = 4               # ... and is read as one when printed to at least this many decimals


def read_urdf(source, floating=True, symbolic=KINDS, name=None, frames=None, mimic="model",
              strict=False) -> Tree:
    """A Tree from a URDF file path (or its XML text). `frames` (name -> (link, xyz, rpy)) adds frames;
    `mimic` is "model" (a mimic joint follows its joint) or "independent"; `strict` refuses an inertia
    that is read with a warning otherwise (see the module docstring)."""
    if mimic not in MIMIC:
        raise InputError(f"mimic must be one of {', '.join(MIMIC)}, got {mimic!r}")
    symbolic = set(symbolic)
    unknown = symbolic - set(KINDS)
    if unknown:
        raise InputError(f"symbolic: unknown kinds {sorted(unknown)} (choose from {', '.join(KINDS)})")
    robot, where = _load(source)
    return _Reader(robot, where, floating, symbolic, mimic, strict).tree(name, frames)


def as_read(source) -> str:
    """The URDF text with each angle written as mechsym reads it (the exact multiples of pi/2 at full
    precision where the file is read so, see the module docstring): Pinocchio reads this text as mechsym
    reads the file."""
    robot, where = _load(source)
    for element, rpy in _angles(robot, where).items():
        element.set("rpy", " ".join(repr(a) for a in rpy))
    return ET.tostring(robot, encoding="unicode")


# -- the file ---------------------------------------------------------------------------------------------
def _load(source):
    """(the <robot> element, a name of the source for messages)."""
    is_text = isinstance(source, str) and "<robot" in source
    where = "URDF text" if is_text else f"URDF '{source}'"
    if is_text:
        data = source.encode()
    else:
        if not os.path.isfile(source):
            raise InputError(f"{where} does not exist")
        with open(source, "rb") as f:
            data = f.read()
    if b"\0" in data[:4096]:
        raise InputError(f"{where} is not a URDF file (binary data)")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise InputError(f"{where} is not a URDF file (XML: {exc})") from None
    if root.tag == "sdf":
        raise InputError(f"{where} is an SDF file (<sdf>): mechsym reads URDF only; convert it to URDF")
    if root.tag != "robot":
        raise InputError(f"{where} is not a URDF file (its root element is <{root.tag}>, not <robot>)")
    return root, where


def _numbers(element, attribute, count, where, default=None):
    """`count` finite numbers from element's attribute (space-separated); `default` when it is absent."""
    text = None if element is None else element.get(attribute)
    if text is None:
        if default is None:
            raise InputError(f"{where}: missing {attribute}")
        return default
    try:
        values = tuple(float(x) for x in text.split())
    except ValueError:
        raise InputError(f"{where}: {attribute}='{text}' is not {count} numbers") from None
    if len(values) != count:
        raise InputError(f"{where}: {attribute}='{text}' is not {count} numbers")
    if not all(math.isfinite(v) for v in values):
        raise InputError(f"{where}: {attribute}='{text}' is not finite")
    return values


def _angles(robot, where):
    """origin element -> its rpy as read: the multiples of pi/2 made exact when the whole file allows it
    (see the module docstring), else {}."""
    found, exact = {}, True
    for kind in ("joint", "link"):
        for element in robot.iter(kind):
            path = "inertial/origin" if kind == "link" else "origin"
            for origin in element.findall(path):
                text = origin.get("rpy")
                if text is None:
                    continue
                owner = f"{where}: {kind} '{element.get('name')}' origin"
                rpy = _numbers(origin, "rpy", 3, owner)
                folded = []
                for word, angle in zip(text.split(), rpy):
                    k = round(angle / QUARTER)
                    off = abs(angle - k * QUARTER)
                    if k == 0 or off == 0 or off > NEAR_QUARTER:
                        folded.append(angle)
                        continue
                    try:
                        exponent = Decimal(word).as_tuple().exponent
                    except InvalidOperation:
                        exponent = 0
                    precision = 0.5 * 10.0 ** exponent if isinstance(exponent, int) else 1.0
                    if precision > 0.5 * 10.0 ** -MIN_DECIMALS or off > precision * (1 + 1e-9) + 1e-15:
                        exact = False
                    folded.append(k * QUARTER)
                found[origin] = tuple(folded)
    return found if exact else {}


# -- the reading ------------------------------------------------------------------------------------------
class _Reader:
    """One URDF read into a Tree (read_urdf's options; see the module docstring)."""

    def __init__(self, robot, where, floating, symbolic, mimic, strict):
        self.robot, self.where, self.floating, self.symbolic = robot, where, floating, symbolic
        self.mimic, self.strict = mimic, strict
        self.rpy = _angles(robot, where)
        self.links = {}
        for link in robot.findall("link"):
            name = link.get("name")
            if not name:
                raise InputError(f"{where}: a link without a name")
            if name in self.links:
                raise InputError(f"{where}: link '{name}' declared twice")
            self.links[name] = link
        if not self.links:
            raise InputError(f"{where}: no links")
        self.joints, self.child_of, self.children = {}, {}, {n: [] for n in self.links}
        for joint in robot.findall("joint"):
            self._joint_element(joint)
        roots = [n for n in self.links if n not in self.child_of]
        if len(roots) != 1:
            raise InputError(f"{where}: " + ("no root link (a closed loop)" if not roots
                                             else "several root links: " + ", ".join(roots)))
        self.root = roots[0]
        self.inertias = {n: self._inertial(n) for n in self.links}
        self.largest = max([abs(np.linalg.eigvalsh(I)).max() for _, _, I in self.inertias.values()] + [0.0])

    def _joint_element(self, joint):
        name, where = joint.get("name"), self.where
        if not name:
            raise InputError(f"{where}: a joint without a name")
        if name in self.joints:
            raise InputError(f"{where}: joint '{name}' declared twice")
        ends = []
        for end in ("parent", "child"):
            e = joint.find(end)
            link = None if e is None else e.get("link")
            if link is None:
                raise InputError(f"{where}: joint '{name}' has no {end} link")
            if link not in self.links:
                raise InputError(f"{where}: joint '{name}' refers to unknown link '{link}'")
            ends.append(link)
        parent, child = ends
        if child in self.child_of:
            raise InputError(f"{where}: link '{child}' is the child of both joints '{self.child_of[child]}' and "
                             f"'{name}' (a closed loop; only trees are supported)")
        self.joints[name] = joint
        self.child_of[child] = name
        self.children[parent].append(name)

    def _inertial(self, link_name):
        """(mass, centre of mass, inertia 3x3 about it in the link frame); zeros without an inertial."""
        inertial = self.links[link_name].find("inertial")
        if inertial is None:
            return 0.0, (0.0, 0.0, 0.0), np.zeros((3, 3))
        where = f"{self.where}: link '{link_name}' inertial"
        (m,) = _numbers(inertial.find("mass"), "value", 1, f"{where} mass")
        if m < 0:
            raise InputError(f"{self.where}: link '{link_name}' has a negative mass {m:g} kg")
        element = inertial.find("inertia")
        if element is None:
            raise InputError(f"{where}: no inertia element")
        ixx, iyy, izz, ixy, ixz, iyz = (_numbers(element, a, 1, f"{where} inertia")[0]
                                        for a in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"))
        origin = inertial.find("origin")
        xyz = _numbers(origin, "xyz", 3, f"{where} origin", (0.0, 0.0, 0.0))
        rpy = self.rpy.get(origin) or _numbers(origin, "rpy", 3, f"{where} origin", (0.0, 0.0, 0.0))
        from mechsym.spatial.declare import rpy_matrix

        R = rpy_matrix(rpy)
        inertia = R @ np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]) @ R.T
        return m, xyz, inertia

    def _check_inertia(self, link_name, inertia) -> bool:
        """A negative principal moment: round-off passes, one negligible at the robot's scale warns
        (strict: refused), more is refused; a violation of the triangle inequality beyond round-off is refused
        with strict=True and read as written otherwise (as Pinocchio reads it: shipped URDFs model small
        parts by one moment). True when a negative moment was accepted (the Tree then takes the inertia
        as read)."""
        excess, moments = inertia_violation(inertia)
        negative = max(0.0, -moments[0])
        roundoff = max(INERTIA_ROUNDOFF * abs(moments).max(), INERTIA_ROUNDOFF * 1e-3 * self.largest)
        if excess <= roundoff:
            return negative > 0
        listed = ", ".join(f"{e:.6g}" for e in moments)
        text = f"link '{link_name}' has an inertia whose principal moments ({listed} kg m^2)"
        if negative > roundoff:
            text += f" include a negative one ({-negative:.3g} kg m^2)"
            if negative <= INERTIA_NEGLIGIBLE * self.largest and not self.strict:
                warnings.warn(f"{self.where}: {text}; read as written (negligible beside the robot's largest "
                              f"moment {self.largest:.3g} kg m^2; strict=True or --strict refuses it)", stacklevel=5)
                return True
            raise InputError(f"{self.where}: {text}" + ("" if self.strict else
                             f", more than {INERTIA_NEGLIGIBLE:g} of the robot's largest moment"))
        if self.strict:
            raise InputError(f"{self.where}: {text} violate the triangle inequality by {excess:.3g} kg m^2 "
                             f"(strict=True)")
        return False

    def tree(self, name, frames) -> Tree:
        tree = Tree(name or self.robot.get("name") or "robot")
        self.t = tree
        stack = [(self.root, None)]
        while stack:                                     # depth first, iteratively (a long chain is fine)
            link_name, joint = stack.pop()
            self._add(link_name, joint)
            for j in sorted(self.children[link_name], reverse=True):
                stack.append((self.joints[j].find("child").get("link"), j))
        for fname, (link, xyz, rpy) in (frames or {}).items():
            if link not in tree.bodies:
                raise InputError(f"{self.where}: frame '{fname}' on unknown link '{link}'")
            tree.frame(fname, link, xyz, rpy)
        tree.check_mimics()
        return tree

    def _value(self, param, v, kind, positive=True):
        """A parameter `param` of default v for a symbolic kind (a mass and a principal inertia are positive;
        a centre of mass coordinate, a product of inertia and a joint origin's coordinate are signed); zero
        and a non-positive principal moment stay numbers."""
        v = float(v)
        if v == 0.0 or kind not in self.symbolic or (positive and v < 0):
            return v
        self.t.parameter(param, v, {"mass": "kg", "com": "m", "inertia": "kg m^2", "length": "m"}[kind],
                         positive=positive)
        return param

    def _add(self, link_name, joint_name):
        m, c, inertia = self.inertias[link_name]
        unused = joint_name is None and not self.floating      # the world link's inertia (Pinocchio's too)
        loose = self._check_inertia(link_name, inertia) if inertia.any() and not unused else unused
        V = self._value
        m = V(f"{link_name}.m", m, "mass")
        c = tuple(V(f"{link_name}.c{a}", x, "com", False) for a, x in zip("xyz", c))
        inertia = tuple(V(f"{link_name}.i{ab}", inertia[i, j], "inertia", i == j)
                        for ab, (i, j) in zip(("xx", "yy", "zz", "xy", "xz", "yz"),
                                              ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))))
        if joint_name is None:
            self.t.body(link_name, joint=Free() if self.floating else None, mass=m, com=c, inertia=inertia,
                        loose_inertia=loose)
            return
        element = self.joints[joint_name]
        where = f"{self.where}: joint '{joint_name}'"
        origin = element.find("origin")
        xyz = _numbers(origin, "xyz", 3, f"{where} origin", (0.0, 0.0, 0.0))
        rpy = self.rpy.get(origin) or _numbers(origin, "rpy", 3, f"{where} origin", (0.0, 0.0, 0.0))
        xyz = tuple(V(f"{joint_name}.{a}", x, "length", False) for a, x in zip("xyz", xyz))
        parent = element.find("parent").get("link")
        self.t.body(link_name, parent, self._joint(joint_name, element, parent), xyz=xyz, rpy=rpy, mass=m,
                    com=c, inertia=inertia, loose_inertia=loose)

    def _joint(self, name, element, parent):
        where = f"{self.where}: joint '{name}'"
        kind = element.get("type")
        if kind == "fixed":
            return Fixed(name)
        if kind == "floating":
            if self.floating or parent != self.root or self.t.bodies[parent].joint is not None:
                raise InputError(f"{where} is floating but not between the fixed root link and its child (a "
                                 f"floating base: read the file with floating=False)")
            return Free(name)
        if kind == "planar":
            return Planar(name)
        if kind not in ("revolute", "continuous", "prismatic"):
            raise InputError(f"{where} has type '{kind}' (supported: revolute, continuous, prismatic, fixed, "
                             f"floating, planar)")
        axis = _numbers(element.find("axis"), "xyz", 3, f"{where} axis", (1.0, 0.0, 0.0))
        if not np.linalg.norm(axis) > 1e-12:
            raise InputError(f"{where} has a zero axis")
        limits = None
        limit = element.find("limit")
        if kind != "continuous" and limit is not None and limit.get("lower") is not None \
                and limit.get("upper") is not None:
            limits = (_numbers(limit, "lower", 1, f"{where} limit")[0], _numbers(limit, "upper", 1, f"{where} limit")[0])
        joint = (Prismatic if kind == "prismatic" else Revolute)(name, tuple(axis), limits)
        mimic = element.find("mimic")
        if mimic is None or self.mimic == "independent":
            return joint
        of = mimic.get("joint")
        if not of:
            raise InputError(f"{where}: mimic element without a joint")
        (ratio,) = _numbers(mimic, "multiplier", 1, f"{where} mimic", (1.0,))
        (offset,) = _numbers(mimic, "offset", 1, f"{where} mimic", (0.0,))
        return Mimic(joint, of, ratio, offset)
