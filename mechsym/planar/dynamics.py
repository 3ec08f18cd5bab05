"""Numeric dynamics: A U = C assembled and solved in batches, the reduced form, and forward simulation.

With q'' the accelerations of the absolute coordinates, the Newton-Euler rows read

    Phi_q^T lambda + grad d^T tau + Q(q) = M qdd,      qdd = J thetadd + a0(q, qd),

where J = dq/dtheta and a0 solves Phi_q a0 = -gamma (mechsym.planar.kinematics). An `Analysis`
(mechsym.planar.equations) picks the unknown columns; everything known goes to C. For one coordinate the
unknowns are linear in (thetadd, thetad^2, loads): `inverse` solves A once per angle for three
right-hand sides and combines them for every speed.
"""
from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import sympy as sp

from mechsym.codegen import c_backend
from mechsym.codegen.backend import resolve
from mechsym.core.budget import CallBudget, check_memory
from mechsym.core.errors import InputError, SingularError
from mechsym.core.results import RunEvent, RunResult, Table, speed_columns
from mechsym.core.timegrid import run_options
from mechsym.planar.equations import Analysis, forward as forward_analysis, inverse as inverse_analysis
from mechsym.planar.kinematics import Kinematics, _solve, sweep_memory
from mechsym.planar.loads import moving

def chunk_size(system) -> int:
    """Samples per batch: dense (chunk, n, n) arrays stay near 160 MB, and small mechanisms get large
    batches (fewer Python-level operations per sample)."""
    n = system.constraints.n
    return int(min(65536, max(512, 2e7 // (n * n))))


class AnalysisFunctions:
    """The extra columns and rows of one analysis (none for the standard analyses): a codegen spec of two
    functions, `extra_columns(q, p)` and `rows(q, qd, p)`, loaded on the System's backend
    (mechsym.codegen.callables: compiled C when the mechanism runs on C, the numpy rendering otherwise)."""

    def __init__(self, system, analysis: Analysis):
        from mechsym.codegen import callables
        from mechsym.codegen.spec import Function, Spec

        analysis.validate(system.constraints)
        con, eqs = system.constraints, system.equations
        self.analysis = analysis
        self.names = analysis.unknown_names(con)
        self.extra_index = [list(system.mechanism.parameters).index(n) for n in analysis.extra_unknowns]
        extra_syms = [system.mechanism.parameters[n].symbol for n in analysis.extra_unknowns]
        unknowns = [sp.Symbol(n, real=True) for n in self.names]
        zero = {u: 0 for u in unknowns}
        coeffs, consts = [], []
        for _, expr in analysis.extra_rows:
            expr = sp.sympify(expr)
            coeffs += [sp.diff(expr, u) for u in unknowns]
            consts.append(-expr.subs(zero))
        # the rows' non-zero coefficients (their flat indices in (rows, unknowns)), then the constants
        self.row_slots = [i for i, e in enumerate(coeffs) if e != 0]
        columns = [sp.diff(f, s) for s in extra_syms for f in eqs.applied]
        rows = [coeffs[i] for i in self.row_slots] + consts
        spec = Spec(f"{system.mechanism.name} {analysis.name}", {}, {
            "extra_columns": Function("extra_columns", [("q", con.q), ("p", con.params)], columns,
                                      "d Q / d (each extra unknown)"),
            "rows": Function("rows", [("q", con.q), ("qd", con.qd), ("p", con.params)], rows,
                             "the extra rows' non-zero coefficients, then their constants")}, None)
        backend = system.backend if columns or rows else resolve("numpy")   # (nothing to compile)
        key = c_backend.content_key(c_backend.cache_key(system.mechanism), c_backend.fingerprint(analysis))
        fns = callables.load(f"{system.mechanism.name}-analysis", key, lambda: spec, backend)
        self.spec, self.backend = spec, fns.backend
        self.extra_columns, self.rows = fns.extra_columns, fns.rows


def analysis_functions(system, analysis):
    """The compiled extra columns and rows of an analysis, made once per System."""
    if analysis not in system._analyses:
        system._analyses[analysis] = AnalysisFunctions(system, analysis)
    return system._analyses[analysis]


def columns(system, kin: Kinematics, analysis: Analysis, mass=None):
    """The columns of A's Newton-Euler rows in the unknowns' order: an int r stands for row r of Phi_q
    (its transpose is the column: a joint's reaction, a driving force), an (N, n) array for any other
    (the inertia of a free coordinate, an extra unknown). mass: the diagonal mass matrix, if at hand."""
    fn = analysis_functions(system, analysis)
    con = system.constraints
    nj, n = con.n_joint_rows, con.n
    N = kin.q.shape[0]
    cols = list(range(nj))
    if mass is None and analysis.inertia and analysis.free:
        mass = system.mass(kin.params)
    for i, c in enumerate(system.mechanism.coordinates):
        if c.name not in analysis.free:
            cols.append(nj + i)
        else:
            cols.append(-mass[None, :] * kin.dq[:, :, i] if analysis.inertia else np.zeros((N, n)))
    cols += [nj + i for i, c in enumerate(system.mechanism.coordinates) if c.force in analysis.unknown_forces]
    if analysis.extra_unknowns:
        p0 = kin.params.copy()
        p0[fn.extra_index] = 0.0
        extra = fn.extra_columns(kin.q.T, p0).reshape(len(analysis.extra_unknowns), n, N)
        cols += list(np.swapaxes(extra, 1, 2))
    if len(cols) != n + len(analysis.extra_rows):
        raise InputError(
            f"mechanism '{system.mechanism.name}' is over-constrained ({len(cols) - n} redundant constraint rows): "
            "its reactions are statically indeterminate; remove a redundant joint or make one a slot")
    return cols


def extra_rows(system, kin: Kinematics, analysis: Analysis, thetad):
    """The extra rows' coefficients (N, r, m) and constants (N, r) at solved kinematics and speeds."""
    fn = analysis_functions(system, analysis)
    N, r, nz = kin.q.shape[0], len(analysis.extra_rows), len(fn.row_slots)
    values = fn.rows(kin.q.T, kin.velocities(thetad).T, kin.params).reshape(nz + r, N)
    rows = np.zeros((N, r * len(fn.names)))
    rows[:, fn.row_slots] = values[:nz].T
    return rows.reshape(N, r, len(fn.names)), values[nz:].T


def assemble(system, kin: Kinematics, analysis: Analysis, thetad, rhs_terms):
    """A (N, m, m) and the right-hand sides C (N, m, r) of an analysis at solved kinematics.

    rhs_terms is a list of (N, n) generalised force arrays (already on the C side, e.g. M qdd - Q);
    each becomes one right-hand side column, with the extra rows' constants added to the first.
    """
    cols = columns(system, kin, analysis)
    a = np.stack([kin.jac[:, col, :] if isinstance(col, int) else col for col in cols], axis=2)
    c = np.stack(rhs_terms, axis=2)
    if analysis.extra_rows:
        rows, consts = extra_rows(system, kin, analysis, thetad)
        a = np.concatenate([a, rows], axis=1)
        extra_c = np.zeros((len(a), len(analysis.extra_rows), c.shape[2]))
        extra_c[:, :, 0] = consts
        c = np.concatenate([c, extra_c], axis=1)
    return a, c


def solve_checked(system, a, c, theta):
    """Batched solve that names the sample and condition number of a singular A."""
    with np.errstate(all="ignore"):
        x = _solve(a, c)
    size = np.nanmax(np.abs(c)) if c.size else 1.0
    bad = ~np.all(np.isfinite(x), axis=tuple(range(1, x.ndim)))
    bad |= np.abs(x).reshape(len(x), -1).max(axis=1) > 1e12 * max(size, 1.0)
    if bad.any():
        i = int(np.argmax(bad))
        cond = np.linalg.cond(a[i]) if np.all(np.isfinite(a[i])) else np.inf
        names = ", ".join(f"{n}={t:.6g}" for n, t in zip(system.coordinate_names, np.atleast_1d(theta[i])))
        raise SingularError(
            f"mechanism '{system.mechanism.name}': A is singular at {names} (condition number {cond:.3g}); "
            "a dead point or an unknown the equations cannot determine")
    return x


def solve(system, theta, thetad, analysis: Analysis, thetadd=None, forces=None, params=None) -> dict:
    """Solve A U = C of any analysis at N states of a mechanism with k coordinates.

    theta, thetad: (N, k) coordinates and speeds; thetadd: (N, k) accelerations, read for the
    coordinates whose motion is imposed; forces: name -> (N,) values of the known generalised forces
    (of the free coordinates). Returns name -> (N,) for every unknown (see Analysis.unknown_names).
    """
    theta = np.atleast_2d(np.asarray(theta, float))
    n_samples, k = theta.shape
    thetad = np.broadcast_to(np.asarray(thetad, float), theta.shape)
    thetadd = np.zeros_like(theta) if thetadd is None else np.broadcast_to(np.asarray(thetadd, float), theta.shape)
    forces = forces or {}
    system.solver(params).reference()  # a wrong mobility is reported as such, before the analysis's count
    names = analysis_functions(system, analysis).names
    out = []
    chunk = chunk_size(system)
    for lo in range(0, n_samples, chunk):  # chunks bound the memory of the dense (chunk, n, n) arrays
        sl = slice(lo, lo + chunk)
        part = system.kinematics(theta[sl], params)
        part_forces = {name: np.broadcast_to(np.asarray(v, float), (n_samples,))[sl] for name, v in forces.items()}
        u = solve_at(system, part, thetad[sl], analysis, thetadd[sl], part_forces)
        out.append(np.column_stack([u[n] for n in names]))
    u = np.concatenate(out, axis=0)
    return {n: u[:, i] for i, n in enumerate(names)}


def solve_at(system, kin: Kinematics, thetad, analysis: Analysis, thetadd=None, forces=None, a0=None) -> dict:
    """`solve` at already solved kinematics (N samples), e.g. warm-started inside an ODE right-hand side.

    thetad, thetadd: (N, k); forces: name -> (N,) or scalar; a0: (N, n) the acceleration offset
    -Phi_q^-1 gamma(q, q') if the caller has it (a tracker). Returns name -> (N,) for every unknown.
    With the factorisation of Phi_q at hand (kin.factor), A U = C is solved through it (`_bordered`);
    else A is assembled densely."""
    con = system.constraints
    n_samples = kin.q.shape[0]
    thetad = np.broadcast_to(np.asarray(thetad, float), kin.theta.shape)
    thetadd = np.zeros(kin.theta.shape) if thetadd is None else np.broadcast_to(np.asarray(thetadd, float), kin.theta.shape)
    forces = forces or {}
    names = analysis_functions(system, analysis).names
    if a0 is None:
        rhs_a0 = -system.gamma(kin.q.T, kin.velocities(thetad).T, kin.params).T
        a0 = kin.factor.solve(rhs_a0) if kin.factor is not None else _solve(kin.jac, rhs_a0)
    imposed = np.array([c.name not in analysis.free for c in system.mechanism.coordinates], float)
    qdd = a0 + np.einsum("nik,nk->ni", kin.dq, thetadd * imposed)
    mass = system.mass(kin.params)
    rhs = (mass * qdd if analysis.inertia else 0.0) - system.applied(kin.q.T, kin.params).T
    if moving(system) is not None:  # dampers, loads of the velocities (an analysis without time)
        rhs = rhs - system.loads.motion(kin.q, kin.velocities(thetad), None, kin.params)
    known = []  # (row of Phi_q, values): the known forces of free coordinates, -Phi_q[row]^T value on C
    for i, c in enumerate(system.mechanism.coordinates):
        if c.name in analysis.free and c.force is not None and c.force not in analysis.unknown_forces:
            if c.force not in forces:
                raise InputError(f"analysis '{analysis.name}' needs the value of force '{c.force}'")
            known.append((con.n_joint_rows + i, np.broadcast_to(np.asarray(forces[c.force], float), (n_samples,))))
    u = None
    if kin.factor is not None:
        u = _bordered(system, kin, analysis, thetad, rhs, known, mass)
    if u is None:  # no factorisation, or A singular there: the dense route solves or names the sample
        for row, value in known:
            rhs = rhs - kin.jac[:, row, :] * value[:, None]
        a, c_mat = assemble(system, kin, analysis, thetad, [rhs])
        u = solve_checked(system, a, c_mat, kin.theta)[:, :, 0]
    return {n: u[:, i] for i, n in enumerate(names)}


def _bordered(system, kin: Kinematics, analysis: Analysis, thetad, rhs, known, mass):
    """A U = C through the factorisation of Phi_q (U (N, m), or None where that fails).

    A's columns are those of Phi_q^T (the ints of `columns`) except f of them (the free coordinates)
    replaced by arrays, plus e more columns and e extra rows. With v the unknowns of all n columns of
    Phi_q^T (the f replaced ones held at zero) and w those of the d = f + e other columns:

        Phi_q^T v + D w = C,  v_F = 0,  R_v v + R_w w = C_extra,

    so v = y0 - Y w with y0 = Phi_q^-T C, Y = Phi_q^-T D (one transposed solve with 1 + d right-hand
    sides; a column of Phi_q^T in D gives a unit column of Y), and w solves the small d x d system
    [Y_F; R_w - R_v Y] w = [y0_F; C_extra - R_v y0]."""
    n = system.constraints.n
    cols = columns(system, kin, analysis, mass)
    N, m = len(kin.q), len(cols)
    replaced = [j for j in range(n) if not isinstance(cols[j], int)]  # an int at j < n is row j
    others = replaced + list(range(n, m))
    arrays = [cols[j] for j in others if not isinstance(cols[j], int)]
    with np.errstate(all="ignore"):
        z = kin.factor.solve_t(np.stack([rhs] + arrays, axis=2))
    y0 = z[:, :, 0]
    for row, value in known:  # Phi_q^-T (Phi_q^T e_row) value = e_row value
        y0[:, row] -= value
    y = np.zeros((N, n, len(others)))
    k = 1
    for i, j in enumerate(others):
        if isinstance(cols[j], int):
            y[:, cols[j], i] = 1.0
        else:
            y[:, :, i] = z[:, :, k]
            k += 1
    u = np.empty((N, m))
    if others:
        big = np.empty((N, len(others), len(others)))
        small = np.empty((N, len(others)))
        f = len(replaced)
        big[:, :f], small[:, :f] = y[:, replaced], y0[:, replaced]
        if analysis.extra_rows:
            rows, consts = extra_rows(system, kin, analysis, thetad)
            r_v = rows[:, :, :n].copy()
            r_v[:, :, replaced] = 0.0
            big[:, f:] = rows[:, :, others] - r_v @ y
            small[:, f:] = consts - np.einsum("nrj,nj->nr", r_v, y0)
        with np.errstate(all="ignore"):
            try:
                w = np.linalg.solve(big, small[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                return None
        u[:, :n] = y0 - np.einsum("nji,ni->nj", y, w)
        u[:, others] = w
    else:
        u[:] = y0
    size = max(float(np.max(np.abs(rhs))) if rhs.size else 1.0, 1.0)
    if not (np.all(np.isfinite(u)) and np.max(np.abs(u)) <= 1e12 * size and np.all(kin.factor.ok)):
        return None
    return u


def inverse(system, theta, omega, alpha=0.0, params=None, inertia=True, analysis=None) -> Table:
    """Unknown forces and reactions of a one-coordinate mechanism with imposed motion.

    theta: samples (N,); omega: one speed or a list of speeds (rows are stacked speed by speed);
    alpha: the imposed acceleration. inertia=False gives the quasi-static forces.
    """
    if len(system.coordinate_names) != 1:
        raise InputError("inverse() sweeps one coordinate; use solve() for several")
    omegas = np.atleast_1d(np.asarray(omega, float))
    _finite(omegas, "omega")
    _finite(np.atleast_1d(alpha), "alpha")
    n = np.size(theta)
    check_memory(f"inverse of '{system.mechanism.name}' at {n} samples x {len(omegas)} speed{'s' * (len(omegas) > 1)}",
                 inverse_memory(system, n, len(omegas)))
    analysis = analysis or inverse_analysis(system.mechanism, inertia)
    theta = np.asarray(theta, float).ravel()
    system.solver(params).reference()  # a wrong mobility is reported as such, before the analysis's count
    names = analysis_functions(system, analysis).names
    # every speed from the same three solves: U = alpha U_a + omega^2 U_w + U_s, speed by speed
    with np.errstate(over="ignore", invalid="ignore"):
        coef = np.stack([np.full_like(omegas, alpha), omegas**2, np.ones_like(omegas)], axis=1)  # (S, 3)
    cols = {system.coordinate_names[0]: np.tile(theta, len(omegas)), "omega": np.repeat(omegas, len(theta))}
    basis = columns = None
    speeds = moving(system) is not None  # loads of the velocities: one more solve per speed, on numpy
    if not (analysis.extra_rows or analysis.extra_unknowns or analysis.free or speeds):
        batch = system.backend.route(compiled=_inverse_batch, python=_no_batch)
        basis, columns = batch(system, theta, params, analysis, coef)
    if columns is None:
        if basis is None:  # the numpy route, also where the compiled batch stopped: it names the failure
            basis = (_inverse_basis(system, theta, params, analysis, omegas) if speeds
                     else _inverse_basis(system, theta, params, analysis))
        with np.errstate(over="ignore", invalid="ignore"):
            columns = speed_columns(basis[:, :, :3], coef)
            if speeds:  # the unknowns of the loads of velocity, speed by speed
                columns = [c + basis[:, i, 3:].T.ravel() for i, c in enumerate(columns)]
    cols.update(zip(names, np.reshape(columns, (len(names), -1))))
    _check_result(system, cols, names)
    units = _units(system, names)
    if system.loads is not None:
        kin = system.kinematics(theta, params)
        qd = kin.dq[:, :, 0]
        parts = [system.loads.columns(kin.q, qd * w, None, kin.params) for w in omegas]
        cols.update({n: np.concatenate([part[n] for part in parts]) for n in system.loads.names})
        units.update(system.loads.units)
    return Table(cols, units, f"{system.mechanism.name}: {analysis.name}", sweep=("omega",) if inertia else ())


def _check_result(system, cols, names):
    """A non-finite force is an error naming it and where (a speed, acceleration or load too large to
    represent), never a NaN in the table."""
    coord = system.coordinate_names[0]
    for n in names:
        bad = ~np.isfinite(cols[n])
        if bad.any():
            k = int(np.argmax(bad))
            raise InputError(f"mechanism '{system.mechanism.name}': {n} is {cols[n][k]} at {coord} = "
                             f"{cols[coord][k]:.6g}, omega = {cols['omega'][k]:.6g}: a speed, acceleration or "
                             "parameter is too large to represent")


def inverse_memory(system, n, speeds) -> int:
    """Bytes of an inverse analysis at n samples and `speeds` speeds: the kinematics sweep, the three
    solutions per sample and the table (each unknown per sample and speed, and its CSV copy)."""
    m = len(system.constraints.rows) + 1
    return sweep_memory(len(system.constraints.q), n) + 8 * n * 3 * m + 8 * 2 * n * speeds * (m + 2)


def forward_memory(rows, width) -> int:
    """Bytes of a time run written at `rows` time points with `width` values kept per point (the grid,
    the states, the columns and their CSV copy)."""
    return 8 * rows * (width + 8)


def _inverse_basis(system, theta, params, analysis, omegas=()):
    """(N, m, 3 + S) unknowns per unit thetadd, per unit thetad^2, for the static loads and, per speed of
    `omegas`, for the loads of velocity there (numpy)."""
    results = []
    chunk = chunk_size(system)
    for lo in range(0, len(theta), chunk):
        part = system.kinematics(theta[lo:lo + chunk], params)
        mass = system.mass(part.params)
        applied = system.applied(part.q.T, part.params).T
        scale = 1.0 if analysis.inertia else 0.0
        rhs = [scale * mass * part.dq[:, :, 0], scale * mass * part.ddq, -applied]
        rhs += [-system.loads.motion(part.q, part.dq[:, :, 0] * w, None, part.params) for w in omegas]
        if part.factor is not None and not (analysis.free or analysis.extra_rows or analysis.extra_unknowns):
            # A = Phi_q^T: reuse the factorisation of Phi_q that the kinematics already made
            results.append(part.factor.solve_t(np.stack(rhs, axis=2)))
            continue
        a, c = assemble(system, part, analysis, np.zeros((len(part.q), 1)), rhs)
        results.append(solve_checked(system, a, c, part.theta[:, 0]))
    return np.concatenate(results, axis=0)


_STARTS = weakref.WeakKeyDictionary()  # Solver -> {theta0: the configuration its sweep finds there}


def _start(solver, theta0):
    """The configuration at theta0 that solver.sweep finds from its reference assembly (with its branch
    checks), kept per solver and theta0: the same value every time, found once."""
    starts = _STARTS.setdefault(solver, {})
    key = float(theta0)
    if key not in starts:
        if len(starts) >= 64:
            starts.pop(next(iter(starts)))
        starts[key] = solver.sweep(np.array([[key]])).q[0]
    return starts[key].copy()


def _inverse_batch(system, theta, params, analysis, coef):
    """(basis, None) or (None, columns) of the inverse analysis from the compiled batch, (None, None) where
    it failed before its continuation."""
    lib = system.functions
    if lib.meta.get("lanes"):  # the columns straight from the kernel, no per-sample basis stored
        weights = coef * ([1.0, 1.0, 1.0] if analysis.inertia else [0.0, 0.0, 1.0])
        return None, _inverse_c(system, theta, params, functools.partial(lib.inverse_columns, coef=weights))
    basis = _inverse_c(system, theta, params, lib.inverse)
    if basis is not None and not analysis.inertia:
        basis[:, :, :2] = 0.0
    return basis, None


def _no_batch(*args):
    """No compiled batch: the numpy route does the whole job."""
    return None, None


def _inverse_c(system, theta, params, kernel):
    """The basis (N, m, 3) or the columns (m, S, N) from the compiled kernel (CLibrary.inverse or
    inverse_columns): continuation, Newton, coefficients and the transposed sparse solves all run in C, one
    call for the whole batch. Where the kernel's continuation stops (a limit position, a dead point, a
    change of branch: the numpy continuation's decisions), the error Solver.stopped names; None where it
    failed before its continuation (the numpy route then names that)."""
    from mechsym.planar.kinematics import STEP_TOL, SUSPECT

    solver = system.solver(params)
    q0 = _start(solver, theta[0])
    failed, status, *_, coef, branch, u, stop = kernel(theta, solver.params, q0, solver.col_scale, STEP_TOL,
                                                       hmax=solver.step[0])
    if stop is not None:
        solver.stopped(stop.theta_a, stop.q_a, stop.theta_b, stop.q_b, stop.converged)
    if failed >= 0:
        return None
    coef = coef * solver.coord_scale[0]  # relative to the coordinate scales, as Solver.coefficient_size
    if (coef > SUSPECT).any() or (branch <= 0).any():
        # rare: let the numpy route name the sample and the reason (dead point, branch)
        first = int(np.flatnonzero((coef > SUSPECT) | (branch <= 0))[0])
        solver.sweep(theta[: first + 1, None])
    return u


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
    from mechsym.planar.kinematics import STEP_TOL

    solver = system.solver(params)
    t0, q0 = solver._start(theta[:1])  # the sweep's start, so that a first state on a bridge is bridged too
    failed, _, f, jac, stop = system.functions.ode(np.concatenate([t0, theta]), np.concatenate([omega[:1], omega]),
                                                   torque, solver.params, q0, solver.col_scale, STEP_TOL,
                                                   hmax=solver.step[0])
    if stop is not None:
        solver.stopped(stop.theta_a, stop.q_a, stop.theta_b, stop.q_b, stop.converged)
    return (f[1:], jac[1:]) if failed < 0 else (None, None)


@dataclass(frozen=True)
class Crossing:
    """An event of a forward run: the coordinate ("theta") or its speed ("omega") crossing `value`
    (direction +1 rising, -1 falling, 0 either); `terminal` stops the run there."""

    variable: str
    value: float
    direction: int = 0
    terminal: bool = False

    @property
    def component(self) -> int:
        """The state component it watches: 0 the coordinate, 1 its speed."""
        return 1 if self.variable == "omega" else 0

    def as_solve_ivp(self):
        """The event as a scipy.integrate.solve_ivp event function."""
        def event(t, y):
            return y[self.component] - self.value

        event.terminal, event.direction = self.terminal, self.direction
        return event


MAX_TRAVEL = 1e12  # rad: beyond this a coordinate keeps no useful digits of its motion


def forward(system, torque, theta0, omega0, t_end, dt=None, rtol=1e-9, atol=None, params=None,
            events=(), method="DOP853", reactions=False, dense_output=True) -> RunResult:
    """Integrate a one-coordinate mechanism under a driving force.

    torque: a constant, or a callable f(t, theta, omega). events: Crossing objects (or solve_ivp event
    functions, numpy route only). method: solve_ivp's method on the numpy route; the implicit ones
    (Radau, BDF, LSODA) get the exact Jacobian (mechsym.planar.dynamics.reduced_ode) and need a constant
    torque. On the C backend with a constant torque the whole run (reduced-form right-hand side, DOP853
    with scipy's coefficients and error control, dense output, event location) happens in C, and a
    `method` other than DOP853 is refused; otherwise scipy's solve_ivp integrates the reduced form with
    the configuration tracked between calls (a trial stage it cannot reach is a rejected step). Either way
    the result is sampled on the uniform grid 0, dt, ..., t_end (or up to a terminal event) from the
    dense output. Returns a RunResult: its events (RunEvent: t, the event's name, the state [coordinate,
    speed], from the dense output on either route) in time order, nfev, the dense solution over (coordinate,
    speed) on either route (scipy's OdeSolution; on C a results.DenseSolution of the same interpolant), status
    "stopped" where a terminal event ended the run. dense_output=False keeps no solution (None): on C every
    step then makes its dense output only where a grid point or an event needs it. reactions=True adds every
    reaction from the forward Newton-Euler system along the grid (and its thetadd: an independent check).
    """
    if len(system.coordinate_names) != 1:
        raise InputError("forward() integrates one coordinate")
    opts = run_options(t_end, dt, rtol, atol, arrays={"theta0": theta0, "omega0": omega0})
    t_end, rtol, atol = opts.t_end, opts.rtol, opts.atol
    width = 8 + (2 * len(system.constraints.rows) if reactions else 0)
    check_memory(f"forward dynamics of '{system.mechanism.name}' at {opts.points:.6g} time points",
                 forward_memory(opts.points, width))
    events = list(events or ())
    grid = opts.grid()
    solver = system.solver(params)
    q0 = solver.sweep(np.array([[theta0]])).q[0]
    if omega0 == 0:
        solver.check_start_at_rest(np.array([theta0]), q0)
    loads = moving(system)  # loads of velocity or time: the tracked route with them in its right-hand side
    if not callable(torque) and loads is None:  # a torque or speed too large to represent is no dead point
        with np.errstate(all="ignore"):
            rate = ode(system, np.array([theta0]), np.array([omega0]), float(torque), params)[0][0]
        with np.errstate(all="ignore"):
            travel = abs(omega0) * t_end + 0.5 * abs(rate[1]) * t_end**2
        if not (np.all(np.isfinite(rate)) and travel <= MAX_TRAVEL):
            raise InputError(f"mechanism '{system.mechanism.name}': torque {float(torque):.6g} and omega0 {omega0:.6g} "
                             f"give the acceleration {rate[1]:.6g} at the start, a travel of about {travel:.3g} rad "
                             f"in {t_end:.6g} s: too large to represent (at most {MAX_TRAVEL:.0e} rad)")
    # a constant torque, loads of position alone and Crossing events: the whole run in one compiled call where
    # the backend has one
    whole = not callable(torque) and loads is None and all(isinstance(e, Crossing) for e in events)
    run = system.backend.route(compiled=_forward_c, python=_forward_ivp) if whole else _forward_ivp
    y, hits, nfev, solution = run(system, solver, torque, theta0, omega0, t_end, grid, rtol, atol, q0, events,
                                  method, dense_output)
    grid = grid[: len(y)]
    stopped = [e for e in hits if getattr(events[e[1]], "terminal", False)]
    name = system.coordinate_names[0]
    if callable(torque):
        tau = np.array([torque(t, a, b) for t, a, b in zip(grid, y[:, 0], y[:, 1])])
    else:
        tau = np.full_like(grid, float(torque))
    cols = {"t": grid, name: y[:, 0], "omega": y[:, 1], system.mechanism.coordinates[0].force or "force": tau}
    run_events = [RunEvent(t, _event_name(events[i]), state) for t, i, state in hits]
    table = RunResult(cols, {"t": "s", name: "rad", "omega": "rad/s"}, f"{system.mechanism.name}: forward dynamics",
                      events=run_events, nfev=nfev, solution=solution, status="stopped" if stopped else "done",
                      message=f"stopped by {_event_name(events[stopped[0][1]])} at t = {stopped[0][0]:.9g}"
                      if stopped else "")
    if reactions:
        table.columns.update(forward_reactions(system, grid, y[:, 0], y[:, 1], tau, params))
    if system.loads is not None and len(grid):
        kin = system.kinematics(y[:, 0], params)
        table.columns.update(system.loads.columns(kin.q, kin.dq[:, :, 0] * y[:, 1:2], grid, kin.params))
        table.units.update(system.loads.units)
    return table


def _forward_c(system, solver, torque, theta0, omega0, t_end, grid, rtol, atol, q0, events, method, dense):
    from mechsym.planar.kinematics import STEP_TOL

    if method != "DOP853":
        raise InputError(f"the C backend integrates with DOP853 only, not method '{method}'; use the numpy backend "
                         "for scipy's other methods")
    spec = [(e.component, e.value, e.direction, e.terminal) for e in events]
    y, hits, nfev, status, solution = system.functions.forward(float(torque), theta0, omega0, t_end, grid, rtol, atol,
                                                             solver.params, q0, solver.col_scale, STEP_TOL, spec,
                                                             hmax=solver.step[0], dense=dense,
                                                             what=f"the forward run of '{system.mechanism.name}'")
    if status:
        reason = {1: "the loops could not be closed", 2: "the mechanism reached a dead point",
                  3: "the step size fell below its limit", 4: "a declared branch condition would not hold",
                  6: "det Phi_q would change sign (another assembly branch)"}.get(status, f"status {status}")
        t_fail = grid[len(y) - 1] if len(y) else 0.0
        raise InputError(f"mechanism '{system.mechanism.name}': integration stopped after t = {t_fail:.6g}: {reason} "
                         f"(near {system.coordinate_names[0]} = {y[-1, 0] if len(y) else theta0:.6g})")
    return y, sorted(((float(t), int(i), np.array(s)) for t, i, s in hits), key=lambda hit: hit[:2]), nfev, solution


def _event_name(event) -> str:
    """An event's name in a run's result: 'omega = 0 falling' for a Crossing, else the function's name."""
    if isinstance(event, Crossing):
        way = {1: " rising", -1: " falling"}.get(event.direction, "")
        return f"{event.variable} = {event.value:g}{way}"
    return getattr(event, "__name__", type(event).__name__)


def _forward_ivp(system, solver, torque, theta0, omega0, t_end, grid, rtol, atol, q0, events, method, dense):
    from scipy.integrate import solve_ivp

    from mechsym.core.runner import rejecting
    from mechsym.planar.simulate import ConfigurationTracker

    force = torque if callable(torque) else (lambda t, th, w, _c=float(torque): _c)
    implicit = method in ("Radau", "BDF", "LSODA")
    loads = moving(system)
    if implicit and (callable(torque) or loads is not None):
        raise InputError(f"method {method} needs the exact Jacobian of the right-hand side, known for a constant "
                         "torque and loads of position alone; use an explicit method (DOP853, RK45)")
    mass = system.mass(solver.params)
    tracker = ConfigurationTracker(solver, [theta0], q0, bridging=not implicit)  # (the implicit ones take Phi_q)
    scalar = None if implicit or loads is not None else getattr(system, "scalar_tracker", None)
    if scalar is not None:                       # one state per call on floats (the C tracker's interface)
        from mechsym.planar.simulate import CTracker, one_coordinate_rhs

        rhs = one_coordinate_rhs(CTracker(solver, scalar, [theta0], q0), mass, force,
                                 lambda q: system.applied(q, solver.params))

    def solved(theta):
        """Configuration, its factorisation and the coefficients dq, ddq at theta, tracked from the last
        solved state (StepRejected if it cannot be reached)."""
        q, fac, jq = tracker.at([theta])
        ddq = fac.solve(-system.gamma(q, jq[:, 0], solver.params)[None])[0]
        return q, fac, jq[:, 0], ddq

    def tracked_rhs(t, y):
        q, jq, a0, _ = tracker.state([y[0]], [y[1]])
        d1 = jq[:, 0]
        big_m = d1 @ (mass * d1)
        rest = d1 @ (mass * a0) - d1 @ system.applied(q, solver.params)
        if loads is not None:
            rest -= d1 @ loads.motion(q, d1 * y[1], t, solver.params)[0]
        return np.array([y[1], (force(t, y[0], y[1]) - rest) / big_m])

    def jacobian(t, y):
        q, fac, d1, ddq = solved(y[0])
        kin = Kinematics(np.array([[y[0]]]), q[None], d1[None, :, None], ddq[None], None, solver.params,
                         jac_fn=solver.f.jac)
        kin.factor = fac
        return reduced_ode(system, kin, y[1], float(torque))[1][0]

    name = system.coordinate_names[0]
    fun = rejecting(rhs if scalar is not None else tracked_rhs, method, lambda y: f"{name} = {y[0]:.6g}")
    funcs = [e.as_solve_ivp() if isinstance(e, Crossing) else e for e in events]
    counted = CallBudget(2, f"forward run of '{system.mechanism.name}'", t_end, method).wrap(fun)
    sol = solve_ivp(counted, (0.0, t_end), [theta0, omega0], method=method, rtol=rtol, atol=atol,
                    dense_output=True, events=funcs or None,
                    **({"jac": rejecting(jacobian, method, lambda y: f"{name} = {y[0]:.6g}")} if implicit else {}))
    if sol.status < 0:
        raise InputError(f"mechanism '{system.mechanism.name}': integration failed at t = {sol.t[-1]:.6g}: "
                         f"{fun.failure or sol.message}")
    grid = grid[grid <= sol.t[-1]]
    hits = sorted(((float(t), i, np.array(y)) for i, (ts, ys) in enumerate(zip(sol.t_events or [], sol.y_events or []))
                   for t, y in zip(ts, ys)), key=lambda hit: hit[:2])
    return sol.sol(grid).T, hits, sol.nfev, sol.sol if dense else None


def forward_reactions(system, t, theta, omega, tau, params=None) -> dict:
    """Reactions and the acceleration from the forward Newton-Euler system A U = C along a trajectory."""
    analysis = forward_analysis(system.mechanism)
    kin = system.kinematics(theta, params)
    mass = system.mass(kin.params)
    applied = system.applied(kin.q.T, kin.params).T
    driver = kin.jac[:, system.constraints.n_joint_rows, :]
    rhs = mass * kin.ddq * omega[:, None] ** 2 - applied - driver * tau[:, None]
    if moving(system) is not None:
        rhs = rhs - system.loads.motion(kin.q, kin.dq[:, :, 0] * omega[:, None], t, kin.params)
    a, c = assemble(system, kin, analysis, omega[:, None], [rhs])
    u = solve_checked(system, a, c, theta)[:, :, 0]
    return {n: u[:, i] for i, n in enumerate(analysis.unknown_names(system.constraints))}


def energies(system, kin: Kinematics, thetad):
    """Kinetic and potential (gravity) energy per sample."""
    qd = kin.velocities(np.reshape(thetad, (-1, 1)) if np.ndim(thetad) <= 1 else thetad)
    return system.energy(kin.q.T, qd.T, kin.params)


def _units(system, names):
    units = {}
    for n in names:
        if n.endswith((".fx", ".fy", ".fn")):
            units[n] = "N"
        elif n.endswith(".m"):
            units[n] = "N m"
    for c in system.mechanism.coordinates:
        units[c.name] = c.unit
        if c.force:
            units[c.force] = "N m" if c.unit == "rad" else "N"
    units["omega"] = "rad/s"
    return units


def _finite(values, name):
    if not np.all(np.isfinite(values)):
        raise InputError(f"{name} must be finite, got {values}")
