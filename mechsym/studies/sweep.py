"""Design studies: one analysis over a grid or a list of parameter sets, on one core or on any executor.

    from mechanisms import fourbar
    table = sweep(fourbar.build, grid(density=[1, 2, 3], l_crank=[0.04, 0.05]),
                  TableStudy(InverseOptions(omega=[3.0]), ["absmax:torque"]),
                  executor=ProcessPoolExecutor(2))

A study is any picklable callable f(system, params) -> {name: number} (params: one parameter set, name ->
value); it reports a parameter set it cannot evaluate by raising mechsym.core.errors.InputError (any other
exception is a failure of the study and ends the sweep, on one core as on many). What travels to a
worker is the model's declaration as a picklable callable (a module-level build function, or a model
the command line's registry found by name or path), the study and a chunk of parameter sets (a range of
a lazily generated `Grid`, never the sets themselves), never the sympy model: each worker process
derives the declaration once and loads the generated C from the content-keyed cache, which the calling
process fills before the first task leaves (`ModelRef.system`), or starts warm from the manifest of
mechsym.studies.sweep_warm without deriving anything.

One chunk is one task, of about a second of work (`_Tasks`): the sets of a chunk are evaluated one after
the other in the worker, each set as one vectorised call over its samples (on the C backend the whole
revolution of `inverse` is one call into the compiled library, and the sets of their own geometry go
together into `ms_inverse_sets`, each assembled and continued to its start in C). A set that fails (a geometry that cannot assemble, a singular system, a non-finite
figure) is reported in its own row (`status` error, its `message`, its figures empty) and the others are
kept; a task lost with its worker is submitted again (`retries`), and since a task is a pure function of
its arguments a retried task gives the same answer. Rows come back in grid order, in a Table, or streamed
into a file as tasks finish (`out`, mechsym.studies.sweep_stream).
"""
from __future__ import annotations

import concurrent.futures as cf
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mechsym.codegen.constants import STEP
from mechsym.core.errors import InputError
from mechsym.core.results import Table
from mechsym.studies.analyses import ANALYSES, analyse
from mechsym.studies.figures import (Reduction, figure_names, geometry_parameters, inverse_figures, negative_mass,
                                     reduce_table, speeds_apart)

MAX_SETS = 1_000_000  # a larger grid is refused up front (max_sets= or --max-sets lifts it)
SHARED_MIN = 16  # sets sharing one geometry share its kinematic solution from this many on; fewer go, each
#                  with its own compiled run, into one call (fourbar, 360 samples: a shared solution costs
#                  about 20 ms, a set's own run in C, its start included, about 0.2 ms)


# -- parameter sets ------------------------------------------------------------------------------------
def axis(text: str):
    """(name, values) from 'NAME=START:STOP:N' (N values, both ends included), 'NAME=a,b,c' or 'NAME=v'. One
    value from START to a different STOP (N = 1) is refused: which end was meant?"""
    name, sep, spec = str(text).partition("=")
    name, spec = name.strip(), spec.strip()
    if not sep or not name or not spec:
        raise InputError(f"expected NAME=START:STOP:N or NAME=a,b,c, got '{text}'")
    try:
        if ":" in spec:
            parts = spec.split(":")
            if len(parts) != 3:
                raise ValueError
            start, stop, count = float(parts[0]), float(parts[1]), int(parts[2])
            if count < 1:
                raise InputError(f"parameter '{name}': N must be at least 1, got {count}")
            if count == 1 and start != stop:
                raise InputError(f"parameter '{name}': {spec} asks for one value from {start:g} to {stop:g}; give N of "
                                 f"at least 2, or the one value ({name}={start:g})")
            values = np.linspace(start, stop, count)
        else:
            values = np.array([float(v) for v in spec.split(",")])
    except InputError:
        raise
    except ValueError:
        raise InputError(f"parameter '{name}': expected START:STOP:N or a,b,c with numbers, got '{spec}'") from None
    if not np.all(np.isfinite(values)):
        raise InputError(f"parameter '{name}': values must be finite, got '{spec}'")
    return name, [float(v) for v in values]


def grid(axes=None, **named) -> "Grid":
    """Every combination of the axes' values (name -> values), the first axis varying slowest (grid
    order: the order of nested loops written in the order given), as a lazily generated `Grid`."""
    axes = dict(axes or {}, **named)
    for name, values in axes.items():
        if len(values) == 0:
            raise InputError(f"parameter '{name}' has no values")
    return Grid(tuple((str(n), tuple(map(float, v))) for n, v in axes.items()))


class Grid(Sequence):
    """The parameter sets of a grid, generated from its axes on demand and never held all at once: a set
    (name -> value) by its index, a range of sets (a slice) as a Grid of its own, a parameter's values over
    the range (`column`). What travels to a worker with a task is its Grid: the axes and the range."""

    def __init__(self, axes, start=0, stop=None):
        self.axes, self.start = axes, start
        self.shape = tuple(len(v) for _, v in axes)
        self.stop = math.prod(self.shape) if stop is None else stop

    @property
    def names(self) -> list:
        """The parameters' names, in order."""
        return [n for n, _ in self.axes]

    def __len__(self):
        return self.stop - self.start

    def __getitem__(self, i):
        if isinstance(i, slice):
            lo, hi, step = i.indices(len(self))
            if step != 1:
                raise ValueError("a grid's sets are sliced in order (step 1)")
            return Grid(self.axes, self.start + lo, self.start + max(hi, lo))
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        at = np.unravel_index(self.start + i % len(self), self.shape)
        return {n: v[int(k)] for (n, v), k in zip(self.axes, at)}

    def __iter__(self):
        return iter(self.sets())

    def sets(self) -> list:
        """Every set of the range as a dict, in order."""
        columns = [self.column(n).tolist() for n in self.names]
        return [dict(zip(self.names, values)) for values in zip(*columns)]

    def column(self, name) -> np.ndarray:
        """The values of parameter `name` over the range, in order."""
        k = self.names.index(name)
        inner = math.prod(self.shape[k + 1:])
        picks = (np.arange(self.start, self.stop) // inner) % self.shape[k]
        return np.asarray(self.axes[k][1], float)[picks]


# -- studies -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TableStudy:
    """A generic analysis (mechsym.studies.analyses: InverseOptions, KinematicsOptions or
    ForwardOptions), its table reduced to figures (`reductions`: Reduction or 'FUNC:COLUMN'). `hook`: a
    model's own computation of the analysis, hook(options, params, backend) -> (table, drawn), where its
    declaration does not cover it (PASIBOT switches builds between supports); None for any other model.

        TableStudy(InverseOptions(omega=[3.0], samples=90), ["absmax:torque", "rms:torque"])
    """

    analysis: object
    reductions: tuple = ()
    hook: object = field(default=None, repr=False)  # the model's (which a streamed sweep's key names)

    def __post_init__(self):
        if getattr(self.analysis, "command", None) not in ANALYSES:
            raise InputError(f"not the options of an analysis: {self.analysis!r} (InverseOptions, KinematicsOptions "
                             "or ForwardOptions)")
        reds = tuple(r if isinstance(r, Reduction) else Reduction.parse(r) for r in self.reductions)
        if not reds:
            raise InputError("give at least one reduction FUNC:COLUMN (e.g. absmax:torque)")
        object.__setattr__(self, "reductions", reds)

    @property
    def command(self) -> str:
        """The analysis' name: inverse, kinematics or forward."""
        return self.analysis.command

    @property
    def speeds(self) -> tuple:
        """The speeds reported apart (an inverse at two or more speeds: one figure per speed), or ()."""
        return speeds_apart(self.analysis.omega, self.analysis.quasi_static) if self.command == "inverse" else ()

    @property
    def names(self) -> list:
        """The figures' column names, in order: FUNC_COLUMN, or FUNC_COLUMN@omega=W per speed."""
        return figure_names(self.reductions, self.speeds)

    def __call__(self, system, params) -> dict:
        table, _ = analyse(self.analysis, system, dict(params), self.hook, system.backend)
        return reduce_table(table, self.reductions, self.speeds)

    def batch(self, system, sets):
        """The figures (or the exception) of every set at once, or None where only set by set works.

        An inverse analysis of a one-coordinate linkage is linear in the inertial parameters: sets that
        share their geometry (the values of every parameter in the constraints) share one kinematic
        solution and one factorisation of Phi_q, and their three right-hand sides each (per unit
        thetadd, per unit thetad^2, static loads) are solved together, 3 x (sets) columns in one
        transposed solve (in C on the C backend). On the C backend the sets of smaller groups (fewer than
        SHARED_MIN sets: a geometry of their own, say) all go into one call of the compiled
        ms_inverse_sets, each set with its own kinematics. Agrees with `__call__` to round-off."""
        if (self.command != "inverse" or self.hook is not None or len(system.coordinate_names) != 1
                or getattr(system, "loads", None) is not None):   # force elements: their columns and loads of velocity, set by set
            return None
        args = self.analysis
        if not (args.quasi_static or args.omega) or not np.all(np.isfinite([*(args.omega or []), args.alpha])):
            return None  # the set-by-set route reports the bad option
        return _inverse_batch(system, args, sets, self.reductions)


def _inverse_batch(system, args, sets, reductions):
    """TableStudy.batch for the inverse analysis (see there): per set its figures or its exception."""
    from mechsym.core.parameters import apply_overrides
    from mechsym.planar.dynamics import analysis_functions
    from mechsym.planar.equations import inverse as inverse_analysis

    mech = system.mechanism
    analysis = inverse_analysis(mech, not args.quasi_static)
    if analysis.free or analysis.extra_rows or analysis.extra_unknowns:
        return None
    names = analysis_functions(system, analysis).names
    theta = args.theta0 + 2 * np.pi * np.arange(args.samples) / args.samples
    omegas = np.array([0.0] if args.quasi_static else args.omega, float)
    alpha = 0.0 if args.quasi_static else args.alpha
    coef = np.stack([np.full_like(omegas, alpha), omegas**2, np.ones_like(omegas)], axis=1)  # (speeds, 3)
    geometry = geometry_parameters(system)
    out, groups = [None] * len(sets), {}
    for k, params in enumerate(sets):
        values, problems = apply_overrides(mech.parameters, params)
        if problems:
            out[k] = InputError(f"mechanism '{mech.name}': " + "; ".join(problems))
            continue
        p = np.array([values[n] for n in mech.parameters])
        groups.setdefault(tuple(values[n] for n in geometry), []).append((k, p, params))
    coordinate = system.coordinate_names[0]

    def figures(k, basis):
        out[k] = inverse_figures(coordinate, theta, omegas, args.quasi_static, coef, names, basis, reductions)

    groups_valid = []
    lone = []  # on the C backend: the sets of the small geometry groups, all in one compiled call
    pooled = system.backend.route(compiled=SHARED_MIN, python=0)  # (numpy: no such call, every group its own)
    for members in groups.values():
        valid = []
        for k, p, params in members:  # the mass check of Mechanism.resolve_parameters, from the mass matrix
            mass = system.mass(p)
            out[k] = negative_mass(mech.name, system.constraints.bodies, mass)
            if out[k] is None:
                valid.append((k, p, params, mass))
        if len(valid) < pooled:
            lone += valid
        elif valid:
            groups_valid.append(valid)
    groups_valid += [[member] for member in _inverse_sets_c(system, theta, lone, figures, out,
                                                                    not args.quasi_static)]
    for valid in groups_valid:
        try:
            kin = system.kinematics(theta, valid[0][2])
        except _SET_ERRORS as exc:
            for k, *_ in valid:
                out[k] = exc
            continue
        if kin.factor is None:
            return None
        scale = 0.0 if args.quasi_static else 1.0
        rhs = []
        for _, p, _, mass in valid:
            rhs += [scale * mass * kin.dq[:, :, 0], scale * mass * kin.ddq, -system.applied(kin.q.T, p).T]
        basis = kin.factor.solve_t(np.stack(rhs, axis=2))  # (N, n, 3 sets)
        for j, (k, *_) in enumerate(valid):
            figures(k, basis[:, :, 3 * j:3 * j + 3])
    return out


def _inverse_sets_c(system, theta, lone, figures, out, inertia) -> list:
    """The inverse bases of sets, each with its own kinematics, from the compiled ms_inverse_sets
    (`compiled_inverse`), in which each set assembles from the reference assembly of the default
    parameters and continues to theta[0]; `figures(k, basis)` takes each set's basis. Returns the sets the
    compiled sweep flagged (a start that fails or lands on another branch, a failed sample, a dead point, a
    branch change): the caller runs them through the kinematics, which names the reason as the set-by-set
    route does."""
    if not lone:
        return []
    start = compiled_start(system)
    if start is None:  # the default parameters do not assemble: every set names its own reason
        return list(lone)
    flagged = []
    for j, suspect, u in compiled_inverse(system.functions, start, theta, np.array([m[1] for m in lone])):
        if suspect:
            flagged.append(lone[j])
        else:
            if not inertia:
                u[:, :, :2] = 0.0
            figures(lone[j][0], u)
    return flagged


@dataclass(frozen=True)
class CompiledStart:
    """What ms_inverse_sets needs of a model besides each set's parameters: the reference assembly q_ref at
    theta_ref (of the default parameters) and the sign of det Phi_q there, every set starting from it; the
    points' coordinates in their frames as expressions of the parameters (kinematics.point_sources) and
    which coordinates are angles and driven lengths, for each set's scales; the Newton tolerance and the
    velocity coefficient from which a sample is suspected of a dead point. Plain numbers and text: a
    sweep worker's manifest holds it (mechsym.sweep_warm)."""

    theta_ref: float
    q_ref: tuple
    sign: int
    points: tuple
    angle: tuple
    length: tuple
    tol: float
    suspect: float


COMPILED_BLOCK = 64  # sets per ms_inverse_sets call: their bases (sets x samples x unknowns x 3) stay small


def compiled_inverse(lib, start: CompiledStart, theta, params):
    """Per set of params (S, npar), in order: (j, flagged, its inverse basis (N, unknowns, 3)) from the
    compiled ms_inverse_sets, COMPILED_BLOCK sets per call; `flagged` (`suspect_sets`) leaves the set to
    the kinematics, which names the reason."""
    from mechsym.codegen.parameter_expressions import coordinate_scales, size_scales

    col_scale, coord_scale = coordinate_scales(np.array(start.angle), np.array(start.length),
                                               size_scales(start.points, params))
    reference = (start.theta_ref, np.array(start.q_ref), start.sign)
    for lo in range(0, len(params), COMPILED_BLOCK):
        hi = min(lo + COMPILED_BLOCK, len(params))
        coord = coord_scale[lo:hi, 0]
        failed, _, first, coef, branch, u = lib.inverse_sets(theta, params[lo:hi], reference, col_scale[lo:hi],
                                                             STEP * coord, start.tol)
        for j, flagged in enumerate(suspect_sets(failed, first, coef, branch, coord, start.suspect)):
            yield lo + j, bool(flagged), u[j]


def compiled_start(system) -> CompiledStart | None:
    """The CompiledStart of a derived one-coordinate system (Solver.reference of the default parameters);
    None where the reference does not assemble."""
    from mechsym.planar.kinematics import STEP_TOL, SUSPECT, point_sources, scale_masks

    solver = system.solver()
    try:
        theta_ref, q_ref = solver.reference()
    except _SET_ERRORS:
        return None
    sign = 1 if np.linalg.det(system.kin.jac(q_ref, solver.params)) > 0 else -1
    angle, length = scale_masks(system.constraints)
    return CompiledStart(float(theta_ref[0]), tuple(q_ref.tolist()), sign, point_sources(system.constraints),
                         tuple(angle.tolist()), tuple(length.tolist()), STEP_TOL, SUSPECT)


def suspect_sets(failed, start, coef, branch, coord_scale, suspect) -> np.ndarray:
    """Which sets of an ms_inverse_sets call the kinematics must look at (and name the reason): a start or a
    sample that failed, a velocity coefficient (relative to the coordinate scale, as in dynamics.inverse)
    above `suspect` on the way or at a sample (near a dead point), a declared branch condition not positive."""
    size = np.asarray(coord_scale)[:, None] * coef
    return ((failed >= 0) | (start * coord_scale > suspect) | np.any(size > suspect, axis=1)
            | np.any(branch <= 0, axis=1))


# -- the model a worker loads --------------------------------------------------------------------------
_SYSTEMS = {}
_READ = {}  # ModelRef key -> the files its build read


@dataclass(frozen=True)
class ModelRef:
    """What travels to a worker: the model's declaration as a picklable callable returning a Mechanism (a
    module-level build function, or the command line registry's mechsym.app.registry.Model), and the
    backend. `system()` derives it once per process; on the C backend the library is loaded from the
    content-keyed cache (compiled there by the first process that needed it)."""

    source: object
    backend: str | None = None  # a backend's name; None: the default (mechsym.codegen.backend)
    derived: bool = True  # False: the study needs only the declaration (system() returns the Mechanism)

    def loaded(self) -> bool:
        """Whether this process has made the model already."""
        return (self.source, self.backend, self.derived) in _SYSTEMS

    def system(self):
        """The derived System (or the Mechanism when not derived), made once per process."""
        key = (self.source, self.backend, self.derived)
        if key not in _SYSTEMS:
            import warnings

            from mechsym.core.derived import derive
            from mechsym.studies.sweep_warm import watch

            with watch() as read:  # the files the build reads, for a worker's warm start (sweep_warm)
                mech = self.source()
            _READ[key] = read
            if not self.derived:
                _SYSTEMS[key] = mech
                return mech
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                _SYSTEMS[key] = derive(mech, backend=self.backend)
        return _SYSTEMS[key]


def evaluate(model: ModelRef, study, sets) -> list:
    """One task: the study at each parameter set of `sets`, in order; per set (figures, "") or (None,
    the one-line error). A study with a `batch(system, sets)` method evaluates the sets together where
    it can (see TableStudy.batch). Runs in the worker."""
    import warnings

    from mechsym.core.progress import quiet

    with warnings.catch_warnings(), np.errstate(all="ignore"), quiet():
        warnings.simplefilter("ignore", RuntimeWarning)
        outcomes = None
        if isinstance(model, ModelRef) and not model.loaded():  # a worker's warm start: no derivation
            from mechsym.studies import sweep_warm

            outcomes = sweep_warm.batch(model, study, [dict(s) for s in sets])
        rest = list(range(len(sets))) if outcomes is None else [k for k, o in enumerate(outcomes) if o is None]
        if rest:
            outcomes = outcomes or [None] * len(sets)
            system = model.system()
            batch = getattr(study, "batch", None)
            found = batch(system, [dict(sets[k]) for k in rest]) if batch is not None else None
            for j, k in enumerate(rest):
                if found is not None:
                    outcomes[k] = found[j]
                    continue
                try:
                    outcomes[k] = study(system, dict(sets[k]))
                except _SET_ERRORS as exc:
                    outcomes[k] = exc
    return [_row(outcome) for outcome in outcomes]


_SET_ERRORS = (InputError, ArithmeticError, np.linalg.LinAlgError)  # a set that cannot be evaluated


def _row(outcome):
    """(figures, "") of a set's figures, or (None, the one-line error) of its exception or of a
    non-finite figure."""
    if isinstance(outcome, InputError):
        return None, _one_line(outcome)
    if isinstance(outcome, Exception):
        return None, _one_line(f"{type(outcome).__name__}: {outcome}")
    figures = {k: float(v) for k, v in outcome.items()}
    bad = [k for k, v in figures.items() if not math.isfinite(v)]
    if bad:
        return None, f"figure '{bad[0]}' is not finite"
    return figures, ""


def _one_line(message) -> str:
    return " ".join(str(message).split())


# -- the sweep -----------------------------------------------------------------------------------------
def sweep(model, sets, study, *, backend=None, executor=None, workers=None, chunk=None, retries=2,
          max_sets=MAX_SETS, progress=None, out=None, resume=False):
    """Evaluate `study` (f(system, params) -> {name: number}) at every parameter set; a Table in the
    sets' order: the parameter columns, the study's figures, `status` (ok or error) and `message`.

    model: a picklable callable returning a Mechanism (what a worker receives: a model module's `build`,
    or mechsym.app.registry.find(NAME) for a shipped model or a model file by name); a derived System
    also works without an executor. sets: a list of dicts (name -> value), a dict of axes (name ->
    values) or a `Grid` for their grid (generated lazily: a task carries its range of the grid, never the
    sets themselves). executor: any concurrent.futures.Executor (a ProcessPoolExecutor, a
    dask.distributed Client's get_executor()); workers=N instead runs a process pool of N that this call
    owns (and restarts if a worker dies). chunk: sets per task (default on an executor: as many as last
    about TASK_SECONDS, from the cost per set measured on the first tasks; SERIAL_CHUNK on one core).
    retries: how often a task lost with its worker is submitted again. progress: a tqdm bar on stderr
    (None: only when stderr is a terminal).

    out: a file (CSV, or Parquet for a .parquet name) to stream the rows into instead of returning them
    (mechsym.studies.sweep_stream: PATH.part grows as tasks finish, PATH is written in grid order at the
    end; the study must name its figures, `names`); returns a `Streamed` summary. After an interruption
    the .part stays, and resume=True computes only the sets it lacks."""
    import sys

    count = math.prod(len(v) for v in sets.values()) if isinstance(sets, dict) else len(sets)
    if count > max_sets:  # before the grid is built
        raise InputError(f"the sweep has {count} parameter sets, more than max_sets = {max_sets} (raise max_sets, "
                         "or --max-sets on the command line)")
    if isinstance(sets, dict):
        sets = grid(sets)
    elif not isinstance(sets, Grid):
        sets = [dict(s) for s in sets]
    if not len(sets):
        raise InputError("no parameter sets to sweep")
    names = list(sets[0])
    if isinstance(sets, list) and any(list(s) != names for s in sets):
        raise InputError("every parameter set must name the same parameters in the same order")
    figure_names = getattr(study, "names", None)
    if out is not None and figure_names is None:
        raise InputError("a sweep streamed to a file needs a study that names its figures (`names`)")
    parallel = executor is not None or bool(workers)
    if chunk is not None and int(chunk) < 1:
        raise InputError(f"chunk must be at least 1, got {chunk}")
    if isinstance(model, str):
        raise InputError(f"model '{model}': give its build function (a name is found by "
                         "mechsym.app.registry.find), or a derived System")
    derived = sys.modules.get("mechsym.planar.system")  # (not imported for a warm start: it loads sympy)
    if derived is not None and isinstance(model, derived.System):
        if parallel:
            raise InputError("a derived System does not travel to workers: pass the model's build function")
        system, ref, worker_ref = model, None, _Local(model)
    else:
        from mechsym.studies import sweep_warm

        ref = ModelRef(model, backend, getattr(study, "needs_system", True))
        system = None if ref.loaded() else sweep_warm.parent_model(ref, study)  # the manifest: no derivation
        worker_ref = ref
        if system is None:
            system = ref.system()  # derived (and compiled into the cache) here, before any task leaves
            worker_ref = ref if parallel else _Local(system)
            sweep_warm.record(ref, study, system, _READ.get((ref.source, ref.backend, ref.derived), ()))
    mech = getattr(system, "mechanism", system)
    mech.resolve_parameters(dict(sets[0]))  # unknown parameter names: bad input, up front
    prepare = getattr(study, "prepare", None)
    if prepare is not None:
        prepare(system)
    width = (workers or _width(executor)) if parallel else 1

    def run(runs, task, accept, lost):
        tasks = _Tasks(runs, int(chunk) if chunk else (None if parallel else SERIAL_CHUNK), width)
        if parallel:
            _parallel(tasks, task, accept, lost, executor, workers, retries, progress)
        else:
            _serial(tasks, task, accept, progress)

    if out is None:
        results = {}
        run([(0, len(sets))], lambda lo, hi: (evaluate, worker_ref, study, sets[lo:hi]), results.__setitem__,
            lambda lo, hi, message: results.__setitem__(lo, [(None, message)] * (hi - lo)))
        rows = [row for lo in sorted(results) for row in results[lo]]
        return _table(names, sets, rows, figure_names, mech)
    return _stream(out, resume, run, worker_ref, model, backend, study, sets, names, list(figure_names), mech)


SERIAL_CHUNK = 256  # sets per task on one core
TASK_SECONDS = 1.0  # a parallel task's length: far above an executor's overhead per task (about 1 ms),
#                     short enough that the rows reach the disk as the sweep goes and a lost task costs little
PROBE = 4  # sets of each first task at most, from which the cost per set is measured


class _Tasks:
    """The sets still to compute (runs (lo, hi) of indices, in order), cut into tasks as they are submitted:
    of `size` sets if given; otherwise the first tasks of PROBE sets, then of as many sets as last about
    TASK_SECONDS at the cost per set measured so far (`measured`: the least cost per set of any task, which
    a worker's start-up does not inflate), and never more than a share of what remains per worker, so that
    the workers finish together (an expensive study's few sets are spread over every worker)."""

    def __init__(self, runs, size, width):
        self.runs = [(lo, hi) for lo, hi in runs if hi > lo][::-1]
        self.size, self.width = size, width
        self.left = sum(hi - lo for lo, hi in self.runs)
        self.total, self.cost, self.taken = self.left, None, 0

    def __bool__(self):
        return self.left > 0

    def take(self) -> tuple:
        """The next task's (lo, hi)."""
        if self.size:
            n = self.size
        else:
            n = max(1, min(PROBE if self.cost is None else int(TASK_SECONDS / self.cost),
                           math.ceil(self.left / self.width)))
        lo, hi = self.runs.pop()
        if hi - lo > n:
            self.runs.append((lo + n, hi))
            hi = lo + n
        self.left -= hi - lo
        self.taken += 1
        return lo, hi

    def measured(self, sets, seconds):
        """A task of `sets` sets took `seconds` in its worker."""
        if sets and seconds > 0:
            self.cost = min(self.cost or math.inf, seconds / sets)


@dataclass(frozen=True)
class Streamed:
    """What a sweep streamed to a file returns: the file, its number of sets, how many failed and the first
    failure's message."""

    path: str
    sets: int
    failed: int
    first_failure: str


def _stream(out, resume, run, worker_ref, model, backend, study, sets, names, figure_names, mech):
    """`sweep` with its rows streamed into out (see mechsym.studies.sweep_stream)."""
    import sys

    from mechsym.studies.sweep_stream import RowFile, csv_rows

    header = [*names, *figure_names, "status", "message"]
    rows = RowFile(out, _digest(model, backend, study, sets), header, len(sets), resume)
    def accept(lo, found):
        rows.write(*found)

    def lost(lo, hi, message):
        rows.write(csv_rows(sets[lo:hi], lo, [(None, message)] * (hi - lo), names, figure_names), hi - lo, message)

    try:
        run(_runs(~rows.done), lambda lo, hi: (evaluate_csv, worker_ref, study, sets[lo:hi], lo, names,
                                               figure_names), accept, lost)
    except BaseException:
        rows.close()
        print(f"note: the sweep stopped; the rows of its finished sets are in {rows.part}: run it again with "
              "--resume (resume=True) to compute only the rest", file=sys.stderr)
        raise
    units = {n: mech.parameters[n].unit for n in names if n in mech.parameters}
    failed = rows.finish(units, f"{mech.name}: sweep")
    return Streamed(os.fspath(out), len(sets), failed, rows.first_failure)


def _runs(mask) -> list:
    """(lo, hi) of each run of True in the boolean array `mask`."""
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(np.int8), 0]))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def _digest(model, backend, study, sets) -> str:
    """A key of what a streamed sweep computes (model, backend, study, parameter sets), written into its
    .part so that a resumed run continues only the same sweep; the backend by the name it resolves to (the
    default and its name are one sweep)."""
    import hashlib

    from mechsym.codegen.backend import resolve

    what = sets.axes if isinstance(sets, Grid) else sets
    name = resolve(backend, quiet=True).name
    return hashlib.sha256(repr((_identity(model), name, study, what)).encode()).hexdigest()[:32]


def _identity(model) -> tuple:
    """What names a model across processes and runs: the file that declares it (its resolved path and its
    SHA-256, so an edited model is another sweep) and the build function's qualified name (empty for a
    registry model, whose file holds one declaration); a callable without a file by its repr."""
    from mechsym.studies.sweep_warm import _sha, model_file

    path = model_file(model)
    if path is None:
        return (repr(model),)
    path = path.resolve()
    return str(path), _sha(path), getattr(model, "__qualname__", "")


def evaluate_csv(model, study, sets, first, names, figure_names):
    """One task of a streamed sweep: `evaluate`'s rows as CSV text (mechsym.studies.sweep_stream.csv_rows, set
    indices from `first`), with the number of failed sets and the first failure's message. Runs in the
    worker, so that the calling process only appends the text."""
    from mechsym.studies.sweep_stream import csv_rows

    rows = evaluate(model, study, sets)
    failures = [message for found, message in rows if found is None]
    return csv_rows(sets, first, rows, names, figure_names), len(failures), (failures or [""])[0]


def _serial(tasks, task, accept, progress):
    """The tasks one after the other in this process (a chunk at a time, so a batched study batches);
    accept(lo, result) takes each."""
    with _bar(tasks.left, progress) as bar:
        while tasks:
            lo, hi = tasks.take()
            fn, *args = task(lo, hi)
            accept(lo, fn(*args))
            bar.update(hi - lo)


@dataclass(frozen=True)
class _Local:
    """A System already at hand (the serial route)."""

    held: object

    def system(self):
        return self.held


def _width(executor) -> int:
    """How many tasks the executor runs at once: a pool's workers, a dask cluster's threads (else 2)."""
    width = getattr(executor, "_max_workers", None)
    client = getattr(executor, "_client", None)  # a dask.distributed ClientExecutor
    if width is None and client is not None:
        try:
            width = sum(client.nthreads().values())
        except Exception:  # a client that cannot say: the default
            width = None
    return max(int(width or 2), 1)


def _timed(fn, *args):
    """fn(*args) and the seconds it took (in the worker): what task sizes are chosen from."""
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def _parallel(tasks, task, accept, lost, executor, workers, retries, progress):
    """Run the tasks (`_Tasks`, cut as they are submitted; `task(lo, hi)` -> (function, *arguments)) on the
    executor (or on a pool of `workers` processes owned here), at most twice as many in flight as the
    executor runs at once, handing each result to `accept(lo, result)` as it arrives. A task lost with its
    worker is submitted again, at most `retries` times, then given up (`lost(lo, hi, message)`). A process
    pool fails every task in flight when one worker dies, so after such a break the tasks then in flight
    are run again one at a time: only a task that breaks the pool on its own is charged an attempt."""
    owned = executor is None
    pool = cf.ProcessPoolExecutor(workers) if owned else executor
    window = 2 * tasks.width
    spans, attempts, suspects = {}, {}, []
    pending = {}  # future -> (task index, submitted alone)
    try:
        with _bar(tasks.left, progress) as bar:
            def submit(i, alone=False):
                fn, *args = task(*spans[i])
                pending[pool.submit(_timed, fn, *args)] = (i, alone)

            def give_up(i, failure):
                lo, hi = spans[i]
                lost(lo, hi, _one_line(f"task lost {attempts[i]} times: {type(failure).__name__}: {failure}"))
                bar.update(hi - lo)

            while tasks or suspects or pending:
                if suspects:
                    if not pending:
                        submit(suspects.pop(0), alone=True)
                else:
                    while tasks and len(pending) < window:
                        i = tasks.taken
                        spans[i], attempts[i] = tasks.take(), 0
                        submit(i)
                done, _ = cf.wait(list(pending), return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    if fut not in pending:  # failed with a pool already restarted
                        continue
                    i, alone = pending.pop(fut)
                    try:
                        result, seconds = fut.result()
                    except Exception as exc:
                        if not _lost(exc):  # the study itself failed (not with InputError): as on one core
                            raise
                        failure = exc
                    else:
                        lo, hi = spans.pop(i)
                        tasks.measured(hi - lo, seconds)
                        accept(lo, result)
                        bar.update(hi - lo)
                        continue
                    if isinstance(failure, cf.BrokenExecutor):
                        if not owned:
                            raise RuntimeError("the process pool broke (a worker died); pass workers=N for a pool "
                                               "that the sweep restarts, or a dask.distributed executor") from failure
                        in_flight = [j for j, _ in pending.values()]
                        pending.clear()
                        pool.shutdown(wait=False, cancel_futures=True)
                        pool = cf.ProcessPoolExecutor(workers)
                        suspects += in_flight
                        if not alone:  # not known to be this task's fault
                            suspects.append(i)
                            continue
                    attempts[i] += 1  # this task lost its worker on its own
                    if attempts[i] > retries:
                        give_up(i, failure)
                    elif isinstance(failure, cf.BrokenExecutor):
                        suspects.append(i)
                    else:
                        submit(i)
    except BaseException:  # an error or Ctrl-C: the owned workers end now, not after their tasks
        if owned:
            _terminate(pool)
        else:
            for fut in pending:
                fut.cancel()
        raise
    if owned:
        pool.shutdown(wait=True)


def _terminate(pool, grace=1.0):
    """End the worker processes of a pool this sweep started, and the pool: SIGTERM, then SIGKILL for a
    worker still there after `grace` seconds. The tasks not yet sent stay unsent: the queue's feeder thread
    is not waited for at exit (it would block for ever on a pipe no worker reads). The pool's manager marks
    the futures left as broken (they are not cancelled here: Python 3.11's manager fails on a cancelled one)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        process.terminate()
    call_queue = getattr(pool, "_call_queue", None)
    if call_queue is not None:
        call_queue.cancel_join_thread()
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join(grace)
    pool.shutdown(wait=False)


def _lost(exc) -> bool:
    """Whether a task's exception means its worker was lost (a dead process, a broken pool, a closed
    connection, a cancelled or killed task) rather than an error of the study itself."""
    if isinstance(exc, (cf.BrokenExecutor, cf.CancelledError, EOFError, ConnectionError)):
        return True
    return type(exc).__name__ in ("KilledWorker", "CommClosedError", "FutureCancelledError", "StreamClosedError")


def _bar(total, progress):
    from mechsym.core.progress import bar

    return bar(total, "sweep", "set", progress)


def _table(names, sets, rows, study_names, mech) -> Table:
    figure_names = list(study_names or [])
    for figures, _ in rows:
        for k in figures or ():
            if k not in figure_names:
                figure_names.append(k)
    cols = {n: sets.column(n) if isinstance(sets, Grid) else np.array([s[n] for s in sets], float) for n in names}
    for k in figure_names:
        cols[k] = np.array([f.get(k, np.nan) if f is not None else np.nan for f, _ in rows], float)
    cols["status"] = np.array(["ok" if f is not None else "error" for f, _ in rows], dtype=object)
    cols["message"] = np.array([m for _, m in rows], dtype=object)
    units = {n: mech.parameters[n].unit for n in names if n in mech.parameters}
    return Table(cols, {k: v for k, v in units.items() if v}, f"{mech.name}: sweep")


def plot(table: Table, path, parameters, figures=None):
    """A sweep's figures: a line per figure against the one swept parameter, or a heat map per figure
    over two. Failed sets leave gaps. Returns the matplotlib Figure (also saved to `path` if given)."""
    import matplotlib

    from mechsym.core.plotting import headless

    headless(matplotlib)
    import matplotlib.pyplot as plt

    figures = figures or [n for n in table.names if n not in parameters and n not in ("status", "message")]
    varying = [p for p in parameters if len(np.unique(table[p])) > 1] or list(parameters[:1])
    if len(varying) > 2:
        raise InputError(f"a sweep plot shows one or two varying parameters, not {len(varying)} "
                         f"({', '.join(varying)})")
    if not figures:
        raise InputError("the sweep has no figures to plot (every set failed)")
    if len(varying) == 1:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        x = np.asarray(table[varying[0]])
        for name in figures:
            ax.plot(x, table[name], "o-", label=name)
        ax.set_xlabel(_label(varying[0], table.units))
        ax.legend(fontsize=8)
        ax.grid(True, alpha=0.3)
    else:
        px, py = varying
        xs, ys = np.unique(table[px]), np.unique(table[py])
        fig, axes = plt.subplots(1, len(figures), figsize=(5.2 * len(figures), 4.2), squeeze=False)
        ix, iy = np.searchsorted(xs, table[px]), np.searchsorted(ys, table[py])
        for ax, name in zip(axes[0], figures):
            z = np.full((len(ys), len(xs)), np.nan)
            z[iy, ix] = table[name]
            mesh = ax.pcolormesh(xs, ys, np.ma.masked_invalid(z), shading="nearest")
            fig.colorbar(mesh, ax=ax, label=name)
            ax.set_xlabel(_label(px, table.units))
            ax.set_ylabel(_label(py, table.units))
    fig.suptitle(table.title)
    fig.tight_layout()
    if path:
        from mechsym.core.output import save_figure

        save_figure(fig, path, dpi=120)
    return fig


def _label(name, units):
    return f"{name} [{units[name]}]" if units.get(name) else name
