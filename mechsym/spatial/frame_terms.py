"""The frame and centre-of-mass terms of a tree's derivation: frame poses, world-aligned Jacobians and
classical-acceleration biases, the centre of mass and its Jacobian, and the energies (see mechsym.spatial.derive
for the conventions)."""
from __future__ import annotations

from mechsym.spatial.straight import ZERO, _add, _cross, _dot, _mm, _mv

__all__ = ["FrameTerms"]


class FrameTerms:
    """The frame and centre-of-mass quantities of a Derivation (a part of its class: the recursions'
    poses, velocities and accelerations are the Derivation's)."""

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
