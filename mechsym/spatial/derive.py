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

The stages: the moving bodies and frames (mechsym.spatial.merge), the straight-line program and its
spatial algebra (mechsym.spatial.straight), the recursions (this module), the frame and centre-of-mass
terms (mechsym.spatial.frame_terms) and the Coriolis matrix (mechsym.spatial.coriolis).
"""
from __future__ import annotations

import sympy as sp

from mechsym.spatial.coriolis import CoriolisTerm
from mechsym.spatial.declare import Tree
from mechsym.spatial.frame_terms import FrameTerms
from mechsym.spatial.joint_geometry import exact
from mechsym.spatial.merge import merge
from mechsym.spatial.straight import ONE, ZERO, Straight, _add, _cross, _dot, _mm, _mtv, _mv

__all__ = ["Straight", "Derivation", "merge"]


class Derivation(FrameTerms, CoriolisTerm):
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
        """World joint columns of moving body k (mechsym.spatial.joint_geometry.Screw or Translation), one per speed,
        made once: every frame Jacobian on the chain, the centre of mass and the Coriolis terms share them."""
        key = ("axes", k)
        if key not in self._cache:
            self._cache[key] = self.links[k].joint.world_columns(self.R0[k], self.p0[k], self.s.vec)
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

