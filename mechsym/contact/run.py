"""Simulation with ground-contact points: every change of a point's state located as an event.

`simulate_contact(points, ground, state0, t_end)` integrates a model (planar System or FloatingSystem)
with the contact law applied to all its points (one evaluation of the law per right-hand side) and the
tangential deflections u as extra states, on mechsym.core.hybrid's runner. Each point is in exactly one state
(no contact, stick, slip); every change is located as a zero crossing, as Simulink's zero-crossing
detection does in spatial_v2's example 7, and recorded in a timeline.

Held states (the hybrid-mode approach, default). Between two located events every point keeps its state,
and the right-hand side evaluates the law's formulas in those states (`points.laws_in_states`, equal to
gcontact to rounding wherever the states are the law's own classification, which the events guarantee).
So the right-hand side is smooth within each piece: the integrator never steps across a corner of the
law (a touchdown, where the force grows like sqrt(depth), or a stick/slip switch), the event is located
on a smooth dense output, and the state at the switch is as accurate as the tolerance asks. (Evaluating
gcontact's own classification instead, `hold_states=False`, lets the step that straddles a touchdown
feel the contact before it happens: at rtol 1e-6, example 7's first touchdown is then located 6e-10 s
late with a 1e-4 m/s error in the velocity; held, both are at rounding level.) Simulink holds the modes
of its blocks within a step in the same way.

How the events stay cheap with many points. Per-point event functions would cost one solve_ivp event
function per point and signal (64 for example 7), each evaluated at every step. Instead there is one
event function per signal type, vectorised over the points:

    contact guard  g_c = min_i (sigma_i c_i + b_i)                  sigma_i = +1 in contact, -1 out
    stick guard    g_s = min_(i in contact) (sigma_i s_i + b_i)     sigma_i = +1 stick, -1 slip

with the continuous signals c, s of `points.contact_signals` (metres; c > 0 iff the normal force is
positive, s >= 0 iff the sticking force is inside the cone). Between switches every point keeps its
state, so each guard is positive; it falls through zero exactly when the first point's signal changes
sign (direction -1), and solve_ivp's root finder locates that instant on the dense output. Both guards
share one evaluation of the point kinematics per step (cached). At the switch (the transition's reset)
every point whose signal is at or past zero (within `event_tol`, so that points crossing at the same
instant, like the two faces of an upright disc or the four corners of a level plate, switch together)
changes state; a point entering contact sticks or slips by the sign of its stick signal. The timeline
records each change. The biases b_i (zero, or, for a point switched at this very instant, the tiny
amount that lifts its guard to event_tol) keep every guard strictly positive where the next piece
starts, so that a crossing in the first step of that piece is never missed and a point just switched
does not switch back. A floating body's quaternion is renormalised at every switch.

What is not seen: a signal that crosses zero and returns within one integration step (as in Simulink).
`max_step` bounds that; `audit` compares the law's own classification with the recorded states at every
output sample and counts disagreements in stats['unlocated'].
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from mechsym.contact.points import ContactPoints, classify, contact_signals
from mechsym.contact.spatial_v2 import NO_CONTACT, SLIP, STATE_NAMES, STICK, GroundContact, _laws
from mechsym.core import hybrid
from mechsym.core.errors import InputError
from mechsym.core.results import RunResult, Table
from mechsym.core.timegrid import run_options


__all__ = ["simulate_contact", "ContactRun", "ContactEvent"]


@dataclass(frozen=True)
class ContactEvent:
    """Point `point` (index `index`) changed from state `before` to `after` at time t."""

    t: float
    point: str
    index: int
    before: int
    after: int

    @property
    def kind(self):
        """What changed: contact made, contact lost, stick to slip or slip to stick."""
        b, a = self.before, self.after
        if b == NO_CONTACT:
            return "contact made"
        if a == NO_CONTACT:
            return "contact lost"
        return "stick->slip" if b == STICK else "slip->stick"

    def describe(self):
        """One line: the time, the point and its states before and after."""
        return f"t={self.t:.9g}: {self.point} {STATE_NAMES[self.before]} -> {STATE_NAMES[self.after]}"


@dataclass
class ContactRun(RunResult):
    """Result of `simulate_contact`: the RunResult (the table on the uniform grid, the switches as events,
    the dense solution, the counters in `stats`), every point's state change and the pieces."""

    timeline: list = field(default_factory=list)  # ContactEvent, in time order
    hybrid: hybrid.HybridResult | None = None     # the pieces with their dense outputs
    points: ContactPoints | None = None
    ground: GroundContact | None = None
    seg_starts: np.ndarray | None = None          # start time of every piece
    seg_states: np.ndarray | None = None          # (n pieces, np) point states in every piece

    def states_at(self, t):
        """Point states (len(t), np) at times t (at a switch instant, the state entered there)."""
        idx = np.clip(np.searchsorted(self.seg_starts, np.atleast_1d(t), side="right") - 1, 0, len(self.seg_starts) - 1)
        return self.seg_states[idx]

    def sample(self, t):
        """Full ODE states (len(t), ny) at times t from the dense outputs."""
        return self.hybrid.sample(np.atleast_1d(np.asarray(t, float)))[0]

    def timeline_table(self) -> Table:
        """The contact state changes as a Table (t, point index, state before and after)."""
        ev = self.timeline
        return Table({"t": np.array([e.t for e in ev]), "point": np.array([e.index for e in ev], float),
                      "before": np.array([e.before for e in ev], float), "after": np.array([e.after for e in ev], float)},
                     {"t": "s"}, "contact state changes (0 none, 1 stick, 2 slip)")

    def counts(self, kind=None):
        """Number of recorded state changes (of one kind: 'contact made', 'contact lost', 'stick->slip',
        'slip->stick')."""
        return sum(1 for e in self.timeline if kind is None or e.kind == kind)


def contact_width(n_points) -> int:
    """Values kept per output time point of a contact run with n_points points: the states and the
    deflections, the points' positions and velocities and the law's audit (about 16 per point)."""
    return 60 + 16 * n_points


class _Guards:
    """Point states, the two vectorised guards (one signal evaluation per state, cached) and the switch."""

    def __init__(self, points, ground, event_tol):
        self.points, self.ground = points, ground
        self.tol = event_tol
        self.window = 1e-9  # a point switched less than window * max(1, t) ago switched "at this instant"
        self.n_signal = 0
        self._key = None
        self.timeline = []
        self.seg_states = []

    def attach(self, ode, project, u_slice):
        """The model's ODE (for coordinates(y)), its state projection and where u sits in y."""
        self.ode, self.project, self.u_slice = ode, project, u_slice

    def signals(self, t, y):
        if self._key is not None and t == self._key[0] and np.array_equal(y, self._key[1]):
            return self._cached  # the second guard at the same step end
        self.n_signal += 1
        q, qd = self.ode.coordinates(y)
        u = y[self.u_slice]
        p, v = self.points.kinematics(q, qd)
        self._cached = contact_signals(self.ground, p, v, u.reshape(self.points.nd - 1, self.points.n))
        self._key = (t, np.array(y))
        return self._cached

    def start(self, t, y):
        c, s = self.signals(t, y)
        self.state = classify(c, s)
        self.since = np.full(self.points.n, -np.inf)
        self.bias_c = np.zeros(self.points.n)
        self.bias_s = np.zeros(self.points.n)
        self._arm(c, s, np.ones(self.points.n, bool))
        self.seg_states.append(self.state.copy())

    def _arm(self, c, s, fresh):
        """Signs for the current states, and biases that lift the guards of points switched at this
        instant (`fresh`) to at least tol where the next piece starts; every other point is already
        more than tol/2 on its side (else it would have switched) and gets no bias."""
        incontact = self.state != NO_CONTACT
        self.sig_c = np.where(incontact, 1.0, -1.0)
        self.sig_s = np.where(self.state == STICK, 1.0, -1.0)
        self.stick_mask = incontact
        self.bias_c = np.where(fresh, np.maximum(0.0, self.tol - self.sig_c * c), 0.0)
        self.bias_s = np.where(fresh, np.maximum(0.0, self.tol - self.sig_s * s), 0.0)

    def contact_guard(self, t, y):
        c, _ = self.signals(t, y)
        return float(np.min(self.sig_c * c + self.bias_c))

    def stick_guard(self, t, y):
        if not self.stick_mask.any():
            return 1.0
        _, s = self.signals(t, y)
        return float(np.min((self.sig_s * s + self.bias_s)[self.stick_mask]))

    def switch(self, t, y):
        """At a located crossing: every point whose signal is at or past zero, within tol/2, changes state
        (so points crossing at the same instant switch together; a point that switched at this very
        instant is measured from its biased level, so it does not switch back), then the guards are
        re-armed."""
        y = self.project(y)
        c, s = self.signals(t, y)
        half = 0.5 * self.tol
        fresh = t - self.since <= self.window * max(1.0, abs(t))
        old = self.state
        new = old.copy()
        incontact = old != NO_CONTACT
        cross_c = self.sig_c * c + np.where(fresh, self.bias_c, 0.0) <= half
        cross_s = incontact & (self.sig_s * s + np.where(fresh, self.bias_s, 0.0) <= half)
        lost, made = incontact & cross_c, ~incontact & cross_c
        new[lost] = NO_CONTACT
        new[made] = np.where(s[made] >= 0, STICK, SLIP)
        flip = cross_s & ~lost
        new[flip] = np.where(old[flip] == STICK, SLIP, STICK)
        changed = new != old
        for i in np.flatnonzero(changed):
            self.timeline.append(ContactEvent(float(t), self.points.names[i], int(i), int(old[i]), int(new[i])))
        self.since = np.where(changed, t, self.since)
        self.state = new
        self._arm(c, s, changed | fresh)
        self.seg_states.append(new.copy())
        return y


def _check_backend(backend, points, method, hold_states):
    """The Backend of a contact run: the one named, refusing what the C route does not do ("c" without a
    compiler is numpy, with a warning); by default (None) the default backend (C where a compiler is
    present) where the C route covers the run, else numpy (a planar model's contact run is the hybrid loop
    over its own equations, on the backend it was derived with)."""
    from mechsym.codegen.backend import resolve

    chosen = resolve(backend, default="numpy" if _c_run_refusal(points, method, hold_states) else None)
    chosen.route(compiled=_check_c_run, python=lambda *args: None)(points, method, hold_states)
    return chosen


def _c_run_refusal(points, method, hold_states) -> str:
    """Why the contact run on C cannot do this run ("" when it can)."""
    from mechsym.contact import c_run

    if not c_run.supports(points):
        return ("the contact run on C covers a floating 3-D body; a planar model runs its contact on "
                "backend 'numpy' (derive the mechanism with backend 'c' for its own equations)")
    if method != "RK45":
        return f"method {method!r} is not available for a contact run on C (RK45; or backend 'numpy')"
    if not hold_states:
        return "hold_states=False (the law classifying by itself) runs on backend 'numpy' only"
    return ""


def _check_c_run(points, method, hold_states):
    """What the contact run on C does not do, refused."""
    refusal = _c_run_refusal(points, method, hold_states)
    if refusal:
        raise InputError(refusal)


def _hybrid_of(raw) -> hybrid.HybridResult:
    """The pieces of a C run (mechsym.contact.c_run.RawRun) as a HybridResult with their dense outputs."""
    from mechsym.contact.c_run import StepDense, Unkept

    segments, timeline = [], []
    n, kept = len(raw.piece_t), len(raw.step_t)
    ends = np.append(raw.piece_step[1:], raw.n_steps)
    for k in range(n):
        t0 = float(raw.piece_t[k])
        t1 = float(raw.piece_t[k + 1]) if k + 1 < n else raw.t_end
        if ends[k] <= kept:
            sl = slice(raw.piece_step[k], ends[k])
            dense = StepDense(raw.step_t[sl], raw.step_h[sl], raw.step_y[sl], raw.step_q[sl], t1)
            y1 = dense(t1)
        else:
            dense, y1 = Unkept(t0, t1, kept), np.full(len(raw.piece_y[k]), np.nan)
        segments.append(hybrid.Segment("contact", t0, t1, dense, raw.piece_y[k], y1, int(raw.piece_nfev[k])))
        if raw.piece_transition[k] >= 0 and k + 1 < n:
            timeline.append(hybrid.Event(t1, "contact", "contact", ("contact", "stick")[raw.piece_transition[k]],
                                         raw.piece_y[k + 1]))
    return hybrid.HybridResult({}, {"t": "s"}, "hybrid run", events=timeline, nfev=raw.nfev, status="done",
                               segments=segments, t_end=raw.t_end)


def simulate_contact(points: ContactPoints, ground: GroundContact, state0, t_end, *, u0=None, dt=None,
                     rtol=1e-9, atol=None, forces=None, method="RK45", max_step=np.inf, event_tol=None,
                     max_switches=100_000, audit=True, hold_states=True, backend=None) -> ContactRun:
    """Integrate the model carrying `points` on the compliant `ground` from `state0` to `t_end`.

    state0: the model's state: [theta, thetad] (2k values) for a planar System, the 13 values
    [x, y, z, qx, qy, qz, qw, vx, vy, vz, wbx, wby, wbz] of mechsym.spatial.floating for a FloatingSystem
    (quaternion scalar last; `FloatingSystem.initial_state` builds one). u0: initial deflections ((nd-1) x np, default zero). forces:
    coordinate forces of a planar model (as `simulate`).

    The table holds the uniform grid 0..t_end (step dt, default t_end/1000) with the model's columns
    (planar: the coordinates, their rates NAMEd and the contact points POINT.x, POINT.y; floating: the
    world columns of mechsym.spatial.floating), the deflections POINT.ux (POINT.uy) and n_contact, n_stick,
    n_slip. `run.timeline` lists every state change.

    method: scipy's integrator (default RK45: the contact forces have square-root corners at touchdown,
    where a low order wastes fewer evaluations than DOP853 at moderate tolerances). max_step bounds the
    step: a signal that crosses zero and comes back within one step is not seen (as in Simulink), so a
    bound of the order of the shortest stick or slip phase matters. audit: after the run, compare the
    law's own classification with the recorded states at every output sample (away from events);
    stats['unlocated'] counts the samples where they differ (0: no state change was stepped over at
    the output resolution). event_tol: how close to zero (metres) a signal counts as crossing together
    with the located one (default 1e-12 times the largest point offset, at least 1e-15 m).

    backend: "numpy" (mechsym.core.hybrid on scipy's solve_ivp) or "c" (a floating body: the whole run in one
    compiled call, mechsym.contact.c_run, with scipy's RK45 step for step and the same events; held
    states only; a machine without a compiler runs numpy with a warning); None, the default: C where a
    compiler is present and the C route covers the run, numpy otherwise."""
    if not isinstance(points, ContactPoints):
        raise InputError(f"points must be ContactPoints, got {type(points).__name__}")
    if not isinstance(ground, GroundContact):
        raise InputError(f"ground must be a GroundContact(K, D, mu), got {type(ground).__name__}")
    nd, n = points.nd, points.n
    y0 = np.atleast_1d(np.asarray(state0, float))
    u0 = np.zeros((nd - 1, n)) if u0 is None else np.asarray(u0, float)
    if u0.shape != (nd - 1, n):
        raise InputError(f"u0 must have shape {(nd - 1, n)} (one row per tangential direction), got {u0.shape}")
    opts = run_options(t_end, dt, rtol, atol, arrays={"state0": y0, "u0": u0}, width=contact_width(n),
                       what=f"contact simulation of {n} points")
    ns = (nd - 1) * n
    backend = _check_backend(backend, points, method, hold_states)
    if event_tol is None:
        event_tol = max(1e-15, 1e-12 * float(np.max(np.abs(points.local))))
    guards = _Guards(points, ground, event_tol)
    load = points.load(ground, guards if hold_states else None)   # one law evaluation per right-hand side
    model = points.model
    ode, project, y0 = model.equations(y0, forces, load, ns)
    n_model = len(y0)
    guards.attach(ode, project, slice(n_model, n_model + ns))
    y_start = np.concatenate([y0, u0.ravel()])
    guards.start(0.0, y_start)

    max_chatter = max(8, 2 * n + 2)
    def compiled():
        """The whole run in one call (mechsym.contact.c_run)."""
        from mechsym.contact import c_run

        grid = opts.grid()
        raw = c_run.run(points, ground, y_start, opts.t_end, grid, rtol=opts.rtol, atol=opts.atol,
                        max_step=max_step, event_tol=event_tol, max_switches=max_switches, max_chatter=max_chatter)
        guards.timeline = [ContactEvent(float(t), points.names[i], int(i), int(b), int(a)) for t, i, b, a in
                           zip(*raw.events)]
        guards.seg_states = list(raw.piece_states)
        guards.n_signal = raw.n_signal
        return _hybrid_of(raw), grid, raw.grid_y

    def python():
        """mechsym.core.hybrid on scipy's solve_ivp, one mode with the contact and stick guards."""
        mode = hybrid.Mode("contact", ode.rhs, (
            hybrid.Transition("contact", guards.contact_guard, "contact", -1, guards.switch),
            hybrid.Transition("stick", guards.stick_guard, "contact", -1, guards.switch)), max_step)
        # A trial step that runs deep into the ground may overflow: the right-hand side then returns NaN and
        # the integrator rejects the step; silence the floating-point warnings of such rejected steps.
        with np.errstate(over="ignore", invalid="ignore"):
            res = hybrid.run([mode], "contact", y_start, (0.0, opts.t_end), rtol=opts.rtol, atol=opts.atol,
                             method=method, max_switches=max_switches, max_chatter=max_chatter, dt=opts.dt)
        return res, res["t"], np.column_stack(list(res.columns.values())[1:])

    wall = time.perf_counter()
    res, grid, y = backend.route(compiled=compiled, python=python)()
    wall = time.perf_counter() - wall
    seg_starts = np.array([s.t0 for s in res.segments])
    seg_states = np.array(guards.seg_states[:len(seg_starts)])
    idx = res.piece_at(grid)
    states = seg_states[idx]
    cols = {"t": grid}
    cols.update(model.state_columns(y[:, :n_model]))
    q_all, qd_all = model.motion(y[:, :n_model])
    cols.update({name: y[:, n_model + i] for i, name in enumerate(points.deflection_names())})
    cols["n_contact"] = np.sum(states != NO_CONTACT, axis=1).astype(float)
    cols["n_stick"] = np.sum(states == STICK, axis=1).astype(float)
    cols["n_slip"] = np.sum(states == SLIP, axis=1).astype(float)
    unlocated = 0
    if audit or model.point_columns:  # the law on every output sample, in one vectorised call
        p, v = points.kinematics(q_all.T, qd_all.T)                       # (nd, np, N)
        if model.point_columns:  # planar models report their contact points (docs/conventions.md: POINT.x, .y)
            for j, name in enumerate(points.names):
                cols[f"{name}.x"], cols[f"{name}.y"] = p[0, j], p[1, j]
        if audit:
            u = np.moveaxis(y[:, n_model:].reshape(len(grid), nd - 1, n), 0, -1)   # (nd-1, np, N)
            law = _laws(ground.stiffness, ground.damping, ground.mu, p.reshape(nd, -1), v.reshape(nd, -1),
                        u.reshape(nd - 1, -1))[3]
            differs = np.any(law.reshape(n, len(grid)).T != states, axis=1)
            event_times = np.sort([e.t for e in guards.timeline] + [np.inf, -np.inf])
            after = np.searchsorted(event_times, grid)
            gap = np.minimum(event_times[after] - grid, grid - event_times[after - 1])
            unlocated = int(np.sum(differs & (gap > 1e-9 * np.maximum(1.0, grid))))
    stats = {"wall": wall, "rhs_evaluations": res.nfev, "signal_evaluations": guards.n_signal,
             "switches": len(res.events), "events": len(guards.timeline), "pieces": len(res.segments)}
    if audit:
        stats["unlocated"] = unlocated
    return ContactRun(cols, {"t": "s"}, f"{model.title}: ground contact simulation", events=res.events, nfev=res.nfev,
                      solution=res.solution, status=res.status, message=res.message, stats=stats,
                      timeline=guards.timeline, hybrid=res, points=points, ground=ground, seg_starts=seg_starts,
                      seg_states=seg_states)
