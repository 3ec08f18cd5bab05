"""The PASIBOT analyses of the chapter (sections 5-7), on the declaration of mechanisms/pasibot.py.

* `forward_run`: forward dynamics without slip (Eq. 28) from a given state under a torque, with the support
  passing from leg to leg at theta8 = pi/2 + k pi (a hybrid run; the landing foot has zero velocity, so
  there is no impact).
* `start_torque`: the smallest constant torque for which the crank, from rest at pi/2, reaches 3pi/2 before
  its speed returns to zero (bisection on simulations with terminal events).
* `SlipModel` / `slip_run`: the supporting foot may slide (section 7): stick and slip modes of each support
  leg, the switches located as events by mechsym.hybrid (static friction exhausted, slip velocity back to
  zero, support change), for an imposed crank speed (inverse) or an imposed torque (forward). The motor work
  and the friction dissipation ride along as states for the energy balance.
* `min_friction`: the smallest mu (mu_s = mu_k) for which no slip occurs, by bisection on slip runs.
* `zmp`: the zero moment point from the ground moment on the supporting foot (Eq. 30).
* `figures`: Figures 11-14 and 17-19 as PNG with a CSV beside each; `animate`: one step as a GIF.

Everything is in SI units; times are also reported in units of the step period T = pi / omega8.
"""
from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass

import numpy as np
import sympy as sp

from mechanisms import pasibot as pb
from mechsym import hybrid
from mechsym.dynamics import energies, solve_at
from mechsym.equations import Analysis
from mechsym.errors import InputError
from mechsym.kinematics import Kinematics
from mechsym.output import save_animation, save_figure
from mechsym.progress import bar, bisection_steps
from mechsym.results import Table
from mechsym.simulate import ConfigurationTracker, CTracker, EquationsOfMotion
from mechsym.timegrid import run_options, uniform_grid

OTHER = {"unprimed": "primed", "primed": "unprimed"}
CONTACTS = ("stick", "slip+", "slip-")  # slip+: the supporting foot slides towards +x (friction -mu_k fn)


def check_friction(mu_s, mu_k):
    for name, v in (("mu_s", mu_s), ("mu_k", mu_k)):
        if not np.isfinite(v) or v < 0:
            raise InputError(f"friction coefficient {name} = {v} must not be negative")
    if mu_k > mu_s:
        raise InputError(f"kinetic friction mu_k = {mu_k} exceeds static friction mu_s = {mu_s}")
    return float(mu_s), float(mu_k)


def period(omega):
    """Step period T = pi / omega8 (one step is half a crank turn)."""
    if not np.isfinite(omega) or omega == 0:
        raise InputError(f"crank speed omega = {omega} rad/s gives no step period (it must be non-zero)")
    return math.pi / abs(omega)


class _Leg:
    """A derived build of one support leg, its configuration tracked state by state from a seed by the
    core's trackers: ms_track in one call per state on the C backend (CTracker), else
    ConfigurationTracker (prediction off the previous solution, Newton with the stored factorisation).
    A state further than JUMP from the last one is reached by the solver's continuation instead (a new
    seed), which keeps the declared assembly branch."""

    JUMP = 0.1  # the continuation step of Solver.sweep

    def __init__(self, frame, leg, params, backend):
        self.leg = leg
        self.system = pb.system(frame, leg, backend)
        self.solver = self.system.solver(params)
        self.params = self.solver.params
        self.tracker = self.last = self.key = self.a0 = None

    def seed(self, theta, q0=None):
        """Track from theta: from the configuration q0 (handed over by the other leg's build), else by the
        continuation from the declared assembly."""
        library = self.system.library
        if library is not None and library.meta["square"]:
            self.tracker = CTracker(self.solver, library, theta, q0)
        else:
            self.tracker = ConfigurationTracker(self.solver, theta, q0)
        self.last = self.key = None

    def state(self, theta, thetad):
        """The solved kinematics (one sample, with the factorisation of Phi_q) at the coordinates theta, and
        the acceleration offset a0 at the rates thetad: the C tracker's own (one ms_track call), else one
        solve with the tracker's factorisation."""
        theta = np.atleast_1d(np.asarray(theta, float))
        thetad = np.atleast_1d(np.asarray(thetad, float))
        key = theta.tobytes() + thetad.tobytes()
        if key == self.key:
            return self.last, self.a0
        if self.tracker is None or np.max(np.abs(theta - self.tracker.theta)) > self.JUMP:
            self.seed(theta)
        if isinstance(self.tracker, CTracker):
            q, jq, a0, _ = self.tracker.state(theta, thetad)
        else:
            same = self.last is not None and np.array_equal(theta, self.last.theta[0])
            q, factor, jq = (self.last.q[0], self.last.factor, self.last.dq[0]) if same else self.tracker.at(theta)
            a0 = factor.solve(-self.system.gamma(q, jq @ thetad, self.params)[None])[0]
        self.last = Kinematics(theta[None], q[None], jq[None], None, None, self.params, self.tracker.factor,
                               self.solver.f.jac)
        self.key, self.a0 = key, a0
        return self.last, a0

    def kinematics(self, theta):
        """The solved kinematics (one sample) at the coordinates theta."""
        theta = np.atleast_1d(np.asarray(theta, float))
        if self.last is not None and np.array_equal(theta, self.last.theta[0]):
            return self.last
        return self.state(theta, np.zeros_like(theta))[0]

    def point_state(self, kin, thetad, point):
        """Position and velocity of a named point from the solved kinematics (exact, rigid body)."""
        mech, con = self.system.mechanism, self.system.constraints
        owner = next(b for b in con.bodies if point in mech.bodies[b].points)
        i = con.bodies.index(owner)
        qd = kin.velocities(np.atleast_2d(thetad))[0]
        x, y, th = kin.q[0, 3 * i: 3 * i + 3]
        vx, vy, w = qd[3 * i: 3 * i + 3]
        subs = dict(zip(con.params, self.params))
        body = mech.bodies[owner]
        local = np.array([float(body.points[point][k].subs(subs)) - float(body.com[k].subs(subs)) for k in range(2)])
        c, s = math.cos(th), math.sin(th)
        r = np.array([c * local[0] - s * local[1], s * local[0] + c * local[1]])
        return np.array([x, y]) + r, np.array([vx - w * r[1], vy + w * r[0]])


def handover(src, dst, q, values):
    """Coordinates q of the build `src` re-expressed in the build `dst` of the same bodies with another
    fixed body (the other support leg): every pose moved by the rigid motion that takes dst's fixed body
    from its pose in src to its own frame (values: the parameter vector of both). A support change starts
    the new leg's tracking from these."""
    mech, fixed = src.mechanism, dst.mechanism.fixed
    subs = dict(zip(src.constraints.params, values))
    com = {b: np.array([float(c.xreplace(subs)) for c in mech.bodies[b].com]) for b in (mech.fixed, fixed)}
    poses = {b: q[3 * i: 3 * i + 3] for i, b in enumerate(src.constraints.bodies)}
    poses[mech.fixed] = np.append(com[mech.fixed], 0.0)
    x, y, th = poses[fixed]
    c, s = math.cos(th), math.sin(th)
    out = []
    for b in dst.constraints.bodies:  # centre of mass relative to the fixed body's, turned by -th
        dx, dy = poses[b][0] - x, poses[b][1] - y
        out += [com[fixed][0] + c * dx + s * dy, com[fixed][1] - s * dx + c * dy, poses[b][2] - th]
    return np.array(out)


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
                backend="numpy", stop_on=()):
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
            seed(leg, y[0], handover(systems[old], systems[leg], q, odes[old].solver.params))
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


def reaches_step_end(torque, params=None, t_end=60.0, rtol=1e-10, backend="numpy"):
    """(reached, t): does the crank, from rest at pi/2 under the constant torque, reach 3pi/2 before its
    speed returns to zero? Terminal events on theta8 = 3pi/2 (rising) and omega8 = 0 (falling)."""
    run = forward_run(float(torque), math.pi / 2, 0.0, t_end, params, rtol=rtol, backend=backend,
                      stop_on=(("theta8", 1.5 * math.pi, 1), ("omega8", 0.0, -1)))
    if run.status != "stopped":
        return False, run.t_end
    return run.stopped_by.startswith("theta8"), run.t_end


def start_torque(params=None, lo=0.0, hi=None, tol=1e-5, backend="numpy"):
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


def energy_start_threshold(params=None, samples=4001, backend="numpy"):
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
class SlipResult:
    result: hybrid.HybridResult
    model: "SlipModel"
    table: Table  # sampled on a uniform grid

    @property
    def timeline(self):
        return self.result.events

    def slips(self):
        """Slip episodes: (t_start, t_end, displacement) of each stay in a slip mode."""
        out = []
        for seg in self.result.segments:
            if seg.mode.endswith(("slip+", "slip-")) and seg.t1 > seg.t0:
                out.append((seg.t0, seg.t1, seg.y1[2] - seg.y0[2]))
        return out

    def energy_balance(self):
        """(work in, delta KE + delta PE, friction dissipation) from the start to the end of the run."""
        y0, y1 = self.result.segments[0].y0, self.result.segments[-1].y1
        leg0 = self.result.segments[0].mode.split("/")[0]
        leg1 = self.result.segments[-1].mode.split("/")[0]
        e0 = self.model.energy(leg0, y0)
        e1 = self.model.energy(leg1, y1)
        return y1[4] - y0[4], e1 - e0, y1[5] - y0[5]


class SlipModel:
    """The biped whose supporting foot may slide: modes "LEG/stick", "LEG/slip+", "LEG/slip-".

    State y = [theta8, omega8, x1, x1d, motor work, friction dissipation]. x1 is the ground x of the
    supporting ankle. Crank speed imposed (`omega`, inverse dynamics: T8 unknown) or torque imposed
    (`torque`, forward dynamics: theta8dd unknown)."""

    def __init__(self, mu_s, mu_k=None, omega=None, torque=None, params=None, backend="numpy"):
        mu_k = mu_s if mu_k is None else mu_k
        self.mu_s, self.mu_k = check_friction(mu_s, mu_k)
        if (omega is None) == (torque is None):
            raise InputError("give either the crank speed omega (inverse) or the torque (forward)")
        if omega is not None:
            period(omega)
        self.omega, self.torque = omega, torque
        params = dict(params or {})
        params.update(mu_s=self.mu_s, mu_k=self.mu_k)
        self.params = params
        self.legs = {leg: _Leg("slide", leg, params, backend) for leg in pb.LEGS}
        self.step = pb.step_length(params, backend)
        self.analyses = {leg: self._analyses(leg) for leg in pb.LEGS}
        self._cache = {}
        self.zmp_warned = False

    # -- the A U = C of each mode ------------------------------------------------------------------
    def _analyses(self, leg):
        mech = self.legs[leg].system.mechanism
        fn = sp.Symbol(f"j0_1{pb.LEGS[leg]}.fn", real=True)
        friction = sp.Symbol("friction", real=True)
        mu_k = mech.parameters["mu_k"].symbol
        crank = () if self.omega is not None else ("theta8",)
        out = {"stick": Analysis("stick", free=crank)}
        for contact, sign in (("slip+", 1), ("slip-", -1)):
            out[contact] = Analysis(contact, free=crank + ("x1",), unknown_forces=("friction",),
                                    extra_rows=(("coulomb", friction + sign * mu_k * fn),))
        return out

    def solve(self, leg, contact, t, y):
        """All unknowns of the mode's A U = C at state y, plus theta8dd, x1dd, fn, m (ground moment), T8."""
        key = (leg, contact, t, y[:4].tobytes())
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        kin, a0 = self.legs[leg].state([y[0], y[2]], [y[1], y[3]])
        u = self.unknowns(leg, contact, kin, np.array([t]), np.asarray(y)[None], a0[None])
        u = {k: float(v[0]) for k, v in u.items()}
        if len(self._cache) > 64:
            self._cache.clear()
        self._cache[key] = u
        return u

    def unknowns(self, leg, contact, kin, t, y, a0=None):
        """The mode's A U = C at solved kinematics of N states y (N, 6) at times t (N,), in one batch: every
        unknown, plus theta8dd, x1dd, fn, m and T8 (each (N,)); a0 (N, n) the acceleration offset if known."""
        n = len(y)
        forces = {}
        if self.torque is not None:
            forces["T8"] = (np.array([float(self.torque(*a)) for a in zip(t, y[:, 0], y[:, 1])])
                            if callable(self.torque) else np.full(n, float(self.torque)))
        part = self.legs[leg]
        u = solve_at(part.system, kin, y[:, [1, 3]], self.analyses[leg][contact], np.zeros((n, 2)), forces, a0)
        for name in ("theta8dd", "x1dd"):
            u.setdefault(name, np.zeros(n))
        u.setdefault("T8", forces.get("T8"))
        u["fn"], u["m"] = u[f"j0_1{pb.LEGS[leg]}.fn"], u[f"j0_1{pb.LEGS[leg]}.m"]
        return u

    def rhs(self, leg, contact):
        def f(t, y):
            u = self.solve(leg, contact, t, y)
            return [y[1], u["theta8dd"], y[3], u["x1dd"], u["T8"] * y[1], -u["friction"] * y[3]]

        return f

    def choose(self, leg, t, y):
        """The contact mode at a state: sliding if the foot moves, else stick if static friction holds."""
        if abs(y[3]) > 1e-12 * max(1.0, abs(y[1]) * self.step):
            return f"{leg}/{'slip+' if y[3] > 0 else 'slip-'}"
        u = self.solve(leg, "stick", t, y)
        if abs(u["friction"]) <= self.mu_s * u["fn"]:
            return f"{leg}/stick"
        return f"{leg}/{'slip-' if u['friction'] > 0 else 'slip+'}"

    def landing(self, leg, t, y):
        """The state in the other leg's build when the support passes to it (no impact)."""
        part = self.legs[leg]
        kin = part.kinematics([y[0], y[2]])
        other = OTHER[leg]
        pos, vel = part.point_state(kin, [y[1], y[3]], "E" + pb.LEGS[other])
        y_new = np.array(y, float)
        y_new[2], y_new[3] = pos[0], vel[0]
        q = handover(part.system, self.legs[other].system, kin.q[0], part.params)  # the same frame: reordered
        self.legs[other].seed(np.array([y_new[0], y_new[2]]), q)
        return y_new

    def energy(self, leg, y):
        part = self.legs[leg]
        kin = part.kinematics([y[0], y[2]])
        ke, pe = energies(part.system, kin, np.array([[y[1], y[3]]]))
        return float(ke[0] + pe[0])

    def modes(self, max_step, win):
        out = []
        for leg in pb.LEGS:
            def land(t, y, _leg=leg):
                return self.landing(_leg, t, y)

            def after_landing(delta):
                def target(t, y):
                    return self.choose(win.enter(delta), t, y)

                return target

            support = [hybrid.Transition("support", win.up, after_landing(+1), +1, land),
                       hybrid.Transition("support", win.down, after_landing(-1), -1, land)]
            for contact in CONTACTS:
                trs = list(support)
                if contact == "stick":
                    def over_plus(t, y, _leg=leg):  # friction needed towards +x exceeds mu_s fn: slides to -x
                        u = self.solve(_leg, "stick", t, y)
                        return self.mu_s * u["fn"] - u["friction"]

                    def over_minus(t, y, _leg=leg):
                        u = self.solve(_leg, "stick", t, y)
                        return self.mu_s * u["fn"] + u["friction"]

                    trs += [hybrid.Transition("stick->slip", over_plus, f"{leg}/slip-", -1),
                            hybrid.Transition("stick->slip", over_minus, f"{leg}/slip+", -1)]
                else:
                    def stops(t, y):
                        return y[3]

                    def zero_speed(t, y):
                        y = np.array(y, float)
                        y[3] = 0.0
                        return y

                    def again(t, y, _leg=leg):
                        return self.choose(_leg, t, y)

                    trs.append(hybrid.Transition("slip stops", stops, again, -1 if contact == "slip+" else 1, zero_speed))

                def normal(t, y, _leg=leg, _contact=contact):
                    return self.solve(_leg, _contact, t, y)["fn"]

                trs.append(hybrid.Transition("lift-off", normal, None, -1))  # no flight phase: the run ends
                out.append(hybrid.Mode(f"{leg}/{contact}", self.rhs(leg, contact), tuple(trs), max_step))
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
        fn = self.solve(leg0, "stick", 0.0, y0)["fn"]
        if fn <= 0:
            raise InputError(f"pasibot: the ground would have to pull the supporting foot down at the start "
                             f"(f01y = {fn:.4g} N): the foot does not stay on the ground")
        result = hybrid.run(self.modes(max_step, win), lambda t, y: self.choose(leg0, t, y), y0, (0.0, t_end),
                            rtol=rtol, atol=atol)
        if result.stopped_by == "lift-off":
            warnings.warn(f"pasibot: the supporting foot lifts off at t = {result.t_end:.6g} s (f01y reaches zero); "
                          "the model has no flight phase, so the run ends there", stacklevel=2)
        n = max(2, int(round(samples_per_step * t_end / (big_t or t_end / 4))) + 1)
        grid = run_options(result.t_end, n=n).grid()
        return SlipResult(result, self, self.table(result, grid, big_t))

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
        extra = {k: np.empty(len(grid)) for k in ("T8", "friction", "fn", "zmp", "theta8dd", "x1dd")}
        for mode in np.unique(modes):  # one batched A U = C per mode
            sel = np.flatnonzero(modes == mode)
            leg, contact = mode.split("/")
            kin = self.legs[leg].solver.sweep(y[sel][:, [0, 2]])
            u = self.unknowns(leg, contact, kin, grid[sel], y[sel])
            for k in ("T8", "friction", "fn", "theta8dd", "x1dd"):
                extra[k][sel] = u[k]
            extra["zmp"][sel] = y[sel, 2] + u["m"] / u["fn"]
        cols.update(extra)
        cols["support"] = np.array([m.startswith("primed") for m in modes], float)
        cols["sliding"] = np.array([("slip" in m) for m in modes], float)
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


def slip_run(mu_s, mu_k=None, omega=3.0, steps=4, params=None, backend="numpy", **kw) -> SlipResult:
    """Inverse dynamics with slip at the constant crank speed omega over `steps` steps from pi/2."""
    return SlipModel(mu_s, mu_k, omega=omega, params=params, backend=backend).run(steps=steps, **kw)


def friction_demand(omega, params=None, samples=2001, backend="numpy"):
    """max |f01x| / f01y over one step without slip (the ground force from the foot's equilibrium in the
    69 x 69 solution): the smallest mu_s that holds the foot."""
    theta = np.linspace(math.pi / 2, 1.5 * math.pi, samples)
    f = ground_force(theta, omega, params, backend)
    return float(np.max(np.abs(f["f01x"]) / f["f01y"]))


def ground_force(theta8, omega, params=None, backend="numpy"):
    """The ground's force on the supporting foot without slip (Eq. 29) and the ZMP (Eq. 30), from the
    reactions of the 69 x 69 system and the foot's own equilibrium. Returns a dict of arrays."""
    theta8 = np.asarray(theta8, float).ravel()
    inv = pb.inverse_table(theta8, omega, params=params, backend=backend)
    sys = pb.system("foot", "unprimed", backend)
    p = sys.mechanism.resolve_parameters(params)
    l8, g = p["l8"], p["g"]
    m1 = p["density"] * (p["heel"] + p["toe"]) * l8
    xc = (p["toe"] - p["heel"]) * l8 / 2
    xep = p["off_t"] * l8
    fx, fy, zmp = (np.empty(len(theta8)) for _ in range(3))
    primed = inv["support"] == 1
    for leg, sel in (("unprimed", ~primed), ("primed", primed)):
        s = pb.LEGS[leg]
        f2x, f2y = inv[f"j1_2{s}.fx"][sel], inv[f"j1_2{s}.fy"][sel]  # foot on tibia at E
        f12x, f12y = inv[f"j1_12{s}.fx"][sel], inv[f"j1_12{s}.fy"][sel]  # foot on 12 at E'
        fx[sel] = f2x + f12x
        fy[sel] = f2y + f12y + m1 * g
        # moments about the ankle E (foot frame = ground frame, E at the origin, foot on y = 0):
        # ground force at (z, 0) + (-f12 at E') + weight at the centre = 0
        zmp[sel] = (xep * f12y + xc * m1 * g) / fy[sel]
    return {"theta8": theta8, "f01x": fx, "f01y": fy, "zmp": zmp, "T8": inv["T8"]}


def min_friction(omega=3.0, params=None, steps=1, lo=0.0, hi=0.5, tol=1e-4, rtol=1e-10, backend="numpy"):
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
        return any(seg.mode.endswith(("slip+", "slip-")) for seg in run.result.segments)

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


# ------------------------------------------------------------------------------------------------------
# figures of the chapter
# ------------------------------------------------------------------------------------------------------
def _plot(path, x, series, xlabel, ylabel, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for k, (label, (xs, ys)) in enumerate(series.items()):  # styles too, so that coincident curves show
        ax.plot(xs if xs is not None else x, ys, ("-", "--", "-.", ":")[k % 4], label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)


def _save(out_dir, name, table):
    path = os.path.join(out_dir, f"{name}.csv")
    table.to_csv(path)
    return path


def step_inverse(theta8, omega, params=None, backend="numpy"):
    """Inverse dynamics over step 0 (unprimed support) on the closed interval [pi/2, 3pi/2]: the end
    point belongs to this step, before the support changes (where the torque jumps with M')."""
    return pb.system("foot", "unprimed", backend).inverse(theta8, omega, params=params)


def figure11(out_dir, params=None, omegas=(1, 2, 3, 4, 5), samples=361, backend="numpy"):
    """Motor torque against t/T over one step for several crank speeds (no slip)."""
    theta = np.linspace(math.pi / 2, 1.5 * math.pi, samples)
    table = step_inverse(theta, list(omegas), params, backend)
    cols = {"t/T": (theta - theta[0]) / math.pi, "theta8": theta}
    for i, w in enumerate(omegas):
        cols[f"T8_omega{w:g}"] = table["T8"][i * samples:(i + 1) * samples]
    out = Table(cols, {"theta8": "rad"}, "Figure 11")
    _plot(os.path.join(out_dir, "fig11.png"), cols["t/T"], {f"ω8 = {w:g} rad/s": (None, cols[f"T8_omega{w:g}"]) for w in omegas},
          "t / T", "T8 [N m]", "Fig. 11: motor torque over one step, several crank speeds")
    _save(out_dir, "fig11", out)
    return out


def figure12(out_dir, params=None, omega=3.0, loads=(0, 5, 10, 15), samples=361, backend="numpy"):
    """Motor torque against t/T at 3 rad/s for several loads added to the hip (no slip)."""
    theta = np.linspace(math.pi / 2, 1.5 * math.pi, samples)
    cols = {"t/T": (theta - theta[0]) / math.pi, "theta8": theta}
    for load in loads:
        p = dict(params or {}, m_load=load)
        cols[f"T8_load{load:g}kg"] = step_inverse(theta, omega, p, backend)["T8"]
    out = Table(cols, {"theta8": "rad"}, "Figure 12")
    _plot(os.path.join(out_dir, "fig12.png"), cols["t/T"], {f"+{l:g} kg": (None, cols[f"T8_load{l:g}kg"]) for l in loads},
          "t / T", "T8 [N m]", f"Fig. 12: motor torque at {omega:g} rad/s, loads added to the hip")
    _save(out_dir, "fig12", out)
    return out


def _forward_figure(out_dir, name, runs, t_end, dt, title, label):
    grid = uniform_grid(t_end, dt)
    cols, series = {"t": grid}, {}
    for key, run in runs.items():
        y = np.full(len(grid), np.nan)
        inside = grid <= run.t_end
        y[inside] = run.sample(grid[inside])[0][:, 0]
        cols[f"theta8_{key}"] = y
        series[label(key)] = (None, y)
    out = Table(cols, {"t": "s"}, title)
    _plot(os.path.join(out_dir, f"{name}.png"), grid, series, "t [s]", "θ8 [rad]", title)
    _save(out_dir, name, out)
    return out


def figure13(out_dir, params=None, torques=(0.5, 0.8, 0.84, 0.85, 0.9, 1.0), t_end=3.0, dt=0.005, backend="numpy"):
    """Crank angle from rest at pi/2 for several constant torques (forward dynamics, no slip)."""
    runs = {f"T{T:g}": forward_run(T, math.pi / 2, 0.0, t_end, params, rtol=1e-9, backend=backend) for T in torques}
    return _forward_figure(out_dir, "fig13", runs, t_end, dt, "Fig. 13: crank angle from rest, constant torques",
                           lambda k: f"T8 = {k[1:]} N m")


def figure14(out_dir, params=None, scales=(0.5, 1.0, 1.5, 2.0), torque=1.0, t_end=3.0, dt=0.005, backend="numpy"):
    """Crank angle from rest at pi/2 under T8 = 1 N m, the bar density scaled (total mass varied)."""
    base = pb.system("foot").mechanism.resolve_parameters(params)
    runs, masses = {}, {}
    for sc in scales:
        p = dict(params or {}, density=base["density"] * sc)
        runs[f"x{sc:g}"] = forward_run(torque, math.pi / 2, 0.0, t_end, p, rtol=1e-9, backend=backend)
        masses[f"x{sc:g}"] = total_mass(p)
    return _forward_figure(out_dir, "fig14", runs, t_end, dt, f"Fig. 14: crank angle under T8 = {torque:g} N m, total mass varied",
                           lambda k: f"density {k}, total {masses[k]:.2f} kg")


def total_mass(params=None):
    mech = pb.system("foot").mechanism
    p = mech.resolve_parameters(params)
    subs = {mech.parameters[n].symbol: v for n, v in p.items()}
    return float(sum(b.mass.subs(subs) for b in mech.bodies.values()))


def _slip_figure(out_dir, name, cases, steps, title, params=None, backend="numpy", samples_per_step=100):
    tt = np.linspace(0.0, steps, steps * samples_per_step + 1)
    cols, series, events = {"t/T": tt}, {}, {}
    for label, (mu_s, mu_k, omega) in cases.items():
        model = SlipModel(mu_s, mu_k, omega=omega, params=params, backend=backend)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run = model.run(steps=steps, samples_per_step=4)
            table = model.table(run.result, tt * period(omega), period(omega))
        cols[f"slip_{label}"] = table["slip"]
        series[_pretty(label, mu_s, mu_k, omega)] = (None, table["slip"] * 1000)
        events[label] = run.timeline
    out = Table(cols, {"slip_" + k: "m" for k in cases}, title)
    _plot(os.path.join(out_dir, f"{name}.png"), tt, series, "t / T", "cumulative foot slip [mm]", title)
    _save(out_dir, name, out)
    out.timelines = events
    return out


def _pretty(label, mu_s, mu_k, omega):
    if label.startswith("omega"):
        return f"ω8 = {omega:g} rad/s"
    if label.startswith("muk"):
        return f"μk = {mu_k:g}"
    return f"μ = {mu_s:g}"


def figure17(out_dir, params=None, mus=(0.03, 0.05, 0.07, 0.08, 0.1), omega=3.0, steps=4, backend="numpy"):
    cases = {f"mu{m:g}": (m, m, omega) for m in mus}
    return _slip_figure(out_dir, "fig17", cases, steps, f"Fig. 17: supporting-foot slip at {omega:g} rad/s, μs = μk",
                        params, backend)


def figure18(out_dir, params=None, omegas=(3, 4, 5, 6), mu=0.1, steps=4, backend="numpy"):
    cases = {f"omega{w:g}": (mu, mu, w) for w in omegas}
    return _slip_figure(out_dir, "fig18", cases, steps, f"Fig. 18: supporting-foot slip, μ = {mu:g}, several crank speeds",
                        params, backend)


def figure19(out_dir, params=None, mu_s=0.2, mu_ks=(0.2, 0.1, 0.05), omega=5.0, steps=4, backend="numpy"):
    cases = {f"muk{m:g}": (mu_s, m, omega) for m in mu_ks}
    return _slip_figure(out_dir, "fig19", cases, steps, f"Fig. 19: supporting-foot slip at {omega:g} rad/s, μs = {mu_s:g}",
                        params, backend)


FIGURES = {"11": figure11, "12": figure12, "13": figure13, "14": figure14, "17": figure17, "18": figure18,
           "19": figure19}


def figures(out_dir, which=None, params=None, log=print, backend="numpy"):
    """Regenerate the chapter's figures (PNG and CSV) into out_dir; returns name -> Table."""
    out = {}
    names = list(dict.fromkeys(which or FIGURES))  # each figure once, in the order asked
    for name in names:
        if name not in FIGURES:
            raise InputError(f"unknown figure '{name}' (choose from {', '.join(FIGURES)})")
    with bar(len(names), "pasibot figures", "figure") as progress:
        for name in names:
            out[name] = FIGURES[name](out_dir, params=params, backend=backend)
            progress.update(1)
            log(f"wrote {os.path.join(out_dir, f'fig{name}.png')} and fig{name}.csv")
    return out


# ------------------------------------------------------------------------------------------------------
# animation of one step
# ------------------------------------------------------------------------------------------------------
def animate(path, params=None, frames=48, fps=16, step=0, backend="numpy"):
    """One step in the ground frame: every link as a line through its named points, the joints as dots,
    the ankle traces of both feet."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import animation

    lo, hi = pb.step_window(step)
    theta = np.linspace(lo, hi, frames)
    table = pb.kinematics_table(theta, params, frame="ground", backend=backend)
    fine = pb.kinematics_table(np.linspace(lo, hi, 200), params, frame="ground", backend=backend)
    mech = pb.system("foot").mechanism
    bodies = [b for b in mech.bodies]
    chains = {b: [p for p in mech.bodies[b].points] for b in bodies}
    fig, ax = plt.subplots(figsize=(6, 7))
    xs = np.concatenate([table[f"{p}.x"] for b in bodies for p in chains[b]])
    ys = np.concatenate([table[f"{p}.y"] for b in bodies for p in chains[b]])
    pad = 0.05 * np.ptp(ys)
    ax.set_xlim(xs.min() - pad, xs.max() + pad)
    ax.set_ylim(min(ys.min(), 0) - pad, ys.max() + pad)
    ax.set_aspect("equal")
    ax.axhline(0.0, color="0.4", lw=1)
    for p, style in (("E", "C0--"), ("E_f", "C1--")):
        ax.plot(fine[f"{p}.x"], fine[f"{p}.y"], style, lw=0.8)
    lines = {b: ax.plot([], [], "-", lw=1.6 if b in ("13", "8") else 1.0, color="C1" if b.endswith("_f") else "C0")[0]
             for b in bodies}
    joints = ax.plot([], [], "k.", ms=3)[0]
    title = ax.set_title("")

    def order(b, k):
        pts = chains[b]
        xy = np.array([(table[f"{p}.x"][k], table[f"{p}.y"][k]) for p in pts])
        if b == "13":  # hip: A-B-D-A outline plus the slot point
            return xy
        d = xy - xy[0]
        return xy[np.argsort(d @ (xy[-1] - xy[0]) if len(xy) > 1 else [0])]

    def frame(k):
        pts = []
        for b in bodies:
            xy = order(b, k)
            lines[b].set_data(xy[:, 0], xy[:, 1])
            pts.append(xy)
        allp = np.vstack(pts)
        joints.set_data(allp[:, 0], allp[:, 1])
        title.set_text(f"PASIBOT, one step: θ8 = {table['theta8'][k]:.2f} rad")
        return list(lines.values()) + [joints, title]

    anim = animation.FuncAnimation(fig, frame, frames=frames, blit=False)
    try:
        save_animation(anim, path, fps)
    finally:
        plt.close(fig)
    return path
