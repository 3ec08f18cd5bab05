"""Spatial closed-loop mechanisms: a tree (mechsym.spatial.declare.Tree) whose loops are closed by joints
between frames of two bodies (`Tree.close`), in the tree's joint coordinates q and speeds v.

Every closing joint gives position rows (mechsym.spatial.joints: `closure_rows`), written once here with
the tree's symbolic frame poses, Jacobians and biases (mechsym.spatial.derive) into three quantities, all
exact and generated on the codegen spec (numpy or C, through the tree's backend):

  phi(q)                    the rows: ("along", e)  e_a . (o_b - o_a), e_a = R_a e
                                      ("perp", ea, eb)  a . b,  a = R_a ea, b = R_b eb
  J(q) (rows x nv)          d(phi)/dt = J v:  e_a . (J_b - J_a)_lin + (e_a x r) . J_a,ang  (r = o_b - o_a)
                                              (a x b) . (J_a - J_b)_ang
  gamma(q, v)               d2(phi)/dt2 = J dv/dt + gamma, from the frames' velocities and biases
                            (e_a'' = alpha_a x e_a + w_a x (w_a x e_a), r'' = J_b dv/dt - J_a dv/dt + bias)

A closing joint's own coordinates may be driven (`Tree.drive` of the name its `closure_coordinates` gives: a
Revolute's angle or a Prismatic's travel by the joint's name, a Cylindrical's JOINT.slide and JOINT.angle, a
Universal's JOINT.angle1 and JOINT.angle2): the function "drives" gives per driven closure coordinate its value
(a travel along an axis of frame a, or an angle atan2 of a vector of one frame about an axis of the other),
its Jacobian row, its gamma and its axis in the world (`LoopSystem.drive_rows`).

A row's reaction is the wrench its multiplier lambda carries: J^T lambda is the generalised force of the
force lambda e_a at o_b ("along") or the moment -lambda (a x b) ("perp") on the second body, and their
opposites on the first: `row_wrenches` gives them (world axes, at o_b), so that a closure's reaction
JOINT.fx ... JOINT.mz is the force and moment its first body exerts on its second at the origin of frame b.

Mobility is nv minus the rank of J at the assembled configuration; the rows beyond that rank (a column-
pivoted QR of J^T, mechanism scaled) are redundant there (Bricard's linkage: Grübler's count 0, mobility 1,
one redundant row) and reported (`LoopSystem.redundant`). Which rows are redundant changes along the motion
(Bricard's: the z row at the start, another at J1 = pi/2), so the solves keep every row and use the
pseudo-inverse of the consistent system (mechsym.spatial.loop_kinematics.solve); the reactions the
redundant rows carry are undetermined, the minimum-norm ones given. The kinematics and dynamics are
mechsym.spatial.loop_kinematics and mechsym.spatial.loop_dynamics.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from mechsym.codegen.keys import cache_key, package_source
from mechsym.core.errors import InputError, ModelError
from mechsym.spatial.declare import Tree
from mechsym.spatial.derive import Derivation, merge
from mechsym.spatial.joint_geometry import exact
from mechsym.spatial.system import TreeSystem

__all__ = ["LoopSystem", "loop_spec_items", "closure_drives", "ClosureDrive"]

RANK_TOL = 1e-9          # singular values of the scaled J below RANK_TOL times the largest: not independent


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _mv(R, v):
    return [R[i][0] * v[0] + R[i][1] * v[1] + R[i][2] * v[2] for i in range(3)]


def _sub(a, b):
    return [x - y for x, y in zip(a, b)]


class _Frame:
    """A frame's pose, Jacobian columns, velocity and bias from a Derivation."""

    def __init__(self, d, name):
        self.R, self.o = d.frame_pose(name)
        J = d.frame_jacobian(name)
        self.lin, self.ang = J[:3], J[3:]
        bias = d.frame_bias(name)
        self.blin, self.bang = bias[:3], bias[3:]
        vel = [d.s.let(sum((row[c] * d.v[c] for c in range(len(d.v))), sp.Integer(0))) for row in J]
        self.vlin, self.vang = vel[:3], vel[3:]


def loop_spec_items(d: Derivation, tree: Tree):
    """(name, outputs, doc) of the loop functions over the derivation `d`: "closure" (phi, J row-major,
    gamma) and "wrenches" (per row its wrench on the second body at o_b, per closure o_b, per moving body its
    inertial wrench I a + v x* I v with gravity, world axes at its origin, and that origin)."""
    L = d.s.let
    phi, jac, gamma, wrench, origins = [], [], [], [], []
    for closure in tree.closures.values():
        d.s.cut()
        a, b = _Frame(d, closure.frame_a), _Frame(d, closure.frame_b)
        r = [L(e) for e in _sub(b.o, a.o)]
        rdot = _sub(b.vlin, a.vlin)
        origins += list(b.o)
        for row in closure.joint.closure_rows():
            if row[0] == "along":
                e, value, row_jac, row_gamma = _along(d, a, b, r, rdot, row[1])
                phi.append(value)
                jac += row_jac
                gamma.append(row_gamma)
                wrench += e + [0, 0, 0]
            else:
                ea = [L(x) for x in _mv(a.R, [exact(c) for c in row[1]])]
                eb = [L(x) for x in _mv(b.R, [exact(c) for c in row[2]])]
                n = [L(x) for x in _cross(ea, eb)]
                phi.append(_dot(ea, eb))
                jac += [L(_dot(n, [xa[c] - xb[c] for xa, xb in zip(a.ang, b.ang)])) for c in range(len(d.v))]
                wa, wb = _cross(a.vang, ea), _cross(b.vang, eb)
                gamma.append(_dot(n, _sub(a.bang, b.bang)) + _dot(_cross(a.vang, wa), eb) + 2 * _dot(wa, wb)
                             + _dot(ea, _cross(b.vang, wb)))
                wrench += [0, 0, 0] + [-x for x in n]
    d.s.cut()
    vel = d.velocities(d.vj)
    acc = d.accelerations(d.vj, d.joint_values(d.a), gravity=True)
    inertial = []
    for k, link in enumerate(d.links):
        vl, va = vel[k]
        fl, fa = d._inertia_times(link, *acc[k])
        hl, ha = d._inertia_times(link, vl, va)
        fl = [x + y for x, y in zip(fl, _cross(va, hl))]
        fa = [x + y + z for x, y, z in zip(fa, _cross(va, ha), _cross(vl, hl))]
        inertial += _mv(d.R0[k], fl) + _mv(d.R0[k], fa) + list(d.p0[k])
    items = [("closure", phi + jac + gamma, "the closure rows, their Jacobian (row-major) and gamma"),
             ("wrenches", wrench + origins + inertial,
              "each row's wrench on the second body, each closure's origin o_b, each body's inertial wrench")]
    driven = closure_drives(tree)
    if driven:
        items.append(("drives", _drive_rows(d, driven),
                      "per driven closure: its coordinate, its Jacobian row, gamma and its axis in the world"))
    return items


def _along(d, a, b, r, rdot, direction):
    """The row "origins apart along no `direction` of frame a" (the travel along it): (e = R_a direction, its
    value e . r, its Jacobian row, gamma), r = o_b - o_a and rdot its rate."""
    L = d.s.let
    e = [L(x) for x in _mv(a.R, [exact(c) for c in direction])]
    er = [L(x) for x in _cross(e, r)]
    jac = [L(_dot(e, [jb[c] - ja[c] for jb, ja in zip(b.lin, a.lin)]) + _dot(er, [x[c] for x in a.ang]))
           for c in range(len(d.v))]
    wae = _cross(a.vang, e)
    gamma = _dot(e, _sub(b.blin, a.blin)) + _dot(er, a.bang) + _dot(_cross(a.vang, wae), r) + 2 * _dot(wae, rdot)
    return e, _dot(e, r), jac, gamma


@dataclass(frozen=True)
class ClosureDrive:
    """A driven coordinate of a closing joint: its closure, its name and its definition (the joint's
    `closure_coordinates`); `travel` for a length (its force a force along the axis), else an angle."""
    closure: object
    coordinate: str
    spec: tuple

    @property
    def joint(self):
        """The closing joint."""
        return self.closure.joint

    @property
    def travel(self) -> bool:
        """Whether the coordinate is a length (a travel), not an angle."""
        return self.spec[0] == "travel"


def closure_drives(tree) -> list:
    """The driven coordinates of closing joints (ClosureDrive), in the order of the drives."""
    coordinates = {name: ClosureDrive(c, name, spec) for c in tree.closures.values()
                   for name, spec in c.joint.closure_coordinates().items()}
    return [coordinates[drv.coordinate] for drv in tree.drives if drv.coordinate in coordinates]


def _drive_rows(d, driven):
    """Per ClosureDrive (value, Jacobian row (nv), gamma, world axis u (3)): a travel along an axis of frame a
    (the "along" row's terms); an angle atan2((R n2) . m', (R n1) . m') (Joint.closure_coordinates), its rate
    u . (w_b - w_a) and gamma u . (alpha_b - alpha_a)|_(dv/dt = 0) + (w x u) . (w_b - w_a), u = R axis and w
    the angular velocity of the frame R turns (a or b)."""
    L = d.s.let
    out = []
    for drive in driven:
        d.s.cut()
        a, b = _Frame(d, drive.closure.frame_a), _Frame(d, drive.closure.frame_b)
        if drive.travel:
            r = [L(e) for e in _sub(b.o, a.o)]
            u, value, jac, gamma = _along(d, a, b, r, _sub(b.vlin, a.vlin), drive.spec[1])
        else:
            side, axis, n1, n2, m = drive.spec[1:]
            own, other = (a, b) if side == "a" else (b, a)
            u = [L(x) for x in _mv(own.R, [exact(c) for c in axis])]
            mw = _mv(other.R, [exact(c) for c in m])
            value = sp.atan2(_dot(_mv(own.R, [exact(c) for c in n2]), mw), _dot(_mv(own.R, [exact(c) for c in n1]), mw))
            jac = [L(_dot(u, [xb[c] - xa[c] for xb, xa in zip(b.ang, a.ang)])) for c in range(len(d.v))]
            gamma = _dot(u, _sub(b.bang, a.bang)) + _dot(_cross(own.vang, u), _sub(b.vang, a.vang))
        out += [value, *jac, gamma, *u]
    return out


class LoopSystem:
    """A derived closed-loop mechanism (what mechsym.derive returns for a Tree with closures; it follows
    mechsym.core.derived.DerivedSystem): the tree's entry points (`tree`, a TreeSystem) and the loop functions
    (see the module docstring), the rows' names, the drives, and after an assembly the mobility and the
    redundant rows. `backend` as mechsym.derive's."""

    def __init__(self, tree: Tree, backend=None):
        if not tree.closures:
            raise InputError(f"tree '{tree.name}': no closed loop (Tree.close); derive it as a tree")
        self.declaration = tree
        self.tree = TreeSystem(tree, backend=backend)
        self.backend = self.tree.backend
        self.name = tree.name
        links, frames, self.nq, self.nv = merge(tree, inertia=False)
        self.links = links
        self.nlinks = len(links)
        self._check_closures(frames)
        self.row_names, self.row_joint = [], []
        for c in tree.closures.values():
            for i, row in enumerate(c.joint.closure_rows()):
                self.row_names.append(f"{c.joint.name}.{row[0]}{i}")
                self.row_joint.append(c.joint.name)
        self.nrows = len(self.row_names)
        self.closure_links = [(frames[c.frame_a].link, frames[c.frame_b].link) for c in tree.closures.values()]
        self._coordinates()
        self._lib = None
        self.keep = np.arange(self.nrows)       # the independent rows (`assemble` finds the redundant ones)
        self.mobility = None

    # -- declaration checks --------------------------------------------------------------------------
    def _check_closures(self, frames):
        for c in self.declaration.closures.values():
            la, lb = frames[c.frame_a].link, frames[c.frame_b].link
            if la == lb:
                raise InputError(f"tree '{self.name}': loop '{c.loop}': joint '{c.joint.name}' joins frames "
                                 f"'{c.frame_a}' and '{c.frame_b}', which are rigidly joined (one body)")

    def _coordinates(self):
        """The indices of each joint's coordinates and speeds, and the drives' (one coordinate of a joint whose
        rates are its speeds)."""
        names_q = self.tree.coordinate_names
        self.coordinate_names, self.speed_names = names_q, self.tree.speed_names
        self.scalar_speeds = []           # speeds whose coordinate is itself (dq/dt = v)
        self._joint_slices = []
        for link in self.links:
            joint = link.joint
            self._joint_slices.append((joint, slice(link.iq, link.iq + joint.nq), slice(link.iv, link.iv + joint.nv)))
            if joint.rates_are_speeds and joint.nq == joint.nv and joint.mimic is None:
                self.scalar_speeds += [(link.iq + i, link.iv + i) for i in range(joint.nv)]
        self.drive_q, self.drive_v, self.force_names = [], [], []
        self.tree_driven, self.closure_driven = [], []      # the drives' indices among all drives, by kind
        by_name = dict(zip(names_q, range(len(names_q))))
        scalar = dict(self.scalar_speeds)
        closing = {c.joint.name: c for c in self.declaration.closures.values()}
        own = {name: spec for c in closing.values() for name, spec in c.joint.closure_coordinates().items()}
        for k, drv in enumerate(self.declaration.drives):
            self.force_names.append(drv.force)
            if drv.coordinate in own:
                self.closure_driven.append(k)
                continue
            closure = closing.get(drv.coordinate.rsplit(".", 1)[0]) or closing.get(drv.coordinate)
            if closure is not None:
                joint = closure.joint
                offered = ", ".join(joint.closure_coordinates()) or "none"
                raise InputError(f"tree '{self.name}': loop '{closure.loop}': the closing joint '{joint.name}' "
                                 f"({type(joint).__name__}) has no coordinate '{drv.coordinate}' to drive (its "
                                 f"coordinates: {offered})")
            if drv.coordinate not in by_name:
                raise InputError(f"tree '{self.name}': driven coordinate '{drv.coordinate}' is no joint coordinate "
                                 f"(coordinates: {', '.join(names_q)}; closing joints' coordinates: "
                                 f"{', '.join(own) or 'none'})")
            iq = by_name[drv.coordinate]
            if iq not in scalar:
                joint = next(j for j, sq, _ in self._joint_slices if sq.start <= iq < sq.stop)
                raise InputError(f"tree '{self.name}': coordinate '{drv.coordinate}' of joint '{joint.name}' "
                                 f"({type(joint).__name__}) cannot be driven: its joint's rates are not its speeds "
                                 f"(a spherical joint is driven by no single angle)")
            self.tree_driven.append(k)
            self.drive_q.append(iq)
            self.drive_v.append(scalar[iq])
        self.ndrives = len(self.declaration.drives)
        self.drive_angles = np.array([d.coordinate in own and own[d.coordinate][0] == "angle"
                                      for d in self.declaration.drives], bool)

    # -- the interface of every derived system (mechsym.core.derived.DerivedSystem): the tree's parameters --
    @property
    def param_names(self) -> list:
        """The run-time parameters' names (the tree's)."""
        return self.tree.param_names

    def set_params(self, overrides=None):
        """Use the defaults with these overrides from now on (the tree's entry points and every LoopSolver made
        after)."""
        self.tree.set_params(overrides)

    @property
    def param_values(self) -> np.ndarray:
        """The parameter vector in use."""
        return self.tree.param_values

    @property
    def flops(self) -> dict:
        """Arithmetic operations per state of the generated closure and wrench functions and the tree's."""
        from mechsym.codegen.spec import flops

        counts = self.backend.route(compiled=lambda: {n: f["flops"] for n, f in self._library().meta["functions"].items()},
                                    python=lambda: flops(self._spec()))()
        return {**self.tree.flops, **counts}

    @property
    def mechanism(self):
        """The declaration (the Tree), under the name a planar System gives its Mechanism (what a sweep reads
        parameter names and units from)."""
        return self.declaration

    def equations_text(self, latex=False) -> str:
        """The closure rows and A U = C as text that sympy reads back, or LaTeX (mechsym.spatial.loop_equations)."""
        from mechsym.spatial.loop_equations import LoopEquations

        equations = LoopEquations(self)
        return equations.latex() if latex else equations.text()

    @property
    def closures(self):
        """The closing joints (mechsym.spatial.declare.Closure), in declaration order."""
        return list(self.declaration.closures.values())

    @property
    def grubler(self) -> int:
        """Grübler's count: the speeds minus the closure rows."""
        return self.nv - self.nrows

    @property
    def redundant(self) -> list:
        """The names of the closure rows found redundant at the assembled configuration."""
        kept = set(self.keep.tolist())
        return [n for i, n in enumerate(self.row_names) if i not in kept]

    # -- generated functions ---------------------------------------------------------------------------
    def _library(self):
        if self._lib is None:
            key = cache_key(self.declaration, package_source(), "loops")
            self._lib = self.backend.load(f"loops-{self.name}", key, self._spec)
        return self._lib

    def _spec(self):
        from mechsym.codegen.spec import Spec, shared_program

        d = Derivation(self.declaration)
        items = loop_spec_items(d, self.declaration)
        inputs = [("q", tuple(d.q)), ("v", tuple(d.v)), ("a", tuple(d.a)), ("p", tuple(d.p.values()))]
        functions = shared_program([(n, inputs, out, doc, 0) for n, out, doc in items], d.s.assignments, "x",
                                   d.s.pieces)
        return Spec(f"loops {self.name}", {"nq": self.nq, "nv": self.nv, "npar": len(self.tree.param_names)},
                    functions, None)

    def params(self, overrides=None) -> np.ndarray:
        """The run-time parameter vector (the tree's)."""
        return self.tree.params(overrides)

    def closure(self, q, v=None, params=None):
        """(phi (N, rows), J (N, rows, nv), gamma (N, rows)) at states q (N, nq), v (N, nv) (zero if None)."""
        q = np.atleast_2d(np.asarray(q, float))
        v = np.zeros((len(q), self.nv)) if v is None else np.atleast_2d(np.asarray(v, float))
        p = self.params() if params is None else params
        out = self._library().closure(q.T, v.T, np.zeros((self.nv, len(q))), p).T
        m, n = self.nrows, self.nv
        return out[:, :m], out[:, m:m + m * n].reshape(-1, m, n), out[:, m + m * n:]

    def wrenches(self, q, v, a, params=None):
        """(rows' wrenches (N, rows, 6), closure origins (N, closures, 3), bodies' inertial wrenches (N, links,
        6) and origins (N, links, 3)) at states q, v, accelerations a (see loop_spec_items)."""
        q = np.atleast_2d(np.asarray(q, float))
        p = self.params() if params is None else params
        out = self._library().wrenches(q.T, np.atleast_2d(v).T, np.atleast_2d(a).T, p).T
        n, m, c = len(q), self.nrows, len(self.closures)
        rows = out[:, :6 * m].reshape(n, m, 6)
        origins = out[:, 6 * m:6 * m + 3 * c].reshape(n, c, 3)
        bodies = out[:, 6 * m + 3 * c:].reshape(n, self.nlinks, 9)
        return rows, origins, bodies[:, :, :6], bodies[:, :, 6:]

    def drive_rows(self, q, v=None, params=None):
        """(values (N, k), their Jacobian D (N, k, nv), gamma (N, k) with d2 value/dt2 = D dv/dt + gamma, the
        driven closures' world axes (N, k, 3), zero for a tree drive) of the drives at q (N, nq), v (N, nv): a
        tree coordinate's value and unit row, a driven closure's coordinate from the generated "drives"."""
        q = np.atleast_2d(np.asarray(q, float))
        n, k = len(q), self.ndrives
        values, D, gamma, axes = np.zeros((n, k)), np.zeros((n, k, self.nv)), np.zeros((n, k)), np.zeros((n, k, 3))
        values[:, self.tree_driven] = q[:, self.drive_q]
        D[:, self.tree_driven, self.drive_v] = 1.0
        if self.closure_driven:
            v = np.zeros((n, self.nv)) if v is None else np.atleast_2d(np.asarray(v, float))
            p = self.params() if params is None else params
            out = self._library().drives(q.T, v.T, np.zeros((self.nv, n)), p).T.reshape(n, -1, self.nv + 5)
            c = self.closure_driven
            values[:, c], D[:, c], gamma[:, c], axes[:, c] = (out[:, :, 0], out[:, :, 1:1 + self.nv],
                                                               out[:, :, 1 + self.nv], out[:, :, 2 + self.nv:])
        return values, D, gamma, axes

    # -- the configuration manifold ----------------------------------------------------------------------
    def integrate(self, q, dv):
        """q moved by the speeds dv, joint by joint (a spherical joint's quaternion by its exponential)."""
        q, dv = np.asarray(q, float), np.asarray(dv, float)
        out = np.array(q)
        for joint, sq, sv in self._joint_slices:
            out[..., sq] = joint.integrate(q[..., sq], dv[..., sv])
        return out

    def size(self, params=None) -> float:
        """A characteristic length: the largest distance of a joint or frame origin from the world origin at
        q = 0 (1 m if all lie at it); the tolerances on lengths are relative to it."""
        q0 = self.neutral()
        pos = self.tree.frame_position
        p = self.params() if params is None else params
        sizes = [np.linalg.norm(pos(q0, f, params=p)) for f in self.tree.frame_names]
        return max(max(sizes), 1e-3) if sizes and max(sizes) > 0 else 1.0

    def neutral(self) -> np.ndarray:
        """q at zero joint motion (unit quaternions)."""
        q = np.zeros(self.nq)
        for joint, sq, _ in self._joint_slices:
            if joint.nq == 4 and joint.nv == 3:
                q[sq] = (0, 0, 0, 1)
            elif joint.floating:
                q[sq] = (0, 0, 0, 0, 0, 0, 1)
        return q

    def describe_row(self, i) -> str:
        """'loop L (joint J between frames a and b)' of closure row i."""
        c = next(c for c in self.closures if c.joint.name == self.row_joint[i])
        return f"loop '{c.loop}' (joint '{c.joint.name}' between frames '{c.frame_a}' and '{c.frame_b}')"

    def loops_text(self) -> str:
        """Every loop described."""
        return "; ".join(f"loop '{c.loop}' (joint '{c.joint.name}' between '{c.frame_a}' and '{c.frame_b}')"
                         for c in self.closures)

    def rank_rows(self, J, scale):
        """(rank, independent rows in order) of the closure Jacobian J (rows, nv) at one configuration, rows and
        columns made dimensionless by the mechanism's size `scale`."""
        from scipy.linalg import qr

        Js = J * self._column_scale(scale)[None, :] / self._row_scale(scale)[:, None]
        s = np.linalg.svd(Js, compute_uv=False)
        rank = int(np.sum(s > RANK_TOL * max(s.max(), 1.0))) if s.size else 0
        _, _, piv = qr(Js.T, pivoting=True, mode="economic")
        return rank, np.sort(piv[:rank])

    def _row_scale(self, scale):
        """A length's scale for "along" rows, 1 for "perp" rows."""
        return np.array([scale if ".along" in n else 1.0 for n in self.row_names])

    def _column_scale(self, scale):
        """A length's scale for the speeds of translations (prismatic, the free base's linear), 1 for angles."""
        col = np.ones(self.nv)
        for joint, _, sv in self._joint_slices:
            for i, (lin, ang) in enumerate(joint.subspace()):
                if all(x == 0 for x in ang):
                    col[sv.start + i] = scale
        return col

    def check_mobility(self, q, scale, driven=True):
        """Find the mobility and the independent rows at the assembled q; with `driven`, a ModelError naming the
        loops and the driven coordinates when the drives do not match the mobility."""
        _, J, _ = self.closure(q[None])
        rank, keep = self.rank_rows(J[0], scale)
        self.keep, self.mobility = keep, self.nv - rank
        if driven and self.mobility != self.ndrives:
            driven = ", ".join(d.coordinate for d in self.declaration.drives) or "none"
            raise ModelError(self.name, [
                f"mobility is {self.mobility} (rank of the closure Jacobian {rank} for {self.nv} speeds, "
                f"Grübler's count {self.grubler}) but {self.ndrives} coordinate(s) are driven [{driven}]; "
                f"{self.loops_text()}"])
