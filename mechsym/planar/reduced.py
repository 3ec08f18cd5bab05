"""The reduced form of a mechanism's dynamics, in its driven coordinates alone.

With J = dq/dtheta and q'' = J thetadd + a0 (a0 solves Phi_q a0 = -gamma), the virtual power of the
Newton-Euler rows along J eliminates every reaction:

    J^T M J thetadd + J^T (M a0 - Q) = tau,

for one coordinate the Lagrange form M(theta) thetadd + 1/2 M'(theta) thetad^2 + G(theta) = T (J^T M J = M,
J^T M a0 = 1/2 M' thetad^2 with a0 = q'' thetad^2, -J^T Q = G). `reduced_terms` and `accelerations` give it
at one state for every integrator's right-hand side (simulate.EquationsOfMotion, a forward run's);
`reduced` its coefficients along a sweep, `reduced_ode` and `ode` the one-coordinate ODE with its exact
Jacobian; `one_coordinate_rhs` a forward run's right-hand side, on floats where the tracker's step runs on
them.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mechsym.core.errors import InputError
from mechsym.planar.dynamics import _finite, _no_batch
from mechsym.planar.kinematics import STEP_TOL, SUSPECT, Kinematics, _solve
from mechsym.planar.loads import moving
from mechsym.planar.tracking import FAR


class Reduced(NamedTuple):
    """The reduced form M thetadd + 1/2 M' thetad^2 + G = T at N samples, each an (N,) array: M the
    generalised inertia [kg m^2, or kg for a sliding coordinate], half_dM = 1/2 dM/dtheta, G the
    generalised force of gravity and the loads [N m or N]. Unpacks as (M, half_dM, G)."""

    M: np.ndarray
    half_dM: np.ndarray
    G: np.ndarray


def reduced(system, kin: Kinematics) -> Reduced:
    """Reduced (Lagrange, virtual-power) form of a one-coordinate mechanism at solved kinematics:
    M(theta), 1/2 M'(theta) and G(theta) with M thetadd + 1/2 M' thetad^2 + G = T (a `Reduced`). Uses
    only the kinematic coefficients and the mass matrix: no reaction enters, so it checks the
    Newton-Euler route. G is that of the loads of position alone (gravity, springs); a damper's or an
    actuator's generalised force is -J^T Q(q, q', t) of `System.loads` (docs/force-elements.md)."""
    mass = system.mass(kin.params)
    d1 = kin.dq[:, :, 0]
    big_m = np.einsum("ni,i,ni->n", d1, mass, d1)
    half_dm = np.einsum("ni,i,ni->n", d1, mass, kin.ddq)
    g = -np.einsum("ni,in->n", d1, system.applied(kin.q.T, kin.params))
    return Reduced(big_m, half_dm, g)


def reduced_terms(mass, jq, a0, loads):
    """(coef, base) of the reduced form at one state: coef = J^T M J (k, k) and base = J^T (M a0 - Q) (k,),
    so that coef thetadd + base = tau. mass: the diagonal mass matrix (n,); jq: J (n, k); a0 (n,); loads:
    every generalised force Q on the absolute coordinates (n,)."""
    mj = mass[:, None] * jq
    return jq.T @ mj, mj.T @ a0 - jq.T @ loads


def accelerations(coef, force):
    """thetadd (k,) from coef thetadd = force (force = tau - base, plus J^T of any further load)."""
    return force / coef[0, 0] if len(force) == 1 else np.linalg.solve(coef, force)


def reduced_ode(system, kin: Kinematics, omega, torque):
    """The reduced ODE y' = f(y), y = (theta, omega), of a one-coordinate mechanism under a constant
    torque at solved kinematics: f (N, 2) and its exact Jacobian df/dy (N, 2, 2). The theta derivatives
    of M, 1/2 M' and G need the third-order coefficients q3, solved from Phi_q q3 = -gamma3(q, q', q'')
    (symbolic derivatives of the constraints; no finite differences)."""
    p, q = kin.params, kin.q.T
    omega = np.broadcast_to(np.asarray(omega, float), (len(kin.q),))
    mass = system.mass(p)
    d1, d2 = kin.dq[:, :, 0], kin.ddq
    rhs3 = -system.gamma3(q, d1.T, d2.T, p).T
    d3 = kin.factor.solve(rhs3) if kin.factor is not None else _solve(kin.jac, rhs3)
    big_m, half_dm, g = reduced(system, kin)
    applied = system.applied(q, p)
    d_half_dm = np.einsum("i,ni->n", mass, d2 * d2 + d1 * d3)
    d_g = -system.applied_rate(q, d1.T, p)[0] - np.einsum("in,ni->n", applied, d2)
    thetadd = (torque - half_dm * omega**2 - g) / big_m
    f = np.stack([omega, thetadd], axis=1)
    jac = np.zeros((len(omega), 2, 2))
    jac[:, 0, 1] = 1.0
    jac[:, 1, 0] = (-d_half_dm * omega**2 - d_g - 2 * half_dm * thetadd) / big_m
    jac[:, 1, 1] = -2 * half_dm * omega / big_m
    return f, jac


def ode(system, theta, omega, torque=0.0, params=None):
    """Right-hand side f (N, 2) and exact Jacobian (N, 2, 2) of the reduced ODE at the states
    (theta[i], omega[i]) under a constant torque (a linearisation, or an implicit integrator's Jacobian)."""
    if len(system.coordinate_names) != 1:
        raise InputError("ode() is the reduced form of a one-coordinate mechanism")
    if moving(system) is not None:
        raise InputError(f"mechanism '{system.mechanism.name}': ode() gives the reduced ODE under loads of position "
                         "alone; a load depends on the velocities or the time (integrate it with forward())")
    theta = np.asarray(theta, float).ravel()
    omega = np.broadcast_to(np.asarray(omega, float), theta.shape)
    _finite(theta, "theta")
    _finite(omega, "omega")
    _finite(np.atleast_1d(torque), "torque")
    f, jac = system.backend.route(compiled=_ode_c, python=_no_batch)(system, theta, omega, torque, params)
    if f is not None:
        return f, jac
    return reduced_ode(system, system.kinematics(theta, params), omega, torque)  # names the failure


def _ode_c(system, theta, omega, torque, params):
    """(f, jac) of `ode` in one compiled call, (None, None) where it failed before its continuation."""
    solver = system.solver(params)
    t0, q0 = solver._start(theta[:1])  # the sweep's start, so that a first state on a bridge is bridged too
    failed, _, f, jac, stop = system.functions.ode(np.concatenate([t0, theta]), np.concatenate([omega[:1], omega]),
                                                   torque, solver.params, q0, solver.col_scale, STEP_TOL,
                                                   hmax=solver.step[0])
    if stop is not None:
        solver.stopped(stop.theta_a, stop.q_a, stop.theta_b, stop.q_b, stop.converged)
    return (f[1:], jac[1:]) if failed < 0 else (None, None)


def one_coordinate_rhs(tracker, mass, force, applied, motion=None):
    """rhs(t, y) of the reduced ODE of a one-coordinate mechanism, y = (theta, omega): coef thetadd = T - base
    (`reduced_terms`) at the state `tracker` solves, T = force(t, theta, omega), the loads applied(q) -> Q
    (n,) and motion(t, q, qd) -> Q (n,) (those of the velocities or the time; None: none).

    Where the tracker's step runs on floats (tracker.floats: the numpy backend's scalar rendering, whose
    per-call cost numpy's overhead would dominate) and no load moves, the state is predicted, solved and
    checked on floats as CompiledTracker.state does, and the same terms summed on floats; a state that
    fails the checks goes through `tracker.state` (which continues to it, rejects it or names the
    failure), one near a bifurcation (ConfigurationTracker.clear) through `tracker.continued`, which
    bridges it."""
    if tracker.floats is None or motion is not None:
        def rhs(t, y):
            q, jq, a0, app = tracker.state([y[0]], [y[1]])
            loads = applied(q) if app is None else app
            if motion is not None:
                loads = loads + motion(t, q, jq[:, 0] * y[1])
            coef, base = reduced_terms(mass, jq, a0, loads)
            return np.array([y[1], accelerations(coef, force(t, y[0], y[1]) - base)[0]])

        return rhs

    raw = tracker.floats
    m = [float(v) for v in mass]
    inv_col = [float(v) for v in tracker._inv_col]
    rel_max = tracker._rel_max
    last = [float(tracker.theta[0]), tracker.q.tolist(), tracker.jq[:, 0].tolist(), True]  # (synced)
    clear = tracker.fallback.clear

    def checked(th, w, careful):
        if not last[3]:                                   # hand the last solved state to the tracker
            tracker.theta, tracker.q = np.array([last[0]]), np.array(last[1])
            tracker.jq = np.array(last[2])[:, None]
        q, jq, a0, app = (tracker.continued if careful else tracker.state)(np.array([th]), np.array([w]))
        last[:] = [th, q.tolist(), jq[:, 0].tolist(), True]
        return last[1], last[2], a0.tolist(), (applied(q) if app is None else app).tolist()

    def rhs(t, y):
        th, w = float(y[0]), float(y[1])
        h = th - last[0]
        pred = [qi + h * ji for qi, ji in zip(last[1], last[2])]
        status, out = raw(pred, [th], [w])
        ok = not status
        if ok:
            q, jq, a0, app = out
            d1 = [row[0] for row in jq]
            ok = (all(abs(v) * rel_max <= SUSPECT for v in d1)     # (False for a NaN)
                  and all(abs(a - b) * c <= FAR for a, b, c in zip(q, pred, inv_col)))
        careful = ok and not clear(last[0], th, q)       # near a bifurcation: the bridging route
        if ok and not careful:
            last[:] = [th, list(q), d1, False]
        else:
            q, d1, a0, app = checked(th, w, careful)
        md1 = [a * b for a, b in zip(m, d1)]
        big_m = sum(a * b for a, b in zip(md1, d1))
        rest = sum(a * b for a, b in zip(md1, a0)) - sum(a * b for a, b in zip(d1, app))
        return np.array([w, (force(t, th, w) - rest) / big_m])

    return rhs
