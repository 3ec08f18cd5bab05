"""High-accuracy free motion on Pinocchio's dynamics over the benchmark intervals: Bricard's mechanism from
rest (`bricard`), the flyball governor spinning at its benchmark speed with rigid couplers (`governor`) and with
the benchmark's stiff spring-damper couplers (`governor-springs`, an open tree).

With closures the state (q, v) is integrated by scipy's DOP853 (rtol = atol = 1e-12, in m, rad and their rates)
in segments of SEGMENT seconds; at each segment's end it is projected back onto the constraints (Newton with
minimum-norm steps on q, then v minus its component off J v = 0) and the integration restarts from there.
Outputs on a uniform grid come from the dense output, not projected, so that the residual reported is the run's
own. The stiff spring-damper governor (damping 4e4 N s/m) runs on LSODA at the same tolerances.
"""
from __future__ import annotations

import time

import numpy as np
from scipy.integrate import solve_ivp

from . import pinocchio_models as pm
from .geometry import BRICARD, GOVERNOR

SEGMENT = 0.5        # s between projections
RTOL = ATOL = 1e-12


def initial_state(name):
    """(Reference, q0, v0) of a free-motion problem at its benchmark start."""
    if name == "bricard":
        ref = pm.build("bricard")
        return ref, np.zeros(ref.nv), np.zeros(ref.nv)
    if name in ("governor", "governor-springs"):
        ref = pm.build("governor", couplers=name.partition("-")[2] or "rigid")
        v0 = np.zeros(ref.nv)
        v0[ref.coordinate["shaft"]] = GOVERNOR["omega0"]
        return ref, np.zeros(ref.nv), v0
    raise KeyError(name)


def project(ref, q, v, tol=1e-14):
    for _ in range(20):
        r = pm.residual(ref, q)
        if np.max(np.abs(r), initial=0.0) < tol:
            break
        q = q - np.linalg.lstsq(pm.jacobian(ref, q), r, rcond=1e-10)[0]
    J = pm.jacobian(ref, q)
    return q, v - np.linalg.lstsq(J, J @ v, rcond=1e-10)[0]


def free_motion(name, t_end=None, samples=None, rtol=RTOL, atol=ATOL, method=None):
    """Run a benchmark: returns dict(t, q, v, points {name: (n, 3) m}, kinetic, potential (J), residual (max |.|
    of the closure residual over the outputs, m), cpu (s), nfev)."""
    ref, q, v = initial_state(name)
    t_end = (BRICARD if name == "bricard" else GOVERNOR)["t_end"] if t_end is None else t_end
    samples = int(round(t_end / 0.01)) + 1 if samples is None else samples
    grid = np.linspace(0.0, t_end, samples)
    n = ref.nv
    accelerations = pm.dynamics(ref)

    def rhs(_t, y):
        return np.concatenate([y[n:], accelerations(y[:n], y[n:])])

    ys, nfev = [], 0
    start = time.process_time()
    t0 = 0.0
    if not ref.constraint_models:
        sol = solve_ivp(rhs, (0.0, t_end), np.concatenate([q, v]), method=method or "LSODA", rtol=rtol,
                        atol=atol, dense_output=True)
        ys.append(sol.sol(grid).T)
        nfev, t0 = sol.nfev, t_end
    while t0 < t_end - 1e-12:
        t1 = min(t0 + SEGMENT, t_end)
        inside = grid[(grid >= t0 - 1e-12) & (grid < t1 - 1e-12)] if t1 < t_end else grid[grid >= t0 - 1e-12]
        sol = solve_ivp(rhs, (t0, t1), np.concatenate([q, v]), method=method or "DOP853", rtol=rtol, atol=atol,
                        dense_output=True)
        nfev += sol.nfev
        ys.append(sol.sol(inside).T)
        q, v = project(ref, sol.y[:n, -1], sol.y[n:, -1])
        t0 = t1
    cpu = time.process_time() - start
    Y = np.vstack(ys)
    out = dict(t=grid, q=Y[:, :n], v=Y[:, n:], cpu=cpu, nfev=nfev)
    pts = {k: [] for k in ref.problem.points}
    kin, pot, res = [], [], 0.0
    for qk, vk in zip(out["q"], out["v"]):
        for k, p in pm.point_positions(ref, qk).items():
            pts[k].append(p)
        e = pm.energy(ref, qk, vk)
        kin.append(e[0])
        pot.append(e[1])
        res = max(res, float(np.max(np.abs(pm.residual(ref, qk)), initial=0.0)))
    out.update(points={k: np.array(p) for k, p in pts.items()}, kinetic=np.array(kin), potential=np.array(pot),
               residual=res)
    return out
