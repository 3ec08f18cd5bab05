"""The UGV analyses of the chapter (section 8) on the declaration of mechanisms/ugv.py.

* `Vehicle`: the half-vehicle with parameter values, standing on the track (mechsym.planar.stance: the pose, the
  wheelbase and every derivative by the leg angles come from the declaration): the geometric clearances,
  `place` (the position problem, vectorised over front contacts and angle pairs), `forces` (the quasi-static
  ground forces and wheel torque from the closed form that mechsym.planar.rolling derived from the per-body rows),
  `stage` (the per-stage quantities of the optimisation and their exact derivatives).
* `torque_along`: forces and drive torque along a track for one angle pair, with slip and rollover reported
  as events (x where they happen), not exceptions.
* `sweep`: the drive torque along a track for a grid of constant angle pairs (Figure 24), vectorised.

The optimised leg angles (Figure 25) are in mechanisms/ugv_optimize.py, the figures and the animation in
mechanisms/ugv_figures.py.

Sign conventions (spec section 4): F along the track tangent t = (cos beta, sin beta), N along the normal
n = (-sin beta, cos beta); M counter-clockwise on each wheel; the reported drive torque is -M, propulsive
positive when moving +x. Angles in radians; SI units.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.results import Table
from mechsym.planar.rolling import ContactStatics
from mechsym.planar.stance import Stance, StancePose, finite_array

from mechanisms import tracks

DEG = math.pi / 180
LIMITS = (45 * DEG, 135 * DEG)
MU = 0.6
MARGIN = 0.05  # rollover margin: fraction of the total weight
FORCES = ("Fr", "Nr", "Ff", "Nf", "M_r")
# named points of the figures and the checks: declared points, and the bodies' centres of mass
POINTS = {"Jr": ("body", "Jr"), "Jf": ("body", "Jf"), "Wr": ("wheel_r", "centre"), "Wf": ("wheel_f", "centre")}
MASS_CENTRES = {"C_body": "body", "C_leg_r": "leg_r", "C_leg_f": "leg_f"}
SPINS = {"th_r": "spin_r", "th_f": "spin_f"}  # the wheels' rotations on their legs


@functools.lru_cache(maxsize=None)
def statics() -> ContactStatics:
    """The equilibrium of the UGV declaration, derived once (parameters stay symbols)."""
    from mechanisms import ugv

    mech = ugv.build()
    return ContactStatics(mech, ugv.contacts(mech), ugv.ties())


@functools.lru_cache(maxsize=None)
def stance() -> Stance:
    """The vehicle on its two wheels: the body free, the leg angles imposed, the front contact given."""
    return Stance(statics(), "body", ("phi_r", "phi_f"), lead="front")


def check_limits(limits):
    lo, hi = (float(v) for v in limits)
    if not (np.isfinite(lo) and np.isfinite(hi) and 0 < lo < hi < math.pi):
        raise InputError(f"leg-angle limits must satisfy 0 < min < max < 180 deg, got {lo / DEG:g} deg, {hi / DEG:g} deg")
    return lo, hi


class Pose(StancePose):
    """Configurations at samples (every array has the same shape), named for the vehicle."""

    x_front = property(lambda self: self.x_lead)
    x_rear = property(lambda self: self.x_trail)
    beta_front = property(lambda self: self.beta_lead)
    beta_rear = property(lambda self: self.beta_trail)
    pitch = property(lambda self: self.angle)
    phi_r = property(lambda self: self.inputs[0])
    phi_f = property(lambda self: self.inputs[1])

    def points(self) -> dict:
        """World positions of the joints, wheel centres, contact points and centres of mass."""
        out = {k: tuple(self.stance.point(self, *v)) for k, v in POINTS.items()}
        bodies = self.stance.constraints.bodies
        for k, body in MASS_CENTRES.items():
            i = 3 * bodies.index(body)
            out[k] = tuple(self.stance.coordinates(self, (i, i + 1)))
        out["T"], out["D"] = (self.x_rear, self.track(self.x_rear)), (self.x_front, self.track(self.x_front))
        return out

    def coordinates(self) -> list:
        """The body coordinates q (x, y of the centre of mass, angle) in the order of the declaration,
        wheel angles from rolling without slip measured from x = 0."""
        return list(self.stance.coordinates(self))


class Vehicle:
    """The UGV half-vehicle with parameter values (defaults: chapter data and the spec's ASSUMED values)."""

    def __init__(self, params=None):
        self.statics, self.stance = statics(), stance()
        self.mechanism = self.statics.mechanism
        self.values = self.mechanism.resolve_parameters(params)
        self.p = np.array([self.values[n] for n in self.mechanism.parameters])
        v = self.values
        self.r = v["r"]
        subs = dict(zip(self.statics.constraints.params, self.p))
        self.mass = sum(float(self.mechanism.bodies[b].mass.xreplace(subs)) for b in self.statics.constraints.bodies)
        self.weight = v["g"] * self.mass
        self._body = [self.stance.local(self.p, "body", j, (0.0, 0.0))[0] for j in ("Jr", "Jf")]

    # -- geometry -----------------------------------------------------------------------------------
    def wheelbase(self, phi_r, phi_f):
        """Distance R between the wheel centres (Eq. 39) and the angle gamma of W_r -> W_f in the body frame."""
        return self.stance.spacing(self.p, (phi_r, phi_f))

    def clearance(self, phi_r, phi_f, derivatives=False):
        """Geometric margins (>= 0 when clear): wheel centres at least 2r apart, and each wheel's distance
        from the body segment Jr-Jf at least r. With `derivatives`: (margins, [d margins / d phi_r,
        d / d phi_f]), each exact (a nearest point inside the segment moves along it)."""
        (ax, ay), (bx, by) = self._body
        ex, ey = bx - ax, by - ay
        centres = {w: self.stance.local(self.p, body, "centre", (phi_r, phi_f))
                   for w, body in (("rear", "wheel_r"), ("front", "wheel_f"))}
        (rx, ry), d_rear = centres["rear"]
        (fx, fy), d_front = centres["front"]
        R = np.hypot(fx - rx, fy - ry)
        out = {"wheels": R - 2 * self.r}
        rates = [{"wheels": ((fx - rx) * (dfx - drx) + (fy - ry) * (dfy - dry)) / R}
                 for (drx, dry), (dfx, dfy) in zip(d_rear, d_front)]
        for name, ((px, py), dp) in centres.items():
            t = np.clip(((px - ax) * ex + (py - ay) * ey) / (ex * ex + ey * ey), 0.0, 1.0)
            nx, ny = px - ax - t * ex, py - ay - t * ey
            dist = np.hypot(nx, ny)
            out[name] = dist - self.r
            for rate, (dpx, dpy) in zip(rates, dp):
                rate[name] = (nx * dpx + ny * dpy) / dist
        return (out, rates) if derivatives else out

    def prepare(self, track, x_lo, x_hi):
        """Check the track where the wheels will go (mechsym.planar.stance.Stance.prepare)."""
        self.stance.prepare(track, self.r, x_lo, x_hi)

    def place(self, track, x_front, phi_r, phi_f, paired=False, guess=None) -> Pose:
        """The position problem. x_front (M,); phi_r, phi_f (P,) angle pairs: shapes (M, P). paired=True:
        phi_r, phi_f (M,), one pair per front contact: shapes (M,). `guess`: nearby rear contacts (a
        continuation), see mechsym.planar.wheels.rear_contact."""
        return self.stance.place(self.p, tracks.load(track), x_front, (phi_r, phi_f), paired, guess, pose_type=Pose)

    def forces(self, pose: Pose, names=("Fr", "Nr", "Ff", "Nf", "torque")) -> dict:
        """Ground forces and torques at the poses: Fr, Nr, Ff, Nf, M_r (= M_f = M) and torque (= -M); any
        other unknown of the equilibrium by name (joint reactions axle_r.fx ..., leg torques tau_r, tau_f).
        The result always holds M and torque as well."""
        asked = [n for n in names if n not in ("torque", "M")]
        if "M_r" not in asked:
            asked.append("M_r")
        out, _ = self.stance.forces(pose, asked)
        out["M"] = out["M_r"]
        out["torque"] = -out["M_r"]
        return out

    def wheel_angles(self, pose: Pose, x0=0.0):
        """Wheel rotations relative to their legs (the spin coordinates) for the motor work; wheels rolling
        without slip from contact x0."""
        spins = self.stance.output_values(pose, x0)
        return tuple(spins[SPINS[k]] for k in ("th_r", "th_f"))

    def stage(self, pose: Pose, x0=0.0, derivatives=False):
        """Per-sample quantities of paired poses (one angle pair per front contact): the forces FORCES, the
        wheel rotations relative to the legs th_r, th_f (from x0), the clearances c_wheels, c_rear, c_front,
        the grip ratios gr = Fr/Nr, gf = Ff/Nf and the angles phi_r, phi_f. With `derivatives`, also their
        exact derivatives by the sample's own phi_r and by its own phi_f at a fixed front contact (from the
        declaration: mechsym.planar.stance). Returns (values, d/dphi_r, d/dphi_f), dicts with the same keys (the
        derivatives None without `derivatives`)."""
        f, rates = self.stance.forces(pose, FORCES, derivatives, x0)
        spins = self.stance.output_values(pose, x0)
        out = {k: f[k] for k in FORCES}
        out.update({k: spins[s] for k, s in SPINS.items()}, phi_r=pose.phi_r, phi_f=pose.phi_f)
        clear = self.clearance(pose.phi_r, pose.phi_f, derivatives)
        out.update({f"c_{k}": c for k, c in (clear[0] if derivatives else clear).items()})
        with np.errstate(all="ignore"):
            out["gr"], out["gf"] = f["Fr"] / f["Nr"], f["Ff"] / f["Nf"]
        if not derivatives:
            return out, None, None
        result = []
        for j, (d, c) in enumerate(zip(rates, clear[1])):
            d = {k: d[SPINS.get(k, k)] for k in (*FORCES, *SPINS)}
            d["phi_r"], d["phi_f"] = (np.full_like(pose.phi_r, float(j == 0)), np.full_like(pose.phi_r, float(j == 1)))
            d.update({f"c_{k}": v for k, v in c.items()})
            with np.errstate(all="ignore"):
                d["gr"] = (d["Fr"] * f["Nr"] - f["Fr"] * d["Nr"]) / f["Nr"] ** 2
                d["gf"] = (d["Ff"] * f["Nf"] - f["Ff"] * d["Nf"]) / f["Nf"] ** 2
            result.append(d)
        return out, result[0], result[1]


# -- torque along a track ----------------------------------------------------------------------------------


def front_positions(x_from, x_to, samples):
    """`samples` front-contact positions from x_from to x_to, checked."""
    for name, v in (("x_from", x_from), ("x_to", x_to)):
        if not np.isfinite(v):
            raise InputError(f"{name} must be finite, got {v}")
    if not x_to > x_from:
        raise InputError(f"x_to = {x_to} must exceed x_from = {x_from}")
    if int(samples) < 2:
        raise InputError(f"samples must be at least 2, got {samples}")
    return np.linspace(x_from, x_to, int(samples))


def check_friction(mu):
    """mu as a float: positive and at most mechsym.planar.stickslip.MAX_MU."""
    from mechsym.planar.stickslip import MAX_MU

    if not (np.isfinite(mu) and mu > 0):
        raise InputError(f"friction coefficient mu = {mu} must be positive")
    if mu > MAX_MU:
        raise InputError(f"friction coefficient mu = {mu:g} is above {MAX_MU:g}, beyond any contact")
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
    track = tracks.load(track)
    x = front_positions(x_from, x_to, samples)
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
    track = tracks.load(track)
    if phi_r is None or phi_f is None:
        grid = np.linspace(*LIMITS, 10)
        phi_r, phi_f = (a.ravel() for a in np.meshgrid(grid, grid, indexing="ij"))
    phi_r, phi_f = np.broadcast_arrays(finite_array(phi_r, "phi_r"), finite_array(phi_f, "phi_f"))
    x = np.linspace(0.0, 8.0, 801) if x is None else finite_array(x, "x")
    chunk = chunk or max(1, 65536 // len(phi_r))
    out = {n: np.empty((len(x), len(phi_r))) for n in names}
    for lo in range(0, len(x), chunk):
        pose = vehicle.place(track, x[lo:lo + chunk], phi_r, phi_f)
        f = vehicle.forces(pose, names)
        for n in names:
            out[n][lo:lo + chunk] = f[n]
    return out
