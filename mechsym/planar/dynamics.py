"""Numeric dynamics: A U = C assembled and solved in batches, and the inverse analysis built on it.

With q'' the accelerations of the absolute coordinates, the Newton-Euler rows read

    Phi_q^T lambda + grad d^T tau + Q(q) = M qdd,      qdd = J thetadd + a0(q, qd),

where J = dq/dtheta and a0 solves Phi_q a0 = -gamma (mechsym.planar.kinematics). An `Analysis`
(mechsym.planar.equations) picks the unknown columns; everything known goes to C. For one coordinate the
unknowns are linear in (thetadd, thetad^2, loads): `inverse` solves A once per angle for three
right-hand sides and combines them for every speed. The reduced form is mechsym.planar.reduced's, forward
runs mechsym.planar.forward's.
"""
from __future__ import annotations

import weakref

import numpy as np
import sympy as sp

from mechsym.codegen.keys import cache_key, package_source
from mechsym.codegen.backend import resolve
from mechsym.core.budget import check_memory
from mechsym.core.errors import InputError, SingularError
from mechsym.core.results import Table, speed_columns
from mechsym.planar.equations import Analysis, inverse as inverse_analysis
from mechsym.planar.inverse_kernel import compiled_columns, flagged, speed_weights
from mechsym.planar.kinematics import STEP_TOL, SUSPECT, Kinematics, _solve, sweep_memory
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
        key = cache_key(system.mechanism, analysis, package_source())
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
    coef = speed_weights(omegas, alpha)  # (S, 3)
    cols = {system.coordinate_names[0]: np.tile(theta, len(omegas)), "omega": np.repeat(omegas, len(theta))}
    columns = None
    speeds = moving(system) is not None  # loads of the velocities: one more solve per speed, on numpy
    if not (analysis.extra_rows or analysis.extra_unknowns or analysis.free or speeds):
        batch = system.backend.route(compiled=_inverse_batch, python=lambda *args: None)  # (numpy: below)
        columns = batch(system, theta, params, speed_weights(omegas, alpha, analysis.inertia))
    if columns is None:  # the numpy route, also where the compiled batch stopped: it names the failure
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


def _inverse_batch(system, theta, params, weights):
    """The columns (m, S N) of the inverse analysis from one compiled call (compiled_columns). Where the
    kernel's continuation stops (a limit position, a dead point, a change of branch: the numpy
    continuation's decisions), the error Solver.stopped names; where a sample is flagged, the numpy sweep
    names it; None where the call failed before its continuation (the numpy route then names that)."""
    solver = system.solver(params)
    failed, coef, branch, columns, stop = compiled_columns(system.functions, theta, solver.params,
                                                           _start(solver, theta[0]), solver.col_scale, STEP_TOL,
                                                           solver.step[0], weights)
    if stop is not None:
        solver.stopped(stop.theta_a, stop.q_a, stop.theta_b, stop.q_b, stop.converged)
    if failed >= 0:
        return None
    bad = flagged(coef, branch, solver.coord_scale[0], SUSPECT)
    if bad.any():  # rare: let the numpy route name the sample and the reason (dead point, branch)
        solver.sweep(theta[: int(np.flatnonzero(bad)[0]) + 1, None])
    return columns


def _no_batch(*args):
    """No compiled batch: the numpy route does the whole job."""
    return None, None


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
