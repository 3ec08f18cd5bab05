"""Reading a URDF into a Tree.

The parser is yourdfpy (MIT, maintained, pure Python on lxml): it reads the kinematic and inertial
elements without touching meshes (load_meshes=False, no scene graph), so a URDF whose meshes are absent
still loads, and it hands out joint and inertial origins as 4x4 matrices and rpy as URDF defines it.
urdf_parser_py (the other option installed) is older, prints a line for every tag it does not know
(gazebo, transmission), and its printing of models is broken on current Python. Pinocchio is not used:
it is only the oracle of the tests.

What becomes what (Pinocchio's reading of the same file, so that arrays compare without permutation):
* the root link is the base, fixed to the world, or floating (`floating=True`: a free joint named
  root_joint, Pinocchio's free flyer);
* children are visited depth first, the joints of one link in the order of their names (urdfdom keeps
  them in a sorted map, and Pinocchio walks that);
* revolute and continuous joints rotate, prismatic joints slide; fixed joints merge their child into the
  parent (both stay named frames); floating and planar joints inside the tree, mimic joints, closed loops
  and links without an inertial element are refused, naming the element;
* values become parameters with defaults, named LINK.m, LINK.cx, LINK.cy, LINK.cz, LINK.ixx, LINK.iyy,
  LINK.izz, LINK.ixy, LINK.ixz, LINK.iyz (inertial values, the centre of mass in the link frame after its
  inertial origin) and JOINT.x, JOINT.y, JOINT.z (the joint origin's translation: the link lengths).
  `symbolic` chooses which kinds stay run-time inputs of the generated code: a subset of
  {"mass", "com", "inertia", "length"} (default: all four; () folds every value into the code). Zeros
  are always folded, and rotations (rpy, axes, an inertial origin's rpy) are numbers of the code.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
import warnings
from pathlib import Path

import numpy as np

from mechsym.errors import InputError
from mechsym.spatial.declare import Tree
from mechsym.spatial.joints import Fixed, Free, Prismatic, Revolute

__all__ = ["read_urdf"]

KINDS = ("mass", "com", "inertia", "length")


def _load(source):
    try:
        import yourdfpy
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise InputError("reading URDF needs the package yourdfpy") from exc
    kwargs = dict(load_meshes=False, build_scene_graph=False, build_collision_scene_graph=False,
                  load_collision_meshes=False)
    is_text = "<robot" in source if isinstance(source, str) else False
    where = "URDF text" if is_text else f"URDF '{source}'"
    if not is_text and not os.path.isfile(source):
        raise InputError(f"{where} does not exist")
    _check_xml(source, is_text, where)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if is_text:
                import io

                return yourdfpy.URDF.load(io.StringIO(source), **kwargs).robot, where
            return yourdfpy.URDF.load(source, **kwargs).robot, where
    except Exception as exc:
        raise InputError(f"{where} is malformed: {type(exc).__name__}: {exc}".splitlines()[0]) from None


def _check_xml(source, is_text, where):
    """A URDF is XML whose root is <robot>: anything else is named as such (the parser itself would fail
    with a message about its own internals)."""
    from xml.etree import ElementTree

    try:
        root = ElementTree.fromstring(source) if is_text else ElementTree.parse(source).getroot()
    except ElementTree.ParseError as exc:
        raise InputError(f"{where} is malformed: not XML: {exc}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{where} cannot be read: {exc}") from None
    if root.tag != "robot":
        raise InputError(f"{where} is malformed: its root element is <{root.tag}>, not <robot>")


def _rpy(R):
    """URDF roll-pitch-yaw of a rotation matrix (R = Rz(y) Ry(p) Rx(r))."""
    p = -np.arcsin(np.clip(R[2, 0], -1, 1))
    if abs(abs(R[2, 0]) - 1) < 1e-12:                    # gimbal lock: yaw absorbed into roll
        return np.arctan2(-R[1, 2], R[1, 1]), p, 0.0
    return np.arctan2(R[2, 1], R[2, 2]), p, np.arctan2(R[1, 0], R[0, 0])


def read_urdf(source, floating=True, symbolic=KINDS, name=None, frames=None) -> Tree:
    """A Tree from a URDF file path (or its XML text). `frames` (name -> (link, xyz, rpy)) adds frames.

    The tree read from a file is kept in the mechsym cache (keyed by the file's bytes, the options and
    this reader's source), so that a warm start does not import the parser (and trimesh with it)."""
    key = _cache_key(source, floating, symbolic, name, frames)
    path = None
    if key is not None:
        from mechsym.codegen import c_backend

        path = c_backend.cache_dir() / "urdf-trees" / f"{key}.pickle"
        try:
            with open(path, "rb") as f:
                return pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            pass
    tree = _read(source, floating, symbolic, name, frames)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tree-")
            with os.fdopen(fd, "wb") as f:
                pickle.dump(tree, f)
            os.replace(tmp, path)
        except OSError:                       # a read-only cache: read the file every time
            pass
    return tree


def _cache_key(source, floating, symbolic, name, frames):
    if not isinstance(source, (str, os.PathLike)) or "<robot" in str(source) or not os.path.isfile(source):
        return None
    h = hashlib.sha256(Path(source).read_bytes())
    h.update(repr((bool(floating), sorted(symbolic), name, sorted((frames or {}).items()))).encode())
    here = Path(__file__).parent
    for f in ("urdf.py", "declare.py", "joints.py"):
        h.update((here / f).read_bytes())
    return h.hexdigest()[:32]


def _read(source, floating, symbolic, name, frames) -> Tree:
    robot, where = _load(source)
    symbolic = set(symbolic)
    unknown = symbolic - set(KINDS)
    if unknown:
        raise InputError(f"symbolic: unknown kinds {sorted(unknown)} (choose from {', '.join(KINDS)})")
    links = {link.name: link for link in robot.links}
    if not links:
        raise InputError(f"{where}: no links")
    joints = list(robot.joints)
    child_of, children = {}, {n: [] for n in links}
    for j in joints:
        for end in (j.parent, j.child):
            if end not in links:
                raise InputError(f"{where}: joint '{j.name}' refers to unknown link '{end}'")
        if j.child in child_of:
            raise InputError(f"{where}: link '{j.child}' is the child of both joints '{child_of[j.child].name}' "
                             f"and '{j.name}' (a closed loop; only trees are supported)")
        if getattr(j, "mimic", None) is not None:
            raise InputError(f"{where}: joint '{j.name}' is a mimic joint (not supported)")
        if j.type not in ("revolute", "continuous", "prismatic", "fixed"):
            raise InputError(f"{where}: joint '{j.name}' has type '{j.type}' (supported: revolute, continuous, "
                             f"prismatic, fixed)")
        child_of[j.child] = j
        children[j.parent].append(j)
    roots = [n for n in links if n not in child_of]
    if len(roots) != 1:
        raise InputError(f"{where}: {'no root link (a closed loop)' if not roots else 'several root links: ' + ', '.join(roots)}")
    tree = Tree(name or robot.name)
    lengths = "length" in symbolic

    def value(param, v, kind, positive=True):
        """A parameter `param` of default v for a symbolic kind (a mass and a principal inertia are positive;
        a centre of mass coordinate, a product of inertia and a joint origin's coordinate are signed)."""
        v = float(v)
        if v == 0.0 or kind not in symbolic:
            return v
        tree.parameter(param, v, {"mass": "kg", "com": "m", "inertia": "kg m^2", "length": "m"}[kind],
                       positive=positive)
        return param

    def add(link_name, joint):
        link = links[link_name]
        inertial = link.inertial
        if inertial is None or inertial.mass is None:
            if joint is None and not floating:
                m, c, inertia = 0.0, (0, 0, 0), (0,) * 6
            else:
                raise InputError(f"{where}: link '{link_name}' has no inertial element (mass and inertia)")
        else:
            m = float(inertial.mass)
            if m < 0:
                raise InputError(f"{where}: link '{link_name}' has a negative mass {m:g} kg")
            origin = np.eye(4) if inertial.origin is None else np.asarray(inertial.origin, float)
            Rc = origin[:3, :3]
            Ic = Rc @ np.asarray(inertial.inertia, float) @ Rc.T
            ev = np.linalg.eigvalsh(0.5 * (Ic + Ic.T))
            if ev[0] < -1e-12 * max(1.0, abs(ev).max()):
                raise InputError(f"{where}: link '{link_name}' has an inertia that is not positive semi-definite "
                                 f"(principal moments {', '.join(f'{e:.6g}' for e in ev)} kg m^2)")
            m = value(f"{link_name}.m", m, "mass")
            c = tuple(value(f"{link_name}.c{a}", x, "com", False) for a, x in zip("xyz", origin[:3, 3]))
            inertia = tuple(value(f"{link_name}.i{ab}", Ic[i, j], "inertia", i == j)
                            for ab, (i, j) in zip(("xx", "yy", "zz", "xy", "xz", "yz"),
                                                  ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))))
        if joint is None:
            tree.body(link_name, joint=Free() if floating else None, mass=m, com=c, inertia=inertia)
        else:
            T = np.eye(4) if joint.origin is None else np.asarray(joint.origin, float)
            xyz = tuple(value(f"{joint.name}.{a}", x, "length", False) if lengths else float(x)
                        for a, x in zip("xyz", T[:3, 3]))
            rpy = _rpy(T[:3, :3])
            if joint.type == "fixed":
                decl = Fixed(joint.name)
            else:
                axis = np.array([1.0, 0.0, 0.0]) if joint.axis is None else np.asarray(joint.axis, float)
                if not np.linalg.norm(axis) > 1e-12:
                    raise InputError(f"{where}: joint '{joint.name}' has a zero axis")
                limit = getattr(joint, "limit", None)
                limits = None
                if limit is not None and limit.lower is not None and limit.upper is not None and joint.type != "continuous":
                    limits = (float(limit.lower), float(limit.upper))
                decl = (Prismatic if joint.type == "prismatic" else Revolute)(joint.name, tuple(axis), limits)
            tree.body(link_name, joint.parent, decl, xyz=xyz, rpy=rpy, mass=m, com=c, inertia=inertia)
        for j in sorted(children[link_name], key=lambda j: j.name):
            add(j.child, j)

    add(roots[0], None)
    for fname, (link, xyz, rpy) in (frames or {}).items():
        if link not in tree.bodies:
            raise InputError(f"{where}: frame '{fname}' on unknown link '{link}'")
        tree.frame(fname, link, xyz, rpy)
    return tree
