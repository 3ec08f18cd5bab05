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

from mechsym.core.errors import InputError
from mechsym.core.results import RunResult
from mechsym.core.runner import integrate, result
from mechsym.core.timegrid import run_options
from mechsym.planar.loads import moving
from mechsym.planar.reduced import accelerations, reduced_terms
from mechsym.planar.tracking import tracker


def simulate(system, theta0, thetad0, t_end, dt=None, rtol=1e-9, atol=None, params=None, forces=None,
             load=None, state0=(), state_names=(), events=(), method="DOP853") -> RunResult:
    """Integrate the mechanism from (theta0, thetad0) to t_end.

    forces: the coordinate forces, a dict name -> constant or callable f(t, theta, thetad) (missing
    names are zero). load: callable(t, q, qd, s) -> (Q (n,), sdot) adding generalised forces on the
    absolute coordinates and the rates of the extra states s (initial values state0). The result is on
    the uniform grid 0..t_end (step dt) from the dense output, with columns t, each coordinate, its rate
    NAMEd, and the extra states: a RunResult (events: solve_ivp's events by their function's name, with the
    state there; solution: the dense output).
    """
    names = system.coordinate_names
    k = len(names)
    theta0 = np.atleast_1d(np.asarray(theta0, float))
    thetad0 = np.atleast_1d(np.asarray(thetad0, float))
    state0 = np.atleast_1d(np.asarray(state0, float))
    if theta0.shape != (k,) or thetad0.shape != (k,):
        raise InputError(f"expected {k} coordinate value(s) and rate(s), got {theta0.shape} and {thetad0.shape}")
    opts = run_options(t_end, dt, rtol, atol, arrays={"theta0": theta0, "thetad0": thetad0, "state0": state0})
    ns = len(state0)
    eom = EquationsOfMotion(system, theta0, params, forces, load, ns)
    describe = lambda y: ", ".join(f"{n} = {v:.6g}" for n, v in zip(names, y[:k]))
    labels = list(state_names) or [f"s{i}" for i in range(ns)]

    def columns(grid, y):
        return {"t": grid, **{n: y[i] for i, n in enumerate(names)}, **{f"{n}d": y[k + i] for i, n in enumerate(names)},
                **{n: y[2 * k + i] for i, n in enumerate(labels)}}

    y0 = np.concatenate([theta0, thetad0, state0])
    sol = integrate(eom.rhs, y0, (0.0, opts.t_end), rtol=opts.rtol, atol=opts.atol, method=method,
                    name=f"simulation of '{system.mechanism.name}'", where=f"mechanism '{system.mechanism.name}'",
                    events=events, describe=describe)
    return result(sol, opts, columns, f"{system.mechanism.name}: simulation", events)


class EquationsOfMotion:
    """The ODE that `simulate` integrates, for callers that drive the integrator themselves (event runners):
    `rhs(t, y)` with y = [theta, thetad, s] (k coordinates, k rates, `n_states` extra states) and
    `coordinates(y)` -> (q, qd), the absolute coordinates and their rates at a state. Arguments as in
    `simulate`; the configuration is tracked from `theta0` (warm-started Newton), where it is found by the
    continuation from the declared assembly or, given q0 (coordinates near it, say the configuration
    another build of the mechanism hands over), by Newton from q0, by the system's tracker
    (mechsym.planar.tracking.tracker)."""

    def __init__(self, system, theta0, params=None, forces=None, load=None, n_states=0, q0=None):
        self.system, self.load, self.n_states = system, load, int(n_states)
        self.k = len(system.coordinate_names)
        self.solver = system.solver(params)
        self.tracker = tracker(system, self.solver, theta0, q0)
        self.mass = system.mass(self.solver.params)
        self.coord_forces = _force_functions(system, forces or {})
        self.motion = moving(system)  # the declared loads of velocity or time (mechsym.planar.loads)
        nj = system.constraints.n_joint_rows
        self._drive_rows = tuple(range(nj, nj + self.k))

    def _state(self, th, thd):
        """q, J, a0 and the applied forces (q'' = J thetadd + a0) at coordinates th with rates thd."""
        q, jq, a0, app = self.tracker.state(th, thd)
        return q, jq, a0, self.system.applied(q, self.solver.params) if app is None else app

    def coordinates(self, y):
        """(q, q') of the absolute coordinates at a state y = (theta, theta', ...)."""
        k = self.k
        q, jq, _, _ = self._state(y[:k], y[k:2 * k])
        return q, jq @ y[k:2 * k]

    def rhs(self, t, y):
        """The state's time derivative at (t, y) (solve_ivp's right-hand side): the reduced form's terms in
        one call of the tracker's row entry where it has one (the driving rows' multipliers are
        J^T (M qdd - Q) = base + coef thetadd), else from the tracked state (reduced_terms)."""
        k = self.k
        th, thd, s = y[:k], y[k:2 * k], y[2 * k:]
        tau = np.array([f(t, th, thd) for f in self.coord_forces])
        got = self.tracker.rows(th, thd, self._drive_rows)
        if got is None:
            q, jq, a0, applied = self._state(th, thd)
            coef, base = reduced_terms(self.mass, jq, a0, applied)
        else:
            q, jq, base, coef = got
        force = tau - base
        sdot = np.zeros(0)
        if self.motion is not None:
            force = force + jq.T @ self.motion.motion(q, jq @ thd, t, self.solver.params)[0]
        if self.load is not None:
            extra, sdot = self.load(t, q, jq @ thd, s)
            force = force + jq.T @ extra
        return np.concatenate([thd, accelerations(coef, force), np.asarray(sdot, float).reshape(self.n_states)])


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
