"""A second, independent formulation of the same problems: every body free in space (centre-of-mass
acceleration and angular acceleration in world axes), every joint (tree and closing) an acceleration-level
constraint J acc = gamma, Newton-Euler with Lagrange multipliers, M acc = f + J^T lambda, solved in the null
space of J (redundant rows fall out with the rank). Numpy only: its kinematics of the tree are its own (no
Pinocchio), from the same geometry (geometry.py) and the same coordinates (README.md).
"""
from __future__ import annotations

import numpy as np

from .geometry import Problem


def skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def axis_rotation(axis, angle):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = skew(a)
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * K @ K


def quaternion_rotation(x, y, z, w):
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


NQ = dict(revolute=1, prismatic=1, spherical=4, translation=3, universal=2)
NV = dict(revolute=1, prismatic=1, spherical=3, translation=3, universal=2)


class State:
    """Every body's pose and velocity from the tree coordinates q, v (Pinocchio's layout, README.md)."""

    def __init__(self, problem: Problem, q, v):
        self.problem = problem
        self.q = np.asarray(q, float)
        R = {"ground": np.eye(3)}
        o = {"ground": np.zeros(3)}
        w = {"ground": np.zeros(3)}
        do = {"ground": np.zeros(3)}
        origin = {"ground": np.zeros(3)}
        self.slices = {}
        iq = iv = 0
        for j in problem.joints:
            p = j.parent
            qj, vj = q[iq:iq + NQ[j.kind]], v[iv:iv + NV[j.kind]]
            self.slices[j.name] = (iq, iv)
            iq, iv = iq + NQ[j.kind], iv + NV[j.kind]
            Rp, op, wp = R[p], o[p], w[p]
            offset = Rp @ (j.point - origin[p])
            c = j.child
            if j.kind == "revolute":
                R[c] = Rp @ axis_rotation(j.axis, qj[0])
                w[c] = wp + Rp @ j.axis * vj[0]
                o[c] = op + offset
                do[c] = do[p] + np.cross(wp, offset)
            elif j.kind == "prismatic":
                R[c] = Rp
                w[c] = wp
                d = offset + Rp @ j.axis * qj[0]
                o[c] = op + d
                do[c] = do[p] + np.cross(wp, d) + Rp @ j.axis * vj[0]
            elif j.kind == "spherical":
                R[c] = Rp @ quaternion_rotation(*qj)
                w[c] = wp + R[c] @ vj
                o[c] = op + offset
                do[c] = do[p] + np.cross(wp, offset)
            elif j.kind == "translation":
                R[c] = Rp
                w[c] = wp
                d = offset + Rp @ qj
                o[c] = op + d
                do[c] = do[p] + np.cross(wp, d) + Rp @ vj
            elif j.kind == "universal":
                R1 = axis_rotation(j.axis, qj[0])
                R[c] = Rp @ R1 @ axis_rotation(j.axis2, qj[1])
                w[c] = wp + Rp @ j.axis * vj[0] + Rp @ R1 @ j.axis2 * vj[1]
                o[c] = op + offset
                do[c] = do[p] + np.cross(wp, offset)
            origin[c] = j.point
        self.R, self.o, self.w, self.do, self.origin = R, o, w, do, origin
        self.names = [j.child for j in problem.joints]
        self.com = {b: o[b] + R[b] @ problem.bodies[b].com for b in self.names}
        self.com["ground"] = np.zeros(3)
        self.vcom = {b: do[b] + np.cross(w[b], self.com[b] - o[b]) for b in self.names}
        self.vcom["ground"] = np.zeros(3)

    def world_point(self, body, local):
        return self.o[body] + self.R[body] @ local


class Constraints:
    """Rows J (over the bodies' [a_com, alpha] blocks) and gamma with J acc = gamma."""

    def __init__(self, state: State):
        self.s = state
        self.index = {b: 6 * k for k, b in enumerate(state.names)}
        self.rows, self.gamma = [], []

    def _row(self, parts, gamma):
        row = np.zeros(6 * len(self.s.names))
        for body, lin, ang in parts:
            if body != "ground":
                k = self.index[body]
                row[k:k + 3] += lin
                row[k + 3:k + 6] += ang
        self.rows.append(row)
        self.gamma.append(gamma)

    def along(self, i, j, p, n, dn=None):
        """n . (a of j's point at p - a of i's point at p) = 0 to second order; n fixed in i (dn its rate)."""
        s = self.s
        si, sj = p - s.com[i], p - s.com[j]
        wi, wj = s.w[i], s.w[j]
        rel = (s.vcom[j] + np.cross(wj, sj)) - (s.vcom[i] + np.cross(wi, si))
        dn = np.cross(wi, n) if dn is None else dn
        bias = 2 * dn @ rel + n @ (np.cross(wj, np.cross(wj, sj)) - np.cross(wi, np.cross(wi, si)))
        self._row([(i, -n, -np.cross(si, n)), (j, n, np.cross(sj, n))], -bias)

    def point(self, i, j, p):
        for n in np.eye(3):
            self.along(i, j, p, n, dn=np.zeros(3))            # n fixed in the world: both points coincide

    def perpendicular(self, i, u, j, e):
        """u (fixed in i) stays perpendicular to e (fixed in j)."""
        wi, wj = self.s.w[i], self.s.w[j]
        ue = np.cross(u, e)
        bias = (np.cross(np.cross(wi, u), e) + np.cross(u, np.cross(wj, e))) @ (wi - wj)
        self._row([(i, np.zeros(3), ue), (j, np.zeros(3), -ue)], -bias)

    def revolute(self, i, j, p, axis):
        self.point(i, j, p)
        e1 = np.cross(axis, [1.0, 0, 0] if abs(axis[0]) < 0.9 else [0, 1.0, 0])
        e1 /= np.linalg.norm(e1)
        for e in (e1, np.cross(axis, e1)):
            self.perpendicular(i, axis, j, e)

    def no_rotation(self, i, j):
        Ri = self.s.R[i]
        for a, b in ((0, 1), (1, 2), (2, 0)):
            self.perpendicular(i, Ri[:, a], j, Ri[:, b])

    def prismatic(self, i, j, p, axis):
        self.no_rotation(i, j)
        n1 = np.cross(axis, [1.0, 0, 0] if abs(axis[0]) < 0.9 else [0, 1.0, 0])
        n1 /= np.linalg.norm(n1)
        for n in (n1, np.cross(axis, n1)):
            self.along(i, j, p, n)


def constraints(state: State) -> Constraints:
    s, pr = state, state.problem
    c = Constraints(s)
    for j in pr.joints:
        p = s.o[j.child]
        a = s.R[j.parent] @ j.axis if j.axis is not None else None
        if j.kind == "revolute":
            c.revolute(j.parent, j.child, p, a)
        elif j.kind == "spherical":
            c.point(j.parent, j.child, p)
        elif j.kind == "prismatic":
            c.prismatic(j.parent, j.child, p, a)
        elif j.kind == "translation":
            c.no_rotation(j.parent, j.child)
            if j.parent != "ground":
                raise ValueError("a translation joint is on the ground here")
        elif j.kind == "universal":
            c.point(j.parent, j.child, p)
            c.perpendicular(j.parent, a, j.child, s.R[j.child] @ j.axis2)
    for cl in pr.closures:
        p = s.world_point(cl.body_a, cl.point - s.origin[cl.body_a])
        if cl.kind == "spherical":
            c.point(cl.body_a, cl.body_b, p)
        elif cl.kind == "weld":
            c.point(cl.body_a, cl.body_b, p)
            c.no_rotation(cl.body_a, cl.body_b)
        else:
            c.revolute(cl.body_a, cl.body_b, p, s.R[cl.body_a] @ cl.axis)
    return c


def body_accelerations(problem: Problem, q, v, tau=None, rank_tol=1e-10):
    """(state, acc): acc[6k:6k+6] = [centre-of-mass acceleration, angular acceleration] of body k (world axes),
    with joint forces `tau` (v's layout; revolute N m about the axis, prismatic N along it) and gravity."""
    s = State(problem, q, v)
    n = len(s.names)
    M = np.zeros((6 * n, 6 * n))
    f = np.zeros(6 * n)
    for k, b in enumerate(s.names):
        body = problem.bodies[b]
        inertia = s.R[b] @ body.inertia @ s.R[b].T
        M[6 * k:6 * k + 3, 6 * k:6 * k + 3] = body.mass * np.eye(3)
        M[6 * k + 3:6 * k + 6, 6 * k + 3:6 * k + 6] = inertia
        f[6 * k:6 * k + 3] = body.mass * problem.gravity
        f[6 * k + 3:6 * k + 6] = -np.cross(s.w[b], inertia @ s.w[b])
    if tau is not None:
        f += joint_force_map(s).T @ tau
    c = constraints(s)
    J, gamma = np.array(c.rows), np.array(c.gamma)
    U, sv, Vt = np.linalg.svd(J)
    rank = int(np.sum(sv > rank_tol * sv[0]))
    particular = Vt[:rank].T @ ((U[:, :rank].T @ gamma) / sv[:rank])
    N = Vt[rank:].T
    z = np.linalg.solve(N.T @ M @ N, N.T @ (f - M @ particular))
    return s, particular + N @ z


def joint_force_map(s: State):
    """G with body wrenches (force at the centre of mass, moment) = G^T tau for the tree joints' forces."""
    n = len(s.names)
    nv = sum(NV[j.kind] for j in s.problem.joints)
    G = np.zeros((nv, 6 * n))
    index = {b: 6 * k for k, b in enumerate(s.names)}
    for j in s.problem.joints:
        iq, iv = s.slices[j.name]
        Rp = s.R[j.parent]
        if j.kind == "revolute":
            moments, forces = [Rp @ j.axis], []
        elif j.kind == "prismatic":
            moments, forces = [], [Rp @ j.axis]
        elif j.kind == "spherical":
            moments, forces = list(s.R[j.child].T), []            # columns of R_child: the child's axes
        elif j.kind == "translation":
            moments, forces = [], list(Rp.T)
        else:                                                      # universal
            R1 = axis_rotation(j.axis, s.q[iq])
            moments, forces = [Rp @ j.axis, Rp @ R1 @ j.axis2], []
        for body, sign in ((j.child, 1.0), (j.parent, -1.0)):
            if body == "ground":
                continue
            k = index[body]
            for m, a in enumerate(moments):
                G[iv + m, k + 3:k + 6] += sign * a
            for m, a in enumerate(forces):
                G[iv + m, k:k + 3] += sign * a
                G[iv + m, k + 3:k + 6] += sign * np.cross(s.o[j.child] - s.com[body], a)
    return G


def joint_accelerations(problem: Problem, q, v, tau=None):
    """The tree coordinates' accelerations (Pinocchio's v layout) from the maximal solution."""
    s, acc = body_accelerations(problem, q, v, tau)
    index = {b: 6 * k for k, b in enumerate(s.names)}

    def alpha(b):
        return np.zeros(3) if b == "ground" else acc[index[b] + 3:index[b] + 6]

    def origin_acc(b):
        if b == "ground":
            return np.zeros(3)
        r = s.o[b] - s.com[b]
        return acc[index[b]:index[b] + 3] + np.cross(alpha(b), r) + np.cross(s.w[b], np.cross(s.w[b], r))

    out = np.zeros(len(v))
    for j in problem.joints:
        _, iv = s.slices[j.name]
        p, c = j.parent, j.child
        Rp, wp, wc = s.R[p], s.w[p], s.w[c]
        if j.kind == "revolute":
            out[iv] = (Rp @ j.axis) @ (alpha(c) - alpha(p))
        elif j.kind == "prismatic":
            n = Rp @ j.axis
            d = s.o[c] - s.o[p]
            # d'' = s'' n + 2 s' (w_p x n) + alpha_p x d + w_p x (w_p x d), and n . (w_p x n) = 0
            out[iv] = n @ (origin_acc(c) - origin_acc(p) - np.cross(alpha(p), d) - np.cross(wp, np.cross(wp, d)))
        elif j.kind == "spherical":
            out[iv:iv + 3] = s.R[c].T @ (alpha(c) - alpha(p) + np.cross(wc, wp))
        elif j.kind == "translation":
            out[iv:iv + 3] = Rp.T @ (origin_acc(c) - origin_acc(p))
        elif j.kind == "universal":
            R1 = axis_rotation(j.axis, q[s.slices[j.name][0]])
            e1, e2 = Rp @ j.axis, Rp @ R1 @ j.axis2
            rhs = alpha(c) - alpha(p) - np.cross(wp, e1) * v[iv] - np.cross(wp + e1 * v[iv], e2) * v[iv + 1]
            out[iv:iv + 2] = np.linalg.lstsq(np.column_stack([e1, e2]), rhs, rcond=None)[0]
    return out
