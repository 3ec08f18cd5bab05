"""Parameter sets in compiled calls (mechsym.codegen.c_sets): each set assembled from the reference assembly
of the default parameters and continued to its start in C (`CompiledStart`, which a sweep worker's manifest
also holds), then its inverse dynamics, its kinematics or its forward run, COMPILED_BLOCK sets per call.
A set whose call failed or came near a dead point, a change of branch or another check of the set-by-set
route is flagged and left to that route (not done in the task's `Rows`), which names the reason: so every
row equals the set-by-set route's, to round-off. The sets' parameters are checked (`checked_sets`) and the
inverse figures reduced (`inverse_rows`) for every set of a block at once: no Python work per set there.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechsym.codegen.constants import STEP
from mechsym.core.errors import InputError
from mechsym.core.results import Table
from mechsym.studies.figures import figure_names, inverse_figures, negative_mass, speeds_apart
from mechsym.studies.sweep_grid import Grid
from mechsym.studies.sweep_rows import Rows, message_of

SET_ERRORS = (InputError, ArithmeticError, np.linalg.LinAlgError)  # a set that cannot be evaluated
COMPILED_BLOCK = 64  # sets per compiled call: their outputs (sets x samples x ...) stay small


@dataclass(frozen=True)
class CompiledStart:
    """What a compiled call of many sets needs of a model besides each set's parameters: the reference
    assembly q_ref at theta_ref (of the default parameters) and the sign of det Phi_q there, every set
    starting from it; the points' coordinates in their frames as expressions of the parameters
    (mechsym.planar.kinematics.point_sources) and which coordinates are angles and driven lengths, for each set's scales;
    which rows of Phi are angles (each other row is in the set's size); the Newton tolerance, the velocity
    coefficient from which a sample is suspected of a dead point and the ratio of singular values at which
    Phi_q loses rank (mechsym.planar.kinematics' STEP_TOL, SUSPECT, SINGULAR); the largest travel a forward run
    represents (mechsym.planar.forward.MAX_TRAVEL). Plain numbers and text: a sweep worker's manifest holds it
    (mechsym.studies.sweep_warm)."""

    theta_ref: float
    q_ref: tuple
    sign: int
    points: tuple
    angle: tuple
    length: tuple
    angle_rows: tuple
    tol: float
    suspect: float
    singular: float
    max_travel: float


def compiled_start(system) -> CompiledStart | None:
    """The CompiledStart of a derived one-coordinate system (Solver.reference of the default parameters);
    None where the reference does not assemble."""
    from mechsym.planar.forward import MAX_TRAVEL
    from mechsym.planar.kinematics import SINGULAR, STEP_TOL, SUSPECT, point_sources, scale_masks

    solver = system.solver()
    try:
        theta_ref, q_ref = solver.reference()
    except SET_ERRORS:
        return None
    sign = 1 if np.linalg.det(system.kin.jac(q_ref, solver.params)) > 0 else -1
    angle, length = scale_masks(system.constraints)
    angle_rows = tuple(bool(solver._is_angle_row(i)) for i in range(len(solver.row_scale)))
    return CompiledStart(float(theta_ref[0]), tuple(q_ref.tolist()), sign, point_sources(system.constraints),
                         tuple(angle.tolist()), tuple(length.tolist()), angle_rows, STEP_TOL, SUSPECT, SINGULAR,
                         MAX_TRAVEL)


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


def suspect_sets(failed, start, coef, branch, coord_scale, suspect) -> np.ndarray:
    """Which sets of a compiled call the set-by-set route must look at (and name the reason): a start or a
    sample that failed, a velocity coefficient (relative to the coordinate scale) above `suspect` on the way,
    or a sample that the single-set kernel's checks flag (mechsym.planar.inverse_kernel.flagged: near a dead
    point, a declared branch condition not positive)."""
    from mechsym.planar.inverse_kernel import flagged

    coord_scale = np.asarray(coord_scale)
    return ((failed >= 0) | (start * coord_scale > suspect)
            | np.any(flagged(coef, branch, coord_scale[:, None], suspect), axis=1))


@dataclass(frozen=True)
class SetModel:
    """What the compiled calls of many sets need of a one-coordinate model: its name, its parameters (name ->
    what mechsym.core.parameters.apply_overrides reads: default, positive, nonnegative), its bodies (for the
    negative-mass check), its coordinate and the name of its force, the names of the inverse analysis'
    unknowns with and without inertia, its `CompiledStart` and its compiled library. Made from a derived System (`set_model`) or from
    a sweep worker's manifest (mechsym.studies.sweep_warm) alike."""

    name: str
    parameters: dict
    bodies: tuple
    coordinate: str
    force: str
    unknowns: dict  # "inertia" / "static" -> the inverse analysis' unknowns in the kernel's order; {}: no inverse
    start: CompiledStart
    lib: object


def set_model(system) -> SetModel | None:
    """The SetModel of a derived one-coordinate system on the C backend; None where the compiled calls of
    many sets do not apply (force elements, a library without the square kernels, a reference that does
    not assemble). Its `unknowns` are empty where the inverse analysis has free or extra unknowns or rows
    (the compiled inverse does not cover them)."""
    from mechsym.planar.dynamics import analysis_functions
    from mechsym.planar.equations import inverse as inverse_analysis

    mech = system.mechanism
    if len(system.coordinate_names) != 1 or getattr(system, "loads", None) is not None:
        return None
    if not system.functions.meta.get("square"):
        return None
    start = compiled_start(system)
    if start is None:
        return None
    analyses = {k: inverse_analysis(mech, k == "inertia") for k in ("inertia", "static")}
    covered = not any(a.free or a.extra_rows or a.extra_unknowns for a in analyses.values())
    unknowns = {k: analysis_functions(system, a).names for k, a in analyses.items()} if covered else {}
    return SetModel(mech.name, dict(mech.parameters), tuple(system.constraints.bodies), system.coordinate_names[0],
                    mech.coordinates[0].force or "force", unknowns, start, system.functions)


def set_columns(sets, names) -> dict:
    """Each named parameter's values over the sets: a Grid's columns generated from its axes, a list's
    gathered."""
    if isinstance(sets, Grid):
        return {n: sets.column(n) for n in names}
    return {n: [s[n] for s in sets] for n in names}


def checked_sets(model: SetModel, sets, rows: Rows):
    """(k (R,), parameter vectors (R, npar), mass matrix diagonals (R, nq)) of the sets that pass
    System.params' checks (the rules of Mechanism.resolve_parameters, no negative mass or inertia), checked
    for every set at once; a set that fails gets its message in `rows`, named by
    mechsym.core.parameters.apply_overrides as one set alone would be. A set whose mass is not finite is
    left out and not done (the set-by-set route names the body)."""
    from mechsym.codegen.c_sets import mass_sets
    from mechsym.core.parameters import apply_overrides

    order = list(model.parameters)
    p = np.tile(np.array([q.default for q in model.parameters.values()], float), (len(sets), 1))
    swept = list(sets[0]) if len(sets) else []
    bad = np.zeros(len(sets), bool)
    if not set(swept) <= set(order):
        bad[:] = True
    else:
        for name, values in set_columns(sets, swept).items():
            try:
                p[:, order.index(name)] = np.asarray(values, float)
            except (TypeError, ValueError):  # a value that is not a number: named set by set below
                bad[:] = True
    positive = np.array([bool(q.positive) for q in model.parameters.values()])
    nonnegative = np.array([bool(getattr(q, "nonnegative", False)) for q in model.parameters.values()])
    with np.errstate(invalid="ignore"):
        bad |= ~np.all(np.isfinite(p), axis=1) | np.any(positive & (p <= 0), axis=1) | np.any(nonnegative & (p < 0),
                                                                                             axis=1)
    for k in np.flatnonzero(bad):
        values, problems = apply_overrides(model.parameters, dict(sets[int(k)]))
        if problems:
            rows.fail(int(k), message_of(InputError(f"mechanism '{model.name}': " + "; ".join(problems))))
        else:
            p[k], bad[k] = [values[n] for n in order], False
    ready = np.flatnonzero(~bad)
    if not len(ready):
        return ready, p[ready], np.zeros((0, model.lib.nq))
    with np.errstate(all="ignore"):
        mass = mass_sets(model.lib, p[ready])
    body = 3 * np.arange(len(model.bodies))
    negative = np.any((mass[:, body] < 0) | (mass[:, body + 2] < 0), axis=1)
    for j in np.flatnonzero(negative):
        rows.fail(int(ready[j]), message_of(negative_mass(model.name, model.bodies, mass[j])))
    keep = ~negative & np.all(np.isfinite(mass), axis=1)
    return ready[keep], p[ready[keep]], mass[keep]


def inverse_rows(model: SetModel, args, reductions, sets) -> Rows | None:
    """The figures of an inverse analysis (mechsym.studies.analyses.InverseOptions `args`, reduced by
    `reductions`) at every set of `sets`: the sets checked at once, every set that passes in a compiled call
    of ms_inverse_sets (COMPILED_BLOCK at a time: each set assembled from the reference assembly and continued
    to theta[0] in C, its kinematics its own), the figures of a block's sets reduced together
    (mechsym.studies.figures.inverse_figures). A set the call flags (a start that fails or lands on another
    branch, a failed sample, a dead point, a branch change) is left not done: the set-by-set route names the
    reason. None for options the set-by-set route must report (no speed, a speed that is not finite) and an
    analysis the compiled inverse does not cover (SetModel.unknowns empty)."""
    from mechsym.codegen.c_sets import inverse_sets
    from mechsym.planar.inverse_kernel import speed_weights
    from mechsym.studies.analyses import samples

    if not model.unknowns or not (args.quasi_static or args.omega) or not np.all(
            np.isfinite([*(args.omega or []), args.alpha])):
        return None
    theta = samples(args)
    omegas = np.array([0.0] if args.quasi_static else args.omega, float)
    coef = speed_weights(omegas, 0.0 if args.quasi_static else args.alpha)  # (speeds, 3)
    unknowns = model.unknowns["static" if args.quasi_static else "inertia"]
    rows = Rows(len(sets), figure_names(reductions, speeds_apart(omegas, args.quasi_static)))
    ready, params, _ = checked_sets(model, sets, rows)
    start = model.start
    for lo, hi, reference, col_scale, coord, _ in set_blocks(start, params):
        failed, _, first, coef_max, branch, u = inverse_sets(model.lib, theta, params[lo:hi], reference, col_scale,
                                                             STEP * coord, start.tol)
        good = np.flatnonzero(~suspect_sets(failed, first, coef_max, branch, coord, start.suspect))
        if not len(good):
            continue
        if args.quasi_static:
            u[..., :2] = 0.0
        try:
            figures = inverse_figures(model.coordinate, theta, omegas, args.quasi_static, coef, unknowns,
                                      u if len(good) == len(u) else u[good], reductions)
        except InputError as exc:
            for j in good:
                rows.fail(int(ready[lo + j]), message_of(exc))
            continue
        rows.put_block(ready[lo + good], figures)
    return rows


def _figures(reductions, table):
    """A set's figures from its table, or the InputError of a reduction that cannot be made."""
    try:
        return {r.name: r(table) for r in reductions}
    except InputError as exc:
        return exc


def kinematics_batch(system, args, sets, reductions) -> Rows | None:
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
    model = set_model(system) if len(theta) > 1 else None
    if model is None or not abs(theta[0] - model.start.theta_ref) <= np.pi or not _finite_options(args):
        return None
    start, rows = model.start, Rows(len(sets), [r.name for r in reductions])
    ready, params, _ = checked_sets(model, sets, rows)
    for lo, hi, reference, col_scale, coord, size in set_blocks(start, params):
        failed, _, first, q, dq, ddq, coef, branch = kinematics_sets(lib, theta, params[lo:hi], reference, col_scale,
                                                                     STEP * coord, start.tol)
        found = {}
        for j in np.flatnonzero(~suspect_sets(failed, first, coef, branch, coord, start.suspect)):
            kin = Kinematics(theta[:, None], q[j], dq[j][:, :, None], ddq[j], None, params[lo + j], jac_fn=lib.jac)
            table = system.kinematics_table(theta, rates=True, omega=args.omega, alpha=args.alpha, kin=kin)
            found[int(ready[lo + j])] = _figures(reductions, table)
        _put(rows, found)
    return rows


def _put(rows: Rows, found):
    """The outcomes found (set -> figures or exception) into rows: the figures of a block in one piece."""
    good = [k for k, v in found.items() if not isinstance(v, Exception)]
    if good:
        rows.put_block(good, {n: np.array([found[k][n] for k in good]) for n in found[good[0]]})
    for k, v in found.items():
        if isinstance(v, Exception):
            rows.put(k, v)


def _finite_options(args) -> bool:
    """Whether the options' speeds are finite (else the set-by-set route names the bad option)."""
    values = [v for v in (getattr(args, "omega", None), getattr(args, "alpha", None)) if v is not None]
    return bool(np.all(np.isfinite(values)))


def forward_rows(model: SetModel, args, reductions, sets) -> Rows | None:
    """TableStudy.batch of a forward analysis on the C backend: every set's run in ms_forward_sets (each its own
    DOP853 step control, from its own start solved in C), its table the columns of
    `mechsym.studies.analyses.forward` (t, the coordinate, omega, the force). A set is left to the set-by-set
    route (not done) where its start or its run failed, its start comes near a dead point, starts at rest
    where the branch crosses another, or its first acceleration gives a travel too large to represent: that
    route names the reason. None where the call does not apply: `all` (every body column along the run), bad
    options, a start a whole period away from the reference."""
    from mechsym.codegen.c_sets import forward_sets
    from mechsym.core.timegrid import run_options

    try:
        opts = run_options(args.t_end, args.dt, args.rtol, args.atol,
                           arrays={"theta0": args.theta0, "omega0": args.omega0, "torque": args.torque})
    except InputError:
        return None
    start = model.start
    if args.all or not abs(args.theta0 - start.theta_ref) <= np.pi:
        return None
    grid = opts.grid()
    rows = Rows(len(sets), [r.name for r in reductions])
    ready, params, _ = checked_sets(model, sets, rows)
    for lo, hi, reference, col_scale, coord, size in set_blocks(start, params):
        status, first, q0, f0, y, written, _, _ = forward_sets(
            model.lib, args.torque, args.theta0, args.omega0, opts.t_end, grid, opts.rtol, opts.atol, params[lo:hi],
            reference, col_scale, STEP * coord, start.tol)
        with np.errstate(all="ignore"):
            travel = abs(args.omega0) * opts.t_end + 0.5 * np.abs(f0[:, 1]) * opts.t_end**2
        ok = ((status == 0) & (first * coord <= start.suspect) & np.all(np.isfinite(f0), axis=1)
              & (travel <= start.max_travel))
        if args.omega0 == 0:
            ok &= ~_at_a_bifurcation(model, q0, params[lo:hi], col_scale, size)
        found = {}
        for j in np.flatnonzero(ok):
            n = written[j]
            cols = {"t": grid[:n], model.coordinate: y[j, :n, 0], "omega": y[j, :n, 1],
                    model.force: np.full(n, float(args.torque))}
            found[int(ready[lo + j])] = _figures(reductions, Table(cols))
        _put(rows, found)
    return rows


def _at_a_bifurcation(model: SetModel, q0, params, col_scale, size) -> np.ndarray:
    """Which sets start at rest where the branch crosses another (Solver.check_start_at_rest: Phi_q at q0
    (S, nq), its rows and columns in their scales, losing rank by the dead-point criterion)."""
    row_scale = np.where(np.array(model.start.angle_rows), 1.0, np.asarray(size)[:, None])
    jac = np.array([model.lib.jac(q, p) for q, p in zip(q0, params)])
    values = np.linalg.svd(jac * (col_scale[:, None, :] / row_scale[:, :, None]), compute_uv=False)
    return np.any(values < values[:, :1] / model.start.singular, axis=1)


SET_ROUTES = {"inverse": inverse_rows, "forward": forward_rows}  # the analyses a SetModel alone evaluates (a
#                                                                 worker's warm start runs them too)
