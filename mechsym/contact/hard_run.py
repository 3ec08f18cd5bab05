"""Event-driven simulation with hard contacts (mechsym.contact.hard) on mechsym.core.hybrid's runner.

Between events every contact keeps its state (NO_CONTACT, STICK or SLIP) and the right-hand side solves the
equality-constrained dynamics of that set: for every contact in contact its normal gap acceleration is zero,
for a sticking one also its tangential acceleration; a slipping one carries the kinetic force -mu fn s (s the
sliding direction). With G the columns of the contact forces and R the constrained rows,

    (R H^-1 G) x = -(R H^-1 (tau - C) + b_R),     v' = H^-1 (tau - C + G x)

(least squares of minimum norm where the contacts are redundant). Events, one vectorised guard per kind,
each a zero crossing located by solve_ivp on the dense output:

* gain:   min gap of the free contacts (a gap reaching zero while approaching);
* loss:   min fn of the contacts in contact (a force reaching zero: the contact would pull, its separating
          acceleration takes over);
* slip:   min over sticking contacts of the distance of ft to the friction pyramid (mu fn cos(pi/k) - max
          facet component);
* stick:  a slipping contact's slide stopping. A fast slide (|v_t| > slow_slip) follows the direction of
          v_t and ends its piece when |v_t| falls to slow_slip; a slow slide keeps the direction s0 it had
          where the piece started (near zero speed the direction of v_t can turn arbitrarily fast, which
          would make the equations stiff) and ends when s0 . v_t reaches zero (the slide stops: exactly
          where v_t does on a straight slide) or when |v_t| grows past 2 slow_slip (hysteresis: a slide
          turning fast starts well above the speed at which a fast one ends). slow_slip is relative to
          the model's speed scale sqrt(a l) (HardContacts.speed_scale: a = g for a floating robot, l the
          spread of its contacts; default 3e-4 of it, 0.93 mm/s for HyQ);
* separate: the least normal acceleration of the free contacts that sit on the plane at rest along its
          normal where the piece starts (a contact lifting off, or left out by the LCP with zero force and
          zero separating acceleration) reaching zero: such a contact would start to penetrate, which the
          gain guard would only see once its gap is below -gap_tol, with a spurious impulse.

At an event: the contacts touching the plane (gap within `gap_tol`) and approaching receive the impulse of
mechsym.contact.hard_impulse.impulse (restitution e per contact, friction mu); a rebound slower than `chatter_speed`
(default 1e-3 m/s) is not kept: that contact gets e = 0 and stays in contact (the chatter rule: an infinite
sequence of ever smaller bounces, a Zeno point, becomes persistent contact, as in Featherstone's and most
event-driven simulators). The slow-slide rule: a touching contact sliding slower than slow_slip is brought to
tangential rest (an H-orthogonal projection of v, which can only remove kinetic energy: the friction work of
stopping it), so that it sticks wherever the friction cone can hold it; without the rule a slide slowing
after a frictional impact stops and restarts in an ever shorter series of slow slides as its direction turns
(109 of 133 switches of HyQ's drop at mu = 0.8). Then the acceleration LCP (contact_forces) over the
touching, non-separating contacts decides which stay (fn > 0) and which stick or slip. Drift correction by projection at every event:
the configuration is moved (Gauss-Newton in v-space, H-weighted) so that the gaps of the contacts in contact
are zero, and the velocity is projected H-orthogonally onto the constraints (zero normal rate, zero
tangential rate for sticking contacts); between events the constraints hold at the acceleration level to
the integration tolerance (no Baumgarte term alters the dynamics).

The controller hook tau(t, q, v) is called at every right-hand side; `pd_hold` (kp 300 N m/rad, kd 10 N m
s/rad) holds the initial joint angles of the model's actuated joints and is the default for models that
have them; models without actuated joints get tau = 0.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from mechsym.contact.hard import HardContacts
from mechsym.contact.hard_modes import CModes, Modes, PDHold
from mechsym.core import hybrid
from mechsym.core.errors import InputError
from mechsym.core.results import RunResult, Table
from mechsym.core.timegrid import run_options

__all__ = ["simulate_hard", "HardRun", "pd_hold"]


@dataclass
class HardRun(RunResult):
    """Result of `simulate_hard`: the RunResult (the table on the uniform grid, the switches as events,
    the dense solution, the counters in `stats`), every contact's state change, the impacts and the pieces."""

    timeline: list = field(default_factory=list)  # mechsym.contact.hard_modes.HardEvent, in time order
    impacts: list = field(default_factory=list)
    hybrid: hybrid.HybridResult | None = None
    contacts: HardContacts | None = None
    seg_starts: np.ndarray | None = None
    seg_states: np.ndarray | None = None

    def sample(self, t):
        """States [q, v] (len(t), nq + nv) from the dense outputs."""
        return self.hybrid.sample(np.atleast_1d(np.asarray(t, float)))[0]

    def states_at(self, t):
        """The contact states (per contact: 0 none, 1 stick, 2 slip) in force at the times t, one row per time."""
        idx = np.clip(np.searchsorted(self.seg_starts, np.atleast_1d(t), side="right") - 1, 0, len(self.seg_starts) - 1)
        return self.seg_states[idx]

    def timeline_table(self) -> Table:
        """The timeline as a Table: t, contact index, state before and after, impulse (N s)."""
        ev = self.timeline
        return Table({"t": np.array([e.t for e in ev]), "contact": np.array([e.index for e in ev], float),
                      "before": np.array([e.before for e in ev], float), "after": np.array([e.after for e in ev], float),
                      "impulse": np.array([e.impulse for e in ev])},
                     {"t": "s", "impulse": "N s"}, "contact state changes (0 none, 1 stick, 2 slip)")

    def counts(self, kind=None):
        """The number of timeline events, or of those of one `kind` (e.g. 'impact')."""
        return sum(1 for e in self.timeline if kind is None or e.kind == kind)


def pd_hold(model, q_ref, kp=300.0, kd=10.0):
    """tau(t, q, v): kp (q_ref - q) - kd v on the model's actuated joints (v indices `model.actuated`, the
    configuration's joint entries offset by nq - nv), zero elsewhere (a PDHold)."""
    idx = np.asarray(getattr(model, "actuated", ()), int)
    offset = model.nq - model.nv
    q_ref = np.asarray(q_ref, float)[idx + offset] if len(idx) else np.zeros(0)
    if not (np.isfinite(kp) and kp >= 0 and np.isfinite(kd) and kd >= 0):
        raise InputError(f"PD gains must be >= 0, got kp={kp}, kd={kd}")
    return PDHold(model.nv, idx, offset, q_ref, kp, kd)


def simulate_hard(contacts: HardContacts, q0, v0, t_end, *, mu=0.0, e=0.0, controller="default", dt=None,
                  rtol=1e-9, atol=None, method="DOP853", max_step=np.inf, gap_tol=1e-10, stick_speed=1e-6,
                  chatter_speed=1e-3, slow_slip=3e-4, slow_stop=True, max_switches=100_000,
                  route="auto") -> HardRun:
    """Event-driven simulation of `contacts.model` with hard contacts from (q0, v0) over [0, t_end].

    mu: friction coefficient (one, or one per contact); e: restitution (one, or per contact, in [0, 1]).
    slow_slip: the speed under which a slide is slow (its direction held, and brought to rest at an event
    where the cone holds it), relative to the model's speed scale `contacts.speed_scale(q0)`; the value in
    m/s is `stats['slow_slip']`. slow_stop: the slow-slide rule (False: a slow slide runs on until it stops
    by itself, at its exact instant but through a series of ever slower slides where its direction turns).
    gap_tol (m), stick_speed and chatter_speed (m/s) are absolute.
    controller: 'default' (pd_hold of q0 on the actuated joints; tau = 0 without them), None (tau = 0), or a
    callable tau(t, q, v). route: 'auto' (the held right-hand side and guards compiled, by
    mechsym.contact.c_contact, where the model is a derived tree on the C backend; the PD hold computed in C),
    'c' (that, an InputError where it does not apply) or 'python'. The table holds the uniform grid 0..t_end
    (step dt, default t_end/1000): t, the configuration (model.q_names, else q0..), the velocity
    (model.v_names, else v0..), and per contact CONTACT.fn, CONTACT.ft1, CONTACT.ft2 (N, plane frame) and
    CONTACT.impulse (N s, the normal impulses of the impacts in (t_k - dt, t_k], on the first grid sample at
    or after each impact)."""
    if not isinstance(contacts, HardContacts):
        raise InputError(f"contacts must be HardContacts, got {type(contacts).__name__}")
    hc, model = contacts, contacts.model
    q0, v0 = np.atleast_1d(np.asarray(q0, float)), np.atleast_1d(np.asarray(v0, float))
    if q0.shape != (model.nq,) or v0.shape != (model.nv,):
        raise InputError(f"q0 must have {model.nq} values and v0 {model.nv}, got {q0.shape} and {v0.shape}")
    opts = run_options(t_end, dt, rtol, atol, arrays={"q0": q0, "v0": v0}, width=60)
    for name, value in (("gap_tol", gap_tol),
                        ("stick_speed", stick_speed), ("chatter_speed", chatter_speed), ("slow_slip", slow_slip)):
        if not (np.isfinite(value) and value > 0):
            raise InputError(f"{name} must be positive and finite, got {value}")
    mu_arr, e_arr = hc.mu_array(mu), hc.e_array(e)
    if controller == "default":
        controller = pd_hold(model, q0) if len(getattr(model, "actuated", ())) else None
    if controller is None:
        controller = PDHold(model.nv, np.zeros(0, int), 0, np.zeros(0), 0.0, 0.0)   # tau = 0
    elif not callable(controller):
        raise InputError("controller must be 'default', None or a callable tau(t, q, v)")
    if route not in ("auto", "c", "python"):
        raise InputError(f"route must be 'auto', 'c' or 'python', got {route!r}")
    c = hc.c_route() if route != "python" else None
    if route == "c" and c is None:
        raise InputError("the C route of simulate_hard needs a derived tree on the C backend whose contact frames "
                         "carry every contact")
    slow_slip = slow_slip * hc.speed_scale(q0) if np.any(mu_arr > 0) else slow_slip
    args = (hc, mu_arr, e_arr, controller, gap_tol, stick_speed, chatter_speed, slow_slip, bool(slow_stop))
    modes = CModes(c, *args) if c is not None else Modes(*args)
    wall = time.perf_counter()
    y0 = modes.start(0.0, np.concatenate([q0, v0]))
    mode = hybrid.Mode("contact", modes.rhs, (
        hybrid.Transition("gain", modes.gain_guard, "contact", -1, modes.switch),
        hybrid.Transition("loss", modes.loss_guard, "contact", -1, modes.switch),
        hybrid.Transition("slip", modes.slip_guard, "contact", -1, modes.switch),
        hybrid.Transition("stick", modes.stick_guard, "contact", -1, modes.switch),
        hybrid.Transition("separate", modes.separate_guard, "contact", -1, modes.switch)), max_step)
    res = hybrid.run([mode], "contact", y0, (0.0, opts.t_end), rtol=opts.rtol, atol=opts.atol, method=method,
                     max_switches=max_switches, max_chatter=max(8, 2 * hc.n + 2), dt=opts.dt)
    wall = time.perf_counter() - wall

    grid = res["t"]
    y = np.column_stack(list(res.columns.values())[1:])
    seg_starts = np.array([s.t0 for s in res.segments])
    seg_states = np.array(modes.seg_states[:len(seg_starts)])
    idx = res.piece_at(grid)
    cols = {"t": grid}
    q_names = list(getattr(model, "q_names", [f"q{i}" for i in range(model.nq)]))
    v_names = list(getattr(model, "v_names", [f"v{i}" for i in range(model.nv)]))
    cols.update({n: y[:, i] for i, n in enumerate(q_names)})
    cols.update({n: y[:, model.nq + i] for i, n in enumerate(v_names)})
    seg = {name: np.array(getattr(modes, f"seg_{name}")[:len(seg_starts)]) for name in ("fast", "sdir")}
    forces = modes.held_forces(grid, y, seg_states[idx], seg["fast"][idx], seg["sdir"][idx])
    impulses = np.zeros((len(grid), hc.n))
    for imp in modes.impacts:
        k = min(int(np.searchsorted(grid, imp.t - 1e-12 * max(1.0, imp.t))), len(grid) - 1)
        impulses[k] += imp.Lam[:, 0]
    for j, name in enumerate(hc.names):
        cols[f"{name}.fn"], cols[f"{name}.ft1"], cols[f"{name}.ft2"] = forces[:, j, 0], forces[:, j, 1], forces[:, j, 2]
        cols[f"{name}.impulse"] = impulses[:, j]
    units = {"t": "s", **{f"{n}.{c}": "N" for n in hc.names for c in ("fn", "ft1", "ft2")},
             **{f"{n}.impulse": "N s" for n in hc.names}}
    stats = {"wall": wall, "rhs_evaluations": res.nfev, "lcp_solves": modes.n_lcp, "switches": len(res.events),
             "events": len(modes.timeline), "impacts": len(modes.impacts), "pieces": len(res.segments),
             "max_drift": modes.drift, "slow_slip": modes.slow}
    return HardRun(cols, units, "hard contact simulation", events=res.events, nfev=res.nfev, solution=res.solution,
                   status=res.status, message=res.message, stats=stats, timeline=modes.timeline,
                   impacts=modes.impacts, hybrid=res, contacts=hc, seg_starts=seg_starts, seg_states=seg_states)
