"""The recursive algorithms of a tree written symbolically, as one straight-line program.

Every intermediate quantity of the recursions (joint transforms, body velocities and accelerations,
spatial forces, composite inertias, world poses) is held in its own temporary (`Straight.let`), so no
expression grows with the depth of the tree and H is never expanded: this is the structure of
RobCoGen's generated code. Numbers fold (rotations of the URDF, zero offsets, joint axes), parameters stay
symbols, and a function of the generated code (mechsym.spatial.system.TreeSystem.spec) keeps only the
temporaries its outputs need.

Conventions (Pinocchio's): spatial vectors are [linear; angular], expressed in a body's frame at its
origin; a body's spatial inertia is (m, h = m c, Io = inertia about the body origin). For a body i with
parent l, the joint gives the rotation R = lR_i and the translation p = lp_i of i's frame in l's:

  velocity        v_i = iX_l v_l + S_i qd_i
  acceleration    a_i = iX_l a_l + S_i qdd_i + v_i x S_i qd_i       (the world's a_0 = [(0, 0, g); 0]: gravity)
  force           f_i = I_i a_i + v_i x* I_i v_i,   f_l += lX_i^* f_i,   tau_i = S_i^T f_i       (RNEA)
  composite       Ic_l += lX_i^* Ic_i iX_l,   H_ij = S_j^T (jX_i^* Ic_i S_i) for j an ancestor of i (CRBA)

Frame quantities are world-aligned at the frame origin o, from each joint's world columns
(mechsym.spatial.joints): a screw about the world axis u through p with pitch h is [u x (o - p) + h u; u]
(a revolute joint: h = 0), a translation along u is [u; 0]; the free base's six columns are those of the
base's axes (linear, then angular). The frame bias is the classical acceleration of o at zero
joint accelerations: R0_i (a_lin + alpha x r + w x (v_lin + w x r)) - (0, 0, g), then R0_i alpha (the
accelerations are those of the RNEA, gravity included, which adds (0, 0, g) to every point).

Mimic joints (mechsym.spatial.joints.Mimic): the recursions run over the joints' coordinates and speeds,
a mimic joint's included (its coordinate is ratio * q_j + offset of the joint j it mimics, its speed ratio *
v_j), and each result is taken to q and v by the constant map G of those ratios: H = G^T H_joints G, forces
G^T tau, Jacobians J G, C = G^T C_joints G (Pinocchio's JointModelMimic gives the same).

The Coriolis matrix is Pinocchio's factorisation C = sum_i J_i^T (I_i dJ_i + B_i J_i), world frame, with
B(I, v) x = 1/2 [v x* (I x) - I (v x x) + x x* (I v)], summed as pinocchio's computeCoriolisMatrix does:
with composites over subtrees (Yc, Bc), the rows of joint i are J_i^T (Yc_c dJ_c + Bc_c J_c) for the
columns c of i's subtree and (Yc_i J_i)^T dJ_j + J_i^T Bc_i J_j for its ancestors' columns j. Then
C v + g = bias and dH/dt - 2 C is skew-symmetric.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from mechsym.core.errors import ModelError
from mechsym.spatial.declare import Tree
from mechsym.spatial.joints import exact

__all__ = ["Straight", "Derivation", "merge"]

ZERO = sp.Integer(0)
ONE = sp.Integer(1)


class Straight:
    """A straight-line program: assignments x_k = expression over inputs and earlier temporaries."""

    def __init__(self):
        self.assignments = []                    # (symbol, expression)
        self.index = {}                          # symbol -> position
        self.pieces = []                         # the piece of each assignment (`cut`)
        self.piece = 0

    def cut(self):
        """Start a new piece of the program (one body's step of a recursion): the C printer prints pieces as
        functions of their own, shared by every function that needs them (mechsym.codegen.c_parts)."""
        self.piece += 1

    def let(self, expr):
        """A temporary x_k assigned `expr` (an atom or a negated atom is returned as it is)."""
        expr = sp.sympify(expr)
        if expr.is_Atom or (expr.is_Mul and len(expr.args) == 2 and expr.args[0] == -1 and expr.args[1].is_Atom):
            return expr
        s = sp.Symbol(f"x{len(self.assignments)}", real=True)
        self.index[s] = len(self.assignments)
        self.assignments.append((s, expr))
        self.pieces.append(self.piece)
        return s

    def vec(self, exprs):
        """`let` of each expression of a list."""
        return [self.let(e) for e in exprs]


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _mv(R, v):
    return [R[i][0] * v[0] + R[i][1] * v[1] + R[i][2] * v[2] for i in range(3)]


def _mtv(R, v):
    return [R[0][i] * v[0] + R[1][i] * v[1] + R[2][i] * v[2] for i in range(3)]


def _mm(A, B):
    return [[A[i][0] * B[0][j] + A[i][1] * B[1][j] + A[i][2] * B[2][j] for j in range(3)] for i in range(3)]


def _add(a, b):
    return [x + y for x, y in zip(a, b)]


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@dataclass
class Link:
    """A moving body of the merged tree (fixed joints folded into their parent)."""

    name: str              # the body the joint moves
    joint: object          # a mechsym.spatial.joints.Joint with coordinates
    parent: int            # index of the parent moving body, -1 for the world
    R_place: list          # 3x3 numbers: the joint frame in the parent's frame at q = 0
    p_place: list          # 3 expressions
    mass: sp.Expr
    h: list                # first moment m c about the body origin (body frame)
    Io: list               # 3x3 inertia about the body origin (body frame)
    iq: int = 0            # first index among the joints' coordinates (a mimic joint's included)
    iv: int = 0            # first index among the joints' speeds (likewise)
    nq: int = 0            # the joint's coordinates and speeds (a mimic joint: one each)
    nv: int = 0


@dataclass
class FramePlace:
    name: str
    link: int              # moving body it is fixed on (-1: the world)
    R: list                # 3x3 numbers
    p: list                # 3 expressions


def merge(tree: Tree, inertia=True):
    """The moving bodies in Pinocchio's depth-first order (children in declaration order), every named
    frame (bodies, joints and declared frames) as a placement on one of them, and the sizes of q and v (a
    mimic joint has no coordinate of its own: the joints' coordinates number more, see `Link.iq`)."""
    tree.check()
    children = {name: [] for name in tree.bodies}
    for b in tree.bodies.values():
        if b.parent is not None:
            children[b.parent].append(b.name)
    root = tree.root
    links, frames = [], {}
    attach = {}            # declared body -> (link index, R numeric 3x3, p exprs)

    def inertia_terms(b, R, p):
        """(m, m c', Io') of declared body b placed at (R, p) in its moving body's frame."""
        m = b.mass
        c = _add(_mv(R, list(b.com)), p)
        Rn = sp.Matrix(R)
        Ic = Rn * b.inertia * Rn.T
        cc = sum(ci * ci for ci in c)
        Io = [[Ic[i, j] + m * ((cc if i == j else 0) - c[i] * c[j]) for j in range(3)] for i in range(3)]
        return m, [m * ci for ci in c], Io

    def add_mass(k, b, R, p):
        if k < 0 or not inertia:             # (the structure alone: names, frames and sizes)
            return
        m, h, Io = inertia_terms(b, R, p)
        link = links[k]
        link.mass = link.mass + m
        link.h = _add(link.h, h)
        link.Io = [[link.Io[i][j] + Io[i][j] for j in range(3)] for i in range(3)]

    def visit(name):
        b = tree.bodies[name]
        eye = [[ONE if i == j else ZERO for j in range(3)] for i in range(3)]
        if b.parent is None:
            if b.joint is not None:              # a root joint (the floating base's)
                links.append(Link(name, b.joint, -1, eye, [ZERO] * 3, ZERO, [ZERO] * 3, [[ZERO] * 3 for _ in range(3)]))
                attach[name] = (0, eye, [ZERO] * 3)
                add_mass(0, b, eye, [ZERO] * 3)
                if b.joint.name not in tree.bodies:
                    frames[b.joint.name] = FramePlace(b.joint.name, 0, eye, [ZERO] * 3)
            else:
                attach[name] = (-1, eye, [ZERO] * 3)
        else:
            k, Rp, pp = attach[b.parent]
            Rj = [[exact(x) for x in row] for row in np.asarray(b.origin_R)]
            R = _mm(Rp, Rj)
            p = _add(_mv(Rp, list(b.origin_xyz)), pp)
            if b.joint.merges_into_parent:
                attach[name] = (k, R, p)
                add_mass(k, b, R, p)
            else:
                links.append(Link(name, b.joint, k, R, p, ZERO, [ZERO] * 3, [[ZERO] * 3 for _ in range(3)]))
                attach[name] = (len(links) - 1, eye, [ZERO] * 3)
                add_mass(len(links) - 1, b, eye, [ZERO] * 3)
            k2, R2, p2 = attach[name]
            if b.joint.name not in tree.bodies:       # a joint named like a link: the name is the link's
                frames[b.joint.name] = FramePlace(b.joint.name, k2, R2, p2)
        k, R, p = attach[name]
        frames[name] = FramePlace(name, k, R, p)

    stack = [root.name]
    while stack:                                  # depth first, iteratively (a long chain is fine)
        name = stack.pop()
        visit(name)
        stack.extend(reversed(children[name]))
    for f in tree.frames.values():
        k, Rb, pb = attach[f.body]
        Rf = [[exact(x) for x in row] for row in np.asarray(f.R)]
        frames[f.name] = FramePlace(f.name, k, _mm(Rb, Rf), _add(_mv(Rb, list(f.xyz)), pb))
    iq = iv = 0
    for link in links:
        link.nq, link.nv = (1, 1) if link.joint.mimic is not None else (link.joint.nq, link.joint.nv)
        link.iq, link.iv = iq, iv
        iq += link.nq
        iv += link.nv
    if not links:
        raise ModelError(tree.name, ["no moving joint: nothing to derive"])
    return links, frames, sum(lk.joint.nq for lk in links), sum(lk.joint.nv for lk in links)


class Derivation:
    """The symbolic quantities of a tree over the inputs q[i], v[i], a[i] (accelerations or torques) and
    parameters p[i]: the building blocks the renderer assembles into generated functions."""

    def __init__(self, tree: Tree):
        self.tree = tree
        self.links, self.frames, self.nq, self.nv = merge(tree)
        self.param_names = list(tree.parameters)
        self.p = {n: sp.Symbol(f"p[{i}]", real=True) for i, n in enumerate(self.param_names)}
        self.q = [sp.Symbol(f"q[{i}]", real=True) for i in range(self.nq)]
        self.v = [sp.Symbol(f"v[{i}]", real=True) for i in range(self.nv)]
        self.a = [sp.Symbol(f"a[{i}]", real=True) for i in range(self.nv)]
        self._couple()
        self.qj = self.joint_values(self.q, offsets=True)
        self.vj = self.joint_values(self.v)
        self.s = Straight()
        sub = {p.symbol: self.p[n] for n, p in tree.parameters.items()}
        self._sub = sub
        for link in self.links:
            link.p_place = [sp.sympify(e).xreplace(sub) for e in link.p_place]
            link.mass = sp.sympify(link.mass).xreplace(sub)
            link.h = [sp.sympify(e).xreplace(sub) for e in link.h]
            link.Io = [[sp.sympify(e).xreplace(sub) for e in row] for row in link.Io]
        for f in self.frames.values():
            f.p = [sp.sympify(e).xreplace(sub) for e in f.p]
        self.g = tree.gravity_magnitude.xreplace(sub)        # the gravity parameter's p[i], or 0
        self._inertias()
        self._poses()
        self._cache = {}

    # -- mimic joints: the joints' coordinates from q --------------------------------------------------
    def _couple(self):
        """For each joint speed, (index in v, ratio), and for each joint coordinate, (index in q, ratio, offset):
        a mimic joint's are its mimicked joint's, times the ratio (plus the offset); None when no joint
        mimics another."""
        self._G = None
        mimics = self.tree.mimics()
        if not mimics:
            return
        first_q, first_v = {}, {}
        iq = iv = 0
        for link in self.links:
            if link.joint.mimic is None:
                first_q[link.joint.name], first_v[link.joint.name] = iq, iv
                iq, iv = iq + link.joint.nq, iv + link.joint.nv
        self._G, self._Gq = [], []
        for link in self.links:
            name = link.joint.name
            if link.joint.mimic is None:
                self._G += [(first_v[name] + i, ONE) for i in range(link.nv)]
                self._Gq += [(first_q[name] + i, ONE, ZERO) for i in range(link.nq)]
            else:
                of, ratio, offset = mimics[name]
                self._G.append((first_v[of], exact(ratio)))
                self._Gq.append((first_q[of], exact(ratio), exact(offset)))

    def joint_values(self, x, offsets=False):
        """The joints' coordinates (offsets=True, x = q) or speeds (x = v or a): x itself unless a joint
        mimics another."""
        if self._G is None:
            return list(x)
        if offsets:
            return [k * x[r] + o for r, k, o in self._Gq]
        return [k * x[r] for r, k in self._G]

    def reduced(self, tau):
        """G^T tau: the generalised forces on q of forces on the joints' speeds (a mimic joint's force acts
        on its mimicked coordinate, times the ratio)."""
        if self._G is None:
            return tau
        out = [ZERO] * self.nv
        for (r, k), t in zip(self._G, tau):
            out[r] = out[r] + k * t
        return [self.s.let(e) for e in out]

    def _reduced_columns(self, M):
        """M G: the columns of a matrix over the joints' speeds, taken to v."""
        if self._G is None:
            return M
        return [self.reduced(row) for row in M]

    # -- building blocks -----------------------------------------------------------------------------
    def _inertias(self):
        L = self.s.let
        for link in self.links:                 # parameter-only temporaries: hoisted out of the loop
            link.mass = L(link.mass)
            link.h = [L(e) for e in link.h]
            link.Io = [[L(link.Io[i][j]) if j >= i else None for j in range(3)] for i in range(3)]
            for i in range(3):
                for j in range(i):
                    link.Io[i][j] = link.Io[j][i]

    def _poses(self):
        """Joint transforms (parent <- child) and world poses of every moving body."""
        L = self.s.let
        self.Rl, self.pl, self.R0, self.p0 = [], [], [], []
        for k, link in enumerate(self.links):
            self.s.cut()
            q = self.qj[link.iq:link.iq + link.nq]
            Rj, pj = link.joint.motion(q, L)
            R = [[L(sp.expand(e)) for e in row] for row in _mm(link.R_place, Rj)]
            p = [L(e) for e in _add(link.p_place, _mv(link.R_place, pj))]
            self.Rl.append(R)
            self.pl.append(p)
            if link.parent < 0:
                self.R0.append(R)
                self.p0.append(p)
            else:
                Rp, pp = self.R0[link.parent], self.p0[link.parent]
                self.R0.append([[L(e) for e in row] for row in _mm(Rp, R)])
                self.p0.append([L(e) for e in _add(pp, _mv(Rp, p))])

    def _S(self, link):
        """The joint's motion subspace columns, each a (lin, ang) pair of 3-vectors."""
        return link.joint.subspace()

    def _Sv(self, link, rates):
        """S qd as (lin, ang) from the joint's slice of `rates`."""
        cols = self._S(link)
        r = rates[link.iv:link.iv + len(cols)]
        lin = [sum((c[0][i] * x for c, x in zip(cols, r)), ZERO) for i in range(3)]
        ang = [sum((c[1][i] * x for c, x in zip(cols, r)), ZERO) for i in range(3)]
        return lin, ang

    def _inertia_times(self, link, lin, ang):
        """I (lin, ang) for the body's spatial inertia."""
        m, h, Io = link.mass, link.h, link.Io
        return _add([m * x for x in lin], _cross(ang, h)), _add(_cross(h, lin), _mv(Io, ang))

    def velocities(self, v):
        """Body velocities (lin, ang) in body frames for speeds v (a list of symbols or zeros)."""
        key = ("vel", tuple(v))
        if key in self._cache:
            return self._cache[key]
        L = self.s.vec
        out = []
        for k, link in enumerate(self.links):
            self.s.cut()
            sl, sa = self._Sv(link, v)
            if link.parent < 0:
                vl, va = L(sl), L(sa)
            else:
                pl, pa = out[link.parent]
                R, p = self.Rl[k], self.pl[k]
                va = L(_add(_mtv(R, pa), sa))
                vl = L(_add(_mtv(R, _add(pl, _cross(pa, p))), sl))
            out.append((vl, va))
        self._cache[key] = out
        return out

    def accelerations(self, v, a, gravity=True):
        """Body spatial accelerations for speeds v and accelerations a (lists or zeros); with gravity, the
        world's acceleration is (0, 0, g) (Featherstone's fictitious base acceleration: gravity enters
        once at the root and every transform carries it on)."""
        key = ("acc", tuple(v), tuple(a), gravity)
        if key in self._cache:
            return self._cache[key]
        L = self.s.vec
        vel = self.velocities(v)
        out = []
        for k, link in enumerate(self.links):
            self.s.cut()
            sl, sa = self._Sv(link, a)
            vl, va = vel[k]
            ql, qa = self._Sv(link, v)
            cl = _add(_cross(va, ql), _cross(vl, qa))     # v x S qd  (motion cross product)
            ca = _cross(va, qa)
            if link.parent < 0 and not gravity:
                al, aa = _add(sl, cl), _add(sa, ca)
            else:
                pl, pa = out[link.parent] if link.parent >= 0 else ([ZERO, ZERO, self.g], [ZERO] * 3)
                R, p = self.Rl[k], self.pl[k]
                aa = _add(_add(_mtv(R, pa), sa), ca)
                al = _add(_add(_mtv(R, _add(pl, _cross(pa, p))), sl), cl)
            out.append((L(al), L(aa)))
        self._cache[key] = out
        return out

    def rnea(self, v, a, gravity=True):
        """Generalised forces tau (nv expressions) of RNEA at speeds v, accelerations a (of size nv)."""
        return self.reduced(self._rnea(self.joint_values(v), self.joint_values(a), gravity))

    def _rnea(self, v, a, gravity=True):
        """RNEA over the joints' speeds and accelerations."""
        key = ("rnea", tuple(v), tuple(a), gravity)
        if key in self._cache:
            return self._cache[key]
        L = self.s.vec
        vel, acc = self.velocities(v), self.accelerations(v, a, gravity)
        forces = []
        for k, link in enumerate(self.links):
            self.s.cut()
            al, aa = acc[k]
            vl, va = vel[k]
            fl, fa = self._inertia_times(link, al, aa)
            if any(x != 0 for x in vl + va):
                hl, ha = self._inertia_times(link, vl, va)
                fl = _add(fl, _cross(va, hl))
                fa = _add(fa, _add(_cross(va, ha), _cross(vl, hl)))
            forces.append([L(fl), L(fa)])
        tau = [None] * len(self.vj)
        for k in reversed(range(len(self.links))):
            self.s.cut()
            link = self.links[k]
            fl, fa = forces[k]
            fl, fa = L(fl), L(fa)
            for j, (cl, ca) in enumerate(self._S(link)):
                tau[link.iv + j] = self.s.let(_dot(cl, fl) + _dot(ca, fa))
            if link.parent >= 0:
                R, p = self.Rl[k], self.pl[k]
                Rf = _mv(R, fl)
                parent = forces[link.parent]
                parent[0] = _add(parent[0], Rf)
                parent[1] = _add(parent[1], _add(_mv(R, fa), _cross(p, Rf)))
        self._cache[key] = tau
        return tau

    def mass_matrix(self):
        """H (nv x nv list of expressions) by the composite-rigid-body algorithm (G^T H G with mimic joints)."""
        if "H" not in self._cache:
            H = self._crba()
            if self._G is not None:                             # G^T H G (H symmetric)
                HG = self._reduced_columns(H)
                H = self._reduced_columns([list(col) for col in zip(*HG)])
            self._cache["H"] = H
        return self._cache["H"]

    def _crba(self):
        """H over the joints' speeds."""
        L = self.s.let
        nj = len(self.vj)
        comp = [(lk.mass, list(lk.h), [row[:] for row in lk.Io]) for lk in self.links]
        H = [[ZERO] * nj for _ in range(nj)]
        for k in reversed(range(len(self.links))):
            self.s.cut()
            link = self.links[k]
            m, h, Io = comp[k]
            m, h = L(m), [L(e) for e in h]
            Io = [[L(Io[i][j]) if j >= i else None for j in range(3)] for i in range(3)]
            for i in range(3):
                for j in range(i):
                    Io[i][j] = Io[j][i]
            comp[k] = (m, h, Io)
            F = []
            for lin, ang in self._S(link):
                fl = _add([m * x for x in lin], _cross(ang, h))
                fa = _add(_cross(h, lin), _mv(Io, ang))
                F.append(([L(e) for e in fl], [L(e) for e in fa]))
            j = k
            while True:
                jl = self.links[j]
                for c, (fl, fa) in enumerate(F):
                    for r, (sl, sa) in enumerate(self._S(jl)):
                        val = L(_dot(sl, fl) + _dot(sa, fa))
                        H[jl.iv + r][link.iv + c] = val
                        H[link.iv + c][jl.iv + r] = val
                if jl.parent < 0:
                    break
                R, p = self.Rl[j], self.pl[j]
                F2 = []
                for fl, fa in F:
                    Rf = [L(e) for e in _mv(R, fl)]
                    F2.append((Rf, [L(e) for e in _add(_mv(R, fa), _cross(p, Rf))]))
                F, j = F2, jl.parent
            if link.parent >= 0:                 # composite inertia into the parent
                R, p = self.Rl[k], self.pl[k]
                Rh = [L(e) for e in _mv(R, h)]
                RI = _mm(R, Io)
                I2 = [[L(sum(RI[i][n] * R[j][n] for n in range(3))) if j >= i else None for j in range(3)]
                      for i in range(3)]
                for i in range(3):
                    for j in range(i):
                        I2[i][j] = I2[j][i]
                px = [[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]]
                hx = [[0, -Rh[2], Rh[1]], [Rh[2], 0, -Rh[0]], [-Rh[1], Rh[0], 0]]
                pp, ph, hp = _mm(px, px), _mm(px, hx), _mm(hx, px)
                pm, ph_, pI = comp[link.parent]
                pI = [[pI[i][j] + I2[i][j] - m * pp[i][j] - ph[i][j] - hp[i][j] for j in range(3)] for i in range(3)]
                comp[link.parent] = (pm + m, _add(ph_, _add(Rh, [m * x for x in p])), pI)
        return H

    def _axes(self, k):
        """World joint columns of moving body k (mechsym.spatial.joints.Screw or Translation), one per speed."""
        return self.links[k].joint.world_columns(self.R0[k], self.p0[k], self.s.vec)

    def frame_pose(self, name):
        """(world rotation 3x3, world origin 3) of a named frame."""
        f = self.frames[name]
        if f.link < 0:
            return f.R, f.p
        R0, p0 = self.R0[f.link], self.p0[f.link]
        key = ("pose", name)
        if key not in self._cache:
            self.s.cut()
            o = self.s.vec(_add(p0, _mv(R0, f.p)))
            R = [[self.s.let(e) for e in row] for row in _mm(R0, f.R)]
            self._cache[key] = (R, o)
        return self._cache[key]

    def _subtree_columns(self, k):
        """The speed indices of moving body k and its descendants."""
        key = ("subtree", k)
        if key not in self._cache:
            cols = set()
            for j, link in enumerate(self.links):
                if k in self.ancestors(j):
                    cols.update(range(link.iv, link.iv + link.nv))
            self._cache[key] = cols
        return self._cache[key]

    def ancestors(self, k):
        """Link indices from the root down to link k (k included)."""
        out = []
        while k >= 0:
            out.append(k)
            k = self.links[k].parent
        return out[::-1]

    def frame_jacobian(self, name):
        """6 x nv world-aligned Jacobian of a frame's origin (linear rows first)."""
        f = self.frames[name]
        J = [[ZERO] * len(self.vj) for _ in range(6)]
        if f.link < 0:
            return self._reduced_columns(J)
        _, o = self.frame_pose(name)
        self.s.cut()
        for k in self.ancestors(f.link):
            for c, column in enumerate(self._axes(k)):
                col = self.links[k].iv + c
                lin, ang = column.at(o, self.s.vec)
                for i in range(3):
                    J[i][col], J[3 + i][col] = lin[i], ang[i]
        return self._reduced_columns(J)

    def frame_bias(self, name):
        """The classical acceleration of the frame origin at zero joint accelerations (world), then the
        angular acceleration (world): the bias J-dot v of the frame."""
        f = self.frames[name]
        if f.link < 0:
            return [ZERO] * 6
        zero = [ZERO] * len(self.vj)
        vl, va = self.velocities(self.vj)[f.link]
        al, aa = self.accelerations(self.vj, zero)[f.link]     # shared with the bias: gravity included,
        r = f.p                                              # which adds exactly (0, 0, g) in the world
        self.s.cut()
        vp = self.s.vec(_add(vl, _cross(va, r)))
        lin = _add(_add(al, _cross(aa, r)), _cross(va, vp))
        R0 = self.R0[f.link]
        world = _mv(R0, self.s.vec(lin))
        return self.s.vec(world[:2] + [world[2] - self.g]) + self.s.vec(_mv(R0, aa))

    def _moments(self):
        """World first moments m_i c_i and masses of the moving bodies, and their subtree sums."""
        if "moments" in self._cache:
            return self._cache["moments"]
        self.s.cut()
        L = self.s.let
        mc = [[L(e) for e in _add([lk.mass * x for x in self.p0[k]], _mv(self.R0[k], lk.h))]
              for k, lk in enumerate(self.links)]
        sub_m = [lk.mass for lk in self.links]
        sub_c = [list(x) for x in mc]
        for k in reversed(range(len(self.links))):
            sub_m[k] = L(sub_m[k])
            sub_c[k] = [L(e) for e in sub_c[k]]
            par = self.links[k].parent
            if par >= 0:
                sub_m[par] = sub_m[par] + sub_m[k]
                sub_c[par] = _add(sub_c[par], sub_c[k])
        total = L(sum((lk.mass for lk in self.links), ZERO))
        self._cache["moments"] = (mc, sub_m, sub_c, total)
        return self._cache["moments"]

    def com(self):
        """Centre of mass (3) and its Jacobian (3 x nv), world frame."""
        mc, sub_m, sub_c, total = self._moments()
        self.s.cut()
        inv = self.s.let(1 / total)
        com = [self.s.let(sum((c[i] for c in mc), ZERO) * inv) for i in range(3)]
        J = [[ZERO] * len(self.vj) for _ in range(3)]
        for k, link in enumerate(self.links):
            for c, column in enumerate(self._axes(k)):
                col = column.com_column(sub_m[k], sub_c[k], inv, self.s.vec)
                for i in range(3):
                    J[i][link.iv + c] = col[i]
        return com, self._reduced_columns(J)

    def energies(self):
        """Kinetic energy (sum of 1/2 v_i . I_i v_i, independent of H) and potential energy g sum m_i z_i."""
        vel = self.velocities(self.vj)
        self.s.cut()
        T = ZERO
        for k, link in enumerate(self.links):
            vl, va = vel[k]
            hl, ha = self._inertia_times(link, vl, va)
            T = T + self.s.let((_dot(vl, hl) + _dot(va, ha)) / 2)
        mc, _, _, _ = self._moments()
        V = self.g * sum((c[2] for c in mc), ZERO)
        return [self.s.let(T), self.s.let(V)]

    def coriolis(self):
        """Pinocchio's Coriolis matrix C(q, v) (nv x nv) in the world frame (see the module docstring)."""
        if "C" in self._cache:
            return self._cache["C"]
        L = self.s.let
        vel = self.velocities(self.vj)
        nj = len(self.vj)
        C = [[ZERO] * nj for _ in range(nj)]
        world_v, cols, dcols = [], [], []
        for k, link in enumerate(self.links):
            R0, p0 = self.R0[k], self.p0[k]
            vl, va = vel[k]
            w = [L(e) for e in _mv(R0, va)]                         # world spatial velocity at the origin
            wl = [L(e) for e in _add(_mv(R0, vl), _cross(p0, w))]
            world_v.append((wl, w))
            cs, ds = [], []
            for column in self._axes(k):
                cl, ca = column.at_origin(L)
                cs.append((cl, ca))
                dl = [L(e) for e in _add(_cross(w, cl), _cross(wl, ca))]
                da = [L(e) for e in _cross(w, ca)]
                ds.append((dl, da))
            cols.append(cs)
            dcols.append(ds)
        # world-frame spatial inertias at the world origin (m, h, Iw) and the matrices B_k, then their
        # subtree sums (composites are plain sums in the world frame), as Pinocchio's backward pass
        Y, Bm = [], []
        for k, link in enumerate(self.links):
            m = link.mass
            R0, p0 = self.R0[k], self.p0[k]
            h = [L(e) for e in _add(_mv(R0, link.h), [m * x for x in p0])]
            RI = _mm(R0, link.Io)
            Ir = [[sum(RI[i][n] * R0[j][n] for n in range(3)) for j in range(3)] for i in range(3)]
            c0 = _mv(R0, link.h)        # inertia about the world origin from the one about the body origin
            px = [[0, -p0[2], p0[1]], [p0[2], 0, -p0[0]], [-p0[1], p0[0], 0]]
            cx = [[0, -c0[2], c0[1]], [c0[2], 0, -c0[0]], [-c0[1], c0[0], 0]]
            pp, pc, cp = _mm(px, px), _mm(px, cx), _mm(cx, px)
            Iw = [[L(Ir[i][j] - m * pp[i][j] - pc[i][j] - cp[i][j]) if j >= i else None for j in range(3)]
                  for i in range(3)]
            Iw = [[Iw[min(i, j)][max(i, j)] for j in range(3)] for i in range(3)]
            vl, va = world_v[k]
            Yk = (m, h, Iw)
            ml, ma = [[L(e) for e in x] for x in _inertia_apply(Yk, vl, va)]          # momentum I v
            cols6 = []
            for e in range(6):                                  # B applied to the six unit motions
                lin = [ONE if e == i else ZERO for i in range(3)]
                ang = [ONE if e == 3 + i else ZERO for i in range(3)]
                il, ia = _inertia_apply(Yk, lin, ang)
                t1 = (_cross(va, il), _add(_cross(va, ia), _cross(vl, il)))        # v x* (I x)
                xl, xa = _add(_cross(va, lin), _cross(vl, ang)), _cross(va, ang)   # v x x
                t2 = _inertia_apply(Yk, xl, xa)                                    # I (v x x)
                t3 = (_cross(ang, ml), _add(_cross(ang, ma), _cross(lin, ml)))     # x x* (I v)
                cols6.append([(a - b + c) / 2 for a, b, c in zip(t1[0] + t1[1], t2[0] + t2[1], t3[0] + t3[1])])
            Y.append(Yk)
            Bm.append([[cols6[c][r] for c in range(6)] for r in range(6)])
        F = {}                                                  # column -> Yc dJ + Bc J of its body's subtree
        for k in reversed(range(len(self.links))):
            m, h, Iw = Y[k]
            Yk = (L(m), [L(e) for e in h], [[L(e) for e in row] for row in Iw])
            Bk = [[L(e) for e in row] for row in Bm[k]]
            own = [(self.links[k].iv + c, cols[k][c], dcols[k][c]) for c in range(len(cols[k]))]
            for idx, (cl, ca), (dl, da) in own:
                il, ia = _inertia_apply(Yk, dl, da)
                x = cl + ca
                F[idx] = [L(a + sum(Bk[r][n] * x[n] for n in range(6))) for r, a in enumerate(il + ia)]
            sub = [c for c in F if c in self._subtree_columns(k)]
            for r, (rl, ra), _ in own:
                row = rl + ra
                for c in sub:
                    C[r][c] = _dot6(row, F[c])
                yr = [L(e) for e in sum(_inertia_apply(Yk, rl, ra), [])]         # Yc J_r
                rb = [L(sum(row[n] * Bk[n][c] for n in range(6))) for c in range(6)]   # J_r^T Bc
                for j in self.ancestors(k)[:-1]:
                    for c in range(len(cols[j])):
                        jl, ja = cols[j][c]
                        dl, da = dcols[j][c]
                        C[r][self.links[j].iv + c] = _dot6(yr, dl + da) + _dot6(rb, jl + ja)
            par = self.links[k].parent
            if par >= 0:
                pm, ph, pI = Y[par]
                Y[par] = (pm + Yk[0], _add(ph, Yk[1]), [[pI[i][j] + Yk[2][i][j] for j in range(3)] for i in range(3)])
                Bm[par] = [[Bm[par][i][j] + Bk[i][j] for j in range(6)] for i in range(6)]
        C = [[L(e) for e in row] for row in C]
        if self._G is not None:                                 # G^T C G
            CG = self._reduced_columns(C)
            C = [list(row) for row in zip(*self._reduced_columns([list(col) for col in zip(*CG)]))]
        self._cache["C"] = C
        return C


def _inertia_apply(Y, lin, ang):
    """A spatial inertia (m, h, Io) times a motion (lin, ang): (m lin + ang x h, h x lin + Io ang)."""
    m, h, Io = Y
    return _add([m * x for x in lin], _cross(ang, h)), _add(_cross(h, lin), _mv(Io, ang))


def _dot6(a, b):
    return sum((x * y for x, y in zip(a, b)), ZERO)

