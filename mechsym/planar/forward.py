"""Forward runs of a one-coordinate mechanism: the reduced ODE (mechsym.planar.reduced) integrated from a
state under a driving force, sampled on the run's uniform grid, with events and the reactions along it.

With a constant force, loads of position alone and Crossing events the whole run happens in one compiled
call where the backend has one (the reduced form, DOP853 with scipy's coefficients and error control,
dense output, event location); otherwise scipy's solve_ivp integrates `one_coordinate_rhs` with the
configuration followed by the system's tracker (mechsym.planar.tracking).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechsym.core.budget import check_memory
from mechsym.core.errors import InputError
from mechsym.core.results import RunEvent, RunResult
from mechsym.core.timegrid import run_options
from mechsym.planar.dynamics import assemble, solve_checked
from mechsym.planar.equations import forward as forward_analysis
from mechsym.planar.kinematics import STEP_TOL, Kinematics
from mechsym.planar.loads import moving
from mechsym.planar.reduced import ode, one_coordinate_rhs, reduced_ode
from mechsym.planar.tracking import tracker


@dataclass(frozen=True)
class Crossing:
    """An event of a forward run: the coordinate ("theta") or its speed ("omega") crossing `value`
    (direction +1 rising, -1 falling, 0 either); `terminal` stops the run there."""

    variable: str
    value: float
    direction: int = 0
    terminal: bool = False

    @property
    def component(self) -> int:
        """The state component it watches: 0 the coordinate, 1 its speed."""
        return 1 if self.variable == "omega" else 0

    def as_solve_ivp(self):
        """The event as a scipy.integrate.solve_ivp event function."""
        def event(t, y):
            return y[self.component] - self.value

        event.terminal, event.direction = self.terminal, self.direction
        return event


MAX_TRAVEL = 1e12  # rad: beyond this a coordinate keeps no useful digits of its motion


def forward(system, torque, theta0, omega0, t_end, dt=None, rtol=1e-9, atol=None, params=None,
            events=(), method="DOP853", reactions=False, dense_output=True) -> RunResult:
    """Integrate a one-coordinate mechanism under a driving force.

    torque: a constant, or a callable f(t, theta, omega). events: Crossing objects (or solve_ivp event
    functions, numpy route only). method: solve_ivp's method on the numpy route; the implicit ones
    (Radau, BDF, LSODA) get the exact Jacobian (mechsym.planar.reduced.reduced_ode) and need a constant
    torque. On the C backend with a constant torque the whole run (reduced-form right-hand side, DOP853
    with scipy's coefficients and error control, dense output, event location) happens in C, and a
    `method` other than DOP853 is refused; otherwise scipy's solve_ivp integrates the reduced form with
    the configuration tracked between calls (a trial stage it cannot reach is a rejected step). Either way
    the result is sampled on the uniform grid 0, dt, ..., t_end (or up to a terminal event) from the
    dense output. Returns a RunResult: its events (RunEvent: t, the event's name, the state [coordinate,
    speed], from the dense output on either route) in time order, nfev, the dense solution over (coordinate,
    speed) on either route (scipy's OdeSolution; on C a results.DenseSolution of the same interpolant), status
    "stopped" where a terminal event ended the run. dense_output=False keeps no solution (None): on C every
    step then makes its dense output only where a grid point or an event needs it. reactions=True adds every
    reaction from the forward Newton-Euler system along the grid (and its thetadd: an independent check).
    """
    if len(system.coordinate_names) != 1:
        raise InputError("forward() integrates one coordinate")
    opts = run_options(t_end, dt, rtol, atol, arrays={"theta0": theta0, "omega0": omega0})
    t_end, rtol, atol = opts.t_end, opts.rtol, opts.atol
    width = 8 + (2 * len(system.constraints.rows) if reactions else 0)
    check_memory(f"forward dynamics of '{system.mechanism.name}' at {opts.points:.6g} time points",
                 forward_memory(opts.points, width))
    events = list(events or ())
    grid = opts.grid()
    solver = system.solver(params)
    q0 = solver.sweep(np.array([[theta0]])).q[0]
    if omega0 == 0:
        solver.check_start_at_rest(np.array([theta0]), q0)
    loads = moving(system)  # loads of velocity or time: the tracked route with them in its right-hand side
    if not callable(torque) and loads is None:  # a torque or speed too large to represent is no dead point
        with np.errstate(all="ignore"):
            rate = ode(system, np.array([theta0]), np.array([omega0]), float(torque), params)[0][0]
        with np.errstate(all="ignore"):
            travel = abs(omega0) * t_end + 0.5 * abs(rate[1]) * t_end**2
        if not (np.all(np.isfinite(rate)) and travel <= MAX_TRAVEL):
            raise InputError(f"mechanism '{system.mechanism.name}': torque {float(torque):.6g} and omega0 {omega0:.6g} "
                             f"give the acceleration {rate[1]:.6g} at the start, a travel of about {travel:.3g} rad "
                             f"in {t_end:.6g} s: too large to represent (at most {MAX_TRAVEL:.0e} rad)")
    # a constant torque, loads of position alone and Crossing events: the whole run in one compiled call where
    # the backend has one
    whole = not callable(torque) and loads is None and all(isinstance(e, Crossing) for e in events)
    run = system.backend.route(compiled=_forward_c, python=_forward_ivp) if whole else _forward_ivp
    y, hits, nfev, solution = run(system, solver, torque, theta0, omega0, t_end, grid, rtol, atol, q0, events,
                                  method, dense_output)
    grid = grid[: len(y)]
    stopped = [e for e in hits if getattr(events[e[1]], "terminal", False)]
    name = system.coordinate_names[0]
    if callable(torque):
        tau = np.array([torque(t, a, b) for t, a, b in zip(grid, y[:, 0], y[:, 1])])
    else:
        tau = np.full_like(grid, float(torque))
    cols = {"t": grid, name: y[:, 0], "omega": y[:, 1], system.mechanism.coordinates[0].force or "force": tau}
    run_events = [RunEvent(t, _event_name(events[i]), state) for t, i, state in hits]
    table = RunResult(cols, {"t": "s", name: "rad", "omega": "rad/s"}, f"{system.mechanism.name}: forward dynamics",
                      events=run_events, nfev=nfev, solution=solution, status="stopped" if stopped else "done",
                      message=f"stopped by {_event_name(events[stopped[0][1]])} at t = {stopped[0][0]:.9g}"
                      if stopped else "")
    if reactions:
        table.columns.update(forward_reactions(system, grid, y[:, 0], y[:, 1], tau, params))
    if system.loads is not None and len(grid):
        kin = system.kinematics(y[:, 0], params)
        table.columns.update(system.loads.columns(kin.q, kin.dq[:, :, 0] * y[:, 1:2], grid, kin.params))
        table.units.update(system.loads.units)
    return table


def _forward_c(system, solver, torque, theta0, omega0, t_end, grid, rtol, atol, q0, events, method, dense):
    if method != "DOP853":
        raise InputError(f"the C backend integrates with DOP853 only, not method '{method}'; use the numpy backend "
                         "for scipy's other methods")
    spec = [(e.component, e.value, e.direction, e.terminal) for e in events]
    y, hits, nfev, status, solution = system.functions.forward(float(torque), theta0, omega0, t_end, grid, rtol, atol,
                                                             solver.params, q0, solver.col_scale, STEP_TOL, spec,
                                                             hmax=solver.step[0], dense=dense,
                                                             what=f"the forward run of '{system.mechanism.name}'")
    if status:
        reason = {1: "the loops could not be closed", 2: "the mechanism reached a dead point",
                  3: "the step size fell below its limit", 4: "a declared branch condition would not hold",
                  6: "det Phi_q would change sign (another assembly branch)"}.get(status, f"status {status}")
        t_fail = grid[len(y) - 1] if len(y) else 0.0
        raise InputError(f"mechanism '{system.mechanism.name}': integration stopped after t = {t_fail:.6g}: {reason} "
                         f"(near {system.coordinate_names[0]} = {y[-1, 0] if len(y) else theta0:.6g})")
    return y, sorted(((float(t), int(i), np.array(s)) for t, i, s in hits), key=lambda hit: hit[:2]), nfev, solution


def _event_name(event) -> str:
    """An event's name in a run's result: 'omega = 0 falling' for a Crossing, else the function's name."""
    if isinstance(event, Crossing):
        way = {1: " rising", -1: " falling"}.get(event.direction, "")
        return f"{event.variable} = {event.value:g}{way}"
    return getattr(event, "__name__", type(event).__name__)


def _forward_ivp(system, solver, torque, theta0, omega0, t_end, grid, rtol, atol, q0, events, method, dense):
    from mechsym.core.runner import integrate, rejecting

    force = torque if callable(torque) else (lambda t, th, w, _c=float(torque): _c)
    implicit = method in ("Radau", "BDF", "LSODA")
    loads = moving(system)
    if implicit and (callable(torque) or loads is not None):
        raise InputError(f"method {method} needs the exact Jacobian of the right-hand side, known for a constant "
                         "torque and loads of position alone; use an explicit method (DOP853, RK45)")
    mass = system.mass(solver.params)
    followed = tracker(system, solver, [theta0], q0, careful=implicit, floats=True)  # (implicit: Phi_q)
    motion = None if loads is None else (lambda t, q, qd: loads.motion(q, qd, t, solver.params)[0])
    rhs = one_coordinate_rhs(followed, mass, force, lambda q: system.applied(q, solver.params), motion)

    def jacobian(t, y):
        """The exact Jacobian of the reduced ODE at the configuration tracked to y[0] (StepRejected if it
        cannot be reached)."""
        q, fac, jq = followed.at([y[0]])
        ddq = fac.solve(-system.gamma(q, jq[:, 0], solver.params)[None])[0]
        kin = Kinematics(np.array([[y[0]]]), q[None], jq[None], ddq[None], None, solver.params, jac_fn=solver.f.jac)
        kin.factor = fac
        return reduced_ode(system, kin, y[1], float(torque))[1][0]

    name = system.coordinate_names[0]
    describe = lambda y: f"{name} = {y[0]:.6g}"  # noqa: E731
    funcs = [e.as_solve_ivp() if isinstance(e, Crossing) else e for e in events]
    sol = integrate(rhs, [theta0, omega0], (0.0, t_end), rtol=rtol, atol=atol, method=method,
                    name=f"forward run of '{system.mechanism.name}'", where=f"mechanism '{system.mechanism.name}'",
                    events=funcs, describe=describe, **({"jac": rejecting(jacobian, method, describe)} if implicit else {}))
    grid = grid[grid <= sol.t[-1]]
    hits = sorted(((float(t), i, np.array(y)) for i, (ts, ys) in enumerate(zip(sol.t_events or [], sol.y_events or []))
                   for t, y in zip(ts, ys)), key=lambda hit: hit[:2])
    return sol.sol(grid).T, hits, sol.nfev, sol.sol if dense else None


def forward_reactions(system, t, theta, omega, tau, params=None) -> dict:
    """Reactions and the acceleration from the forward Newton-Euler system A U = C along a trajectory."""
    analysis = forward_analysis(system.mechanism)
    kin = system.kinematics(theta, params)
    mass = system.mass(kin.params)
    applied = system.applied(kin.q.T, kin.params).T
    driver = kin.jac[:, system.constraints.n_joint_rows, :]
    rhs = mass * kin.ddq * omega[:, None] ** 2 - applied - driver * tau[:, None]
    if moving(system) is not None:
        rhs = rhs - system.loads.motion(kin.q, kin.dq[:, :, 0] * omega[:, None], t, kin.params)
    a, c = assemble(system, kin, analysis, omega[:, None], [rhs])
    u = solve_checked(system, a, c, theta)[:, :, 0]
    return {n: u[:, i] for i, n in enumerate(analysis.unknown_names(system.constraints))}


def forward_memory(rows, width) -> int:
    """Bytes of a time run written at `rows` time points with `width` values kept per point (the grid,
    the states, the columns and their CSV copy)."""
    return 8 * rows * (width + 8)
