"""Forward simulation of a mechanism with any number of coordinates, with user loads and extra states.

The equations of motion are the reduced (Lagrange, virtual-power) form in the generalised coordinates:

    J^T M J thetadd = tau + J^T (Q + Q_user - M a0),     qdd = J thetadd + a0,

where J = dq/dtheta and a0 = -Phi_q^-1 gamma(q, qd) come from the kinematics (warm-started Newton at
every call). `load(t, q, qd, s)` adds generalised forces on the absolute coordinates (for example contact
forces mapped by J_point^T f) and returns the rate of extra states s that ride along in the ODE (for
example contact deflections). scipy's solve_ivp integrates; events are solve_ivp event functions of
(t, y) with y = [theta, thetad, s].
"""
from __future__ import annotations

import numpy as np

from mechsym.dynamics import run_options
from mechsym.errors import InputError
from mechsym.kinematics import CHORD_TOL, MAX_ITER, SUSPECT, TOL
from mechsym.results import Table


class ConfigurationTracker:
    """Solves the configuration at successive coordinate values, each from the previous solution.

    One state at a time, with as few evaluations as the exactness allows: the prediction is the
    second-order Taylor step from the previous configuration with its stored factorisation, Newton is the
    batched solver's rule (full steps until one is below CHORD_TOL, then one chord step), and the one
    factorisation at the solution serves both J = dq/dtheta and the caller's solves (`factor`). The C
    backend factorises with its sparse elimination, numpy with LAPACK's dense LU."""

    def __init__(self, solver, theta0, q0=None):
        """q0: coordinates near the configuration at theta0 (handed over, e.g. from another build of the
        mechanism), corrected by Newton (Solver.correct) instead of the continuation from the declared
        assembly."""
        self.solver = solver
        self.theta = np.atleast_1d(np.asarray(theta0, float))
        self.q = solver.sweep(self.theta[None]).q[0] if q0 is None else solver.correct(self.theta, q0)
        self.factor = solver.f.factor(self.q, solver.params)
        self.jq = self.factor.solve(solver.f.E[None])[0]

    def at(self, theta):
        """q, the factorisation of Phi_q and J at theta (k,)."""
        s = self.solver
        f, p = s.f, s.params
        th = np.atleast_1d(np.asarray(theta, float))
        v = self.jq @ (th - self.theta)
        q = self.q + v + 0.5 * self.factor.solve(-f.gamma(self.q, v, p)[None])[0]
        q = self._newton(q, th)
        if q is None:                         # a poor prediction: the batched solver from the last solution
            q, ok = s.newton(self.q[None], th[None])
            if not ok[0]:
                raise InputError(s._describe_failure(th, f.phi(q[0], th, p)))
            q = q[0]
        fac = f.factor(q, p)
        with np.errstate(all="ignore"):
            jq = fac.solve(f.E[None])[0]
        size = np.abs(jq).max()
        if not size <= SUSPECT:               # non-finite or large: a dead point is named there
            s.check_dead_points(q[None], th[None], jq[None])
        self.q, self.theta, self.factor, self.jq = q, th, fac, jq
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


def simulate(system, theta0, thetad0, t_end, dt=None, rtol=1e-9, atol=None, params=None, forces=None,
             load=None, state0=(), state_names=(), events=(), method="DOP853") -> Table:
    """Integrate the mechanism from (theta0, thetad0) to t_end.

    forces: the coordinate forces, a dict name -> constant or callable f(t, theta, thetad) (missing
    names are zero). load: callable(t, q, qd, s) -> (Q (n,), sdot) adding generalised forces on the
    absolute coordinates and the rates of the extra states s (initial values state0). The result is on
    the uniform grid 0..t_end (step dt) from the dense output, with columns t, each coordinate, its rate
    NAMEd, and the extra states; table.solution is solve_ivp's result.
    """
    from scipy.integrate import solve_ivp

    names = system.coordinate_names
    k = len(names)
    theta0 = np.atleast_1d(np.asarray(theta0, float))
    thetad0 = np.atleast_1d(np.asarray(thetad0, float))
    state0 = np.atleast_1d(np.asarray(state0, float))
    if theta0.shape != (k,) or thetad0.shape != (k,):
        raise InputError(f"expected {k} coordinate value(s) and rate(s), got {theta0.shape} and {thetad0.shape}")
    for name, v in (("theta0", theta0), ("thetad0", thetad0), ("state0", state0), ("t_end", [t_end])):
        if not np.all(np.isfinite(v)):
            raise InputError(f"{name} must be finite, got {v}")
    dt, atol = run_options(t_end, dt, rtol, atol)
    ns = len(state0)
    rhs = EquationsOfMotion(system, theta0, params, forces, load, ns).rhs

    y0 = np.concatenate([theta0, thetad0, state0])
    sol = solve_ivp(rhs, (0.0, t_end), y0, method=method, rtol=rtol, atol=atol, dense_output=True,
                    events=list(events) or None)
    if sol.status < 0:
        raise InputError(f"mechanism '{system.mechanism.name}': integration failed at t = {sol.t[-1]:.6g}: {sol.message}")
    grid = np.arange(0.0, sol.t[-1] + 0.5 * dt, dt)
    grid[-1] = min(grid[-1], sol.t[-1])
    y = sol.sol(grid)
    cols = {"t": grid}
    cols.update({n: y[i] for i, n in enumerate(names)})
    cols.update({f"{n}d": y[k + i] for i, n in enumerate(names)})
    labels = list(state_names) or [f"s{i}" for i in range(ns)]
    cols.update({n: y[2 * k + i] for i, n in enumerate(labels)})
    table = Table(cols, {"t": "s"}, f"{system.mechanism.name}: simulation")
    table.solution = sol
    return table


class CTracker:
    """ConfigurationTracker's job in one call of the C backend's ms_track per state: Newton from the
    first-order prediction off the previous solution, J, the acceleration offset a0, the applied forces
    and the factorisation of Phi_q (`factor`, for the caller's solves). A state where C does not converge
    goes through ConfigurationTracker, which names the failure."""

    def __init__(self, solver, library, theta0, q0=None):
        from mechsym.kinematics import STEP_TOL

        self.solver, self.fallback = solver, ConfigurationTracker(solver, theta0, q0)
        self.theta, self.q, self.jq = self.fallback.theta, self.fallback.q, self.fallback.jq
        self.track = library.tracker(solver.params, solver.col_scale, STEP_TOL)
        self.factor = self.fallback.factor

    def state(self, theta, thetad):
        """q, J, a0 and the applied forces at (theta, thetad)."""
        th = np.atleast_1d(np.asarray(theta, float))
        status, q, jq, a0, app, fac = self.track(self.q + self.jq @ (th - self.theta), th, thetad)
        if status or not np.abs(jq).max() <= SUSPECT:        # let the numpy route name the reason
            self.fallback.q, self.fallback.theta = self.q, self.theta
            self.fallback.factor = self.solver.f.factor(self.q, self.solver.params)
            self.fallback.jq = self.jq
            q, fac, jq = self.fallback.at(th)
            a0 = fac.solve(-self.solver.f.gamma(q, jq @ thetad, self.solver.params)[None])[0]
            app = None
        self.q, self.theta, self.jq, self.factor = q, th, jq, fac
        return q, jq, a0, app


class EquationsOfMotion:
    """The ODE that `simulate` integrates, for callers that drive the integrator themselves (event runners):
    `rhs(t, y)` with y = [theta, thetad, s] (k coordinates, k rates, `n_states` extra states) and
    `coordinates(y)` -> (q, qd), the absolute coordinates and their rates at a state. Arguments as in
    `simulate`; the configuration is tracked from `theta0` (warm-started Newton), where it is found by the
    continuation from the declared assembly or, given q0 (coordinates near it, say the configuration
    another build of the mechanism hands over), by Newton from q0."""

    def __init__(self, system, theta0, params=None, forces=None, load=None, n_states=0, q0=None):
        self.system, self.load, self.n_states = system, load, int(n_states)
        self.k = len(system.coordinate_names)
        self.solver = system.solver(params)
        library = system.library
        if library is not None and library.meta["square"]:
            self.tracker = CTracker(self.solver, library, theta0, q0)
        else:
            self.tracker = ConfigurationTracker(self.solver, theta0, q0)
        self.mass = system.mass(self.solver.params)
        self.coord_forces = _force_functions(system, forces or {})

    def _state(self, th, thd):
        """q, J, a0 and the applied forces (q'' = J thetadd + a0) at coordinates th with rates thd."""
        if isinstance(self.tracker, CTracker):
            q, jq, a0, app = self.tracker.state(th, thd)
        else:
            q, fac, jq = self.tracker.at(th)
            a0, app = fac.solve(-self.system.gamma(q, jq @ thd, self.solver.params)[None])[0], None
        return q, jq, a0, self.system.applied(q, self.solver.params) if app is None else app

    def coordinates(self, y):
        """(q, q') of the absolute coordinates at a state y = (theta, theta', ...)."""
        k = self.k
        q, jq, _, _ = self._state(y[:k], y[k:2 * k])
        return q, jq @ y[k:2 * k]

    def rhs(self, t, y):
        """The state's time derivative at (t, y) (solve_ivp's right-hand side)."""
        k = self.k
        th, thd, s = y[:k], y[k:2 * k], y[2 * k:]
        q, jq, a0, applied = self._state(th, thd)
        qd = jq @ thd
        gen = applied - self.mass * a0
        sdot = np.zeros(0)
        if self.load is not None:
            extra, sdot = self.load(t, q, qd, s)
            gen = gen + extra
        tau = np.array([f(t, th, thd) for f in self.coord_forces])
        big_m = jq.T @ (self.mass[:, None] * jq)
        thdd = np.linalg.solve(big_m, tau + jq.T @ gen)
        return np.concatenate([thd, thdd, np.asarray(sdot, float).reshape(self.n_states)])


def _force_functions(system, forces):
    known = {c.force for c in system.mechanism.coordinates if c.force}
    unknown = set(forces) - known
    if unknown:
        raise InputError(f"unknown coordinate force(s) {sorted(unknown)} (known: {sorted(known)})")
    out = []
    for c in system.mechanism.coordinates:
        f = forces.get(c.force, 0.0) if c.force else 0.0
        out.append(f if callable(f) else (lambda t, th, thd, _v=float(f): _v))
    return out
