"""The UGV analyses of the chapter (section 8) on the declaration of mechanisms/ugv.py.

* `Vehicle`: the half-vehicle with parameter values: the wheelbase R (Eq. 39), the geometric clearances,
  `place` (the position problem, vectorised over front contacts and angle pairs), `forces` (the quasi-static
  ground forces and wheel torque from the closed form that mechsym.rolling derived from the per-body rows).
* `torque_along`: forces and drive torque along a track for one angle pair, with slip and rollover reported
  as events (x where they happen), not exceptions.
* `sweep`: the drive torque along a track for a grid of constant angle pairs (Figure 24), vectorised.
* `optimize`: leg angles phi_r(x), phi_f(x) along the track (Figure 25): dynamic programming over an angle
  grid (sum or minimax), then scipy SLSQP refinement, never worse than the best constant pair of the grid.
* `figures`, `animate`: the documentation figures and a GIF of the vehicle on the track.

Sign conventions (spec section 4): F along the track tangent t = (cos beta, sin beta), N along the normal
n = (-sin beta, cos beta); M counter-clockwise on each wheel; the reported drive torque is -M, propulsive
positive when moving +x. Angles in radians; SI units.
"""
from __future__ import annotations

import functools
import weakref
import math
from dataclasses import dataclass, field

import numpy as np

from mechsym.errors import InputError
from mechsym.optimize import staged_dp
from mechsym.output import save_animation, save_figure
from mechsym.results import Table
from mechsym.rolling import ContactStatics, rear_contact
from mechsym.track import load_track

DEG = math.pi / 180
LIMITS = (45 * DEG, 135 * DEG)
RATE = 60 * DEG  # rad per metre of travel
MU = 0.6
MARGIN = 0.05  # rollover margin: fraction of the total weight
CRITERIA = ("torque-variation", "peak-torque", "energy", "grip")
FORCES = ("Fr", "Nr", "Ff", "Nf", "M_r")


@functools.lru_cache(maxsize=None)
def statics() -> ContactStatics:
    """The equilibrium of the UGV declaration, derived once (parameters stay symbols)."""
    from mechanisms import ugv

    mech = ugv.build()
    return ContactStatics(mech, ugv.contacts(mech), ugv.ties())


def _angles(value, name):
    a = np.atleast_1d(np.asarray(value, float))
    if not np.all(np.isfinite(a)):
        raise InputError(f"{name} must be finite, got {value}")
    return a


def check_limits(limits):
    lo, hi = (float(v) for v in limits)
    if not (np.isfinite(lo) and np.isfinite(hi) and 0 < lo < hi < math.pi):
        raise InputError(f"leg-angle limits must satisfy 0 < min < max < 180 deg, got {lo / DEG:g} deg, {hi / DEG:g} deg")
    return lo, hi


@dataclass
class Pose:
    """Configurations at samples (every array has the same shape): contacts, slopes, pitch and leg angles."""

    vehicle: "Vehicle"
    track: object
    x_front: np.ndarray
    x_rear: np.ndarray
    beta_front: np.ndarray
    beta_rear: np.ndarray
    pitch: np.ndarray
    phi_r: np.ndarray
    phi_f: np.ndarray
    _cache: dict = field(default_factory=dict, repr=False)

    def centres(self):
        """Wheel centres (W_r, W_f) as (x, y) pairs."""
        if "centres" not in self._cache:
            r = self.vehicle.r
            wr = self.track.offset(self.x_rear, r)[:2]
            wf = self.track.offset(self.x_front, r)[:2]
            self._cache["centres"] = (wr, wf)
        return self._cache["centres"]

    def points(self) -> dict:
        """World positions of the joints, wheel centres, contact points and centres of mass."""
        v = self.vehicle
        (wrx, wry), (wfx, wfy) = self.centres()
        c, s = np.cos(self.pitch), np.sin(self.pitch)
        bx, by = v.l * np.cos(self.phi_r), -v.l * np.sin(self.phi_r)  # W_r in the body frame
        jrx, jry = wrx - (c * bx - s * by), wry - (s * bx + c * by)

        def body(px, py):
            return jrx + c * px - s * py, jry + s * px + c * py

        jf = body(v.L, 0.0)
        com_b = body(v.values["body_com"] * v.L, v.values["body_com_y"])
        cl = v.values["leg_com"]
        com_lr = (jrx + cl * (wrx - jrx), jry + cl * (wry - jry))
        com_lf = (jf[0] + cl * (wfx - jf[0]), jf[1] + cl * (wfy - jf[1]))
        fr, ff = self.track(self.x_rear), self.track(self.x_front)
        return {"Jr": (jrx, jry), "Jf": jf, "Wr": (wrx, wry), "Wf": (wfx, wfy), "T": (self.x_rear, fr),
                "D": (self.x_front, ff), "C_body": com_b, "C_leg_r": com_lr, "C_leg_f": com_lf}

    def coordinates(self) -> list:
        """The body coordinates q (x, y of the centre of mass, angle) in the order of the declaration,
        wheel angles from rolling without slip measured from x = 0."""
        v, p = self.vehicle, self.points()
        theta_wr = self.track.slope(self.x_rear) - self.track.arc_length_from(self.x_rear, 0.0) / v.r
        theta_wf = self.track.slope(self.x_front) - self.track.arc_length_from(self.x_front, 0.0) / v.r
        return [*p["C_body"], self.pitch, *p["C_leg_r"], self.pitch - self.phi_r, *p["C_leg_f"], self.pitch + self.phi_f,
                *p["Wr"], theta_wr, *p["Wf"], theta_wf]

    def potential(self):
        """Gravitational potential energy of the vehicle."""
        v, p = self.vehicle, self.points()
        m = v.values
        return v.values["g"] * (m["m_body"] * p["C_body"][1] + m["m_leg"] * (p["C_leg_r"][1] + p["C_leg_f"][1])
                                + m["m_wheel"] * (p["Wr"][1] + p["Wf"][1]))


class Vehicle:
    """The UGV half-vehicle with parameter values (defaults: chapter data and the spec's ASSUMED values)."""

    def __init__(self, params=None):
        st = statics()
        self.statics = st
        self.mechanism = st.mechanism
        self.values = self.mechanism.resolve_parameters(params)
        self.p = np.array([self.values[n] for n in self.mechanism.parameters])
        v = self.values
        self.L, self.l, self.r = v["L"], v["l"], v["r"]
        self.mass = 2 * v["m_wheel"] + 2 * v["m_leg"] + v["m_body"]
        self.weight = v["g"] * self.mass
        self._checked = weakref.WeakKeyDictionary()  # track -> checked ranges
        needed = set().union(*(st.solution[n].free_symbols for n in FORCES))
        self._q_needed = [s in needed for s in st.constraints.q]

    # -- geometry -----------------------------------------------------------------------------------
    def wheelbase(self, phi_r, phi_f):
        """Distance R between the wheel centres (Eq. 39) and the angle gamma of W_r -> W_f in the body frame."""
        dx = self.L - self.l * np.cos(phi_r) - self.l * np.cos(phi_f)
        dy = self.l * (np.sin(phi_r) - np.sin(phi_f))
        return np.hypot(dx, dy), np.arctan2(dy, dx)

    def clearance(self, phi_r, phi_f) -> dict:
        """Geometric margins (>= 0 when clear): wheel centres at least 2r apart, and each wheel's distance
        from the body segment Jr-Jf at least r."""
        R, _ = self.wheelbase(phi_r, phi_f)
        out = {"wheels": R - 2 * self.r}
        for name, (px, py) in (("rear", (self.l * np.cos(phi_r), -self.l * np.sin(phi_r))),
                               ("front", (self.L - self.l * np.cos(phi_f), -self.l * np.sin(phi_f)))):
            t = np.clip(px / self.L, 0.0, 1.0)
            out[name] = np.hypot(px - t * self.L, py) - self.r
        return out

    def prepare(self, track, x_lo, x_hi):
        """Check the track where the wheels will go: finite, curvature below 1/r (cached per track object
        and range; a freed track's entry goes with it, so another track is always checked)."""
        ranges = self._checked.setdefault(track, set())
        key = (round(x_lo, 6), round(x_hi, 6))
        if key not in ranges:
            track.check_curvature(self.r, x_lo, x_hi)
            ranges.add(key)

    def place(self, track, x_front, phi_r, phi_f, paired=False, guess=None) -> Pose:
        """The position problem. x_front (M,); phi_r, phi_f (P,) angle pairs: shapes (M, P). paired=True:
        phi_r, phi_f (M,), one pair per front contact: shapes (M,). `guess`: nearby rear contacts (a
        continuation), see mechsym.rolling.rear_contact."""
        track = load_track(track)
        x_front = _angles(x_front, "x_front")
        phi_r, phi_f = np.broadcast_arrays(_angles(phi_r, "phi_r"), _angles(phi_f, "phi_f"))
        R, gamma = self.wheelbase(phi_r, phi_f)
        if paired:
            if len(phi_r) != len(x_front):
                raise InputError("paired placement needs one angle pair per front contact")
            R2, shape = R[:, None], (len(x_front),)
        else:
            R2, shape = R, (len(x_front), len(phi_r))
        self.prepare(track, float(x_front.min()) - float(R.max()) - 2 * self.r - 0.05, float(x_front.max()))
        if guess is not None:
            guess = np.asarray(guess, float).reshape(R2.shape if paired else shape)
        x_rear = rear_contact(track, self.r, x_front, R2, guess=guess).reshape(shape)
        xf = x_front if paired else np.broadcast_to(x_front[:, None], shape)
        pr = phi_r if paired else np.broadcast_to(phi_r[None, :], shape)
        pf = phi_f if paired else np.broadcast_to(phi_f[None, :], shape)
        g = gamma if paired else gamma[None, :]
        wrx, wry, *_, beta_r = track.offset(x_rear, self.r)
        wfx, wfy, *_, beta_f = track.offset(x_front, self.r)
        if not paired:
            wfx, wfy, beta_f = wfx[:, None], wfy[:, None], beta_f[:, None]
        pitch = np.arctan2(wfy - wry, wfx - wrx) - g
        pose = Pose(self, track, xf, x_rear, np.broadcast_to(beta_f, shape), beta_r, pitch, pr, pf)
        pose._cache["centres"] = ((wrx, wry), (np.broadcast_to(wfx, shape), np.broadcast_to(wfy, shape)))
        return pose

    def forces(self, pose: Pose, names=("Fr", "Nr", "Ff", "Nf", "torque"), wrt=()) -> dict:
        """Ground forces and torques at the poses: Fr, Nr, Ff, Nf, M_r (= M_f = M) and torque (= -M); any
        other unknown of the equilibrium by name (joint reactions axle_r.fx ..., leg torques tau_r, tau_f).
        The result always holds M and torque as well; with `wrt` (symbols among the body angles and contact
        angles) also the exact partial derivatives of the unknowns asked (ContactStatics.solve)."""
        st = self.statics
        asked = [n for n in names if n not in ("torque", "M")]
        if "M_r" not in asked:
            asked.append("M_r")
        if set(asked) <= set(FORCES) and all(not need or i in (2, 5, 8) for i, need in enumerate(self._q_needed)):
            angles = {2: pose.pitch, 5: pose.pitch - pose.phi_r, 8: pose.pitch + pose.phi_f}
            q = [angles[i] if need else 0.0 for i, need in enumerate(self._q_needed)]
        else:
            q = pose.coordinates()
        out = st.solve(q, [pose.beta_rear, pose.beta_front], self.p, asked, wrt=wrt)
        out["M"] = out["M_r"]
        out["torque"] = -out["M_r"]
        return out

    def wheel_angles(self, pose: Pose, x0=0.0):
        """Wheel rotations relative to their legs (theta_wheel - theta_leg) for the motor work; wheels rolling
        without slip: theta_wheel = beta - s/r with s the arc length from x0."""
        t = pose.track
        th_r = t.slope(pose.x_rear) - t.arc_length_from(pose.x_rear, x0) / self.r
        th_f = t.slope(pose.x_front) - t.arc_length_from(pose.x_front, x0) / self.r
        return th_r - (pose.pitch - pose.phi_r), th_f - (pose.pitch + pose.phi_f)


    def stage(self, pose: Pose, x0=0.0, derivatives=False):
        """Per-sample quantities of paired poses (one angle pair per front contact): the forces FORCES, the
        wheel rotations relative to the legs th_r, th_f (from x0), the clearances c_wheels, c_rear, c_front,
        the grip ratios gr = Fr/Nr, gf = Ff/Nf and the angles phi_r, phi_f. With `derivatives`, also their
        exact derivatives by the sample's own phi_r and by its own phi_f at a fixed front contact: the
        position problem differentiated implicitly, the closed-form forces symbolically. Returns (values,
        d/dphi_r, d/dphi_f), dicts with the same keys (the derivatives None without `derivatives`)."""
        st = self.statics
        pr, pf = pose.phi_r, pose.phi_f
        angles = [st.constraints.q[i] for i in (2, 5, 8)]  # body, rear leg, front leg
        f = self.forces(pose, FORCES, wrt=(*angles, *st.betas) if derivatives else ())
        th_r, th_f = self.wheel_angles(pose, x0)
        out = {k: f[k] for k in FORCES}
        out.update(th_r=th_r, th_f=th_f, phi_r=pr, phi_f=pf)
        out.update({f"c_{k}": c for k, c in self.clearance(pr, pf).items()})
        with np.errstate(all="ignore"):
            out["gr"], out["gf"] = f["Fr"] / f["Nr"], f["Ff"] / f["Nf"]
        if not derivatives:
            return out, None, None
        l, L, r = self.l, self.L, self.r
        (wrx, wry), (wfx, wfy) = pose.centres()
        _, d1, d2 = pose.track.eval(pose.x_rear)
        _, _, dwx, dwy, _ = pose.track.offset(pose.x_rear, r)
        dx, dy = L - l * np.cos(pr) - l * np.cos(pf), l * (np.sin(pr) - np.sin(pf))
        R2 = dx * dx + dy * dy
        ex, ey = wfx - wrx, wfy - wry  # W_f - W_r, of length R
        one, zero = np.ones_like(pr), np.zeros_like(pr)
        result = []
        for k, (ddx, ddy) in enumerate(((l * np.sin(pr), l * np.cos(pr)), (l * np.sin(pf), -l * np.cos(pf)))):
            dR_R = dx * ddx + dy * ddy  # R dR/dphi
            dgamma = (dx * ddy - dy * ddx) / R2
            dxr = -dR_R / (ex * dwx + ey * dwy)  # |W_f - W(x_r)|^2 = R^2 at a fixed x_f
            dpsi = (ex * -dwy * dxr - ey * -dwx * dxr) / R2 - dgamma
            dbeta_r = d2 / (1 + d1 * d1) * dxr
            own_r, own_f = (one, zero) if k == 0 else (zero, one)
            q_rates = (dpsi, dpsi - own_r, dpsi + own_f)
            d = {n: sum(f[(n, a)] * rate for a, rate in zip(angles, q_rates)) + f[(n, st.betas[0])] * dbeta_r
                 for n in FORCES}
            d["th_r"] = -np.hypot(dwx, dwy) / r * dxr - (dpsi - own_r)
            d["th_f"] = -(dpsi + own_f)
            d["phi_r"], d["phi_f"] = own_r, own_f
            d["c_wheels"] = dR_R / np.sqrt(R2)
            for name, (px, py, dpx, dpy), own in (
                    ("rear", (l * np.cos(pr), -l * np.sin(pr), -l * np.sin(pr), -l * np.cos(pr)), own_r),
                    ("front", (L - l * np.cos(pf), -l * np.sin(pf), l * np.sin(pf), -l * np.cos(pf)), own_f)):
                ax = px - np.clip(px / L, 0.0, 1.0) * L  # from the nearest point of the body segment
                d[f"c_{name}"] = own * (ax * dpx + py * dpy) / np.hypot(ax, py)
            with np.errstate(all="ignore"):
                d["gr"] = (d["Fr"] * f["Nr"] - f["Fr"] * d["Nr"]) / f["Nr"] ** 2
                d["gf"] = (d["Ff"] * f["Nf"] - f["Ff"] * d["Nf"]) / f["Nf"] ** 2
            result.append(d)
        return out, result[0], result[1]


# -- torque along a track ----------------------------------------------------------------------------------


def _samples(x_from, x_to, samples):
    for name, v in (("x_from", x_from), ("x_to", x_to)):
        if not np.isfinite(v):
            raise InputError(f"{name} must be finite, got {v}")
    if not x_to > x_from:
        raise InputError(f"x_to = {x_to} must exceed x_from = {x_from}")
    if int(samples) < 2:
        raise InputError(f"samples must be at least 2, got {samples}")
    return np.linspace(x_from, x_to, int(samples))


def check_friction(mu):
    if not (np.isfinite(mu) and mu > 0):
        raise InputError(f"friction coefficient mu = {mu} must be positive")
    return float(mu)


def check_margin(margin):
    if not (np.isfinite(margin) and 0 <= margin < 1):
        raise InputError(f"rollover margin = {margin} must be a fraction of the weight in [0, 1)")
    return float(margin)


def check_pair(vehicle, phi_r, phi_f, limits):
    lo, hi = check_limits(limits)
    for name, v in (("phi_r", phi_r), ("phi_f", phi_f)):
        if not np.isfinite(v):
            raise InputError(f"leg angle {name} = {v} is not finite")
        if not lo - 1e-12 <= v <= hi + 1e-12:
            raise InputError(f"leg angle {name} = {v / DEG:.6g} deg is outside the limits "
                             f"[{lo / DEG:g}, {hi / DEG:g}] deg")
    clear = vehicle.clearance(phi_r, phi_f)
    if clear["wheels"] < 0:
        R, _ = vehicle.wheelbase(phi_r, phi_f)
        raise InputError(f"leg angles phi_r = {phi_r / DEG:.6g} deg, phi_f = {phi_f / DEG:.6g} deg put the wheel "
                         f"centres {float(R):.4g} m apart, less than 2r = {2 * vehicle.r:g} m: the wheels overlap")
    for wheel in ("rear", "front"):
        if clear[wheel] < 0:
            phi = phi_r if wheel == "rear" else phi_f
            raise InputError(f"leg angle phi_{wheel[0]} = {phi / DEG:.6g} deg makes the {wheel} wheel cross the body "
                             f"(its centre is {float(clear[wheel] + vehicle.r):.4g} m from the body, radius "
                             f"{vehicle.r:g} m)")


def _runs(mask, x):
    """Contiguous runs of True in mask as (x_start, x_end, first index, last index)."""
    out = []
    idx = np.flatnonzero(mask)
    if idx.size:
        breaks = np.flatnonzero(np.diff(idx) > 1)
        starts = np.concatenate([[idx[0]], idx[breaks + 1]])
        ends = np.concatenate([idx[breaks], [idx[-1]]])
        out = [(float(x[a]), float(x[b]), int(a), int(b)) for a, b in zip(starts, ends)]
    return out


def events(x, f, vehicle, mu, margin):
    """Slip (|F| > mu N) and rollover (N below margin * weight) along x, per wheel: a list of readable
    strings naming the x range and the worst value. f holds Fr, Nr, Ff, Nf."""
    out = []
    floor = margin * vehicle.weight
    for wheel, F, N in (("rear", f["Fr"], f["Nr"]), ("front", f["Ff"], f["Nf"])):
        for a, b, i, j in _runs(np.abs(F) > mu * N, x):
            with np.errstate(all="ignore"):
                ratio = np.max(np.abs(F[i:j + 1]) / np.abs(N[i:j + 1]))
            span = f"x_front = {a:.4g} m" if a == b else f"x_front = {a:.4g} to {b:.4g} m"
            out.append(f"slip: the {wheel} wheel slips at {span} (|F|/N up to {ratio:.3g} > mu = {mu:g})")
        for a, b, i, j in _runs(N < floor, x):
            span = f"x_front = {a:.4g} m" if a == b else f"x_front = {a:.4g} to {b:.4g} m"
            what = "lifts off" if np.min(N[i:j + 1]) <= 0 else "is below the rollover margin"
            out.append(f"rollover: the {wheel} wheel {what} at {span} (N down to {np.min(N[i:j + 1]):.4g} N, "
                       f"margin {floor:.4g} N)")
    return out


def torque_along(track="bump", phi_r=90 * DEG, phi_f=90 * DEG, x_from=0.0, x_to=8.0, samples=801, params=None,
                 mu=MU, margin=MARGIN, limits=LIMITS, vehicle=None) -> Table:
    """Forces and drive torque along the track for fixed leg angles. Table columns x_front, x_rear, pitch,
    Fr, Nr, Ff, Nf, torque; table.events lists slip and rollover (with the x where they happen)."""
    vehicle = vehicle or Vehicle(params)
    mu, margin = check_friction(mu), check_margin(margin)
    check_pair(vehicle, float(phi_r), float(phi_f), limits)
    track = load_track(track)
    x = _samples(x_from, x_to, samples)
    pose = vehicle.place(track, x, phi_r, phi_f)
    f = {k: v[:, 0] for k, v in vehicle.forces(pose, ("Fr", "Nr", "Ff", "Nf", "torque")).items()}
    cols = {"x_front": x, "x_rear": pose.x_rear[:, 0], "pitch": pose.pitch[:, 0]}
    cols.update({k: f[k] for k in ("Fr", "Nr", "Ff", "Nf", "torque")})
    units = {"x_front": "m", "x_rear": "m", "pitch": "rad", "Fr": "N", "Nr": "N", "Ff": "N", "Nf": "N", "torque": "N m"}
    table = Table(cols, units, f"UGV on '{track.name}', phi_r = {phi_r / DEG:.4g} deg, phi_f = {phi_f / DEG:.4g} deg")
    table.events = events(x, f, vehicle, mu, margin)
    return table


# -- grid sweep (Figure 24) --------------------------------------------------------------------------------


def sweep(track="bump", phi_r=None, phi_f=None, x=None, params=None, vehicle=None, chunk=None, names=("torque",)):
    """Forces along the track x (M,) for every angle pair (phi_r[i], phi_f[i]) (P,): name -> (M, P).

    Default: x = 0..8 m (801 samples) and a 10 x 10 grid over the leg-angle limits. Pairs whose wheels
    overlap or cross the body still get forces (it is geometry only); `clearance` tells them apart."""
    vehicle = vehicle or Vehicle(params)
    track = load_track(track)
    if phi_r is None or phi_f is None:
        grid = np.linspace(*LIMITS, 10)
        phi_r, phi_f = (a.ravel() for a in np.meshgrid(grid, grid, indexing="ij"))
    phi_r, phi_f = np.broadcast_arrays(_angles(phi_r, "phi_r"), _angles(phi_f, "phi_f"))
    x = np.linspace(0.0, 8.0, 801) if x is None else _angles(x, "x")
    chunk = chunk or max(1, 65536 // len(phi_r))
    out = {n: np.empty((len(x), len(phi_r))) for n in names}
    for lo in range(0, len(x), chunk):
        pose = vehicle.place(track, x[lo:lo + chunk], phi_r, phi_f)
        f = vehicle.forces(pose, names)
        for n in names:
            out[n][lo:lo + chunk] = f[n]
    return out


# -- optimisation (Figure 25) ------------------------------------------------------------------------------


@dataclass
class Schedule:
    """Leg angles along the track and what they give."""

    x: np.ndarray
    phi_r: np.ndarray
    phi_f: np.ndarray
    criterion: str
    value: float
    forces: dict
    table: Table
    events: list
    best_constant: tuple  # (phi_r, phi_f, value) of the best feasible constant pair on the grid (or None)
    dp_value: float
    refined: bool
    info: dict
    track: object = None


class _Problem:
    """Per-stage quantities of one optimisation (vehicle, track, stages, constraints)."""

    def __init__(self, vehicle, track, x, mu, margin, limits, rate):
        self.v, self.track, self.x = vehicle, track, x
        self.mu, self.margin, self.limits, self.rate = mu, margin, limits, rate
        self.dx = x[1] - x[0]
        self.floor = margin * vehicle.weight

    def grid_states(self, pose):
        f = self.v.forces(pose, ("Fr", "Nr", "Ff", "Nf", "M_r"))
        th_r, th_f = self.v.wheel_angles(pose, float(self.x[0]))
        return f, th_r, th_f

    def violation(self, f):
        """Constraint violation per sample (0 when slip and rollover constraints hold), in units of weight."""
        w = self.v.weight
        parts = [np.abs(f["Fr"]) - self.mu * f["Nr"], np.abs(f["Ff"]) - self.mu * f["Nf"],
                 self.floor - f["Nr"], self.floor - f["Nf"]]
        return np.maximum.reduce([np.maximum(p, 0.0) for p in parts]) / w

    def stage_cost(self, criterion, f):
        if criterion == "peak-torque":
            return np.abs(f["M_r"])
        if criterion == "grip":
            with np.errstate(all="ignore"):
                g = np.maximum(np.abs(f["Fr"] / f["Nr"]), np.abs(f["Ff"] / f["Nf"]))
            return np.where((f["Nr"] > 0) & (f["Nf"] > 0), g, np.inf)
        return None

    def value(self, criterion, f, th_r, th_f):
        """The criterion along paths: arrays (K,) give a float, arrays (K, S) one value per column."""
        m = f["M_r"]
        if criterion == "torque-variation":
            out = np.sum(np.diff(m, axis=0) ** 2, axis=0)
        elif criterion == "energy":
            out = np.sum(np.abs(m[:-1]) * (np.abs(np.diff(th_r, axis=0)) + np.abs(np.diff(th_f, axis=0))), axis=0)
        else:
            out = np.max(self.stage_cost(criterion, f), axis=0)
        return float(out) if np.ndim(out) == 0 else out


def optimize(track="bump", criterion="torque-variation", mu=MU, x_from=0.0, x_to=8.0, samples=161, params=None,
             limits=LIMITS, rate=RATE, margin=MARGIN, angle_step=None, refine=True, vehicle=None, maxiter=40) -> Schedule:
    """Leg angles along the track minimising `criterion` (CRITERIA), subject to the angle limits, the rate
    limit (rad per metre of travel), clearance (wheel centres >= 2r apart, wheels clear of the body), no slip
    (|F| <= mu N at both wheels) and no rollover (both N >= margin * weight).

    Dynamic programming over an angle grid (spacing `angle_step`, default the largest that lets the angles
    move one grid step per stage at the rate limit) finds the global optimum on the grid: sum for
    torque-variation and energy, minimax for peak-torque and grip (ties broken by the torque variation).
    SLSQP then refines the angles continuously; its result is kept only when it is better and satisfies
    every constraint at every stage. When no schedule avoids slip or rollover, the one with the smallest
    worst violation is returned and the events name the x where it happens."""
    if criterion not in CRITERIA:
        raise InputError(f"unknown criterion '{criterion}' (one of {', '.join(CRITERIA)})")
    vehicle = vehicle or Vehicle(params)
    mu, margin = check_friction(mu), check_margin(margin)
    lo, hi = check_limits(limits)
    if not (np.isfinite(rate) and rate > 0):
        raise InputError(f"rate limit = {rate} must be positive")
    track = load_track(track)
    x = _samples(x_from, x_to, samples)
    prob = _Problem(vehicle, track, x, mu, margin, (lo, hi), rate)
    step = rate * prob.dx if angle_step is None else float(angle_step)
    if not (np.isfinite(step) and step > 0):
        raise InputError(f"angle step = {angle_step} must be positive")
    n = int(math.ceil((hi - lo) / step - 1e-9)) + 1
    if n > 121:
        raise InputError(f"the angle grid would have {n} x {n} states (angle step {step / DEG:.3g} deg); use fewer "
                         "samples or a larger angle step")
    grid = np.linspace(lo, hi, n)
    delta = grid[1] - grid[0]
    jmax = int(math.floor(rate * prob.dx / delta + 1e-9))
    if jmax < 1:
        raise InputError(f"angle step {step / DEG:.4g} deg exceeds what the rate limit allows between stages "
                         f"({rate * prob.dx / DEG:.4g} deg per {prob.dx:.4g} m): use a smaller step or fewer samples")
    ir, jf = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    phi_r, phi_f = grid[ir], grid[jf]
    clear = vehicle.clearance(phi_r, phi_f)
    geometric = (clear["wheels"] >= 0) & (clear["rear"] >= 0) & (clear["front"] >= 0)
    if not geometric.any():
        raise InputError("no leg-angle pair within the limits keeps the wheels apart and clear of the body")
    # every stage x every state, from the vectorised position and force solves
    pose = vehicle.place(track, x, phi_r, phi_f)
    f, th_r, th_f = prob.grid_states(pose)
    viol = prob.violation(f)
    # predecessors within the rate limit
    moves = [(a, b) for a in range(-jmax, jmax + 1) for b in range(-jmax, jmax + 1)]
    nbr = np.full((n * n, len(moves)), -1, dtype=np.int64)
    for m, (a, b) in enumerate(moves):
        ok = (ir - a >= 0) & (ir - a < n) & (jf - b >= 0) & (jf - b < n)
        nbr[ok, m] = (ir[ok] - a) * n + (jf[ok] - b)
    nbr[(nbr < 0) | ~geometric[np.clip(nbr, 0, None)]] = -1
    K = len(x)
    allowed = np.broadcast_to(geometric, (K, n * n)) & (viol <= 0)
    feasible = True
    if not np.isfinite(staged_dp("max", K, np.where(allowed, 0.0, np.inf), None, allowed, nbr)[0]):
        # no schedule avoids slip and rollover: minimise the worst violation, then the criterion among those
        feasible = False
        base = np.broadcast_to(geometric, (K, n * n))
        worst, _ = staged_dp("max", K, np.where(base, viol, np.inf), None, base, nbr)
        allowed = base & (viol <= worst * (1 + 1e-9) + 1e-15)
    # best constant pair on the grid (the DP optimum is never worse: constant paths are in the DP's set)
    const_ok = geometric & np.all(viol <= 0, axis=0)
    best_constant = None
    const_vals = np.where(const_ok, prob.value(criterion, f, th_r, th_f), np.inf)
    if const_ok.any():
        s_ = int(np.argmin(const_vals))
        best_constant = (float(phi_r[s_]), float(phi_f[s_]), float(const_vals[s_]))
    m = f["M_r"]
    # a tie-break that prefers steady angles: at most `smooth` of the reference value over the whole path,
    # and zero for constant paths, so the guarantee above holds for the criterion itself
    ref = best_constant[2] if best_constant else float(np.nanmedian(np.abs(m))) ** 2
    smooth = 1e-3
    lam = smooth * max(ref, 1e-12) / (2 * (K - 1))
    di, dj = ir[:, None] - ir[nbr.clip(0)], jf[:, None] - jf[nbr.clip(0)]
    steady = lam * (di * di + dj * dj) / max(jmax, 1) ** 2

    def variation(k, safe):
        return (m[k + 1][:, None] - m[k][safe]) ** 2 + steady

    def energy(k, safe):
        rel_r = np.abs(th_r[k + 1][:, None] - th_r[k][safe])
        rel_f = np.abs(th_f[k + 1][:, None] - th_f[k][safe])
        return np.abs(m[k][safe]) * (rel_r + rel_f) + steady

    if criterion in ("torque-variation", "energy"):
        _, path = staged_dp("sum", K, None, variation if criterion == "torque-variation" else energy, allowed, nbr)
    else:
        cost = prob.stage_cost(criterion, f)
        value, _ = staged_dp("max", K, cost, None, allowed, nbr)
        tie = allowed & (cost <= value * (1 + 1e-12) + 1e-12)
        var_ref = float(np.sum(np.diff(m[:, int(np.argmin(const_vals))]) ** 2)) if const_ok.any() else 1.0
        lam_tie = smooth * max(var_ref, 1e-12) / (2 * (K - 1))
        steady_tie = steady / lam * lam_tie
        _, path = staged_dp("sum", K, None, lambda k, safe: (m[k + 1][:, None] - m[k][safe]) ** 2 + steady_tie, tie, nbr)
    states = path
    sched_r, sched_f = phi_r[states], phi_f[states]
    dp_value = _path_value(prob, criterion, sched_r, sched_f)
    info = {"grid": n, "angle_step": float(delta), "moves_per_stage": jmax, "states": int(geometric.sum()),
            "feasible": feasible}
    refined = False
    if refine and feasible:
        res = _refine(prob, criterion, sched_r, sched_f, dp_value, maxiter)
        if res is not None:
            sched_r, sched_f, info["refine"] = res[0], res[1], res[2]
            refined = True
    return _schedule(prob, criterion, sched_r, sched_f, best_constant, dp_value, refined, info)


def _place(prob, phi_r, phi_f):
    """The poses of a path, continued from the rear contacts of the previous path of this problem."""
    pose = prob.v.place(prob.track, prob.x, phi_r, phi_f, paired=True, guess=getattr(prob, "x_rear", None))
    prob.x_rear = pose.x_rear
    return pose


def _evaluate(prob, phi_r, phi_f):
    pose = _place(prob, phi_r, phi_f)
    f, th_r, th_f = prob.grid_states(pose)
    return pose, f, th_r, th_f


def _path_value(prob, criterion, phi_r, phi_f):
    _, f, th_r, th_f = _evaluate(prob, phi_r, phi_f)
    return prob.value(criterion, f, th_r, th_f)


def constraint_margins(prob, phi_r, phi_f, f):
    """Every constraint as a margin (>= 0 when it holds), per stage."""
    v = prob.v
    clear = v.clearance(phi_r, phi_f)
    out = {
        "limits": np.minimum(phi_r - prob.limits[0], prob.limits[1] - phi_r),
        "limits_f": np.minimum(phi_f - prob.limits[0], prob.limits[1] - phi_f),
        "wheels": clear["wheels"], "rear_body": clear["rear"], "front_body": clear["front"],
        "slip_r": prob.mu * f["Nr"] - np.abs(f["Fr"]), "slip_f": prob.mu * f["Nf"] - np.abs(f["Ff"]),
        "rollover_r": f["Nr"] - prob.floor, "rollover_f": f["Nf"] - prob.floor,
    }
    step = prob.rate * prob.dx
    out["rate_r"] = np.concatenate([step - np.abs(np.diff(phi_r)), [step]])
    out["rate_f"] = np.concatenate([step - np.abs(np.diff(phi_f)), [step]])
    return out


def _holds(prob, phi_r, phi_f, f):
    margins = constraint_margins(prob, phi_r, phi_f, f)
    tol = {"rate_r": 1e-12, "rate_f": 1e-12, "limits": 1e-12, "limits_f": 1e-12}
    return all(np.all(v >= -tol.get(k, 0.0)) for k, v in margins.items())


def _hat_basis(K, every):
    """(K, n) piecewise-linear interpolation from knots at every `every`-th stage (and the last)."""
    knots = np.unique(np.concatenate([np.arange(0, K, every), [K - 1]]))
    basis = np.zeros((K, len(knots)))
    for a, (k0, k1) in enumerate(zip(knots[:-1], knots[1:])):
        t = (np.arange(k0, k1 + 1) - k0) / (k1 - k0)
        basis[k0:k1 + 1, a] += 1 - t
        basis[k0:k1 + 1, a + 1] += t
    basis[knots, :] = np.eye(len(knots))
    return basis, knots


def _refine(prob, criterion, phi_r0, phi_f0, start_value, maxiter, every=8, rounds=3):
    """SLSQP refinement of a DP path: phi = phi_DP + B z with B the piecewise-linear interpolation from
    knots every `every` stages (z = 0 is the DP path). Per-stage quantities depend only on that stage's
    angles, so their exact derivatives by those angles (Vehicle.stage) and the chain rule through B give the
    gradient and the constraint Jacobian. Constraints whose margin is large are left out and added back
    (active-set rounds) if the result violates them; the result is returned only if it is better than the
    DP value and every constraint holds at every stage."""
    from scipy.optimize import minimize

    K = len(prob.x)
    v = prob.v
    w = v.weight
    minimax = criterion in ("peak-torque", "grip")
    scale = max(abs(start_value), 1e-12)
    B, knots = _hat_basis(K, every)
    nk = B.shape[1]
    n_var = 2 * nk + (1 if minimax else 0)
    lo, hi = prob.limits
    step = prob.rate * prob.dx

    cache = {}

    def evaluate(z, derivatives=True):
        """Per-stage quantities at z and (when asked) their exact derivatives by the stage's own angles."""
        key = z.tobytes()
        if cache.get("key") != key:
            cache.clear()
            cache["key"] = key
            pr, pf = phi_r0 + B @ z[:nk], phi_f0 + B @ z[nk:2 * nk]
            cache["pose"] = _place(prob, pr, pf)
            cache["base"] = v.stage(cache["pose"], float(prob.x[0]))[0]
        if derivatives and "d_r" not in cache:
            cache["base"], cache["d_r"], cache["d_f"] = v.stage(cache["pose"], float(prob.x[0]), derivatives=True)
        if not derivatives:
            return cache["base"], None, None
        return cache["base"], cache["d_r"], cache["d_f"]

    zeros = np.zeros(K)

    def objective(z, need_grad=True):
        base, d_r, d_f = evaluate(z, need_grad)
        if d_r is None:
            d_r = d_f = {k: zeros for k in base}
        grad = np.zeros(n_var)
        if minimax:
            grad[-1] = 1.0 / scale
            return z[-1] / scale, grad
        m = base["M_r"]
        if criterion == "torque-variation":
            dm = np.diff(m)
            g = np.zeros(K)
            g[1:] += 2 * dm
            g[:-1] -= 2 * dm
            grad[:nk], grad[nk:2 * nk] = B.T @ (g * d_r["M_r"]) / scale, B.T @ (g * d_f["M_r"]) / scale
            return float(np.sum(dm ** 2)) / scale, grad
        # energy, |.| smoothed slightly
        tiny = 1e-9 * w * v.r
        ms = np.sqrt(m[:-1] ** 2 + tiny ** 2)
        total, gm, gt = 0.0, np.zeros(K), {}
        for name in ("th_r", "th_f"):
            d = np.diff(base[name])
            ad = np.sqrt(d * d + 1e-14)
            total += float(np.sum(ms * ad))
            gm[:-1] += m[:-1] / ms * ad
            g = np.zeros(K)
            g[1:] += ms * d / ad
            g[:-1] -= ms * d / ad
            gt[name] = g
        for i, d in ((0, d_r), (1, d_f)):
            grad[i * nk:(i + 1) * nk] = B.T @ (gm * d["M_r"] + gt["th_r"] * d["th_r"] + gt["th_f"] * d["th_f"]) / scale
        return total / scale, grad

    def rows(z, need_grad=True):
        """Every constraint per stage as (value, d/dphi_r, d/dphi_f, d/dt), >= 0 when it holds."""
        base, d_r, d_f = evaluate(z, need_grad)
        if d_r is None:
            d_r = d_f = {k: zeros for k in base}
        out = []
        mu, floor, safety = prob.mu, prob.floor, 1e-9 * w
        for F, N in (("Fr", "Nr"), ("Ff", "Nf")):
            for sgn in (1, -1):
                out.append(((mu * base[N] - sgn * base[F] - safety) / w, (mu * d_r[N] - sgn * d_r[F]) / w,
                            (mu * d_f[N] - sgn * d_f[F]) / w, 0.0))
            out.append(((base[N] - floor - safety) / w, d_r[N] / w, d_f[N] / w, 0.0))
        for c in ("c_wheels", "c_rear", "c_front"):
            out.append(((base[c] - 1e-12) / v.r, d_r[c] / v.r, d_f[c] / v.r, 0.0))
        for name in ("phi_r", "phi_f"):
            dphi = np.diff(base[name])
            for sgn in (1, -1):
                # rate limit between stages k and k+1, written on stage k (linear)
                val = np.concatenate([(step - sgn * dphi) / step, [1.0]])
                out.append((val, None if name == "phi_f" else sgn, None if name == "phi_r" else sgn, "rate"))
            # angle limits (linear)
            one = np.ones(K)
            out.append(((base[name] - lo) / step, one / step if name == "phi_r" else 0 * one,
                        one / step if name == "phi_f" else 0 * one, 0.0))
            out.append(((hi - base[name]) / step, -one / step if name == "phi_r" else 0 * one,
                        -one / step if name == "phi_f" else 0 * one, 0.0))
        if minimax:
            t = z[-1]
            terms = [("M_r",)] if criterion == "peak-torque" else [("gr",), ("gf",)]
            for (g,) in terms:
                for sgn in (1, -1):
                    out.append(((t - sgn * base[g]) / scale, -sgn * d_r[g] / scale, -sgn * d_f[g] / scale, 1 / scale))
        return out

    def assemble(z, active, need_jac=True):
        values, jac = [], []
        for (val, dr, df, dt), act in zip(rows(z, need_jac), active):
            idx = np.flatnonzero(act)
            if not idx.size:
                continue
            values.append(val[idx])
            J = np.zeros((len(idx), n_var))
            if isinstance(dt, str):  # rate row: sgn * (phi[k+1] - phi[k])
                sgn = dr if dr is not None else df
                off = 0 if dr is not None else nk
                D = B[idx + 1] - B[idx]
                J[:, off:off + nk] = -sgn * D / step
            else:
                J[:, :nk] = np.asarray(dr)[idx, None] * B[idx]
                J[:, nk:2 * nk] = np.asarray(df)[idx, None] * B[idx]
                if minimax:
                    J[:, -1] = dt
            jac.append(J)
        return np.concatenate(values), np.vstack(jac)

    z = np.zeros(n_var)
    if minimax:
        z[-1] = start_value
    # start with the constraints that are near-active on the DP path
    active = [np.asarray(val) < (0.05 if not isinstance(dt, str) else 0.2) for val, _, _, dt in rows(z, False)]
    for act in active[-4:] if minimax else []:
        act[:] = True
    last = None
    for _ in range(rounds):
        act_now = [a.copy() for a in active]
        cons = {"type": "ineq", "fun": lambda zz: assemble(zz, act_now, False)[0],
                "jac": lambda zz: assemble(zz, act_now)[1]}
        bounds = [(lo - hi, hi - lo)] * (2 * nk) + ([(0, None)] if minimax else [])
        try:
            with np.errstate(all="ignore"):
                res = minimize(lambda zz: objective(zz, False)[0], z, jac=lambda zz: objective(zz)[1], method="SLSQP", bounds=bounds, constraints=[cons],
                               options={"maxiter": maxiter, "ftol": 1e-10})
        except (ValueError, np.linalg.LinAlgError):
            return None
        zr = res.x
        violated = [np.asarray(val) < -1e-9 for val, _, _, _ in rows(zr, False)]
        new = [v & ~a for v, a in zip(violated, active)]
        if any(n.any() for n in new):  # a left-out constraint is violated: add it and solve again
            active = [a | v for a, v in zip(active, violated)]
            continue
        pr = _project(phi_r0 + B @ zr[:nk], lo, hi, step)
        pf = _project(phi_f0 + B @ zr[nk:2 * nk], lo, hi, step)
        _, f, th_r, th_f = _evaluate(prob, pr, pf)
        value = prob.value(criterion, f, th_r, th_f)
        if _holds(prob, pr, pf, f) and np.isfinite(value) and value < start_value:
            last = (pr, pf, {"iterations": int(res.nit), "message": str(res.message), "value": value, "knots": nk})
        break
    return last


def _project(phi, lo, hi, step):
    """The nearest-in-order path within the limits and the rate limit (removes rounding-level excess)."""
    out = np.clip(phi, lo, hi)
    for k in range(1, len(out)):
        out[k] = min(max(out[k], out[k - 1] - step, lo), out[k - 1] + step, hi)
    return out


def _schedule(prob, criterion, phi_r, phi_f, best_constant, dp_value, refined, info) -> Schedule:
    pose, f, th_r, th_f = _evaluate(prob, phi_r, phi_f)
    value = prob.value(criterion, f, th_r, th_f)
    slip = np.minimum(prob.mu * f["Nr"] - np.abs(f["Fr"]), prob.mu * f["Nf"] - np.abs(f["Ff"]))
    roll = np.minimum(f["Nr"], f["Nf"]) - prob.floor
    cols = {"x_front": prob.x, "phi_r": phi_r, "phi_f": phi_f, "torque": -f["M_r"], "slip_margin": slip,
            "rollover_margin": roll}
    units = {"x_front": "m", "phi_r": "rad", "phi_f": "rad", "torque": "N m", "slip_margin": "N", "rollover_margin": "N"}
    table = Table(cols, units, f"UGV on '{prob.track.name}': leg angles minimising {criterion}")
    ev = events(prob.x, f, prob.v, prob.mu, prob.margin)
    forces = dict(f)
    forces.update(x_rear=pose.x_rear, pitch=pose.pitch, theta_r=th_r, theta_f=th_f)
    return Schedule(prob.x, phi_r, phi_f, criterion, value, forces, table, ev, best_constant, dp_value, refined, info,
                    prob.track)


# -- pictures ----------------------------------------------------------------------------------------------


def _pyplot():
    import matplotlib

    from mechsym.plotting import headless

    headless(matplotlib)
    import matplotlib.pyplot as plt

    return plt


def _finish(plt, fig, path):
    """Save the figure to `path` (if given, atomically) and close it there; return it (a notebook shows it)."""
    if path:
        save_figure(fig, path, dpi=110)
    return fig


def _draw_vehicle(ax, vehicle, pose, k, color="k", alpha=1.0):
    """Body, legs and wheels of sample k of a pose (1-D arrays)."""
    from matplotlib.patches import Circle

    p = {name: (float(np.ravel(a)[k]), float(np.ravel(b)[k])) for name, (a, b) in pose.points().items()}
    ax.plot(*zip(p["Jr"], p["Jf"]), "-", color=color, lw=4, alpha=alpha, solid_capstyle="round")
    ax.plot(*zip(p["Jr"], p["Wr"]), "-", color=color, lw=2, alpha=alpha)
    ax.plot(*zip(p["Jf"], p["Wf"]), "-", color=color, lw=2, alpha=alpha)
    for w in ("Wr", "Wf"):
        ax.add_patch(Circle(p[w], vehicle.r, fill=False, color=color, lw=1.2, alpha=alpha))
    ax.plot(*p["C_body"], "o", color=color, ms=3, alpha=alpha)
    return p


def _track_line(ax, track, x_lo, x_hi):
    xs = np.linspace(x_lo, x_hi, 600)
    ax.fill_between(xs, track(xs), track(xs).min() - 0.15, color="0.85")
    ax.plot(xs, track(xs), color="0.3", lw=1)


def figure_sweep(path, track="bump", vehicle=None, n_grid=6, x=None):
    """Figure 24: drive torque along the track for a grid of constant angle pairs (clear pairs only) and the
    peak |torque| of every pair."""
    plt = _pyplot()
    vehicle = vehicle or Vehicle()
    track = load_track(track)
    x = np.linspace(0.0, 8.0, 401) if x is None else x
    grid = np.linspace(*LIMITS, n_grid)
    pr, pf = (a.ravel() for a in np.meshgrid(grid, grid, indexing="ij"))
    torque = sweep(track, pr, pf, x, vehicle=vehicle)["torque"]
    clear = vehicle.clearance(pr, pf)
    ok = (clear["wheels"] >= 0) & (clear["rear"] >= 0) & (clear["front"] >= 0)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [1.6, 1]})
    cmap = plt.get_cmap("viridis")
    for i in np.flatnonzero(ok):
        a1.plot(x, torque[:, i], color=cmap((pr[i] - LIMITS[0]) / (LIMITS[1] - LIMITS[0])), lw=0.9,
                alpha=0.4 + 0.6 * (pf[i] - LIMITS[0]) / (LIMITS[1] - LIMITS[0]))
    a1.set_xlabel("front contact x [m]")
    a1.set_ylabel("drive torque -M [N m]")
    a1.set_title(f"torque on '{track.name}' for constant leg angles (colour: phi_r)")
    a1.grid(True, alpha=0.3)
    peak = np.where(ok, np.abs(torque).max(axis=0), np.nan).reshape(n_grid, n_grid)
    im = a2.imshow(peak.T, origin="lower", extent=[grid[0] / DEG, grid[-1] / DEG, grid[0] / DEG, grid[-1] / DEG],
                   aspect="auto", cmap="magma")
    fig.colorbar(im, ax=a2, label="peak |torque| [N m]")
    a2.set_xlabel("phi_r [deg]")
    a2.set_ylabel("phi_f [deg]")
    a2.set_title("peak torque per pair (blank: wheels overlap or hit the body)")
    fig.tight_layout()
    return _finish(plt, fig, path)


def figure_schedule(path, schedule: Schedule, vehicle=None, snapshots=7):
    """Figure 25: (a) the optimal leg angles and the torque along the track, (b) the vehicle in sequence."""
    plt = _pyplot()
    vehicle = vehicle or Vehicle()
    t = schedule.table
    track = _schedule_track(schedule)
    fig = plt.figure(figsize=(12, 6.2))
    grid = fig.add_gridspec(2, 2, height_ratios=[1.3, 1])
    a1 = fig.add_subplot(grid[0, 0])
    a1.plot(t["x_front"], t["phi_r"] / DEG, label="phi_r")
    a1.plot(t["x_front"], t["phi_f"] / DEG, label="phi_f")
    a1.set_ylabel("leg angle [deg]")
    a1.set_xlabel("front contact x [m]")
    a1.legend(fontsize=8)
    a1.grid(True, alpha=0.3)
    a1.set_title(f"optimal angles ({schedule.criterion})")
    a2 = fig.add_subplot(grid[0, 1])
    a2.plot(t["x_front"], t["torque"], label="optimised")
    if schedule.best_constant:
        c = torque_along(track, schedule.best_constant[0], schedule.best_constant[1], t["x_front"][0],
                         t["x_front"][-1], len(t), vehicle=vehicle, limits=(0.01, math.pi - 0.01))
        a2.plot(t["x_front"], c["torque"], "--", label=f"best constant ({schedule.best_constant[0] / DEG:.0f} deg, "
                f"{schedule.best_constant[1] / DEG:.0f} deg)")
    a2.set_xlabel("front contact x [m]")
    a2.set_ylabel("drive torque [N m]")
    a2.legend(fontsize=8)
    a2.grid(True, alpha=0.3)
    a2.set_title(f"criterion {schedule.value:.4g} (best constant {schedule.best_constant[2] if schedule.best_constant else float('nan'):.4g})")
    a3 = fig.add_subplot(grid[1, :])
    pose = vehicle.place(track, schedule.x, schedule.phi_r, schedule.phi_f, paired=True)
    lo, hi = float(pose.x_rear.min()) - 0.5, float(schedule.x.max()) + 0.5
    _track_line(a3, track, lo, hi)
    for j, k in enumerate(np.linspace(0, len(schedule.x) - 1, snapshots).astype(int)):
        _draw_vehicle(a3, vehicle, pose, k, color=plt.get_cmap("plasma")(j / max(snapshots - 1, 1)))
    a3.set_aspect("equal")
    a3.set_xlim(lo, hi)
    a3.set_xlabel("x [m]")
    a3.set_title("the vehicle along the track")
    fig.tight_layout()
    return _finish(plt, fig, path)


def _schedule_track(schedule):
    return getattr(schedule, "track", None) or load_track("bump")


def animate(path, track="bump", x=None, phi_r=90 * DEG, phi_f=90 * DEG, vehicle=None, fps=20):
    """A GIF (or MP4) of the vehicle along the track; phi_r, phi_f constants or arrays along x."""
    plt = _pyplot()
    from matplotlib import animation
    from matplotlib.patches import Circle

    vehicle = vehicle or Vehicle()
    track = load_track(track)
    x = np.linspace(0.0, 8.0, 81) if x is None else np.asarray(x, float)
    pr = np.broadcast_to(np.asarray(phi_r, float), x.shape).copy()
    pf = np.broadcast_to(np.asarray(phi_f, float), x.shape).copy()
    pose = vehicle.place(track, x, pr, pf, paired=True)
    torque = vehicle.forces(pose)["torque"]
    pts = pose.points()
    lo, hi = float(pose.x_rear.min()) - 0.6, float(x.max()) + 0.6
    fig, ax = plt.subplots(figsize=(9, 2.8))
    _track_line(ax, track, lo, hi)
    top = max(float(np.max(pts["Jr"][1])), float(np.max(pts["Jf"][1]))) + 0.3
    ax.set_xlim(lo, hi)
    ax.set_ylim(float(track(np.linspace(lo, hi, 200)).min()) - 0.15, top)
    ax.set_aspect("equal")
    body, = ax.plot([], [], "-", color="k", lw=4, solid_capstyle="round")
    leg_r, = ax.plot([], [], "-", color="k", lw=2)
    leg_f, = ax.plot([], [], "-", color="k", lw=2)
    wheels = [ax.add_patch(Circle((0, 0), vehicle.r, fill=False, lw=1.5)) for _ in range(2)]
    label = ax.text(0.01, 0.95, "", transform=ax.transAxes, va="top", fontsize=9)

    def frame(k):
        def at(name):
            return float(pts[name][0][k]), float(pts[name][1][k])

        body.set_data(*zip(at("Jr"), at("Jf")))
        leg_r.set_data(*zip(at("Jr"), at("Wr")))
        leg_f.set_data(*zip(at("Jf"), at("Wf")))
        wheels[0].center, wheels[1].center = at("Wr"), at("Wf")
        label.set_text(f"x = {x[k]:.2f} m   phi_r = {pr[k] / DEG:.1f} deg   phi_f = {pf[k] / DEG:.1f} deg   "
                       f"torque = {torque[k]:.2f} N m")
        return [body, leg_r, leg_f, *wheels, label]

    fig.tight_layout()
    anim = animation.FuncAnimation(fig, frame, frames=len(x), blit=True)
    try:
        save_animation(anim, path, fps)
    finally:
        plt.close(fig)


def figure_tracks(path, vehicle=None, phi_r=90 * DEG, phi_f=90 * DEG):
    """The shipped tracks and the drive torque along each at one angle pair."""
    from mechsym.track import SHIPPED

    plt = _pyplot()
    vehicle = vehicle or Vehicle()
    fig, axes = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    x = np.linspace(0.0, 8.0, 801)
    for name in SHIPPED:
        t = torque_along(name, phi_r, phi_f, samples=801, vehicle=vehicle)
        axes[0].plot(x, load_track(name)(x), label=name)
        axes[1].plot(x, t["torque"], label=name)
    axes[0].set_ylabel("track y [m]")
    axes[0].legend(fontsize=8)
    axes[0].set_title("shipped tracks")
    axes[1].set_ylabel("drive torque [N m]")
    axes[1].set_xlabel("front contact x [m]")
    axes[1].set_title(f"torque along each (phi_r = {phi_r / DEG:.0f} deg, phi_f = {phi_f / DEG:.0f} deg)")
    for a in axes:
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    return _finish(plt, fig, path)


def figures(out_dir, vehicle=None):
    """The documentation figures (docs/ugv.md): tracks, Figure 24, Figure 25 and a GIF; returns the paths."""
    import os

    vehicle = vehicle or Vehicle()
    paths = [os.path.join(out_dir, n) for n in ("ugv_tracks.png", "ugv_fig24.png", "ugv_fig25.png", "ugv_bump.gif")]
    figure_tracks(paths[0], vehicle)
    figure_sweep(paths[1], "bump", vehicle)
    sched = optimize("bump", "torque-variation", vehicle=vehicle)
    figure_schedule(paths[2], sched, vehicle)
    x = np.linspace(0.0, 8.0, 61)
    animate(paths[3], "bump", x, np.interp(x, sched.x, sched.phi_r), np.interp(x, sched.x, sched.phi_f), vehicle)
    return paths
