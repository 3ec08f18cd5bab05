"""The PASIBOT analyses of the chapter (sections 5-7), on the declaration of mechanisms/pasibot.py.

* `forward_run`: forward dynamics without slip (Eq. 28) from a given state under a torque, with the support
  passing from leg to leg at theta8 = pi/2 + k pi (a hybrid run; the landing foot has zero velocity, so
  there is no impact; the new leg's build starts from the old one's configuration, System.handover).
* `start_torque`: the smallest constant torque for which the crank, from rest at pi/2, reaches 3pi/2 before
  its speed returns to zero (bisection on simulations with terminal events).
* `SlipModel` / `slip_run`: the supporting foot may slide (section 7): the Coulomb stick and slip modes of
  each support leg's prismatic foot-ground joint (mechsym.planar.stickslip), joined by the support changes, for an
  imposed crank speed (inverse) or an imposed torque (forward). The motor work and the friction
  dissipation ride along as states for the energy balance.
* `min_friction`: the smallest mu (mu_s = mu_k) for which no slip occurs, by bisection on slip runs.
* `ground_force`: the ground's force on the supporting foot and the zero moment point (Eqs. 29-30), from
  the sliding build's stick mode: the foot's equilibrium as the declaration derives it.

The chapter's figures and the animation are in mechanisms/pasibot_figures.py. Everything is in SI units;
times are also reported in units of the step period T = pi / omega8.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from mechanisms import pasibot as pb
from mechsym.core import hybrid
from mechsym.core.errors import InputError
from mechsym.core.progress import bar, bisection_steps
from mechsym.core.results import RunResult, Table
from mechsym.core.timegrid import run_options, uniform_grid
from mechsym.planar.dynamics import energies
from mechsym.planar.equations import Analysis
from mechsym.planar.simulate import EquationsOfMotion
from mechsym.planar.stickslip import StickSlip, check_friction, sliding

OTHER = {"unprimed": "primed", "primed": "unprimed"}


def period(omega):
    """Step period T = pi / omega8 (one step is half a crank turn)."""
    if not np.isfinite(omega) or omega == 0:
        raise InputError(f"crank speed omega = {omega} rad/s gives no step period (it must be non-zero)")
    return math.pi / abs(omega)


# ------------------------------------------------------------------------------------------------------
# forward dynamics without slip
# ------------------------------------------------------------------------------------------------------
class _Windows:
    """The support window [pi/2 + k pi, 3pi/2 + k pi) a hybrid run is in (set at every support change),
    and guards on its two ends: leaving upwards (direction +1) or downwards (direction -1). A guard that
    is zero where its mode starts cannot fire at once, since the run enters a window moving inwards."""

    def __init__(self, theta0, omega0):
        self.k = int(pb.step_index(theta0 + 1e-12 * (np.sign(omega0) or 1.0)))

    @property
    def leg(self):
        return "unprimed" if self.k % 2 == 0 else "primed"

    def up(self, t, y):
        return y[0] - pb.step_window(self.k)[1]

    def down(self, t, y):
        return y[0] - pb.step_window(self.k)[0]

    def enter(self, delta):
        self.k += delta
        return self.leg


def forward_run(torque, theta0=math.pi / 2, omega0=0.0, t_end=3.0, params=None, rtol=1e-10, atol=None,
                backend=None, stop_on=()):
    """Forward dynamics without slip under the motor torque T8 (a constant, or f(t, theta8, omega8)).

    The support passes to the other leg whenever the crank angle crosses pi/2 + k pi (either way).
    stop_on: extra terminal conditions, tuples ("theta8" | "omega8", value, direction). Returns the
    HybridResult (state y = [theta8, omega8]); see `sample_forward` for a table."""
    run_options(t_end, rtol=rtol, atol=atol, arrays={"theta0": theta0, "omega0": omega0})
    force = torque if callable(torque) else (lambda t, th, w, _c=float(torque): _c)
    if not callable(torque) and not np.isfinite(float(torque)):
        raise InputError(f"torque must be finite, got {torque}")
    systems = {leg: pb.system("foot", leg, backend) for leg in pb.LEGS}
    forces = {"T8": lambda t, th, thd: float(force(t, th[0], thd[0]))}
    odes = {}  # leg -> the reduced equations of motion (Eq. 28), tracked from the last support change

    def seed(leg, theta, q0=None):
        odes[leg] = EquationsOfMotion(systems[leg], [theta], params, forces, q0=q0)

    def rhs_for(leg):
        return lambda t, y: odes[leg].rhs(t, y)

    win = _Windows(theta0, omega0)

    def switch(delta):
        def target(t, y):
            old = win.leg
            leg = win.enter(delta)
            q, _ = odes[old].coordinates(y)  # the configuration at the support change, handed over
            seed(leg, y[0], systems[old].handover(q, systems[leg], odes[old].solver.params))
            return leg

        return target

    modes = []
    for leg in pb.LEGS:
        trs = []  # the stopping conditions first: they win a tie with a support change
        for var, value, direction in stop_on:
            comp = {"theta8": 0, "omega8": 1}[var]
            trs.append(hybrid.Transition(f"{var}={value:g}", lambda t, y, _c=comp, _v=value: y[_c] - _v, None, direction))
        trs += [hybrid.Transition("support", win.up, switch(+1), +1),
                hybrid.Transition("support", win.down, switch(-1), -1)]
        modes.append(hybrid.Mode(leg, rhs_for(leg), tuple(trs)))
    leg0 = win.leg
    seed(leg0, theta0)
    return hybrid.run(modes, leg0, [theta0, omega0], (0.0, t_end), rtol=rtol, atol=atol)


def sample_forward(result, dt=None):
    """A table t, theta8, omega (crank speed), support (0 unprimed, 1 primed) on a uniform grid."""
    grid = uniform_grid(result.t_end, dt or result.t_end / 1000)
    y, modes = result.sample(grid)
    return Table({"t": grid, "theta8": y[:, 0], "omega": y[:, 1], "support": (modes == "primed").astype(float)},
                 {"t": "s", "theta8": "rad", "omega": "rad/s"}, "pasibot: forward dynamics (no slip)")


def reaches_step_end(torque, params=None, t_end=60.0, rtol=1e-10, backend=None):
    """(reached, t): does the crank, from rest at pi/2 under the constant torque, reach 3pi/2 before its
    speed returns to zero? Terminal events on theta8 = 3pi/2 (rising) and omega8 = 0 (falling)."""
    run = forward_run(float(torque), math.pi / 2, 0.0, t_end, params, rtol=rtol, backend=backend,
                      stop_on=(("theta8", 1.5 * math.pi, 1), ("omega8", 0.0, -1)))
    if run.status != "stopped":
        return False, run.t_end
    return run.stopped_by.startswith("theta8"), run.t_end


def start_torque(params=None, lo=0.0, hi=None, tol=1e-5, backend=None):
    """The start torque by bisection on `reaches_step_end` (tol in N m). hi defaults to twice the
    quasi-static maximum over the step."""
    if hi is None:
        theta = np.linspace(math.pi / 2, 1.5 * math.pi, 721)
        quasi = pb.inverse_table(theta, 0.0, params=params, inertia=False, backend=backend)["T8"]
        hi = 2 * max(float(np.max(quasi)), 1e-3)
    if not reaches_step_end(hi, params, backend=backend)[0]:
        raise InputError(f"pasibot: even T8 = {hi:.4g} N m does not carry the crank through the step")
    with bar(bisection_steps(lo, hi, tol), "start torque: bisection", "run") as progress:
        while hi - lo > tol:
            mid = 0.5 * (lo + hi)
            if reaches_step_end(mid, params, backend=backend)[0]:
                hi = mid
            else:
                lo = mid
            progress.update(1)
    return 0.5 * (lo + hi)


def energy_start_threshold(params=None, samples=4001, backend=None):
    """The energy bound max (PE(theta) - PE(pi/2)) / (theta - pi/2) over the step: the start torque of a
    loss-free model (an independent check of the bisection)."""
    sys = pb.system("foot", "unprimed", backend)
    theta = np.linspace(math.pi / 2, 1.5 * math.pi, samples)
    kin = sys.kinematics(theta, params)
    _, pe = energies(sys, kin, np.zeros(samples))
    return float(np.max((pe[1:] - pe[0]) / (theta[1:] - theta[0])))


# ------------------------------------------------------------------------------------------------------
# slip (section 7)
# ------------------------------------------------------------------------------------------------------
@dataclass
class SlipResult(RunResult):
    """A slip run: the RunResult (the table sampled per step, the switches as events, the hybrid run's dense
    solution) with the hybrid run's pieces (`result`) and the model."""

    result: hybrid.HybridResult | None = None
    model: "SlipModel | None" = None

    def slips(self):
        """Slip episodes: (t_start, t_end, displacement) of each stay in a slip mode."""
        return self.model.legs["unprimed"].slips(self.result)

    def energy_balance(self):
        """(work in, delta KE + delta PE, friction dissipation) from the start to the end of the run."""
        y0, y1 = self.result.segments[0].y0, self.result.segments[-1].y1
        e0 = self.model.energy(self.result.segments[0].mode.split("/")[0], y0)
        e1 = self.model.energy(self.result.segments[-1].mode.split("/")[0], y1)
        return y1[4] - y0[4], e1 - e0, y1[5] - y0[5]


class SlipModel:
    """The biped whose supporting foot may slide: modes "LEG/stick", "LEG/slip+", "LEG/slip-", the
    stick/slip of each leg's sliding build (mechsym.planar.stickslip) joined by the support changes.

    State y = [theta8, omega8, x1, x1d, motor work, friction dissipation]. x1 is the ground x of the
    supporting ankle. Crank speed imposed (`omega`, inverse dynamics: T8 unknown) or torque imposed
    (`torque`, forward dynamics: theta8dd unknown)."""

    def __init__(self, mu_s, mu_k=None, omega=None, torque=None, params=None, backend=None):
        mu_k = mu_s if mu_k is None else mu_k
        self.mu_s, self.mu_k = check_friction(mu_s, mu_k)
        if (omega is None) == (torque is None):
            raise InputError("give either the crank speed omega (inverse) or the torque (forward)")
        if omega is not None:
            period(omega)
        self.omega, self.torque = omega, torque
        self.legs = {leg: StickSlip(pb.system("slide", leg, backend), "x1", self.mu_s, self.mu_k, params, omega=omega,
                                    force=torque, name=leg) for leg in pb.LEGS}
        self.params = self.legs["unprimed"].params
        self.step = pb.step_length(self.params, backend)
        self.zmp_warned = False

    def solve(self, leg, contact, t, y):
        """All unknowns of the mode's A U = C at state y, plus T, friction, fn, m (ground moment), thetadd, xdd."""
        return self.legs[leg].solve(contact, t, y)

    def landing(self, leg, t, y):
        """The state in the other leg's build when the support passes to it (no impact)."""
        part, other = self.legs[leg], self.legs[OTHER[leg]]
        kin, _ = part.state(y[[0, 2]], y[[1, 3]])
        pos, vel = part.system.point_state(kin, [y[1], y[3]], "E" + pb.LEGS[OTHER[leg]])
        y_new = np.array(y, float)
        y_new[2], y_new[3] = pos[0], vel[0]
        other.seed(y_new[[0, 2]], part.system.handover(kin.q[0], other.system, part.solver.params))
        return y_new

    def energy(self, leg, y):
        return self.legs[leg].energy(y)

    def modes(self, max_step, win):
        out = []
        for leg, part in self.legs.items():
            def land(t, y, _leg=leg):
                return self.landing(_leg, t, y)

            def after_landing(delta):
                def target(t, y):
                    return self.legs[win.enter(delta)].choose(t, y)

                return target

            support = [hybrid.Transition("support", win.up, after_landing(+1), +1, land),
                       hybrid.Transition("support", win.down, after_landing(-1), -1, land)]
            out += part.modes(support, max_step)
        return out

    def run(self, t_end=None, steps=4, theta0=math.pi / 2, omega0=None, rtol=1e-10, atol=1e-12, max_step=None,
            samples_per_step=200):
        """Simulate from theta0 (default pi/2, double support) with the supporting foot at x1 = 0 at rest.
        Inverse: the crank turns at omega from the start, for `steps` steps (t_end = steps T) unless
        t_end is given. Forward: from omega0 (default 0) for t_end seconds. The foot cannot fly: where the
        normal force f01y falls to zero (located as an event) the run ends with a warning."""
        if self.omega is not None:
            big_t = period(self.omega)
            t_end = steps * big_t if t_end is None else t_end
            omega0 = self.omega
        else:
            if t_end is None:
                raise InputError("a forward slip run needs t_end")
            omega0 = 0.0 if omega0 is None else omega0
            big_t = period(omega0) if omega0 else None
        run_options(t_end, rtol=rtol, atol=atol)
        if max_step is None:
            max_step = (big_t or 1.0) / 100
        win = _Windows(theta0, omega0)
        leg0 = win.leg
        y0 = np.array([theta0, omega0, 0.0, 0.0, 0.0, 0.0])
        self.legs[leg0].seed(np.array([theta0, 0.0]))
        fn = self.legs[leg0].cached("stick", 0.0, y0)["fn"]
        if fn <= 0:
            raise InputError(f"pasibot: the ground would have to pull the supporting foot down at the start "
                             f"(f01y = {fn:.4g} N): the foot does not stay on the ground")
        result = hybrid.run(self.modes(max_step, win), self.legs[leg0].choose, y0, (0.0, t_end), rtol=rtol, atol=atol)
        if result.stopped_by == "lift-off":
            warnings.warn(f"pasibot: the supporting foot lifts off at t = {result.t_end:.6g} s (f01y reaches zero); "
                          "the model has no flight phase, so the run ends there", stacklevel=2)
        n = max(2, int(round(samples_per_step * t_end / (big_t or t_end / 4))) + 1)
        grid = run_options(result.t_end, n=n).grid()
        table = self.table(result, grid, big_t)
        return SlipResult(table.columns, table.units, table.title, events=result.events, nfev=result.nfev,
                          solution=result.solution, status=result.status, message=result.message, result=result,
                          model=self)

    def table(self, result, grid, big_t=None):
        """Sampled results: t, t/T, theta8, omega, x1, x1d, work, dissipation, slip (cumulative), T8,
        friction (f01x), fn (f01y), zmp, theta8dd, x1dd, support, sliding."""
        y, modes = result.sample(grid)
        cols = {"t": grid}
        if big_t:
            cols["t/T"] = grid / big_t
        cols.update({"theta8": y[:, 0], "omega": y[:, 1], "x1": y[:, 2], "x1d": y[:, 3],
                     "work": y[:, 4], "dissipation": y[:, 5]})
        # the supporting ankle moves one step length per support change: the rest is slip
        landings = np.array([e.t for e in result.events_named("support")])
        count = np.searchsorted(landings, grid, side="right")
        cols["slip"] = y[:, 2] - count * self.step
        names = {"T8": "T", "friction": "friction", "fn": "fn", "theta8dd": "thetadd", "x1dd": "xdd"}
        extra = {k: np.empty(len(grid)) for k in ("T8", "friction", "fn", "zmp", "theta8dd", "x1dd")}
        for mode in np.unique(modes):  # one batched A U = C per mode
            sel = np.flatnonzero(modes == mode)
            leg, contact = mode.split("/")
            u = self.legs[leg].along(contact, grid[sel], y[sel])
            for k, name in names.items():
                extra[k][sel] = u[name]
            extra["zmp"][sel] = y[sel, 2] + u["m"] / u["fn"]
        cols.update(extra)
        cols["support"] = np.array([m.startswith("primed") for m in modes], float)
        cols["sliding"] = np.array([sliding(m) for m in modes], float)
        units = {"t": "s", "theta8": "rad", "omega": "rad/s", "x1": "m", "x1d": "m/s", "slip": "m", "T8": "N m",
                 "friction": "N", "fn": "N", "zmp": "m", "work": "J", "dissipation": "J"}
        table = Table(cols, units, "pasibot: slip simulation")
        self._check_zmp(table)
        return table

    def _check_zmp(self, table):
        p = self.legs["unprimed"].system.mechanism.resolve_parameters(self.params)
        heel, toe = p["heel"] * p["l8"], p["toe"] * p["l8"]
        rel = table["zmp"] - table["x1"]
        outside = (rel < -heel) | (rel > toe)
        if outside.any() and not self.zmp_warned:
            i = int(np.argmax(outside))
            warnings.warn(f"pasibot: the zero moment point leaves the supporting foot at t = {table['t'][i]:.4g} s "
                          f"({rel[i]:+.4g} m from the ankle; the foot spans [{-heel:.4g}, {toe:.4g}] m): the biped "
                          "would topple there unless the other foot also bears load", stacklevel=3)
            self.zmp_warned = True


def slip_run(mu_s, mu_k=None, omega=3.0, steps=4, params=None, backend=None, **kw) -> SlipResult:
    """Inverse dynamics with slip at the constant crank speed omega over `steps` steps from pi/2."""
    return SlipModel(mu_s, mu_k, omega=omega, params=params, backend=backend).run(steps=steps, **kw)


def friction_demand(omega, params=None, samples=2001, backend=None):
    """max |f01x| / f01y over one step without slip (the ground force from the foot's equilibrium in the
    69 x 69 solution): the smallest mu_s that holds the foot."""
    theta = np.linspace(math.pi / 2, 1.5 * math.pi, samples)
    f = ground_force(theta, omega, params, backend)
    return float(np.max(np.abs(f["f01x"]) / f["f01y"]))


def ground_force(theta8, omega, params=None, backend=None):
    """The ground's force on the supporting foot without slip (Eq. 29) and the ZMP (Eq. 30): the foot's
    equilibrium as the declaration derives it, the stick mode of the sliding build (A U = C with the foot
    held at x1 = 0 by friction f01x and the normal force f01y), the support chosen per sample by
    `support_of`. Returns a dict of arrays."""
    theta8 = np.asarray(theta8, float).ravel()
    out = {k: np.empty(len(theta8)) for k in ("f01x", "f01y", "zmp", "T8")}
    for leg, idx in pb._split(theta8)[0].items():
        if idx.size:
            sys = pb.system("slide", leg, backend)
            zero = np.zeros(idx.size)
            u = sys.solve(np.column_stack([theta8[idx], zero]), np.column_stack([np.full(idx.size, float(omega)), zero]),
                          Analysis("stick"), params=params)
            joint = "j0_1" + pb.LEGS[leg]
            out["f01x"][idx], out["f01y"][idx], out["T8"][idx] = u["friction"], u[f"{joint}.fn"], u["T8"]
            out["zmp"][idx] = u[f"{joint}.m"] / u[f"{joint}.fn"]
    return {"theta8": theta8, **out}


def min_friction(omega=3.0, params=None, steps=1, lo=0.0, hi=0.5, tol=1e-4, rtol=1e-10, backend=None):
    """The smallest mu (mu_s = mu_k) for which the supporting foot does not slip at the crank speed omega
    over `steps` steps, by bisection on slip runs (a run with any slip episode fails)."""
    period(omega)

    def slips(mu):
        with warnings.catch_warnings():  # the ZMP warning is not the question here
            warnings.simplefilter("ignore", UserWarning)
            run = SlipModel(mu, mu, omega=omega, params=params, backend=backend).run(steps=steps, rtol=rtol,
                                                                                      samples_per_step=8)
        if run.result.status == "stopped":
            raise InputError(f"pasibot: at omega = {omega:g} rad/s the supporting foot lifts off at "
                             f"t = {run.result.t_end:.4g} s, whatever the friction")
        return any(sliding(seg.mode) for seg in run.result.segments)

    if slips(hi):
        raise InputError(f"pasibot: the foot slips even with mu = {hi}")
    with bar(bisection_steps(lo, hi, tol), "min friction: bisection", "run") as progress:
        while hi - lo > tol:
            mid = 0.5 * (lo + hi)
            if slips(mid):
                lo = mid
            else:
                hi = mid
            progress.update(1)
    return 0.5 * (lo + hi)
