"""The three-link chain of mechanisms/chain3.py for hard contact: the tree protocol of mechsym.contact.hard.

The chain's declaration (chain3.build()) gives the parameters l, density, h and g; an open chain in its
relative joint angles theta1..3 needs no closure, so its dynamics is written here in closed form with sympy
(exact symbolic derivatives, lambdified): link i has absolute angle phi_i = theta1 + ... + theta_i, the pins
O = (0, h), A, B and the tip C follow along the links, every link is uniform (m = density l, I = m l^2 / 12).
q = v-integral = (theta1, theta2, theta3); H = sum m J_G^T J_G + I J_phi^T J_phi; C v = sum m J_G^T (J_G' v);
g = dV/dq with V = sum m g y_G. Frames A, B, C lie in the world x-y plane (z = 0), the model is planar
(rotations about z), the ground is the plane y = 0 with normal +y.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from mechanisms import chain3
from mechsym.codegen import VectorFunction
from mechsym.core.errors import InputError

FRAMES = ("A", "B", "C")
GROUND = dict(point=(0.0, 0.0, 0.0), normal=(0.0, 1.0, 0.0))


class Chain3Tree:
    """chain3 as a planar tree in its relative joint angles (frames A, B, C)."""

    nq = nv = 3
    planar = True
    actuated = ()
    frames = list(FRAMES)
    q_names = ["theta1", "theta2", "theta3"]
    v_names = ["theta1d", "theta2d", "theta3d"]

    def __init__(self, params=None):
        mech = chain3.build()
        values = mech.resolve_parameters(params)
        self.values = values
        l, rho, h, g = (values[k] for k in ("l", "density", "h", "g"))
        th = sp.symbols("theta1:4", real=True)
        w = sp.symbols("w1:4", real=True)
        m, inertia = rho * l, rho * l * l ** 2 / 12
        phi = [th[0], th[0] + th[1], th[0] + th[1] + th[2]]
        pins = [sp.Matrix([0, h])]
        for p in phi:
            pins.append(pins[-1] + l * sp.Matrix([sp.cos(p), sp.sin(p)]))
        qv, wv = sp.Matrix(th), sp.Matrix(w)
        H = sp.zeros(3, 3)
        Cv = sp.zeros(3, 1)
        V = 0
        for i in range(3):
            G = (pins[i] + pins[i + 1]) / 2
            JG = G.jacobian(qv)
            Jp = sp.Matrix([phi[i]]).jacobian(qv)
            H += m * JG.T * JG + inertia * Jp.T * Jp
            Cv += m * JG.T * ((JG * wv).jacobian(qv) * wv)
            V += m * g * G[1]
        bias = Cv + sp.Matrix([V]).jacobian(qv).T
        self._H = _matrix([th], sp.simplify(H))
        self._bias = _matrix([th, w], bias)
        self._frame = {}
        for name, pin, link in zip(FRAMES, pins[1:], range(3)):
            J = pin.jacobian(qv)
            Jdv = (J * wv).jacobian(qv) * wv
            pos3 = sp.Matrix([pin[0], pin[1], 0])
            J6 = sp.zeros(6, 3)
            J6[:2, :] = J
            J6[5, :] = sp.Matrix([phi[link]]).jacobian(qv)
            a6 = sp.Matrix([Jdv[0], Jdv[1], 0, 0, 0, 0])
            self._frame[name] = (_matrix([th], pos3), _matrix([th], J6), _matrix([th, w], a6))
        self.mass, self.g = m, g

    def _get(self, frame):
        try:
            return self._frame[frame]
        except KeyError:
            raise InputError(f"chain3 has no frame '{frame}' (frames: {', '.join(FRAMES)})") from None

    def mass_matrix(self, q):
        return np.asarray(self._H(q), float)

    def bias(self, q, v):
        return np.asarray(self._bias(q, v), float).ravel()

    def frame_position(self, q, frame):
        return np.asarray(self._get(frame)[0](q), float).ravel()

    def frame_jacobian(self, q, frame):
        return np.asarray(self._get(frame)[1](q), float)

    def frame_bias(self, q, v, frame):
        return np.asarray(self._get(frame)[2](q, v), float).ravel()

    def energy(self, q, v):
        """Kinetic plus potential energy (J), the potential zero at y = 0."""
        l, h = self.values["l"], self.values["h"]
        phi = np.cumsum(q)
        y = h + l * (np.concatenate([[0.0], np.cumsum(np.sin(phi))[:-1]]) + 0.5 * np.sin(phi))
        return 0.5 * v @ self.mass_matrix(q) @ v + self.mass * self.g * y.sum()


def _matrix(groups, M):
    """f(*groups) -> the matrix M (numpy), from mechsym.codegen's numpy printer."""
    f = VectorFunction(groups, list(M))
    return lambda *values: f(*values).reshape(M.shape)


def contacts(model=None, plane=None):
    """HardContacts at the link ends A, B, C against the ground y = 0."""
    from mechsym.contact.hard import HardContacts, Plane

    model = Chain3Tree() if model is None else model
    return HardContacts(model, {n: n for n in FRAMES}, Plane(**GROUND) if plane is None else plane)
