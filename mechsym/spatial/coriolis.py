"""A tree's Coriolis matrix: Pinocchio's factorisation C = sum_i J_i^T (I_i dJ_i + B_i J_i), world frame, with
B(I, v) x = 1/2 [v x* (I x) - I (v x x) + x x* (I v)], summed as pinocchio's computeCoriolisMatrix does:
with composites over subtrees (Yc, Bc), the rows of joint i are J_i^T (Yc_c dJ_c + Bc_c J_c) for the
columns c of i's subtree and (Yc_i J_i)^T dJ_j + J_i^T Bc_i J_j for its ancestors' columns j. Then
C v + g = bias and dH/dt - 2 C is skew-symmetric.
"""
from __future__ import annotations

from mechsym.spatial.straight import ONE, ZERO, _add, _cross, _dot6, _inertia_apply, _mm, _mv

__all__ = ["CoriolisTerm"]


class CoriolisTerm:
    """The Coriolis matrix of a Derivation (a part of its class)."""

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
