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
mechsym.contact.hard.impulse (restitution e per contact, friction mu); a rebound slower than `chatter_speed`
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
from scipy.linalg import cho_factor, cho_solve

from mechsym.contact.hard import HardContacts, contact_forces, impulse
from mechsym.contact.spatial_v2 import NO_CONTACT, SLIP, STICK
from mechsym.core import hybrid
from mechsym.core.errors import InputError
from mechsym.core.results import RunResult, Table
from mechsym.core.timegrid import run_options

__all__ = ["simulate_hard", "HardRun", "HardEvent", "pd_hold", "PDHold"]

STATE_NAMES = {NO_CONTACT: "none", STICK: "stick", SLIP: "slip"}


@dataclass(frozen=True)
class HardEvent:
    """At time t contact `contact` changed from `before` to `after` (0 none, 1 stick, 2 slip); `impulse` is
    its normal impulse (N s) if the event was an impact; `kind`: 'impact', 'contact made', 'contact lost',
    'stick->slip', 'slip->stick', 'rebound', 'persistent' (a rebound below the chatter speed)."""

    t: float
    contact: str
    index: int
    before: int
    after: int
    kind: str
    impulse: float = 0.0

    def describe(self):
        """One line: time, contact, state before -> after, kind and (for an impact) the impulse."""
        extra = f", impulse {self.impulse:.6g} N s" if self.impulse else ""
        return f"t={self.t:.9g}: {self.contact} {STATE_NAMES[self.before]} -> {STATE_NAMES[self.after]} ({self.kind}{extra})"


@dataclass(frozen=True)
class Impact:
    """One impact: pre- and post-impact velocities at configuration q, impulses Lam (nc x 3)."""

    t: float
    q: np.ndarray
    v_minus: np.ndarray
    v_plus: np.ndarray
    Lam: np.ndarray


@dataclass
class HardRun(RunResult):
    """Result of `simulate_hard`: the RunResult (the table on the uniform grid, the switches as events,
    the dense solution, the counters in `stats`), every contact's state change, the impacts and the pieces."""

    timeline: list = field(default_factory=list)  # HardEvent, in time order
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


class PDHold:
    """tau(t, q, v) = kp (q_ref - q) - kd v on the actuated speeds `idx` (configuration entries idx + offset),
    zero elsewhere; its fields let the compiled right-hand side compute it without calling back."""

    def __init__(self, nv, idx, offset, q_ref, kp, kd):
        self.nv, self.idx, self.offset, self.q_ref, self.kp, self.kd = nv, idx, offset, q_ref, float(kp), float(kd)

    def __call__(self, t, q, v):
        out = np.zeros(self.nv)
        if len(self.idx):
            out[self.idx] = self.kp * (self.q_ref - q[self.idx + self.offset]) - self.kd * v[self.idx]
        return out


def pd_hold(model, q_ref, kp=300.0, kd=10.0):
    """tau(t, q, v): kp (q_ref - q) - kd v on the model's actuated joints (v indices `model.actuated`, the
    configuration's joint entries offset by nq - nv), zero elsewhere (a PDHold)."""
    idx = np.asarray(getattr(model, "actuated", ()), int)
    offset = model.nq - model.nv
    q_ref = np.asarray(q_ref, float)[idx + offset] if len(idx) else np.zeros(0)
    if not (np.isfinite(kp) and kp >= 0 and np.isfinite(kd) and kd >= 0):
        raise InputError(f"PD gains must be >= 0, got kp={kp}, kd={kd}")
    return PDHold(model.nv, idx, offset, q_ref, kp, kd)


def _qdot(model, q, v):
    f = getattr(model, "qdot", None)
    return f(q, v) if f is not None else v


def _normalise(model, q):
    f = getattr(model, "normalise", None)
    return f(q) if f is not None else q


class _Modes:
    """Contact states, the constrained right-hand side, the guards and the switch."""

    def __init__(self, hc, mu, e, controller, gap_tol, stick_speed, chatter_speed, slow_slip, slow_stop=True):
        self.hc, self.model = hc, hc.model
        self.slow_stop = slow_stop
        self.mu, self.e = mu, e
        self.controller = controller
        self.gap_tol, self.stick_speed, self.chatter, self.slow = gap_tol, stick_speed, chatter_speed, slow_slip
        self.nq, self.nv = self.model.nq, self.model.nv
        self.ntan = 1 if hc.planar else 2
        self.timeline, self.impacts, self.seg_states, self.seg_fast, self.seg_sdir = [], [], [], [], []
        self.n_rhs = self.n_lcp = 0
        self._key = None
        self.drift = 0.0

    # ------------------------------------------------------------ dynamics in the held states

    def solve(self, t, y):
        """(v', x (nc x 3 forces), rates (nc x 3)) in the held states; cached per (t, y)."""
        if self._key is not None and t == self._key[0] and np.array_equal(y, self._key[1]):
            return self._cached
        hc = self.hc
        q, v = y[:self.nq], y[self.nq:]
        tau = self.controller(t, q, v)
        H, C, Jall, ball = hc.terms(q, v)
        Hf = cho_factor(H)
        free = cho_solve(Hf, tau - C)
        on = np.flatnonzero(self.state != NO_CONTACT)
        lam = np.zeros((hc.n, 3))
        self.rates = Jall @ v
        if len(on):
            Jc, b, rates = Jall[on], ball[on], self.rates[on]
            cols, rows, rhs, layout = [], [], [], []
            for j, i in enumerate(on):
                col = Jc[j, 0].copy()
                if self.state[i] == SLIP and self.mu[i] > 0:
                    s = self._slide_dir(i, rates[j, 1:])
                    col -= self.mu[i] * hc.reach(s) * (s @ Jc[j, 1:])
                cols.append(col)
                rows.append(Jc[j, 0])
                rhs.append(b[j, 0])
                layout.append((i, 0))
                if self.state[i] == STICK and self.mu[i] > 0:
                    for a in range(1, 1 + self.ntan):
                        cols.append(Jc[j, a])
                        rows.append(Jc[j, a])
                        rhs.append(b[j, a])
                        layout.append((i, a))
            G, R = np.array(cols).T, np.array(rows)
            HiG = cho_solve(Hf, G)
            A = R @ HiG
            x = np.linalg.lstsq(A, -(R @ free + np.array(rhs)), rcond=1e-10)[0]
            vdot = free + HiG @ x
            for (i, a), val in zip(layout, x):
                lam[i, a] = val
            for j, i in enumerate(on):
                if self.state[i] == SLIP and self.mu[i] > 0:
                    s = self._slide_dir(i, rates[j, 1:])
                    lam[i, 1:] = -self.mu[i] * hc.reach(s) * lam[i, 0] * s
        else:
            vdot = free
        self.accn = Jall[:, 0] @ vdot + ball[:, 0]
        self._cached = (vdot, lam)
        self._key = (t, np.array(y))
        return self._cached

    def held_forces(self, t, y, states, fast, sdir):
        """The held states' forces (N, n, 3) at the states y (rows) at times t, each with its piece's contact
        states, slide flags and directions (the table's output)."""
        out = np.zeros((len(t), self.hc.n, 3))
        for k in range(len(t)):                      # output only: the Python route, state by state
            self.fast, self.slide_dir = fast[k], sdir[k]
            self.state = states[k]
            self._key = None
            out[k] = self.solve(t[k], y[k])[1]
        return out

    def _slide_dir(self, i, vt):
        """The kinetic force's direction: v_t's own on a fast slide, the piece's fixed s0 on a slow one (the
        direction of a slide slower than slow_slip is not followed: near zero speed it turns arbitrarily
        fast, which would make the equations stiff)."""
        return vt / np.linalg.norm(vt) if self.fast[i] else self.slide_dir[i]

    def rhs(self, t, y):
        self.n_rhs += 1
        vdot, _ = self.solve(t, y)
        q, v = y[:self.nq], y[self.nq:]
        return np.concatenate([_qdot(self.model, q, v), vdot])

    # ------------------------------------------------------------ guards

    def gain_guard(self, t, y):
        off = self.state == NO_CONTACT
        if not off.any():
            return 1.0
        g = self.hc.gaps(y[:self.nq])
        return float(np.min((g + self.bias_gap)[off]))

    def _loss_values(self, t, y):
        _, lam = self.solve(t, y)
        return np.where(self.state != NO_CONTACT, lam[:, 0], np.inf)

    def _slip_values(self, t, y):
        _, lam = self.solve(t, y)
        hc = self.hc
        reach = (hc.facets.T @ lam[:, 1:].T).max(axis=0)
        st = (self.state == STICK) & (self.mu > 0)
        return np.where(st, self.mu * hc.facet_dist * lam[:, 0] - reach, np.inf)

    def _stick_values(self, t, y):
        self.solve(t, y)
        vt = self.rates[:, 1:]
        speed = np.linalg.norm(vt, axis=1)
        along = np.einsum("ij,ij->i", self.slide_dir, vt)
        # fast: the slide slowing below slow_slip; slow: stopping (s0 . v_t = 0) or speeding past 2 slow_slip
        g = np.where(self.fast, speed - self.slow, np.minimum(along, 2 * self.slow - speed))
        return np.where((self.state == SLIP) & (self.mu > 0), g, np.inf)

    def _separate_values(self, t, y):
        self.solve(t, y)
        return np.where(self.grazing, self.accn, np.inf)

    def separate_guard(self, t, y):
        return float(min(1.0, np.min(self._separate_values(t, y) + self.bias_separate)))

    def loss_guard(self, t, y):
        return float(min(1.0, np.min(self._loss_values(t, y) + self.bias_loss)))

    def slip_guard(self, t, y):
        return float(min(1.0, np.min(self._slip_values(t, y) + self.bias_slip)))

    def stick_guard(self, t, y):
        return float(min(1.0, np.min(self._stick_values(t, y) + self.bias_stick)))

    def _arm(self, t, y):
        """Biases that lift every guard's per-contact value to at least a tiny positive level where a piece
        starts (a value at or just below zero there, as for a slide starting from rest, would otherwise hide
        the crossings of the other contacts in the guard's minimum)."""
        self._key = None
        for name, values, tol in (("loss", self._loss_values, 1e-9), ("slip", self._slip_values, 1e-9),
                                  ("stick", self._stick_values, 1e-12), ("separate", self._separate_values, 1e-9)):
            val = values(t, y)
            setattr(self, f"bias_{name}", np.where(np.isfinite(val), np.maximum(0.0, tol - val), 0.0))

    # ------------------------------------------------------------ events

    def start(self, t, y):
        self.state = np.full(self.hc.n, NO_CONTACT)
        self.slide_dir = np.zeros((self.hc.n, 2))
        self.fast = np.zeros(self.hc.n, bool)
        self.grazing = np.zeros(self.hc.n, bool)
        self.bias_gap = np.zeros(self.hc.n)
        y = self.switch(t, y, first=True)
        return y

    def _record(self, t, old, new, kinds, Lam=None):
        for i in np.flatnonzero((old != new) | np.array([k is not None for k in kinds])):
            kind = kinds[i]
            if kind is None:
                b, a = old[i], new[i]
                kind = ("contact made" if b == NO_CONTACT else "contact lost" if a == NO_CONTACT else
                        "stick->slip" if b == STICK else "slip->stick")
            imp = float(Lam[i, 0]) if Lam is not None else 0.0
            self.timeline.append(HardEvent(float(t), self.hc.names[i], int(i), int(old[i]), int(new[i]), kind, imp))

    def switch(self, t, y, first=False):
        """At an event (and at the start): impulses, the contact LCP, projection, the new states."""
        model, hc = self.model, self.hc
        q = _normalise(model, np.array(y[:self.nq], float))
        v = np.array(y[self.nq:], float)
        old = self.state.copy()
        kinds = [None] * hc.n
        gaps = hc.gaps(q)
        touching = (old != NO_CONTACT) | (gaps <= self.gap_tol)
        if np.any(gaps < -1e-6):
            bad = ", ".join(f"{hc.names[i]} ({gaps[i]:.3g} m)" for i in np.flatnonzero(gaps < -1e-6))
            raise InputError(f"at t = {t:.9g} s contacts are below the plane: {bad}")
        Jn = hc.jacobian(q)[:, 0]
        rate = Jn @ v
        vscale = 1e-9 * (1.0 + np.abs(v).max())
        Lam = None
        if np.any(touching & (rate < -vscale)):
            res = impulse(q, v, hc, e=self.e, mu=self.mu, active=touching, t=t)
            self.impacts.append(Impact(float(t), q.copy(), v.copy(), res.v_plus.copy(), res.Lam.copy()))
            for i in np.flatnonzero(res.Lam[:, 0] > 0):
                kinds[i] = "impact" if res.rate_after[i] <= vscale else "rebound"
            Lam = res.Lam
            v = res.v_plus
            rate = Jn @ v
        # the chatter rule: a touching contact leaving slower than chatter_speed joins the LCP as if at rest
        resting = touching & (rate <= self.chatter)
        new = np.full(hc.n, NO_CONTACT)
        if resting.any():
            v = self._rest_slow_slides(q, v, resting)
            tau = self.controller(t, q, v)
            self.n_lcp += 1
            sol = contact_forces(q, v, tau, hc, mu=self.mu, active=resting, slip_tol=1.5 * self.stick_speed,
                                 t=t)
            keep = resting & (sol.lam[:, 0] > 0)
            new[keep] = np.where(self.mu[keep] > 0, sol.state[keep], SLIP)
            new[keep & (new == NO_CONTACT)] = SLIP
            for i in np.flatnonzero(keep & (rate > vscale)):
                kinds[i] = "persistent"
            for i in np.flatnonzero(keep & (new == SLIP)):
                vt = (hc.jacobian_one(q, i) @ v)[1:]
                speed = np.linalg.norm(vt)
                # with hysteresis: a slide located at slow_slip changes between fast and slow
                self.fast[i] = speed > self.slow * (1 + (1e-6 if self.fast[i] else -1e-6))
                at, ft = sol.tangential_accel[i], sol.lam[i, 1:]
                if speed > self.stick_speed:
                    self.slide_dir[i] = vt / speed
                elif np.linalg.norm(ft) > 0:
                    # a slide starting from rest keeps the LCP's friction force (on the pyramid's boundary, so
                    # -mu fn rho(s) s with s = -ft/|ft| is that force); it accelerates with s . a_t > 0
                    self.slide_dir[i] = -ft / np.linalg.norm(ft)
                elif np.linalg.norm(at) > 0:
                    self.slide_dir[i] = at / np.linalg.norm(at)
        q, v = self._project(q, v, new)
        gaps = hc.gaps(q)
        # free contacts at zero gap and at rest along the normal (lifting off, or left out by the LCP): their
        # normal acceleration reaching zero is an event (the contact would start to penetrate)
        self.grazing = (new == NO_CONTACT) & (gaps <= self.gap_tol) & (np.abs(hc.rates_normal(q, v)) <= vscale)
        self.state = new
        self.bias_gap = np.where(new == NO_CONTACT, np.maximum(0.0, self.gap_tol - gaps), 0.0)
        self._arm(t, np.concatenate([q, v]))
        if not first or (old != new).any() or Lam is not None:
            self._record(t, old, new, kinds, Lam)
        self.seg_states.append(new.copy())
        self.seg_fast.append(self.fast.copy())
        self.seg_sdir.append(self.slide_dir.copy())
        return np.concatenate([q, v])

    def _rest_slow_slides(self, q, v, resting):
        """The slow-slide rule: every resting contact with friction whose tangential speed is under slow_slip
        is brought to tangential rest before the LCP (v projected H-orthogonally onto zero tangential rates of
        those contacts and zero normal rates of the resting ones: kinetic energy can only fall, by the
        friction work of stopping the slide), so that the LCP decides stick or a slide from rest: it sticks
        where the friction cone can hold it."""
        if not self.slow_stop:
            return v
        J = self.hc.jacobian(q)
        speed = np.linalg.norm(J[:, 1:1 + self.ntan] @ v, axis=1)
        slow = resting & (self.mu > 0) & (speed > 0) & (speed <= self.slow * (1 + 1e-6))
        if not slow.any():
            return v
        R = np.vstack([J[resting, 0]] + [J[i, 1:1 + self.ntan] for i in np.flatnonzero(slow)])
        HiR = np.linalg.solve(np.asarray(self.model.mass_matrix(q), float), R.T)
        return v - HiR @ np.linalg.lstsq(R @ HiR, R @ v, rcond=1e-10)[0]

    def _project(self, q, v, state):
        """Gaps of the contacts in contact to zero (Gauss-Newton, H-weighted minimum change), then the
        velocity H-orthogonally onto zero normal rates (and zero tangential rates where sticking)."""
        model, hc = self.model, self.hc
        on = np.flatnonzero(state != NO_CONTACT)
        if not len(on):
            return q, v
        for _ in range(5):
            g = hc.gaps(q)[on]
            self.drift = max(self.drift, float(np.abs(g).max()))
            if np.abs(g).max() <= 1e-14 * (1 + np.abs(q).max()):
                break
            J = hc.jacobian(q)[on, 0]
            H = np.asarray(model.mass_matrix(q), float)
            HiJ = np.linalg.solve(H, J.T)
            dv = -HiJ @ np.linalg.lstsq(J @ HiJ, g, rcond=1e-10)[0]
            q = _normalise(model, q + _qdot(model, q, dv))
        rows = []
        Jall = hc.jacobian(q)
        for i in on:
            Ji = Jall[i]
            rows.append(Ji[0])
            if state[i] == STICK:
                rows.extend(Ji[1:1 + self.ntan])
        R = np.array(rows)
        H = np.asarray(model.mass_matrix(q), float)
        HiR = np.linalg.solve(H, R.T)
        v = v - HiR @ np.linalg.lstsq(R @ HiR, R @ v, rcond=1e-10)[0]
        return q, v


class _CModes(_Modes):
    """The held right-hand side and the guards' values by the compiled route (mechsym.contact.c_contact):
    one C call per state gives y', the forces, the contact rates, the gaps and every guard's per-contact
    values, cached for the guards at the same state. A state whose held system is singular (redundant
    contacts) is solved by the Python route's minimum-norm least squares."""

    def __init__(self, c, *args):
        self.c = c
        self._ykey = None
        super().__init__(*args)
        c.mu[:] = self.mu
        self._pd = isinstance(self.controller, PDHold)
        c.set_controller(self.controller if self._pd else None)

    @property
    def state(self):
        return self._state

    @state.setter
    def state(self, value):
        """Every change of the held states (with the slides' directions set before it) goes to the C buffers."""
        self._state = value
        self._need_gap = bool((value == NO_CONTACT).any())
        self.c.state[:] = value
        if hasattr(self, "fast"):
            self.c.fast[:] = self.fast
            self.c.sdir[:] = self.slide_dir
        self._ykey = None

    def _eval(self, t, y):
        """The compiled held solve at y into self._o (a copy of the route's output buffer, whose slices are
        y', lam, rates, gap, loss, slip, stick, accn), once per state."""
        key = y.tobytes()
        if key == self._ykey:
            return
        c, nq = self.c, self.nq
        tau = None if self._pd else np.asarray(self.controller(t, y[:nq], y[nq:]), float)
        if c.held(y, self._need_gap, self.slow, tau) == 0:
            self._o = c.out.copy()
            self._ykey = key
            return
        self._key = None                               # the Python route for this state
        vdot, lam = _Modes.solve(self, t, y)
        q, v = y[:nq], y[nq:]
        o, sl = np.zeros_like(c.out), c.slices
        o[sl["ydot"]] = np.concatenate([_qdot(self.model, q, v), vdot])
        o[sl["lam"]], o[sl["rates"]], o[sl["accn"]] = lam.ravel(), self.rates.ravel(), self.accn
        self._o, self._ykey = o, key                   # the parent's guard values below read solve() from here
        o[sl["gap"]] = self.hc.gaps(q) if self._need_gap else 0.0
        for name, values in (("loss", _Modes._loss_values), ("slip", _Modes._slip_values),
                             ("stick", _Modes._stick_values)):
            o[sl[name]] = values(self, t, y)

    def _part(self, name):
        return self._o[self.c.slices[name]]

    def solve(self, t, y):
        self._eval(t, y)
        return self._part("ydot")[self.nq:], self._part("lam").reshape(-1, 3)

    def rhs(self, t, y):
        self.n_rhs += 1
        self._eval(t, y)
        return self._part("ydot")                      # a view of this state's own copy

    def gain_guard(self, t, y):
        off = self._state == NO_CONTACT
        if not off.any():
            return 1.0
        self._eval(t, y)
        return float(np.min((self._part("gap") + self.bias_gap)[off]))

    def _loss_values(self, t, y):
        self._eval(t, y)
        return self._part("loss")

    def _slip_values(self, t, y):
        self._eval(t, y)
        return self._part("slip")

    def _stick_values(self, t, y):
        self._eval(t, y)
        return self._part("stick")

    def _separate_values(self, t, y):
        self._eval(t, y)
        return np.where(self.grazing, self._part("accn"), np.inf)

    def _arm(self, t, y):
        self._ykey = None
        super()._arm(t, y)

    def held_forces(self, t, y, states, fast, sdir):
        """The held states' forces (N, n, 3) in one C call (the PD hold in C; another controller's tau
        evaluated per sample); a sample C does not decide by the Python route."""
        nq = self.nq
        tau = None if self._pd else np.array([self.controller(t[k], y[k, :nq], y[k, nq:]) for k in range(len(t))])
        lam, status = self.c.held_forces(y, states, fast, sdir, self.slow, tau)
        bad = np.flatnonzero(status != 0)
        if len(bad):
            lam[bad] = _Modes.held_forces(self, t[bad], y[bad], states[bad], fast[bad], sdir[bad])
        return lam


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
    modes = _CModes(c, *args) if c is not None else _Modes(*args)
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
