"""The delta robot's inverse dynamics along a platform path, derived with sympy.physics.mechanics: Lagrange's
equations with holonomic constraints (`LagrangesMethod(..., hol_coneqs=...)`) in the coordinates
(x, y, z, theta1, theta2, theta3): the platform centre's world position and the motor angles.

The same bodies as geometry.delta, described anew: each arm a RigidBody turning about its motor axis; each
forearm, a thin rod, as three particles (m/6 at the elbow, 2m/3 at its middle, m/6 at the wrist: the rod's mass,
centre of mass and inertia about every axis across it); the platform a particle (it only translates). One
constraint per leg, |wrist - elbow|^2 = forearm^2. The motor angles along the path come from the closed-form
inverse kinematics, differentiated in time by sympy (exact). Unknowns at each instant: the three motor torques
(N m, about the motor axes, on the arms) and the three multipliers, linear in the equations.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp
import sympy.physics.mechanics as me

from .geometry import CIRCLE, DELTA


@lru_cache(maxsize=4)
def _equations(items):
    p = dict(items)
    R, r, La, Lf = p["base"], p["platform"], p["arm"], p["forearm"]
    ma, mf, mp, g = p["arm_mass"], p["forearm_mass"], p["platform_mass"], p["g"]
    x, y, z = me.dynamicsymbols("x y z")
    th = me.dynamicsymbols("theta1:4")
    tau = sp.symbols("tau1:4")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y + z * N.z)
    P.set_vel(N, P.pos_from(O).dt(N))
    bodies = [me.Particle("platform", P, mp)]
    loads = [(P, -mp * g * N.z)]
    constraints, legs = [], []
    for i in range(3):
        phi = 2 * sp.pi * i / 3
        radial = sp.cos(phi) * N.x + sp.sin(phi) * N.y
        tangent = -sp.sin(phi) * N.x + sp.cos(phi) * N.y
        A = N.orientnew(f"A{i}", "Axis", [th[i], tangent])
        arm_dir = sp.cos(phi) * A.x + sp.sin(phi) * A.y             # the radial direction carried by the arm
        motor = O.locatenew(f"M{i}", R * radial)
        motor.set_vel(N, 0)
        centre = motor.locatenew(f"Ca{i}", La / 2 * arm_dir)
        centre.v2pt_theory(motor, N, A)
        inertia = ma * La ** 2 / 12 * (me.inertia(A, 1, 1, 1) - me.outer(arm_dir, arm_dir))
        bodies.append(me.RigidBody(f"arm{i}", centre, A, ma, (inertia, centre)))
        elbow = motor.locatenew(f"E{i}", La * arm_dir)
        elbow.v2pt_theory(motor, N, A)
        wrist = P.locatenew(f"W{i}", r * radial)
        wrist.set_vel(N, P.vel(N))
        middle = O.locatenew(f"F{i}", (elbow.pos_from(O) + wrist.pos_from(O)) / 2)
        middle.set_vel(N, (elbow.vel(N) + wrist.vel(N)) / 2)
        for point, mass in ((elbow, mf / 6), (middle, 2 * mf / 3), (wrist, mf / 6)):
            bodies.append(me.Particle(f"{point.name}_m", point, mass))
            loads.append((point, -mass * g * N.z))
        loads += [(centre, -ma * g * N.z), (A, tau[i] * tangent)]
        d = wrist.pos_from(elbow)
        constraints.append(d.dot(d) - Lf ** 2)
        gravity = -g * N.z
        inertial = mf / 6 * (wrist.acc(N) - gravity) + mf / 3 * (middle.acc(N) - gravity)
        legs.append((d.to_matrix(N), inertial.to_matrix(N)))
    L = me.Lagrangian(N, *bodies)
    lm = me.LagrangesMethod(L, [x, y, z, *th], forcelist=loads, frame=N, hol_coneqs=constraints)
    eom = lm.form_lagranges_equations()
    unknowns = list(tau) + list(lm.lam_vec)
    q = [x, y, z, *th]
    qd = [s.diff() for s in q]
    args = q + qd + [s.diff() for s in qd]
    # linear in the unknowns: eom = A u - b, b the equations at u = 0 with the sign changed
    matrix = sp.lambdify(args, eom.jacobian(unknowns), "numpy", cse=True)
    equations = sp.lambdify(args + unknowns, eom, "numpy", cse=True)

    def solve_for(*values):
        return matrix(*values), -equations(*values, *[0.0] * len(unknowns))

    residuals = sp.lambdify(args, constraints, "numpy")
    # The force a forearm exerts on the platform: the constraint's generalized force on the platform's
    # coordinates, -(dg/dP)^T lambda = -2 lambda (wrist - elbow), less what moves the forearm's particles that
    # the platform carries (the wrist's sixth and half the middle's two thirds, their inertia and weight).
    on_platform = sp.Matrix.hstack(*[-2 * lam * d - inertial for lam, (d, inertial) in zip(lm.lam_vec, legs)]).T
    platform_forces = sp.lambdify(args + list(lm.lam_vec), on_platform, "numpy", cse=True)
    return solve_for, residuals, platform_forces


def _path(params, circle):
    """Closed-form platform path and motor angles as functions of t, with their exact time derivatives."""
    t = sp.symbols("t")
    R, r, La, Lf = params["base"], params["platform"], params["arm"], params["forearm"]
    w = 2 * sp.pi / circle["period"]
    P = sp.Matrix([circle["radius"] * sp.cos(w * t), circle["radius"] * sp.sin(w * t), circle["height"]])
    angles = []
    for i in range(3):
        phi = 2 * sp.pi * i / 3
        radial = sp.Matrix([sp.cos(phi), sp.sin(phi), 0])
        D = P + r * radial - R * radial
        dr, dz = D.dot(radial), D[2]
        K = (D.dot(D) + La ** 2 - Lf ** 2) / (2 * La)
        # dr cos(theta) - dz sin(theta) = K, on the branch with theta = 0 at the reference
        angles.append(-sp.atan2(dz, dr) - sp.acos(K / sp.sqrt(dr ** 2 + dz ** 2)))
    q = list(P) + angles
    return sp.lambdify(t, [q, [e.diff(t) for e in q], [e.diff(t, 2) for e in q]], "numpy")


def inverse_dynamics(times, params=None, circle=None, forces=False):
    """Motor torques (N m, shape (n, 3)) along the circle (geometry.CIRCLE) at the given times (s), with the
    coordinates q = (x, y, z, theta1..3) (m, rad) used, and the constraint residuals (m^2); forces=True adds the
    force each forearm exerts on the platform at its wrist (N, world axes, shape (n, 3 legs, 3))."""
    params = dict(DELTA, **(params or {}))
    circle = dict(CIRCLE, **(circle or {}))
    solve_for, residuals, platform_forces = _equations(tuple(sorted(params.items())))
    path = _path(params, circle)
    torques, coordinates, residual, legs = [], [], [], []
    for t in np.atleast_1d(times):
        q, qd, qdd = (np.array(v, float) for v in path(t))
        A_mat, b = solve_for(*q, *qd, *qdd)
        x = np.linalg.solve(np.array(A_mat, float), np.array(b, float).ravel())
        torques.append(x[:3])
        coordinates.append(np.r_[q, qd, qdd])
        residual.append(residuals(*q, *qd, *qdd))
        legs.append(np.array(platform_forces(*q, *qd, *qdd, *x[3:]), float))
    out = np.array(torques), np.array(coordinates), np.array(residual)
    return out + (np.array(legs),) if forces else out
