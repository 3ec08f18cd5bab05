"""Parameter sets in compiled calls (mechsym.codegen.c_sets): each set assembled from the reference assembly
of the default parameters and continued to its start in C (`CompiledStart`, which a sweep worker's manifest
also holds), then its inverse dynamics, its kinematics or its forward run, COMPILED_BLOCK sets per call.
A set whose call failed or came near a dead point, a change of branch or another check of the set-by-set
route is flagged and left to that route (None in its place), which names the reason: so every row equals
the set-by-set route's, to round-off."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechsym.codegen.constants import STEP
from mechsym.core.errors import InputError
from mechsym.core.results import Table
from mechsym.studies.figures import negative_mass

SET_ERRORS = (InputError, ArithmeticError, np.linalg.LinAlgError)  # a set that cannot be evaluated
COMPILED_BLOCK = 64  # sets per compiled call: their outputs (sets x samples x ...) stay small


@dataclass(frozen=True)
class CompiledStart:
    """What a compiled call of many sets needs of a model besides each set's parameters: the reference
    assembly q_ref at theta_ref (of the default parameters) and the sign of det Phi_q there, every set
    starting from it; the points' coordinates in their frames as expressions of the parameters
    (mechsym.planar.kinematics.point_sources) and which coordinates are angles and driven lengths, for each set's scales;
    the Newton tolerance and the velocity coefficient from which a sample is suspected of a dead point.
    Plain numbers and text: a sweep worker's manifest holds it (mechsym.studies.sweep_warm)."""

    theta_ref: float
    q_ref: tuple
    sign: int
    points: tuple
    angle: tuple
    length: tuple
    tol: float
    suspect: float


def compiled_start(system) -> CompiledStart | None:
    """The CompiledStart of a derived one-coordinate system (Solver.reference of the default parameters);
    None where the reference does not assemble."""
    from mechsym.planar.kinematics import STEP_TOL, SUSPECT, point_sources, scale_masks

    solver = system.solver()
    try:
        theta_ref, q_ref = solver.reference()
    except SET_ERRORS:
        return None
    sign = 1 if np.linalg.det(system.kin.jac(q_ref, solver.params)) > 0 else -1
    angle, length = scale_masks(system.constraints)
    return CompiledStart(float(theta_ref[0]), tuple(q_ref.tolist()), sign, point_sources(system.constraints),
                         tuple(angle.tolist()), tuple(length.tolist()), STEP_TOL, SUSPECT)


def set_blocks(start: CompiledStart, params):
    """(lo, hi, reference, col_scale, coordinate scale, size) of each block of COMPILED_BLOCK sets of params
    (S, npar): what every compiled call of sets takes besides the parameters, and each set's size."""
    from mechsym.codegen.parameter_expressions import coordinate_scales, size_scales

    size = size_scales(start.points, params)
    col_scale, coord_scale = coordinate_scales(np.array(start.angle), np.array(start.length), size)
    reference = (start.theta_ref, np.array(start.q_ref), start.sign)
    for lo in range(0, len(params), COMPILED_BLOCK):
        hi = min(lo + COMPILED_BLOCK, len(params))
        yield lo, hi, reference, col_scale[lo:hi], coord_scale[lo:hi, 0], size[lo:hi]


def compiled_inverse(lib, start: CompiledStart, theta, params):
    """Per set of params (S, npar), in order: (j, flagged, its inverse basis (N, unknowns, 3)) from the
    compiled ms_inverse_sets; `flagged` (`suspect_sets`) leaves the set to the kinematics, which names the
    reason."""
    from mechsym.codegen.c_sets import inverse_sets

    for lo, hi, reference, col_scale, coord, size in set_blocks(start, params):
        failed, _, first, coef, branch, u = inverse_sets(lib, theta, params[lo:hi], reference, col_scale,
                                                         STEP * coord, start.tol)
        for j, flagged in enumerate(suspect_sets(failed, first, coef, branch, coord, start.suspect)):
            yield lo + j, bool(flagged), u[j]


def suspect_sets(failed, start, coef, branch, coord_scale, suspect) -> np.ndarray:
    """Which sets of a compiled call the set-by-set route must look at (and name the reason): a start or a
    sample that failed, a velocity coefficient (relative to the coordinate scale, as in mechsym.planar.dynamics.inverse)
    above `suspect` on the way or at a sample (near a dead point), a declared branch condition not positive."""
    size = np.asarray(coord_scale)[:, None] * coef
    return ((failed >= 0) | (start * coord_scale > suspect) | np.any(size > suspect, axis=1)
            | np.any(branch <= 0, axis=1))


def set_vectors(system, sets, out) -> list:
    """(k, parameter vector, mass matrix diagonal) of each set of `sets` that passes System.params' checks
    (the rules of Mechanism.resolve_parameters, no negative mass or inertia); the InputError of a set that
    does not goes into out[k]. A set whose mass is not finite is left out (None: the set-by-set route names
    the body)."""
    from mechsym.core.parameters import apply_overrides

    mech, ready = system.mechanism, []
    for k, params in enumerate(sets):
        values, problems = apply_overrides(mech.parameters, params)
        if problems:
            out[k] = InputError(f"mechanism '{mech.name}': " + "; ".join(problems))
            continue
        p = np.array([values[n] for n in mech.parameters])
        with np.errstate(all="ignore"):
            mass = system.mass(p)
        out[k] = negative_mass(mech.name, system.constraints.bodies, mass)
        if out[k] is None and np.all(np.isfinite(mass)):
            ready.append((k, p, mass))
    return ready


def _figures(reductions, table):
    """A set's figures from its table, or the InputError of a reduction that cannot be made."""
    try:
        return {r.name: r(table) for r in reductions}
    except InputError as exc:
        return exc


def kinematics_batch(system, args, sets, reductions):
    """TableStudy.batch of a kinematics analysis on the C backend: every set's q, q' and q'' over the
    revolution from ms_kinematics_sets, its table made by System.kinematics_table from them (the columns
    of `mechsym.studies.analyses.kinematics`). None where the call does not apply (the whole task set by set):
    a library without the square kernels, a start a whole period away from the reference (the set-by-set
    route solves it one period nearer), a reference that does not assemble."""
    from mechsym.codegen.c_sets import kinematics_sets
    from mechsym.planar.kinematics import Kinematics
    from mechsym.studies.analyses import samples

    lib = system.functions
    theta = samples(args)
    start = compiled_start(system) if lib.meta["square"] and len(theta) > 1 else None
    if start is None or not abs(theta[0] - start.theta_ref) <= np.pi or not _finite_options(args):
        return None
    out = [None] * len(sets)
    ready = set_vectors(system, sets, out)
    params = np.array([p for _, p, _ in ready]).reshape(len(ready), -1)
    for lo, hi, reference, col_scale, coord, size in set_blocks(start, params):
        failed, _, first, q, dq, ddq, coef, branch = kinematics_sets(lib, theta, params[lo:hi], reference, col_scale,
                                                                     STEP * coord, start.tol)
        for j in np.flatnonzero(~suspect_sets(failed, first, coef, branch, coord, start.suspect)):
            k, p, _ = ready[lo + j]
            kin = Kinematics(theta[:, None], q[j], dq[j][:, :, None], ddq[j], None, p, jac_fn=lib.jac)
            table = system.kinematics_table(theta, dict(sets[k]), rates=True, omega=args.omega, alpha=args.alpha,
                                            kin=kin)
            out[k] = _figures(reductions, table)
    return out


def _finite_options(args) -> bool:
    """Whether the options' speeds are finite (else the set-by-set route names the bad option)."""
    values = [v for v in (getattr(args, "omega", None), getattr(args, "alpha", None)) if v is not None]
    return bool(np.all(np.isfinite(values)))


def forward_batch(system, args, sets, reductions):
    """TableStudy.batch of a forward analysis on the C backend: every set's run in ms_forward_sets (each its own
    DOP853 step control, from its own start solved in C), its table the columns of
    `mechsym.studies.analyses.forward` (t, the coordinate, omega, the force). A set is left to the set-by-set
    route (None) where its start or its run failed, its start comes near a dead point, starts at rest where
    the branch crosses another, or its first acceleration gives a travel too large to represent: that route
    names the reason. None where the call does not apply: `all` (every body column along the run), bad
    options, a start a whole period away from the reference."""
    from mechsym.codegen.c_sets import forward_sets
    from mechsym.core.timegrid import run_options
    from mechsym.planar.forward import MAX_TRAVEL

    lib = system.functions
    try:
        opts = run_options(args.t_end, args.dt, args.rtol, args.atol,
                           arrays={"theta0": args.theta0, "omega0": args.omega0, "torque": args.torque})
    except InputError:
        return None
    start = compiled_start(system) if lib.meta["square"] and not args.all else None
    if start is None or not abs(args.theta0 - start.theta_ref) <= np.pi:
        return None
    grid = opts.grid()
    out = [None] * len(sets)
    ready = set_vectors(system, sets, out)
    params = np.array([p for _, p, _ in ready]).reshape(len(ready), -1)
    name, mech = system.coordinate_names[0], system.mechanism
    force = mech.coordinates[0].force or "force"
    for lo, hi, reference, col_scale, coord, size in set_blocks(start, params):
        status, first, q0, f0, y, written, _, _ = forward_sets(
            lib, args.torque, args.theta0, args.omega0, opts.t_end, grid, opts.rtol, opts.atol, params[lo:hi],
            reference, col_scale, STEP * coord, start.tol)
        with np.errstate(all="ignore"):
            travel = abs(args.omega0) * opts.t_end + 0.5 * np.abs(f0[:, 1]) * opts.t_end**2
        ok = (status == 0) & (first * coord <= start.suspect) & np.all(np.isfinite(f0), axis=1) & (travel <= MAX_TRAVEL)
        if args.omega0 == 0:
            ok &= ~_at_a_bifurcation(system, q0, params[lo:hi], col_scale, size)
        for j in np.flatnonzero(ok):
            k, n = ready[lo + j][0], written[j]
            cols = {"t": grid[:n], name: y[j, :n, 0], "omega": y[j, :n, 1], force: np.full(n, float(args.torque))}
            out[k] = _figures(reductions, Table(cols))
    return out


def _at_a_bifurcation(system, q0, params, col_scale, size) -> np.ndarray:
    """Which sets start at rest where the branch crosses another (Solver.check_start_at_rest: Phi_q at q0
    (S, nq), its rows and columns in their scales, losing rank by the dead-point criterion SINGULAR)."""
    from mechsym.planar.kinematics import SINGULAR

    solver = system.solver()
    angle_rows = np.array([solver._is_angle_row(i) for i in range(len(solver.row_scale))])
    row_scale = np.where(angle_rows, 1.0, np.asarray(size)[:, None])
    jac = np.array([system.kin.jac(q, p) for q, p in zip(q0, params)])
    values = np.linalg.svd(jac * (col_scale[:, None, :] / row_scale[:, :, None]), compute_uv=False)
    return np.any(values < values[:, :1] / SINGULAR, axis=1)
