"""Bridging a bifurcation: where the branch followed crosses another, the continuation steps over the point.

Near a bifurcation (Phi_q singular, the branch smooth) q' and q'' from Phi_q lose their accuracy (0/0) and
Newton barely converges, so the continuation (mechsym.planar.continuation) bridges the point: where the
smallest singular value of Phi_q (columns in their scales; `Assembly.sigma`) falls below 1/BRIDGE_DROP of
its value where the path started, from the last state above it, by the degree-7 Hermite polynomial of a
`Bridge`, which must close the loops inside to BRIDGE_RES of the mechanism's size (both from
mechsym.codegen.constants, shared with runtime/ms_continuation.h's bridge_try). Where no bridge holds, the
stop is named: a limit position, a dead point or a change of branch (`stopped`).
"""
from __future__ import annotations

import numpy as np

from mechsym.codegen.constants import BRIDGE_DROP, BRIDGE_RES
from mechsym.core.errors import AssemblyError
from mechsym.planar.kinematics import TOL


class Bridge:
    """The branch across a bifurcation of a one-coordinate mechanism: between two solved states (theta0,
    theta1) on either side of the singular point, the degree-7 Hermite polynomial of q and its first three
    exact derivatives at both ends (the coefficients of ms_continuation.h's bridge_try). Its error is about
    (|theta1 - theta0| / 2)^8 / 8! times the eighth derivative, where Phi_q would give q' and q'' with the
    rounding error divided by the cube of the distance to the point."""

    # c4..c7 from the end conditions at s = 1 (the inverse of the Hermite system)
    _INV = np.array([[35, -15, 2.5, -1 / 6], [-84, 39, -7, 0.5], [70, -34, 6.5, -0.5], [-20, 10, -2, 1 / 6]])

    def __init__(self, theta0, theta1, start, end):
        """start, end: q and its first three derivatives at theta0 and theta1, each (n,)."""
        self.theta = (float(theta0), float(theta1))
        h = self.theta[1] - self.theta[0]
        q0, d1, d2, d3 = start
        c = [q0, h * d1, 0.5 * h * h * d2, h**3 * d3 / 6.0]
        q1, e1, e2, e3 = end
        rest = np.stack([q1 - (c[0] + c[1] + c[2] + c[3]), h * e1 - (c[1] + 2 * c[2] + 3 * c[3]),
                         h * h * e2 - (2 * c[2] + 6 * c[3]), h**3 * e3 - 6 * c[3]])
        self.c = np.vstack([np.stack(c), self._INV @ rest])  # (8, n)

    def holds(self, theta):
        """Whether each theta (N,) lies on the bridge (its ends included)."""
        theta = np.asarray(theta, float)
        return (theta - self.theta[0]) * (theta - self.theta[1]) <= 0.0

    def state(self, theta):
        """q, dq/dtheta, d2q/dtheta2 at the values theta (N,) on the bridge: (N, n) each."""
        h = self.theta[1] - self.theta[0]
        x = (np.atleast_1d(np.asarray(theta, float)) - self.theta[0]) / h
        k = np.arange(8)
        powers = x[:, None] ** k  # (N, 8)
        d1 = (k[1:] * powers[:, :-1]) @ self.c[1:] / h
        d2 = (k[2:] * (k[2:] - 1) * powers[:, :-2]) @ self.c[2:] / h**2
        return powers @ self.c, d1, d2


class Bridging:
    """The Solver's methods that bridge a bifurcation and name where a path stops."""

    def _bridging(self):
        """Whether the continuation bridges bifurcations: one coordinate, as many rows as coordinates."""
        return len(self.con.theta) == 1 and len(self.con.rows) == self.con.n

    def _bridge_at(self, theta):
        """The known bridge that holds theta (a float), or None."""
        return next((b for b in self.bridges if b.holds(theta)), None)

    def bridge_between(self, theta_a, theta_b):
        """Whether a known bridge meets the span from theta_a to theta_b (floats)."""
        lo, hi = min(theta_a, theta_b), max(theta_a, theta_b)
        return any(min(b.theta) <= hi and max(b.theta) >= lo for b in self.bridges)

    def _bridge_samples(self, q, theta, bridged, before_theta, before_q, step):
        """Samples near a singular point that the nodes stepped over (the nodes on either side of it well
        conditioned): each is continued from the node before it, as the C route steps from sample to sample,
        which bridges the point if it is a bifurcation. Returns the samples now on a bridge."""
        limit = self._path_sigma / BRIDGE_DROP
        for i in np.flatnonzero(~bridged & (self.sigma(q) < limit)):
            if not self._bridged(theta[i:i + 1])[0]:
                self._continue(np.vstack([before_theta[i], theta[i]]), before_q[i], step)
        return self._bridged(theta)

    def _bridged(self, theta):
        """Which of the values theta (N, k) lie on a known bridge."""
        if not self.bridges or theta.shape[1] != 1:
            return np.zeros(len(theta), bool)
        return np.any([b.holds(theta[:, 0]) for b in self.bridges], axis=0)

    def _third(self, q, theta):
        """q with its first three exact derivatives along the coordinate at solved q (n,)."""
        fac = self.f.factor(q, self.params)
        d1 = fac.solve(self.f.E[None])[0][:, 0]
        d2 = fac.solve(-self.f.gamma(q, d1, self.params)[None])[0]
        d3 = fac.solve(-self.f.functions.gamma3(q, d1, d2, self.params)[None])[0]
        return q, d1, d2, d3

    def _across(self, start, theta0, theta, sign):
        """The state at theta from `start` (q and its derivatives at theta0) by the third-order prediction and
        Newton, within its largest step of the prediction and on the branch signs `sign`; None otherwise."""
        q0, d1, d2, d3 = start
        h = theta - theta0
        pred = q0 + h * (d1 + h * (0.5 * d2 + h * d3 / 6.0))
        q, ok = self.newton(pred[None], np.array([[theta]]))
        if not (ok[0] and np.all(np.abs(q[0] - pred) <= self.max_step)
                and np.array_equal(self.signature(q)[0], sign)):
            return None
        return self._third(q[0], theta)

    def _try_bridge(self, theta_a, q_a, theta_b, s_a, s_b, sign):
        """A bridge from the solved q_a at theta_a over the singular point that the estimates s_a and s_b
        (at theta_b, nearer it) place ahead: from hmax before the point (or theta_a, if nearer) to as far
        beyond, kept (in `bridges`) if Newton reaches both ends on the branch, the far one is as well
        conditioned as the near one and the polynomial closes the loops inside. None if the point is more
        than 2 hmax ahead (a later step tries again) or no bridge holds (the span is then skipped)."""
        zero = theta_b + (theta_b - theta_a) * s_b / (s_a - s_b) if s_a > s_b else theta_b
        hmax = self.step[0]
        if not abs(zero - theta_a) <= 2 * hmax or zero == theta_a:
            return None
        t0 = zero - np.copysign(hmax, zero - theta_a) if abs(zero - theta_a) > hmax else theta_a
        t1 = 2 * zero - t0
        self._skip.append((theta_a, t1))
        start = self._third(q_a, theta_a)
        if t0 != theta_a:
            start = self._across(start, theta_a, t0, sign)
            if start is None:
                return None
            s_a = self.sigma(start[0][None])[0]
        end = self._across(start, t0, t1, sign)
        if end is None or not self.sigma(end[0][None])[0] >= 0.5 * s_a:
            return None
        bridge = Bridge(t0, t1, start, end)
        inside = t0 + 0.25 * np.arange(1, 4) * (t1 - t0)
        r = self.f.phi(bridge.state(inside)[0].T, inside[None], self.params)
        if not np.all(np.abs(r) <= BRIDGE_RES * max(self.scale, 1.0)):
            return None
        self.bridges.append(bridge)
        return bridge

    def _bridge_step(self, theta_a, q_a, theta_b, q_b, ok):
        """The bridge that the step from the solved q_a at theta_a to theta_b (q_b there if `ok`) enters,
        or None: tried when the step leaves the well-conditioned region (or fails from it)."""
        if not self._bridging():
            return None
        limit = self._path_sigma / BRIDGE_DROP
        s_a, s_b = self.sigma(np.stack([q_a, q_b]))
        s_b = s_b if ok else 0.0
        if not s_a >= limit or (ok and not s_b < limit):
            return None
        if any((theta_a - lo) * (theta_a - hi) < 0 for lo, hi in self._skip):
            return None
        return self._try_bridge(theta_a, q_a, theta_b, s_a, s_b, self.signature(q_a[None])[0])

    def stopped(self, theta_a, q_a, theta_b, q_b, converged):
        """Raise why the continuation stops at the step floor, from the configuration q_a solved at theta_a to
        theta_b (Newton's result there q_b, `converged` or not): where Newton converged on another branch, a
        dead point at theta_b (SingularError) or the branch change named there; where it failed, the limit
        position (`_limit_reached`). A step that starts at a dead point (a sample on it) names it there. Both
        backends' continuations end here."""
        theta_a, theta_b = np.atleast_1d(theta_a), np.atleast_1d(theta_b)
        self.derivatives(np.asarray(q_a)[None], theta_a[None], second=False)
        if converged:
            self.derivatives(np.asarray(q_b)[None], theta_b[None], second=False)  # names a dead point at theta_b
            raise AssemblyError(self._describe_branch_change(theta_b))
        self._limit_reached(theta_a, q_a, theta_b, q_b)

    def _limit_reached(self, theta_a, q_a, theta_b, q_b):
        """Raise why Newton fails at theta_b within the step floor of the configuration q_a solved at
        theta_a: a dead point at theta_b itself (SingularError) where the loops close there, else the loop
        that does not close, with the limit position at theta_a (the end of the branch, det Phi_q -> 0)."""
        r = self.f.phi(q_b, theta_b, self.params)
        if np.all(np.abs(r) <= 1e3 * TOL * self.row_scale):
            self.derivatives(q_b[None], theta_b[None], second=False)
        jac = self.scaled_jac(self.f.jac(q_a, self.params))
        names = ", ".join(f"{c.name}={t:.6g}" for c, t in zip(self.con.mechanism.coordinates, theta_a))
        raise AssemblyError(f"{self._describe_failure(theta_b, r)}: the mechanism reaches a dead point at {names} "
                            f"(a limit position, condition number of the constraint Jacobian "
                            f"{np.linalg.cond(jac):.3g} there) and cannot be driven past it")
