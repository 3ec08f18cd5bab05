"""Independent reference dynamics ("oracle") for mechsym's test mechanisms.

This module re-derives the two test mechanisms -- the Chebyshev lambda
``fourbar`` and the offset ``slider-crank`` -- from scratch with
``sympy.physics.mechanics``, so that tests can compare mechsym's own
Newton-Euler results against a completely separate derivation.  It does not
import (or share any code with) ``mechsym``.

API used: the classic vector/point API (``ReferenceFrame``, ``Point``,
``Point.v2pt_theory``, ``RigidBody``, ``Particle``, ``inertia``) and
``KanesMethod`` with holonomic loop constraints: each mechanism is a 1-DOF
closed loop with three generalized coordinates ``q = [theta, q_dep1,
q_dep2]`` (crank angle independent, the other two dependent through the two
``configuration_constraints``) and three speeds ``u = [omega, u_dep1,
u_dep2]`` (two dependent through ``velocity_constraints``).  KanesMethod
eliminates the dependent speeds (``Ars``) and yields one reduced equation
``fr + frstar = 0``; its full ``mass_matrix``/``forcing`` (reduced equation
plus the two acceleration constraints) drive the forward simulation.

Conventions: SI units, gravity ``g`` along -y, angles CCW from +x, the
driving torque ``T`` acts on the crank (CCW positive); its reaction on the
ground does no work and is not modelled.  Links are uniform slender rods
(mass ``density * length``, ``I = m l^2 / 12`` about the rod middle).

Coordinates and branches (the position solve is closed form, numpy):

* ``fourbar``: A=(0,0), B=(d_ground,0); ``q = [theta, psi, beta]`` with
  ``psi = angle(C - P)`` (coupler) and ``beta = angle(M - B)`` (rocker).  M is
  the intersection of the circles |M-P| = l_coupler/2 and |M-B| = l_rocker
  lying to the left of the directed line P->B, which for the nominal geometry
  is the branch with M above line AB.  C = P + l_coupler*e(psi) = 2M - P.
* ``slider-crank``: O=(0,0); ``q = [theta, phi, s]`` with ``phi = angle(S -
  P)`` and S = (s, offset); branch cos(phi) > 0 (S on the +x side).

Joint reactions (``reactions``) come from a second KanesMethod of the same
mechanism with every joint cut open and its force applied to both bodies: the
loop joint (fourbar M, slider-crank S) by dropping the loop constraint so that
all three speeds are independent, every other joint by auxiliary speeds
(``u_auxiliary``, one per reaction component: a relative translation across a
revolute joint, the slider's motion normal to its guide and its turning).  The
three Kane equations and the auxiliary equations are linear in the reactions
and the driving torque and are solved per sample (batched ``numpy.linalg``).

Derivation is symbolic in the parameters and cached once per model
(``_derive``); numeric parameters are merged with ``DEFAULTS`` per call, so
the effective cache key is (model name, parameter values).
"""
from __future__ import annotations

import functools
import warnings

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

__all__ = [
    "DEFAULTS", "positions", "inverse_torque", "energy", "reduced_mass",
    "forward", "peer_inverse_route", "peer_inverse_newton", "closure_residual",
    "reactions", "body_accelerations",
]

DEFAULTS = {
    "fourbar": dict(l_crank=0.05, l_rocker=0.125, l_coupler=0.25,
                    d_ground=0.1, density=1.0, g=9.81),
    "slider-crank": dict(l_crank=0.05, l_rod=0.15, offset=0.01,
                         density=1.0, m_slider=0.5, g=9.81),
}

_ALIASES = {"fourbar": "fourbar", "four-bar": "fourbar", "four_bar": "fourbar",
            "slider-crank": "slider-crank", "slider_crank": "slider-crank",
            "slidercrank": "slider-crank"}


# --------------------------------------------------------------------------
# Symbolic models
# --------------------------------------------------------------------------
def _rod(name, frame, com, length, density):
    """Uniform slender rod along ``frame.x`` with its centre of mass at ``com``."""
    m = density * length
    izz = m * length**2 / 12
    return me.RigidBody(name, com, frame, m, (me.inertia(frame, 0, izz, izz), com))


def _fourbar_spec():
    """Points, bodies, loads and loop constraints of the Chebyshev lambda linkage."""
    th, psi, beta = me.dynamicsymbols("theta psi beta")
    w, wpsi, wbeta = me.dynamicsymbols("omega omega_psi omega_beta")
    lc, lr, lk, d, rho, g = sm.symbols(
        "l_crank l_rocker l_coupler d_ground density g", positive=True)
    T = sm.Symbol("T")

    N = me.ReferenceFrame("N")
    A = me.Point("A")
    A.set_vel(N, 0)
    B = A.locatenew("B", d * N.x)
    B.set_vel(N, 0)
    crank, coupler, rocker = (me.ReferenceFrame(n) for n in ("crank", "coupler", "rocker"))
    for fr, q, u in ((crank, th, w), (coupler, psi, wpsi), (rocker, beta, wbeta)):
        fr.orient_axis(N, N.z, q)
        fr.set_ang_vel(N, u * N.z)

    P = A.locatenew("P", lc * crank.x)
    P.v2pt_theory(A, N, crank)
    M = P.locatenew("M", lk / 2 * coupler.x)          # coupler midpoint
    M.v2pt_theory(P, N, coupler)
    C = P.locatenew("C", lk * coupler.x)
    C.v2pt_theory(P, N, coupler)
    Mr = B.locatenew("M_r", lr * rocker.x)            # rocker tip
    Mr.v2pt_theory(B, N, rocker)

    g_crank = A.locatenew("G_crank", lc / 2 * crank.x)
    g_crank.v2pt_theory(A, N, crank)
    g_coupler = P.locatenew("G_coupler", lk / 2 * coupler.x)
    g_coupler.v2pt_theory(P, N, coupler)
    g_rocker = B.locatenew("G_rocker", lr / 2 * rocker.x)
    g_rocker.v2pt_theory(B, N, rocker)

    bodies = [_rod("crank", crank, g_crank, lc, rho),
              _rod("coupler", coupler, g_coupler, lk, rho),
              _rod("rocker", rocker, g_rocker, lr, rho)]
    loop = M.pos_from(A) - Mr.pos_from(A)
    vloop = M.vel(N) - Mr.vel(N)
    return dict(
        N=N, origin=A, q=[th, psi, beta], u=[w, wpsi, wbeta], T=T, g=g,
        params=[lc, lr, lk, d, rho, g], bodies=bodies, crank=crank,
        config=[loop.dot(N.x), loop.dot(N.y)],
        vel=[vloop.dot(N.x), vloop.dot(N.y)],
        points=dict(A=A, B=B, P=P, M=M, C=C),
        frames=dict(crank=crank, coupler=coupler, rocker=rocker))


def _slider_crank_spec():
    """Points, bodies, loads and loop constraints of the offset slider-crank."""
    th, phi, s = me.dynamicsymbols("theta phi s")
    w, wphi, v = me.dynamicsymbols("omega omega_phi v")
    lc, lr, e, rho, ms, g = sm.symbols(
        "l_crank l_rod offset density m_slider g", real=True)
    T = sm.Symbol("T")

    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    crank, rod = me.ReferenceFrame("crank"), me.ReferenceFrame("rod")
    for fr, q, u in ((crank, th, w), (rod, phi, wphi)):
        fr.orient_axis(N, N.z, q)
        fr.set_ang_vel(N, u * N.z)

    P = O.locatenew("P", lc * crank.x)
    P.v2pt_theory(O, N, crank)
    Sr = P.locatenew("S_r", lr * rod.x)               # rod end
    Sr.v2pt_theory(P, N, rod)
    S = O.locatenew("S", s * N.x + e * N.y)           # slider pin on its guide
    S.set_vel(N, v * N.x)

    g_crank = O.locatenew("G_crank", lc / 2 * crank.x)
    g_crank.v2pt_theory(O, N, crank)
    g_rod = P.locatenew("G_rod", lr / 2 * rod.x)
    g_rod.v2pt_theory(P, N, rod)

    bodies = [_rod("crank", crank, g_crank, lc, rho),
              _rod("rod", rod, g_rod, lr, rho),
              me.Particle("slider", S, ms)]
    loop = Sr.pos_from(O) - S.pos_from(O)
    vloop = Sr.vel(N) - S.vel(N)
    return dict(
        N=N, origin=O, q=[th, phi, s], u=[w, wphi, v], T=T, g=g,
        params=[lc, lr, e, rho, ms, g], bodies=bodies, crank=crank,
        config=[loop.dot(N.x), loop.dot(N.y)],
        vel=[vloop.dot(N.x), vloop.dot(N.y)],
        points=dict(O=O, P=P, S=S),
        frames=dict(crank=crank, rod=rod, slider=None))


_SPECS = {"fourbar": _fourbar_spec, "slider-crank": _slider_crank_spec}


def _vectorize(args, exprs):
    """Lambdify a sympy matrix; the result broadcasts to shape ``(..., rows, cols)``."""
    mat = sm.Matrix(exprs)
    f = sm.lambdify(args, list(mat), modules="numpy", cse=True)

    def call(*vals):
        shape = np.broadcast_shapes(*(np.shape(v) for v in vals))
        outs = [np.broadcast_to(np.asarray(o, dtype=float), shape) for o in f(*vals)]
        return np.stack(outs, axis=-1).reshape(shape + mat.shape)
    return call


@functools.lru_cache(maxsize=None)
def _derive(model):
    """Derive the Kane equations of ``model`` once and lambdify everything needed."""
    sp = _SPECS[model]()
    N, O, q, u, T = sp["N"], sp["origin"], sp["q"], sp["u"], sp["T"]
    t = me.dynamicsymbols._t
    g = sp["g"]
    loads = [(b.masscenter, -b.mass * g * N.y) for b in sp["bodies"]]
    loads.append((sp["crank"], T * N.z))
    kane = me.KanesMethod(
        N, q_ind=q[:1], u_ind=u[:1], kd_eqs=[qi.diff(t) - ui for qi, ui in zip(q, u)],
        q_dependent=q[1:], configuration_constraints=sp["config"],
        u_dependent=u[1:], velocity_constraints=sp["vel"])
    fr, frstar = kane.kanes_equations(sp["bodies"], loads)

    # Plain symbols for lambdify: q0..2, u0..2, ud0..2, T, parameters.
    qs, us, uds = (list(sm.symbols(f"{n}0:3")) for n in ("q", "u", "ud"))
    args = qs + us + uds + [T] + sp["params"]
    dmap = {ui.diff(t): udi for ui, udi in zip(u, uds)}
    fmap = dict(zip(q, qs)) | dict(zip(u, us))

    def lam(expr):
        expr = sm.Matrix(expr) if not isinstance(expr, sm.MatrixBase) else expr
        return _vectorize(args, me.msubs(me.msubs(expr, dmap), fmap))

    res = fr + frstar                                    # reduced equation, 1x1
    ke = sum(b.kinetic_energy(N) for b in sp["bodies"])
    pe = sum(b.mass * g * b.masscenter.pos_from(O).dot(N.y) for b in sp["bodies"])

    def angle(frame):
        return sm.atan2(frame.x.dot(N.y), frame.x.dot(N.x)) if frame else sm.S.Zero

    def plain(expr, modules):  # lambdify on floats, returning a flat list
        expr = sm.Matrix(expr) if not isinstance(expr, sm.MatrixBase) else expr
        return sm.lambdify(args, list(me.msubs(me.msubs(expr, dmap), fmap)), modules=modules, cse=True)

    def per_angle(modules):
        return dict(config=plain(sp["config"], modules), knh=plain(kane._k_nh, modules),
                    kdnh=plain(kane._k_dnh, modules), fdnh=plain(kane._f_dnh, modules),
                    res0=plain(res.subs(T, 0), modules), resT=plain(res.diff(T), modules))

    return dict(
        param_names=[str(p) for p in sp["params"]],
        scalar=per_angle("math"), numpy=per_angle("numpy"),
        config=lam(sp["config"]), Ars=lam(kane._Ars),
        knh=lam(kane._k_nh), kdnh=lam(kane._k_dnh), fdnh=lam(kane._f_dnh),
        res0=lam(res.subs(T, 0)), resT=lam(res.diff(T)),
        mass_matrix=lam(kane.mass_matrix), forcing=lam(kane.forcing),
        ke=lam([ke]), pe=lam([pe]),
        points={n: lam([p.pos_from(O).dot(N.x), p.pos_from(O).dot(N.y)])
                for n, p in sp["points"].items()},
        acc={b.name: lam([b.masscenter.acc(N).dot(N.x), b.masscenter.acc(N).dot(N.y),
                          sp["frames"][b.name].ang_acc_in(N).dot(N.z) if sp["frames"][b.name] else 0])
             for b in sp["bodies"]},
        coms={b.name: lam([b.masscenter.pos_from(O).dot(N.x),
                           b.masscenter.pos_from(O).dot(N.y),
                           angle(sp["frames"][b.name])]) for b in sp["bodies"]},
    )


# --------------------------------------------------------------------------
# Numerics
# --------------------------------------------------------------------------
def _setup(model, params):
    """Canonical model name, its derived functions and the parameter values tuple."""
    name = _ALIASES.get(model)
    if name is None:
        raise KeyError(f"unknown model {model!r}; expected one of {sorted(DEFAULTS)}")
    p = dict(DEFAULTS[name])
    for k, v in (params or {}).items():
        if k not in p:
            raise KeyError(f"unknown parameter {k!r} for {name}")
        p[k] = float(v)
    d = _derive(name)
    return name, d, tuple(p[k] for k in d["param_names"])


def _solve_q(name, theta, pv):
    """Closed-form position solve: ``[theta, q_dep1, q_dep2]`` on the documented branch."""
    theta = np.asarray(theta, dtype=float)
    if name == "fourbar":
        lc, lr, lk, d = pv[:4]
        px, py = lc * np.cos(theta), lc * np.sin(theta)
        bx, by = d - px, -py                         # P -> B
        dist = np.hypot(bx, by)
        r1, r2 = lk / 2, lr
        a = (r1**2 - r2**2 + dist**2) / (2 * dist)
        h2 = r1**2 - a**2
        if np.any(h2 < 0):
            raise ValueError("fourbar cannot be assembled at some crank angles")
        h = np.sqrt(h2)
        mx = px + (a * bx - h * by) / dist           # left of P->B (M above AB)
        my = py + (a * by + h * bx) / dist
        return [theta, np.arctan2(my - py, mx - px), np.arctan2(my, mx - d)]
    lc, lr, e = pv[:3]
    sphi = (e - lc * np.sin(theta)) / lr
    if np.any(np.abs(sphi) > 1):
        raise ValueError("slider-crank cannot be assembled at some crank angles")
    phi = np.arcsin(sphi)                            # cos(phi) >= 0 branch
    return [theta, phi, lc * np.cos(theta) + lr * np.cos(phi)]


def _on_branch(name, theta, qd, pv):
    """Whether dependent coordinates ``qd`` lie on the documented assembly branch."""
    if name == "fourbar":    # M left of P->B: sin(psi - angle(B - P)) > 0
        lc, d = pv[0], pv[3]
        return np.sin(qd[0] - np.arctan2(-lc * np.sin(theta), d - lc * np.cos(theta))) > 0
    return np.cos(qd[0]) > 0


def _state(name, d, pv, theta, omega, alpha):
    """Full ``q, u, udot`` lists (dependent ones from the constraints), vectorised."""
    theta, omega, alpha = np.broadcast_arrays(*(np.asarray(x, dtype=float)
                                                for x in (theta, omega, alpha)))
    q = _solve_q(name, theta, pv)
    z = np.zeros_like(theta)
    ars = d["Ars"](*q, z, z, z, z, z, z, 0.0, *pv)[..., 0]          # (..., 2)
    u = [omega, ars[..., 0] * omega, ars[..., 1] * omega]
    k = d["kdnh"](*q, *u, z, z, z, 0.0, *pv)                       # (..., 2, 3)
    f = d["fdnh"](*q, *u, z, z, z, 0.0, *pv)[..., 0]               # (..., 2)
    rhs = -f - k[..., 0] * alpha[..., None]
    ud_dep = np.linalg.solve(k[..., 1:], rhs[..., None])[..., 0]
    return q, u, [alpha, ud_dep[..., 0], ud_dep[..., 1]]


def positions(model, theta, params=None):
    """Named point and body (centre of mass, angle) positions at crank angles ``theta``.

    Keys: ``"BODY.x"``, ``"BODY.y"``, ``"BODY.angle"`` for every body and
    ``"POINT.x"``, ``"POINT.y"`` for every named point.  The crank angle is
    returned as given; the other angles are wrapped to (-pi, pi].
    """
    name, d, pv = _setup(model, params)
    theta = np.atleast_1d(np.asarray(theta, dtype=float))
    q = _solve_q(name, theta, pv)
    z = np.zeros_like(theta)
    args = (*q, z, z, z, z, z, z, 0.0, *pv)
    out = {}
    for body, f in d["coms"].items():
        x, y, ang = np.moveaxis(f(*args)[..., 0], -1, 0)
        out[f"{body}.x"], out[f"{body}.y"] = x, y
        out[f"{body}.angle"] = theta.copy() if body == "crank" else ang
    for pt, f in d["points"].items():
        out[f"{pt}.x"], out[f"{pt}.y"] = np.moveaxis(f(*args)[..., 0], -1, 0)
    return out


def closure_residual(model, theta, params=None):
    """Holonomic loop-closure residuals, shape ``(len(theta), 2)``, at the solved positions."""
    name, d, pv = _setup(model, params)
    theta = np.atleast_1d(np.asarray(theta, dtype=float))
    z = np.zeros_like(theta)
    return d["config"](*_solve_q(name, theta, pv), z, z, z, z, z, z, 0.0, *pv)[..., 0]


def inverse_torque(model, theta, omega, alpha=0.0, params=None):
    """Crank torque for crank motion ``(theta, omega, alpha)`` from the reduced Kane equation."""
    name, d, pv = _setup(model, params)
    q, u, ud = _state(name, d, pv, theta, omega, alpha)
    r0 = d["res0"](*q, *u, *ud, 0.0, *pv)[..., 0, 0]
    rt = d["resT"](*q, *u, *ud, 0.0, *pv)[..., 0, 0]
    return -r0 / rt


def energy(model, theta, omega, params=None):
    """Kinetic and potential energy ``(ke, pe)``; ``pe = sum m g y_com``."""
    name, d, pv = _setup(model, params)
    q, u, ud = _state(name, d, pv, theta, omega, 0.0)
    return (d["ke"](*q, *u, *ud, 0.0, *pv)[..., 0, 0],
            d["pe"](*q, *u, *ud, 0.0, *pv)[..., 0, 0])


def reduced_mass(model, theta, params=None):
    """Generalized inertia ``M(theta)`` with ``KE = M(theta) * omega**2 / 2``."""
    return 2.0 * energy(model, theta, 1.0, params)[0]


def forward(model, torque, theta0, omega0, t_eval, rtol=1e-10, atol=1e-10, params=None):
    """Integrate the Kane equations of motion from ``(theta0, omega0)`` at ``t_eval[0]``.

    ``torque`` is a constant crank torque (a callable ``torque(t, theta, omega)``
    is accepted too).  Each step solves KanesMethod's ``mass_matrix`` (reduced
    dynamics plus acceleration constraints) for all three accelerations, with
    the dependent coordinates from the closed-form position solve.  Uses
    ``solve_ivp(method="DOP853")``; returns ``(theta, omega)`` at ``t_eval``.
    """
    name, d, pv = _setup(model, params)
    t_eval = np.asarray(t_eval, dtype=float)

    def rhs(t, y):
        th, om = y
        tq = torque(t, th, om) if callable(torque) else torque
        q = _solve_q(name, th, pv)
        ars = d["Ars"](*q, 0, 0, 0, 0, 0, 0, 0.0, *pv)[:, 0]
        u = (om, ars[0] * om, ars[1] * om)
        mm = d["mass_matrix"](*q, *u, 0, 0, 0, tq, *pv)
        ff = d["forcing"](*q, *u, 0, 0, 0, tq, *pv)[:, 0]
        return [om, np.linalg.solve(mm, ff)[0]]

    sol = solve_ivp(rhs, (t_eval[0], t_eval[-1]), [float(theta0), float(omega0)],
                    method="DOP853", t_eval=t_eval, rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"forward integration failed: {sol.message}")
    return sol.y[0], sol.y[1]


def peer_inverse_route(model, params=None):
    """The ordinary, un-vectorised sympy.physics.mechanics route (benchmark peer).

    Returns ``f(theta_array, omega) -> torque_array`` (alpha = 0) that, in a
    plain Python loop over crank angles, solves the loop constraints with
    ``scipy.optimize.fsolve`` (analytic Jacobian, warm-started from the previous
    angle; the closed form only seeds the first angle and any failed or
    wrong-branch warm start), solves the velocity and acceleration constraints
    with ``numpy.linalg.solve`` and evaluates the lambdified Kane equation
    ``fr + frstar`` for the torque.
    """
    name, d, pv = _setup(model, params)

    def f(theta_array, omega):
        theta_array = np.atleast_1d(np.asarray(theta_array, dtype=float))
        omegas = np.broadcast_to(np.asarray(omega, dtype=float), theta_array.shape)
        seed = lambda th: np.array([a[0] for a in _solve_q(name, [th], pv)[1:]])
        guess = seed(theta_array[0])
        out = np.empty_like(theta_array)
        for i, (th, om) in enumerate(zip(theta_array, omegas)):
            def loop(qd):
                return d["config"](th, *qd, 0, 0, 0, 0, 0, 0, 0.0, *pv)[:, 0]

            def jac(qd):    # d(loop)/d(q_dep): the dependent columns of k_nh
                return d["knh"](th, *qd, 0, 0, 0, 0, 0, 0, 0.0, *pv)[:, 1:]
            for start in (guess, seed(th)):      # re-seed if warm start fails
                with warnings.catch_warnings():  # "not making good progress" at
                    warnings.simplefilter("ignore", RuntimeWarning)  # convergence
                    qd = fsolve(loop, start, fprime=jac, xtol=1e-13)
                if np.max(np.abs(loop(qd))) < 1e-12 and _on_branch(name, th, qd, pv):
                    break
            else:
                raise RuntimeError(f"position solve failed at theta={th}")
            guess = qd
            q = (th, *qd)
            k = d["knh"](*q, 0, 0, 0, 0, 0, 0, 0.0, *pv)
            ud = np.linalg.solve(k[:, 1:], -k[:, 0] * om)
            u = (om, *ud)
            ka = d["kdnh"](*q, *u, 0, 0, 0, 0.0, *pv)
            fa = d["fdnh"](*q, *u, 0, 0, 0, 0.0, *pv)[:, 0]
            udd = (0.0, *np.linalg.solve(ka[:, 1:], -fa))
            out[i] = (-d["res0"](*q, *u, *udd, 0.0, *pv)[0, 0]
                      / d["resT"](*q, *u, *udd, 0.0, *pv)[0, 0])
        return out
    return f


def peer_inverse_newton(model, params=None, scalar=False):
    """A per-angle sympy.physics.mechanics route as a user would write it (the benchmark's peer).

    Returns ``f(theta_array, omega) -> torque_array`` (alpha = 0): in a plain Python loop over crank
    angles, Newton's method on the loop constraints (warm-started from the previous angle), then the
    velocity and acceleration constraints and the Kane equation ``fr + frstar`` for the torque. The
    functions are lambdified with numpy and the 2x2 systems solved with ``numpy.linalg.solve``; with
    ``scalar=True``, a hand-tuned variant: lambdified with the math module, 2x2 systems by Cramer's rule.
    """
    name, d, pv = _setup(model, params)
    f = d["scalar" if scalar else "numpy"]
    zeros = (0.0,) * 6

    def solve2(k, rhs):  # the dependent columns (1, 2) of a flat 2x3 matrix k, and a right-hand side
        if not scalar:
            return np.linalg.solve([[k[1], k[2]], [k[4], k[5]]], rhs)
        det = k[1] * k[5] - k[2] * k[4]
        return ((rhs[0] * k[5] - k[2] * rhs[1]) / det, (k[1] * rhs[1] - k[4] * rhs[0]) / det)

    def run(theta_array, omega):
        theta_array = np.atleast_1d(np.asarray(theta_array, dtype=float))
        omegas = np.broadcast_to(np.asarray(omega, dtype=float), theta_array.shape)
        qd = tuple(float(a[0]) for a in _solve_q(name, theta_array[:1], pv)[1:])
        out = np.empty_like(theta_array)
        for i, (th, om) in enumerate(zip(theta_array.tolist(), omegas.tolist())):
            for _ in range(20):
                r = f["config"](th, *qd, *zeros, 0.0, *pv)
                dx = solve2(f["knh"](th, *qd, *zeros, 0.0, *pv), r)
                qd = (qd[0] - dx[0], qd[1] - dx[1])
                if abs(dx[0]) + abs(dx[1]) < 1e-13:
                    break
            else:
                raise RuntimeError(f"position solve failed at theta={th}")
            q = (th, *qd)
            k = f["knh"](*q, *zeros, 0.0, *pv)
            ud = solve2(k, (-k[0] * om, -k[3] * om))
            u = (om, *ud)
            ka = f["kdnh"](*q, *u, 0.0, 0.0, 0.0, 0.0, *pv)
            fa = f["fdnh"](*q, *u, 0.0, 0.0, 0.0, 0.0, *pv)
            udd = (0.0, *solve2(ka, (-fa[0], -fa[1])))
            out[i] = -f["res0"](*q, *u, *udd, 0.0, *pv)[0] / f["resT"](*q, *u, *udd, 0.0, *pv)[0]
        return out
    return run


# --------------------------------------------------------------------------
# Joint reactions: every joint cut open (Kane's auxiliary speeds)
# --------------------------------------------------------------------------
def _open_side(name, parent_point, N, aux):
    """The second body's side of a revolute joint cut open: at the first body's point, moving relative to
    it with the auxiliary speeds ``aux`` along N.x, N.y (zero in the real motion)."""
    pt = parent_point.locatenew(name, 0 * N.x)
    pt.set_vel(N, parent_point.vel(N) + aux[0] * N.x + aux[1] * N.y)
    return pt


def _pair(f, N, second, first=None):
    """Loads of a joint force ``f = (fx, fy)`` in world axes: on the second body's point, and its
    reaction on the first body's point (none where the first body is the ground)."""
    force = f[0] * N.x + f[1] * N.y
    return [(second, force)] + ([(first, -force)] if first is not None else [])


def _fourbar_open_spec():
    """The fourbar with every joint cut open: tree joints A, P, B by auxiliary speeds, the loop joint M by
    dropping the loop constraint (theta, psi, beta all independent)."""
    th, psi, beta = me.dynamicsymbols("theta psi beta")
    w, wpsi, wbeta = me.dynamicsymbols("omega omega_psi omega_beta")
    ua = me.dynamicsymbols("ua0:6")
    lc, lr, lk, d, rho, g = sm.symbols(
        "l_crank l_rocker l_coupler d_ground density g", positive=True)
    T = sm.Symbol("T")
    F = dict(zip(["A", "P", "M", "B"], (sm.symbols(f"{j}_fx {j}_fy") for j in "APMB")))

    N = me.ReferenceFrame("N")
    A = me.Point("A")
    A.set_vel(N, 0)
    B = A.locatenew("B", d * N.x)
    B.set_vel(N, 0)
    crank, coupler, rocker = (me.ReferenceFrame(n) for n in ("crank", "coupler", "rocker"))
    for fr, q, u in ((crank, th, w), (coupler, psi, wpsi), (rocker, beta, wbeta)):
        fr.orient_axis(N, N.z, q)
        fr.set_ang_vel(N, u * N.z)

    A_c = _open_side("A_crank", A, N, ua[0:2])
    P = A_c.locatenew("P", lc * crank.x)                     # on the crank
    P.v2pt_theory(A_c, N, crank)
    P_k = _open_side("P_coupler", P, N, ua[2:4])
    M_k = P_k.locatenew("M_coupler", lk / 2 * coupler.x)
    M_k.v2pt_theory(P_k, N, coupler)
    B_r = _open_side("B_rocker", B, N, ua[4:6])
    M_r = B_r.locatenew("M_rocker", lr * rocker.x)
    M_r.v2pt_theory(B_r, N, rocker)

    g_crank = A_c.locatenew("G_crank", lc / 2 * crank.x)
    g_crank.v2pt_theory(A_c, N, crank)
    g_coupler = P_k.locatenew("G_coupler", lk / 2 * coupler.x)
    g_coupler.v2pt_theory(P_k, N, coupler)
    g_rocker = B_r.locatenew("G_rocker", lr / 2 * rocker.x)
    g_rocker.v2pt_theory(B_r, N, rocker)
    bodies = [_rod("crank", crank, g_crank, lc, rho),
              _rod("coupler", coupler, g_coupler, lk, rho),
              _rod("rocker", rocker, g_rocker, lr, rho)]

    loads = (_pair(F["A"], N, A_c) + _pair(F["P"], N, P_k, P) + _pair(F["M"], N, M_r, M_k)
             + _pair(F["B"], N, B_r)
             + [(b.masscenter, -b.mass * g * N.y) for b in bodies] + [(crank, T * N.z)])
    unknowns = [*F["A"], *F["P"], *F["M"], *F["B"], T]
    names = ["A.fx", "A.fy", "P.fx", "P.fy", "M.fx", "M.fy", "B.fx", "B.fy", "torque"]
    return dict(N=N, q=[th, psi, beta], u=[w, wpsi, wbeta], aux=list(ua), T=T,
                params=[lc, lr, lk, d, rho, g], bodies=bodies, loads=loads,
                unknowns=unknowns, names=names)


def _slider_crank_open_spec():
    """The slider-crank with every joint cut open: O, P and the guide (normal and turning) by auxiliary
    speeds, the loop joint S by dropping the loop constraint (theta, phi, s all independent)."""
    th, phi, s = me.dynamicsymbols("theta phi s")
    w, wphi, v = me.dynamicsymbols("omega omega_phi v")
    ua = me.dynamicsymbols("ua0:6")
    lc, lr, e, rho, ms, g = sm.symbols(
        "l_crank l_rod offset density m_slider g", real=True)
    T = sm.Symbol("T")
    F = dict(zip(["O", "P", "S"], (sm.symbols(f"{j}_fx {j}_fy") for j in "OPS")))
    fn, mg = sm.symbols("guide_fn guide_m")

    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    crank, rod, slider = (me.ReferenceFrame(n) for n in ("crank", "rod", "slider"))
    for fr, q, u in ((crank, th, w), (rod, phi, wphi)):
        fr.orient_axis(N, N.z, q)
        fr.set_ang_vel(N, u * N.z)
    slider.orient_axis(N, N.z, 0)
    slider.set_ang_vel(N, ua[5] * N.z)                      # the guide's turning opened

    O_c = _open_side("O_crank", O, N, ua[0:2])
    P = O_c.locatenew("P", lc * crank.x)
    P.v2pt_theory(O_c, N, crank)
    P_r = _open_side("P_rod", P, N, ua[2:4])
    S_r = P_r.locatenew("S_rod", lr * rod.x)
    S_r.v2pt_theory(P_r, N, rod)
    S = O.locatenew("S", s * N.x + e * N.y)                  # slider pin, the guide's normal opened
    S.set_vel(N, v * N.x + ua[4] * N.y)

    g_crank = O_c.locatenew("G_crank", lc / 2 * crank.x)
    g_crank.v2pt_theory(O_c, N, crank)
    g_rod = P_r.locatenew("G_rod", lr / 2 * rod.x)
    g_rod.v2pt_theory(P_r, N, rod)
    bodies = [_rod("crank", crank, g_crank, lc, rho),
              _rod("rod", rod, g_rod, lr, rho),
              me.RigidBody("slider", S, slider, ms, (me.inertia(slider, 0, 0, 0), S))]

    loads = (_pair(F["O"], N, O_c) + _pair(F["P"], N, P_r, P) + _pair(F["S"], N, S, S_r)
             + [(S, fn * N.y), (slider, mg * N.z)]
             + [(b.masscenter, -b.mass * g * N.y) for b in bodies] + [(crank, T * N.z)])
    unknowns = [*F["O"], *F["P"], *F["S"], fn, mg, T]
    names = ["O.fx", "O.fy", "P.fx", "P.fy", "S.fx", "S.fy", "guide.fn", "guide.m", "torque"]
    return dict(N=N, q=[th, phi, s], u=[w, wphi, v], aux=list(ua), T=T,
                params=[lc, lr, e, rho, ms, g], bodies=bodies, loads=loads,
                unknowns=unknowns, names=names)


_OPEN_SPECS = {"fourbar": _fourbar_open_spec, "slider-crank": _slider_crank_open_spec}


@functools.lru_cache(maxsize=None)
def _derive_reactions(model):
    """Kane's equations of ``model`` with every joint cut open, as a linear system in the reactions.

    The three speeds of the opened loop give three equations in which the loop joint's force and the
    driving torque do work; each auxiliary speed (a relative motion across a tree joint, zero in the real
    motion) gives one equation in which that joint's force component does work. Returns the coefficient
    matrix ``A`` and right-hand side ``b`` of ``A x = b`` (x the unknowns in ``names`` order) lambdified
    over the same arguments as ``_derive``.
    """
    sp = _OPEN_SPECS[model]()
    N, q, u = sp["N"], sp["q"], sp["u"]
    t = me.dynamicsymbols._t
    kane = me.KanesMethod(N, q_ind=q, u_ind=u, u_auxiliary=sp["aux"],
                          kd_eqs=[qi.diff(t) - ui for qi, ui in zip(q, u)])
    fr, frstar = kane.kanes_equations(sp["bodies"], sp["loads"])
    eqs = fr + frstar                                       # 3 real speeds, then the auxiliary ones
    coef = eqs.jacobian(sp["unknowns"])                    # the equations are linear in the unknowns
    rhs = -eqs.xreplace(dict.fromkeys(sp["unknowns"], 0))
    qs, us, uds = (list(sm.symbols(f"{n}0:3")) for n in ("q", "u", "ud"))
    args = qs + us + uds + [sp["T"]] + sp["params"]
    sub = {ui.diff(t): udi for ui, udi in zip(u, uds)}
    plain = dict(zip(q, qs)) | dict(zip(u, us))
    lam = lambda m: _vectorize(args, me.msubs(me.msubs(m, sub), plain))
    return dict(coef=lam(coef), rhs=lam(rhs), names=sp["names"])


def reactions(model, theta, omega, alpha=0.0, params=None):
    """Joint reactions and the driving torque for crank motion ``(theta, omega, alpha)``, by name.

    Per revolute joint ``JOINT.fx``, ``JOINT.fy``: the force of the joint's first-named body on its second
    (fourbar: A ground->crank, P crank->coupler, M coupler->rocker, B ground->rocker; slider-crank: O
    ground->crank, P crank->rod, S rod->slider), in world axes. ``guide.fn``: the guide's force on the
    slider along +y (the slide axis +x turned +90 deg); ``guide.m``: its moment on the slider (CCW).
    ``torque``: the driving torque on the crank from the same system (a check on ``inverse_torque``).
    """
    name, _, pv = _setup(model, params)
    q, u, ud = _state(name, _derive(name), pv, theta, omega, alpha)
    r = _derive_reactions(name)
    a = r["coef"](*q, *u, *ud, 0.0, *pv)
    b = r["rhs"](*q, *u, *ud, 0.0, *pv)
    x = np.linalg.solve(a, b)[..., 0]
    return {k: x[..., i] for i, k in enumerate(r["names"])}


def body_accelerations(model, theta, omega, alpha=0.0, params=None):
    """Per body ``(ax, ay, angular acceleration)`` of its centre of mass, from the oracle's kinematics."""
    name, d, pv = _setup(model, params)
    q, u, ud = _state(name, d, pv, theta, omega, alpha)
    return {b: np.moveaxis(f(*q, *u, *ud, 0.0, *pv)[..., 0], -1, 0) for b, f in d["acc"].items()}
