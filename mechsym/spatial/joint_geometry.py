"""The geometry that mechsym.spatial.joints' joint types are written in: exact numbers of the declaration,
rotations about an axis, unit axes and their normals, and the two kinds of world Jacobian column (`Screw`,
`Translation`) that a joint's `world_columns` returns."""
from __future__ import annotations

import numpy as np
import sympy as sp

from mechsym.core.errors import InputError

__all__ = ["Screw", "Translation", "exact", "unit_axis", "rotation_about", "normal_pair", "cross", "world",
           "ZERO3", "EYE"]

ZERO3 = (sp.Integer(0),) * 3
EYE = [[sp.Integer(int(i == j)) for j in range(3)] for i in range(3)]


def exact(x, tol=1e-14):
    """A number of the declaration as sympy folds it: the round-off of exact rotations removed (cos(pi/2) =
    6e-17 -> 0, 1 - 1e-16 -> 1), so that zeros drop out of the generated code. Only round-off: an angle
    written to a few digits is folded where it is read (mechsym.spatial.urdf), never here."""
    x = float(x)
    r = round(x)
    if abs(x - r) < tol:
        return sp.Integer(int(r))
    return sp.Float(x)


def rotation_about(u, c, s):
    """Rodrigues' rotation about the unit axis u, with c = cos and s = sin of the angle."""
    ux = [[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]]
    return [[sp.expand(c * (1 if i == j else 0) + s * ux[i][j] + (1 - c) * u[i] * u[j]) for j in range(3)]
            for i in range(3)]


def unit_axis(axis, where) -> tuple:
    """`axis` scaled to unit length; an InputError naming `where` for a malformed or zero axis."""
    axis = np.asarray(axis, float)
    if axis.shape != (3,) or not np.all(np.isfinite(axis)):
        raise InputError(f"{where} axis must be 3 finite numbers")
    n = np.linalg.norm(axis)
    if n < 1e-12:
        raise InputError(f"{where} has a zero axis")
    return tuple(axis / n)


def normal_pair(u) -> tuple:
    """Two unit vectors n1, n2 with (n1, n2, u) a right-handed orthonormal basis (u a unit vector): the
    coordinate axes for a coordinate axis u, so that the rows fold."""
    u = np.asarray(u, float)
    k = int(np.argmin(np.abs(u)))
    helper = np.zeros(3)
    helper[k] = 1.0
    n1 = np.cross(helper, u)
    n1 /= np.linalg.norm(n1)
    n2 = np.cross(u, n1)
    return tuple(float(exact(c)) for c in n1), tuple(float(exact(c)) for c in n2)


def cross(a, b):
    """The cross product a x b of two 3-vectors (numbers or sympy expressions)."""
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def world(R0, u):
    """R0 u: the vector u of a body frame in world axes (R0 its rotation)."""
    return [sum(R0[i][n] * u[n] for n in range(3)) for i in range(3)]


class Screw:
    """A Jacobian column: rotation about the world unit vector u through the point `through`, with the
    translation `pitch` (m/rad) along u (pitch 0: a hinge)."""

    def __init__(self, u, through, pitch=0):
        self.u, self.through, self.pitch = u, through, pitch

    def at(self, o, vec):
        """(lin, ang) of the column at the world point o: (u x (o - p) + pitch u, u)."""
        d = [a - b for a, b in zip(o, self.through)]
        return vec([a + self.pitch * b for a, b in zip(cross(self.u, d), self.u)]), self.u

    def com_column(self, m, mc, inv, vec):
        """The column of the centre of mass of a subtree of mass m and first moment mc (world), times inv."""
        d = [a - m * b for a, b in zip(mc, self.through)]
        return vec([(a + self.pitch * m * b) * inv for a, b in zip(cross(self.u, d), self.u)])

    def at_origin(self, let):
        """(lin, ang) of the column at the world origin (Plücker coordinates)."""
        return [let(a + self.pitch * b) for a, b in zip(cross(self.through, self.u), self.u)], self.u


class Translation:
    """A Jacobian column: translation along the world unit vector u."""

    def __init__(self, u):
        self.u = u

    def at(self, o, vec):
        """(lin, ang) of the column at any point: (u, 0)."""
        return self.u, list(ZERO3)

    def com_column(self, m, mc, inv, vec):
        """The column of the centre of mass of a subtree of mass m, times inv: m u inv."""
        return vec([m * inv * x for x in self.u])

    def at_origin(self, let):
        """(lin, ang) of the column at the world origin: (u, 0)."""
        return self.u, list(ZERO3)
