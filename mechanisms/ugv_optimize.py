"""The UGV's leg angles along a track that minimise a criterion (chapter section 8, Figure 25).

`optimize`: leg angles phi_r(x), phi_f(x) at the stages x_k subject to the angle limits, the rate limit,
clearance, no slip and no rollover: dynamic programming over an angle grid (mechsym.studies.optimize.staged_dp,
sum or minimax), then the SLSQP refinement of mechsym.studies.optimize (refine_stages) with the exact per-stage
derivatives of mechanisms/ugv_study.Vehicle.stage; never worse than the best constant pair of the grid.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mechanisms import tracks
from mechanisms.ugv_study import (DEG, LIMITS, MARGIN, MU, Vehicle, check_friction, check_limits, check_margin,
                                  events, front_positions)
from mechsym.core.errors import InputError
from mechsym.core.results import Table
from mechsym.studies import refine_stages, staged_dp


RATE = 60 * DEG  # rad per metre of travel
CRITERIA = ("torque-variation", "peak-torque", "energy", "grip")


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
    track = tracks.load(track)
    x = front_positions(x_from, x_to, samples)
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



def _refine(prob, criterion, phi_r0, phi_f0, start_value, maxiter):
    """SLSQP refinement of a DP path (mechsym.studies.optimize.refine_stages, knots every 8 stages): every per-stage
    quantity depends only on that stage's angles, with exact derivatives by them (Vehicle.stage). The
    result is kept only if it is better than the DP value and every constraint holds at every stage."""
    v, w = prob.v, prob.v.weight
    x0 = float(prob.x[0])
    last = {}

    def evaluate(u, derivatives):
        key = u.tobytes()
        if last.get("key") != key:
            last.clear()
            last.update(key=key, pose=_place(prob, u[:, 0], u[:, 1]))
        base, d_r, d_f = v.stage(last["pose"], x0, derivatives)
        values = dict(base, **_stage_rows(prob, base))
        if not derivatives:
            return values, None
        by_r, by_f = dict(d_r, **_stage_rows(prob, d_r, True)), dict(d_f, **_stage_rows(prob, d_f, True))
        return values, {k: np.stack([by_r[k], by_f[k]], axis=1) for k in STAGE_ROWS + CRITERION_TERMS}

    def accept(u):
        _, f, th_r, th_f = _evaluate(prob, u[:, 0], u[:, 1])
        return prob.value(criterion, f, th_r, th_f) if _holds(prob, u[:, 0], u[:, 1], f) else None

    kw = {"minimax": ("M_r",)} if criterion == "peak-torque" else {"minimax": ("gr", "gf")} if criterion == "grip" \
        else {"objective": _torque_variation if criterion == "torque-variation" else _energy(w * v.r)}
    lo, hi = prob.limits
    out = refine_stages(np.c_[phi_r0, phi_f0], evaluate, lo, hi, prob.rate * prob.dx, start_value, accept,
                        constraints=STAGE_ROWS, maxiter=maxiter, **kw)
    return None if out is None else (out[0][:, 0], out[0][:, 1], out[1])


CRITERION_TERMS = ("M_r", "th_r", "th_f", "gr", "gf")  # what the criteria of the refinement read
STAGE_ROWS = ("slip_Fr+1", "slip_Fr-1", "lift_Nr", "slip_Ff+1", "slip_Ff-1", "lift_Nf", "c_wheels", "c_rear", "c_front")


def _stage_rows(prob, d, rate=False):
    """The per-stage constraints of the refinement (STAGE_ROWS), >= 0 when they hold, scaled to order one,
    from the stage values d, or (rate=True) their derivatives from the derivatives d."""
    w, r = prob.v.weight, prob.v.r
    safety = 0.0 if rate else 1e-9 * w  # strictly inside, by more than rounding
    rows = {}
    for F, N in (("Fr", "Nr"), ("Ff", "Nf")):
        for sgn in (1, -1):
            rows[f"slip_{F}{sgn:+d}"] = (prob.mu * d[N] - sgn * d[F] - safety) / w
        rows[f"lift_{N}"] = (d[N] - (0.0 if rate else prob.floor) - safety) / w
    for c in ("c_wheels", "c_rear", "c_front"):
        rows[c] = (d[c] - (0.0 if rate else 1e-12)) / r
    return rows


def _torque_variation(values, grads):
    """sum (M_{k+1} - M_k)^2 and its derivatives by every stage's angles."""
    dm = np.diff(values["M_r"])
    if grads is None:
        return float(np.sum(dm ** 2)), None
    g = np.zeros(len(dm) + 1)
    g[1:] += 2 * dm
    g[:-1] -= 2 * dm
    return float(np.sum(dm ** 2)), g[:, None] * grads["M_r"]


def _energy(torque_scale):
    """sum |M_k| (|dth_r| + |dth_f|), the absolute values smoothed slightly, and its derivatives."""
    def energy(values, grads):
        m = values["M_r"]
        ms = np.sqrt(m[:-1] ** 2 + (1e-9 * torque_scale) ** 2)
        total, gm = 0.0, np.zeros(len(m))
        grad = np.zeros((len(m), 2))
        for name in ("th_r", "th_f"):
            d = np.diff(values[name])
            ad = np.sqrt(d * d + 1e-14)
            total += float(np.sum(ms * ad))
            if grads is not None:
                gm[:-1] += m[:-1] / ms * ad
                g = np.zeros(len(m))
                g[1:] += ms * d / ad
                g[:-1] -= ms * d / ad
                grad += g[:, None] * grads[name]
        if grads is None:
            return total, None
        return total, grad + gm[:, None] * grads["M_r"]

    return energy


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

