"""The motion of the N-four-bar chain (IFToMM benchmark A02) by quadrature, independent of mechsym.

On the parallelogram branch every crank keeps the angle theta of crank0 and every coupler translates, its
points moving as the cranks' tips. With uniform bars of mass m and length l (inertia m l^2 / 3 about a
crank's pivot), N + 1 cranks and N couplers:

    kinetic energy   T = J omega^2 / 2,    J = m l^2 ((N + 1) / 3 + N)
    potential energy V = K sin(theta),     K = m g l ((N + 1) / 2 + N)

so the motion is one pendulum-like equation J theta'' = -K cos(theta), whose energy integral gives
omega(theta)^2 = omega0^2 + 2 K (sin theta0 - sin theta) / J and the time as t(theta) = int dtheta / |omega|.
Where omega never vanishes (the benchmark's start: every crank vertical, B0 at 1 m/s, which turns the
cranks for ever) theta(t) follows from one period and root finding on t(theta).
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq


class ChainMotion:
    """theta(t), omega(t) of the chain of n_loops parallelograms from (theta0, omega0), for a motion that
    turns the cranks without stopping (omega0 != 0 and enough energy to pass over the top)."""

    def __init__(self, n_loops, theta0=np.pi / 2, omega0=-1.0, m=1.0, length=1.0, g=9.81):
        self.J = m * length**2 * ((n_loops + 1) / 3 + n_loops)
        self.K = m * g * length * ((n_loops + 1) / 2 + n_loops)
        self.theta0, self.omega0 = float(theta0), float(omega0)
        self.direction = np.sign(omega0)
        if self.direction == 0 or self.omega0**2 + 2 * self.K * (np.sin(theta0) - 1) / self.J <= 0:
            raise ValueError("the quadrature reference covers full turns only")
        self.period = self._time(theta0, theta0 + 2 * np.pi * self.direction)

    def omega(self, theta):
        """The speed on the energy integral, with the sign of the motion."""
        return self.direction * np.sqrt(self.omega0**2 + 2 * self.K * (np.sin(self.theta0) - np.sin(theta)) / self.J)

    def energy(self, theta, omega):
        return 0.5 * self.J * np.asarray(omega) ** 2 + self.K * np.sin(theta)

    def _time(self, a, b):
        """The time to turn from a to b (b beyond a in the direction of motion), in pieces of at most pi/4."""
        edges = np.linspace(a, b, max(2, int(np.ceil(abs(b - a) / (np.pi / 4))) + 1))
        rate = lambda x: 1.0 / abs(self.omega(x))
        return sum(quad(rate, lo, hi, epsabs=0.0, epsrel=1e-13, limit=200)[0] * self.direction
                   for lo, hi in zip(edges[:-1], edges[1:]))

    def theta(self, t):
        """theta at the times t (array), to about 1e-13 rad."""
        t = np.atleast_1d(np.asarray(t, float))
        out = np.empty_like(t)
        for i, ti in enumerate(t):
            turns, rest = divmod(ti, self.period)
            start = self.theta0 + 2 * np.pi * self.direction * turns
            lo, hi = sorted((start, start + 2 * np.pi * self.direction))
            out[i] = brentq(lambda th: self._time(start, th) - rest, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps)
        return out
