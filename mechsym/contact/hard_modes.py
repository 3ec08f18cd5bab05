"""The pieces of a hard-contact run between events (mechsym.contact.hard_run's module docstring): the contact
states held, the constrained right-hand side, the guards of the five kinds of event and the switch at an
event (impulses, the chatter and slow-slide rules, the projection of the state), on the Python route
(`Modes`) or the compiled one of mechsym.contact.c_contact (`CModes`); the timeline's records."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from mechsym.contact.hard_forces import contact_forces
from mechsym.contact.hard_impulse import impulse
from mechsym.contact.spatial_v2 import NO_CONTACT, SLIP, STATE_NAMES, STICK
from mechsym.core.errors import InputError

__all__ = ["HardEvent", "Impact", "PDHold", "Modes", "CModes"]


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
        return (f"t={self.t:.9g}: {self.contact} {STATE_NAMES[self.before]} -> {STATE_NAMES[self.after]} "
                f"({self.kind}{extra})")


@dataclass(frozen=True)
class Impact:
    """One impact: pre- and post-impact velocities at configuration q, impulses Lam (nc x 3)."""

    t: float
    q: np.ndarray
    v_minus: np.ndarray
    v_plus: np.ndarray
    Lam: np.ndarray


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


def _qdot(model, q, v):
    """The model's configuration rate (q' = v where it has no qdot)."""
    f = getattr(model, "qdot", None)
    return f(q, v) if f is not None else v


def _normalise(model, q):
    """The model's projection of q (the identity where it has no normalise)."""
    f = getattr(model, "normalise", None)
    return f(q) if f is not None else q


class Modes:
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
        """The state's rate with every contact's state held (the module docstring of hard_run)."""
        self.n_rhs += 1
        vdot, _ = self.solve(t, y)
        q, v = y[:self.nq], y[self.nq:]
        return np.concatenate([_qdot(self.model, q, v), vdot])

    # ------------------------------------------------------------ guards

    def gain_guard(self, t, y):
        """The least gap of the free contacts (a zero crossing: a contact gained)."""
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
        """The least separating acceleration of the contacts resting on the plane where the piece started."""
        return float(min(1.0, np.min(self._separate_values(t, y) + self.bias_separate)))

    def loss_guard(self, t, y):
        """The least normal force of the contacts in contact (a zero crossing: a contact lost)."""
        return float(min(1.0, np.min(self._loss_values(t, y) + self.bias_loss)))

    def slip_guard(self, t, y):
        """The least distance of a sticking contact's force to the friction pyramid (zero: it starts to slip)."""
        return float(min(1.0, np.min(self._slip_values(t, y) + self.bias_slip)))

    def stick_guard(self, t, y):
        """The least slide of the slipping contacts (zero: a slide stops, it sticks)."""
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
        """The state to start from at (t, y): no contact held, then the switch of an event (the touching
        contacts' impulses and forces decide their states, the state is projected)."""
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


class CModes(Modes):
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
        """The contact states held (per contact: NO_CONTACT, STICK or SLIP)."""
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
        vdot, lam = Modes.solve(self, t, y)
        q, v = y[:nq], y[nq:]
        o, sl = np.zeros_like(c.out), c.slices
        o[sl["ydot"]] = np.concatenate([_qdot(self.model, q, v), vdot])
        o[sl["lam"]], o[sl["rates"]], o[sl["accn"]] = lam.ravel(), self.rates.ravel(), self.accn
        self._o, self._ykey = o, key                   # the parent's guard values below read solve() from here
        o[sl["gap"]] = self.hc.gaps(q) if self._need_gap else 0.0
        for name, values in (("loss", Modes._loss_values), ("slip", Modes._slip_values),
                             ("stick", Modes._stick_values)):
            o[sl[name]] = values(self, t, y)

    def _part(self, name):
        return self._o[self.c.slices[name]]

    def solve(self, t, y):
        """The held system at (t, y) solved by the compiled route (cached for the guards at the same state)."""
        self._eval(t, y)
        return self._part("ydot")[self.nq:], self._part("lam").reshape(-1, 3)

    def rhs(self, t, y):
        """The state's rate with every contact's state held, by the compiled route."""
        self.n_rhs += 1
        self._eval(t, y)
        return self._part("ydot")                      # a view of this state's own copy

    def gain_guard(self, t, y):
        """The least gap of the free contacts, by the compiled route."""
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
            lam[bad] = Modes.held_forces(self, t[bad], y[bad], states[bad], fast[bad], sdir[bad])
        return lam
