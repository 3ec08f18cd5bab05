"""The configuration followed along a run, one state at a time: one interface, one factory.

An integrator's right-hand side needs the configuration at each stage's trial coordinates. `tracker`
gives the object that follows it, and every tracker answers

    state(theta, thetad) -> (q, J, a0, applied or None)   q'' = J thetadd + a0, J = dq/dtheta
    rows(theta, thetad, rows) -> (q, J, base, coef) or None
                                  the multipliers of `rows` of Phi_q as base + coef thetadd, in one call
                                  of the generated code; None where only `state` answers
    theta, q, jq, factor          the last solved state (factor: Phi_q's factorisation there, or None)

`ConfigurationTracker` solves each state with the kinematics' own Newton steps and continuation (it
bridges a bifurcation); `CompiledTracker` with the generated one-state step of the system's backend
(System.state_step: the C library's ms_track, or the numpy backend's rendering on floats,
mechsym.codegen.scalar_python), handing a state its step cannot settle to a ConfigurationTracker. The
caller never asks which it has.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from mechsym.codegen.constants import BRIDGE_DROP, CHORD_TOL, MAX_WALK
from mechsym.core.errors import AssemblyError, SingularError
from mechsym.core.runner import StepRejected
from mechsym.planar.kinematics import MAX_ITER, STEP_TOL, SUSPECT, TOL

# A Newton correction larger than this (relative to the coordinate scales) is far beyond any prediction
# error along a branch: the branch is then checked (Solver.signature) before the state is accepted.
FAR = 1e-2


# The scalar tracker's states estimate Phi_q's conditioning (ConfigurationTracker.clear) at most every RECHECK
# continuation steps while it is well above the bridging limit.
RECHECK = 0.5


# Solved states kept to start from: a trial far from the last one (a rejected step's stages may have led
# the tracker far away) starts from the nearest of these.
RECENT = 16


class ConfigurationTracker:
    """Solves the configuration at successive coordinate values, each from the previous solution.

    One state at a time, with as few evaluations as the exactness allows: the prediction is the
    second-order Taylor step from the previous configuration with its stored factorisation, Newton is the
    batched solver's rule (full steps until one is below CHORD_TOL, then one chord step), and the one
    factorisation at the solution serves both J = dq/dtheta and the caller's solves (`factor`). The C
    backend factorises with its sparse elimination, numpy with LAPACK's dense LU.

    A state Newton cannot reach at once is approached in continuation steps (Solver.step), a step that
    fails or leaves the branch retried in halves as the sweeps do (Solver._continue); a state that cannot
    be reached, lies on another branch or at a dead point raises StepRejected and leaves the tracker at its
    last solved state.

    One coordinate (`bridging`): a state where Phi_q is far worse conditioned than at the start (Solver.sigma
    below 1/BRIDGE_DROP of its start value), or whose step meets a known bridge, is reached by the solver's
    continuation, which bridges a bifurcation (mechsym.planar.bridging.Bridge); a state on a bridge is the polynomial's,
    its second derivative in place of Phi_q's solve, and is not kept as a state to start from."""

    floats = None  # no step on floats: every state is solved with numpy

    def __init__(self, solver, theta0, q0=None, bridging=True):
        """q0: coordinates near the configuration at theta0 (handed over, e.g. from another build of the
        mechanism), corrected by Newton (Solver.correct) instead of the continuation from the declared
        assembly."""
        self.solver = solver
        self.theta = np.atleast_1d(np.asarray(theta0, float))
        self.q = solver.sweep(self.theta[None]).q[0] if q0 is None else solver.correct(self.theta, q0)
        self.factor = solver.f.factor(self.q, solver.params)
        self.jq = self.factor.solve(solver.f.E[None])[0]
        self.sign = solver.signature(self.q[None])[0]
        self._recent = deque([(self.theta, self.q, self.factor, self.jq)], maxlen=RECENT)
        self.sigma_start = solver.sigma(self.q[None], self.factor)[0] if bridging and solver._bridging() else None
        self._checked = (self.theta[0], self.sigma_start or 0.0)  # clear's last estimate: theta, sigma

    def at(self, theta):
        """q, the factorisation of Phi_q and J at theta (k,); StepRejected if it cannot be reached or lies
        on a bridge (where `state` answers)."""
        q, fac, jq, d2 = self._reach(theta)
        if d2 is not None:
            mech = self.solver.con.mechanism
            raise StepRejected(f"mechanism '{mech.name}': {mech.coordinates[0].name} = {np.ravel(theta)[0]:.6g} "
                               "lies on the bridge across a bifurcation, where Phi_q is singular")
        return q, fac, jq

    def clear(self, theta_a, theta_b, q=None, fac=None):
        """Whether the state q solved at theta_b (floats) from theta_a needs no bridge: not bridging, or no
        known bridge meets the step and Phi_q at q is as well conditioned as BRIDGE_DROP allows. Without its
        factorisation (the scalar tracker's states) q's conditioning is estimated again only RECHECK
        continuation steps from the last estimate, or where that was within 4 times the limit: Phi_q would
        have to lose 3/4 of its conditioning over that distance to be missed."""
        s = self.solver
        if self.sigma_start is None:
            return True
        if s.bridge_between(theta_a, theta_b):
            return False
        limit = self.sigma_start / BRIDGE_DROP
        if q is None or (fac is None and abs(theta_b - self._checked[0]) <= RECHECK * s.step[0]
                         and self._checked[1] >= 4 * limit):
            return True
        sigma = s.sigma(np.asarray(q, float)[None], fac)[0]
        if fac is None:
            self._checked = (theta_b, sigma)
        return sigma >= limit

    def _reach(self, theta):
        """q, the factorisation of Phi_q, J and None at theta (k,); on a bridge q, None, J and q''."""
        th = np.atleast_1d(np.asarray(theta, float))
        s = self.solver
        if not np.all(np.isfinite(th)):  # a stage after a rejected one
            raise StepRejected(f"mechanism '{s.con.mechanism.name}': a non-finite coordinate value {th}")
        if np.max(np.abs(th - self.theta) / s.step) > 1.0:  # start from the nearest recent state
            self.theta, self.q, self.factor, self.jq = self._nearest(th)
        if not self.clear(self.theta[0], th[0]):
            return self._refined(self.theta, self.q, th)
        pred = self._predict(self.q, self.theta, self.factor, self.jq, th)
        q = self._newton(pred, th)
        close = q is not None and np.max(np.abs(q - pred) / s.col_scale) <= FAR
        try:
            if q is not None:
                return self._commit(th, q, check_branch=not close) + (None,)
        except _NearBifurcation:
            return self._refined(self.theta, self.q, th)
        except StepRejected:
            pass
        return self._walk(th)

    def _nearest(self, th):
        """The solved state nearest th: the current one or a recent one. For a periodic coordinate
        (Solver.period: a crank that turns fully) each is shifted by the whole periods that bring it nearest
        when none lies within reach, which is exact (q(theta + kT) = q(theta) + k shift, with the same Phi_q and
        J): a trial state far from every solved one after rejected stages wandered off is then reached from at
        most half a period away."""
        s = self.solver
        states = [(self.theta, self.q, self.factor, self.jq), *self._recent]

        def distance(state, shift=0.0):
            return np.max(np.abs(th - state[0] - shift) / s.step)

        near = min(states, key=distance)
        period = s.period() if len(th) == 1 and distance(near) > MAX_WALK else None
        if period is None:
            return near
        turns = [np.round((th[0] - state[0][0]) / period[0]) for state in states]
        i = min(range(len(states)), key=lambda i: distance(states[i], turns[i] * period[0]))
        theta, q, fac, jq = states[i]
        return theta + turns[i] * period[0], q + turns[i] * period[1], fac, jq

    def state(self, theta, thetad):
        """q, J, the acceleration offset a0 = -Phi_q^-1 gamma and None (the applied forces, which the C
        tracker returns) at (theta, thetad). StepRejected as `at`."""
        q, fac, jq, d2 = self._reach(theta)
        thetad = np.asarray(thetad, float)
        if d2 is not None:
            return q, jq, d2 * thetad[0] ** 2, None
        s = self.solver
        return q, jq, fac.solve(-s.f.gamma(q, jq @ thetad, s.params)[None])[0], None

    def rows(self, theta, thetad, rows):
        """None: no one-call route here (`state` answers)."""
        return None

    def accept(self, theta, q):
        """Make (theta, q) the tracker's state, q being solved there, if it lies on the tracked branch
        and is no dead point; else StepRejected with the state unchanged. Returns q, factor, J."""
        return self._commit(np.atleast_1d(np.asarray(theta, float)), np.asarray(q, float), check_branch=True,
                            check_sigma=False)

    def _predict(self, q, theta, fac, jq, th):
        v = jq @ (th - theta)
        return q + v + 0.5 * fac.solve(-self.solver.f.gamma(q, v, self.solver.params)[None])[0]

    def _walk(self, th):
        """From the last solved state to th in continuation steps, each checked; committed at the end."""
        s = self.solver
        count = int(np.ceil(np.max(np.abs(th - self.theta) / s.step)))
        if not 0 < count <= MAX_WALK:
            names = ", ".join(f"{c.name} = {v:.6g}" for c, v in zip(s.con.mechanism.coordinates, th))
            raise StepRejected(f"mechanism '{s.con.mechanism.name}': the trial state {names} lies more than "
                               f"{MAX_WALK} continuation steps from the last solved one")
        q, theta, fac, jq = self.q, self.theta, self.factor, self.jq
        for i in range(1, count + 1):
            target = self.theta + (th - self.theta) * i / count
            q_new = self._newton(self._predict(q, theta, fac, jq, target), target)
            if q_new is None or not np.array_equal(s.signature(q_new[None])[0], self.sign):
                return self._refined(theta, q, th)
            try:
                q, theta, fac, jq = (q_new, target) + self._derivatives(q_new, target, check_sigma=True)
            except _NearBifurcation:
                return self._refined(theta, q, th)
        return self._commit(th, q, check_branch=False, solved=(fac, jq)) + (None,)

    def _refined(self, theta, q, th):
        """From the solved (theta, q) to th by the solver's continuation, which retries a step that Newton
        cannot complete or that leaves the branch in halved steps (Solver._continue); where it names a
        limit position, a dead point or a change of branch, StepRejected with its message. Bridging, it
        bridges a bifurcation on the way: th on the bridge gets the polynomial's q, None, J and q''."""
        s = self.solver
        try:
            q = s._continue(np.vstack([theta, th]), q, s.step, sigma=self.sigma_start)[1][-1]
        except (AssemblyError, SingularError) as exc:
            raise StepRejected(str(exc)) from None
        bridge = s._bridge_at(th[0]) if self.sigma_start is not None else None
        if bridge is not None:
            q, d1, d2 = bridge.state(th)
            return q[0], None, d1.T, d2[0]
        return self._commit(th, q, check_branch=False, check_sigma=False) + (None,)

    def _derivatives(self, q, th, check_sigma=False):
        """Phi_q's factorisation at q and J; check_sigma: _NearBifurcation where a bridge may be needed."""
        s = self.solver
        fac = s.f.factor(q, s.params)
        if check_sigma and not self.clear(th[0], th[0], q, fac):
            raise _NearBifurcation
        with np.errstate(all="ignore"):
            jq = fac.solve(s.f.E[None])[0]
        if not s.coefficient_size(jq[None])[0] <= SUSPECT:  # non-finite or large: a dead point is named there
            try:
                s.check_dead_points(q[None], th[None], jq[None])
            except SingularError as exc:
                raise StepRejected(str(exc)) from None
        return fac, jq

    def _commit(self, th, q, check_branch, solved=None, check_sigma=True):
        s = self.solver
        if check_branch and not np.array_equal(s.signature(q[None])[0], self.sign):
            raise StepRejected(s._describe_branch_change(th))
        fac, jq = solved if solved is not None else self._derivatives(q, th, check_sigma)
        self.q, self.theta, self.factor, self.jq = q, th, fac, jq
        self._recent.append((th, q, fac, jq))
        return q, fac, jq

    def _newton(self, q, th):
        """Solver.newton's steps for one state, or None if they do not converge."""
        s = self.solver
        f, p = s.f, s.params
        for _ in range(MAX_ITER):
            fac = f.factor(q, p)
            with np.errstate(all="ignore"):
                step = fac.solve(f.phi(q, th, p)[None])[0]
            if not np.all(np.isfinite(step)):
                return None
            q = q - np.clip(step, -s.max_step, s.max_step)
            if np.max(np.abs(step) / s.col_scale) <= CHORD_TOL:
                r = f.phi(q, th, p)
                q = q - fac.solve(r[None])[0]
                return q if np.all(np.abs(r) <= TOL * s.row_scale) else None
        return None


class _NearBifurcation(Exception):
    """A state solved directly where Phi_q is nearly singular: the continuation's bridge may be needed."""


class CompiledTracker:
    """ConfigurationTracker's job in one call of a generated one-state step per state (`step`: the C
    library's ms_track, or the numpy backend's rendering of it on floats, ScalarTracker): Newton from the
    first-order prediction off the previous solution, J, the acceleration offset a0, the applied forces
    and the factorisation of Phi_q (`factor`, for the caller's solves). A state where C does not converge,
    that lies far from its prediction on another branch, or where J is large is walked to in C (ms_walk:
    advance's checked continuation steps, halved as needed) from the nearest recently solved state, shifted
    by whole crank periods as ConfigurationTracker._nearest does; a walk that stops is StepRejected, named
    as the continuation names it. A mechanism with several coordinates (advance is one-coordinate), and
    the numpy backend's rendering (scalar_python.ScalarTracker), hand such a state to ConfigurationTracker
    instead."""

    floats = None  # the step on floats where it runs on them (the numpy backend's; set by `tracker`)

    def __init__(self, solver, library, theta0, q0=None):
        self.solver, self.fallback = solver, ConfigurationTracker(solver, theta0, q0)
        self.theta, self.q, self.jq = self.fallback.theta, self.fallback.q, self.fallback.jq
        self.track = library.tracker(solver.params, solver.col_scale, STEP_TOL)
        self.library, self._row_calls = library, {}
        self.factor = self.fallback.factor
        self.walk = library.walker(solver.params, solver.col_scale, STEP_TOL, solver.step[0]) \
            if len(self.theta) == 1 else None   # (advance is one-coordinate)
        self._recent = deque([(self.theta, self.q)], maxlen=RECENT)
        self._keep = self._recent.append
        self._inv_col = 1.0 / solver.col_scale
        self._rel_max = float(np.max(solver.coord_scale) / np.min(solver.col_scale))

    def state(self, theta, thetad):
        """q, J, a0 and the applied forces at (theta, thetad)."""
        s = self.solver
        th = np.atleast_1d(np.asarray(theta, float))
        pred = self.q + self.jq @ (th - self.theta)
        status, q, jq, a0, app, fac = self.track(pred, th, thetad)
        ok = not status and abs(jq).max() * self._rel_max <= SUSPECT  # (a bound of coefficient_size: cheap)
        if not status and not ok:
            ok = s.coefficient_size(jq[None])[0] <= SUSPECT
        moved = (q - pred) * self._inv_col
        if ok and max(moved.max(), -moved.min()) > FAR:
            ok = np.array_equal(s.signature(q[None])[0], self.fallback.sign)
        if not ok and self.walk is not None:                # C continues to it, or rejects it
            q, jq, a0, app, fac = self._walked(th, thetad)
        elif not ok or (self.walk is None and not self.fallback.clear(self.theta[0], th[0], q)):
            return self.continued(th, thetad)  # (the numpy route: it bridges a bifurcation too)
        self.q, self.theta, self.jq, self.factor = q, th, jq, fac
        self._keep((th, q))
        return q, jq, a0, app

    def continued(self, th, thetad):
        """The state at th (k,) by ConfigurationTracker from the last one, which continues to it (bridging a
        bifurcation on the way), rejects it or names the failure: the numpy backend's careful route."""
        s, fb = self.solver, self.fallback
        fb.q, fb.theta, fb.jq = self.q, self.theta, self.jq
        fb.factor = s.f.factor(self.q, s.params)
        q, jq, a0, app = fb.state(th, thetad)
        self.q, self.theta, self.jq, self.factor = q, th, jq, fb.factor if np.array_equal(fb.theta, th) else None
        self._keep((th, q))
        return q, jq, a0, app

    def _walked(self, th, thetad):
        """The state at th (one coordinate) by ms_walk from the nearest solved state: (q, J, a0, applied,
        factor), or StepRejected (a non-finite coordinate, a trial state more than MAX_WALK continuation steps
        from every solved one, a limit position, a dead point or a change of branch on the way), the tracker
        unchanged."""
        s = self.solver
        if not np.isfinite(th[0]):  # a stage after a rejected one
            raise StepRejected(f"mechanism '{s.con.mechanism.name}': a non-finite coordinate value {th}")
        theta0, q0 = self._nearest(th[0])
        if abs(th[0] - theta0) > MAX_WALK * s.step[0]:
            raise StepRejected(f"mechanism '{s.con.mechanism.name}': the trial state "
                               f"{s.con.mechanism.coordinates[0].name} = {th[0]:.6g} lies more than {MAX_WALK} "
                               f"continuation steps from the last solved one")
        status, q, jq, a0, app, fac, stop = self.walk(q0, theta0, th[0], thetad)
        try:
            if status and stop is None:
                raise AssemblyError(f"mechanism '{s.con.mechanism.name}': Newton does not settle the solved state "
                                    f"at {theta0:.6g} (status {status})")
            if status:
                s.stopped(stop.theta_a, stop.q_a, stop.theta_b, stop.q_b, stop.converged)
            if not s.coefficient_size(jq[None])[0] <= SUSPECT:  # non-finite or large: a dead point is named there
                s.check_dead_points(q[None], th[None], jq[None])
        except (AssemblyError, SingularError) as exc:
            raise StepRejected(str(exc)) from None
        return q, jq, a0, app, fac

    def _nearest(self, theta):
        """(theta, q) of the recently solved state nearest theta; shifted by the whole crank periods that
        bring it nearest (exact, Solver.period) when none lies within MAX_WALK continuation steps."""
        s = self.solver
        thetas = np.array([t[0] for t, _ in self._recent])
        i = int(np.argmin(np.abs(theta - thetas)))
        period = s.period() if abs(theta - thetas[i]) > MAX_WALK * s.step[0] else None
        if period is None:
            return thetas[i], self._recent[i][1]
        turns = np.round((theta - thetas) / period[0])
        i = int(np.argmin(np.abs(theta - thetas - turns * period[0])))
        return thetas[i] + turns[i] * period[0], self._recent[i][1] + turns[i] * period[1]

    def rows(self, theta, thetad, rows):
        """The state at (theta, thetad) in one call of the step's row entry (ms_track_rows), with the
        multipliers of `rows` of Phi_q as linear functions of the accelerations: (q, J, base (r,), coef (r,
        k)), lambda_rows = base + coef thetadd. None, the tracker unchanged, where the step has no row entry
        (the numpy backend's) or `state`'s careful route is needed (no convergence, a large J, a jump to
        check); `factor` is not kept (None) after this call."""
        s = self.solver
        key = tuple(rows)
        if key not in self._row_calls:
            self._row_calls[key] = self.library.track_rows(s.params, s.col_scale, STEP_TOL, key)
        if self._row_calls[key] is None:
            return None
        th = np.atleast_1d(np.asarray(theta, float))
        pred = self.q + self.jq @ (th - self.theta)
        status, q, jq, _, _, base, coef = self._row_calls[key](pred, th, thetad)
        if status or not (abs(jq).max() * self._rel_max <= SUSPECT or s.coefficient_size(jq[None])[0] <= SUSPECT):
            return None
        moved = (q - pred) * self._inv_col
        if max(moved.max(), -moved.min()) > FAR:
            return None
        self.q, self.theta, self.jq, self.factor = q, th, jq, None
        self._keep((th, q))
        return q, jq, base, coef


def tracker(system, solver, theta0, q0=None, careful=False, floats=False):
    """The one configuration tracker of a derived system, from theta0 (or from q0, coordinates near the
    configuration there): a CompiledTracker on the system's generated one-state step (System.state_step;
    `floats`: the caller runs on floats, and takes the numpy backend's rendering of it too) where it has
    one, else a ConfigurationTracker. careful=True: a ConfigurationTracker without bridging, whose `at`
    gives Phi_q's factorisation at every state (an implicit integrator's Jacobian needs it)."""
    step = None if careful else system.state_step(floats)
    if step is None:
        return ConfigurationTracker(solver, theta0, q0, bridging=not careful)
    found = CompiledTracker(solver, step, theta0, q0)
    found.floats = system.backend.route(compiled=lambda: None, python=lambda: found.track.raw)()
    return found
