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

One chunk is one task, of about a second of work (mechsym.studies.sweep_run.Tasks): the sets of a chunk are
evaluated together where the study can (TableStudy.batch: on the C backend the sets of an inverse, kinematics
or forward analysis go into one compiled call, each set assembled and continued to its start in C,
mechsym.studies.sweep_sets), else one after the other, each as one vectorised call over its samples. A set
that fails (a geometry that cannot assemble, a singular system, a non-finite figure) is reported in its own
row (`status` error, its `message`, its figures empty) and the others are kept; a task lost with its worker
is submitted again (`retries`), and since a task is a pure function of
its arguments a retried task gives the same answer. Rows come back in grid order, in a Table, or streamed
into a file as tasks finish (`out`, mechsym.studies.sweep_stream).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.results import Table
from mechsym.studies.sweep_grid import Grid, grid
from mechsym.studies import sweep_run
from mechsym.studies.sweep_rows import Rows, concatenated
from mechsym.studies.sweep_run import SERIAL_CHUNK, Tasks, executor_width
from mechsym.studies.sweep_sets import SET_ERRORS

MAX_SETS = 1_000_000  # a larger grid is refused up front (max_sets= or --max-sets lifts it)


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


def evaluate(model: ModelRef, study, sets) -> Rows:
    """One task: the study at each parameter set of `sets` (a list of dicts or a Grid's range), in order, as
    `Rows` (per set its figures, or the one-line error). A study with a `batch(system, sets)` method
    evaluates the sets together where it can (see TableStudy.batch; a set its batch leaves is evaluated
    alone). Runs in the worker."""
    import warnings

    from mechsym.core.progress import quiet

    rows = Rows(len(sets), getattr(study, "names", None) or ())
    with warnings.catch_warnings(), np.errstate(all="ignore"), quiet():
        warnings.simplefilter("ignore", RuntimeWarning)
        if isinstance(model, ModelRef) and not model.loaded():  # a worker's warm start: no derivation
            from mechsym.studies import sweep_warm

            found = sweep_warm.batch(model, study, sets)
            if found is not None:
                rows.merge(np.arange(len(sets)), found)
        rest = rows.pending()
        if len(rest):
            system = model.system()
            batch = getattr(study, "batch", None)
            part = [sets[int(k)] for k in rest] if len(rest) < len(sets) else sets
            found = batch(system, part) if batch is not None else None
            if found is not None:
                rows.merge(rest, found)
            for k in rows.pending():
                try:
                    rows.put(int(k), study(system, dict(sets[int(k)])))
                except SET_ERRORS as exc:
                    rows.put(int(k), exc)
    return rows


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
    width = (workers or executor_width(executor)) if parallel else 1

    def run(runs, task, accept, lost):
        tasks = Tasks(runs, int(chunk) if chunk else (None if parallel else SERIAL_CHUNK), width)
        if parallel:
            sweep_run.parallel(tasks, task, accept, lost, executor, workers, retries, progress)
        else:
            sweep_run.serial(tasks, task, accept, progress)

    if out is None:
        results = {}
        run([(0, len(sets))], lambda lo, hi: (evaluate, worker_ref, study, sets[lo:hi]), results.__setitem__,
            lambda lo, hi, message: results.__setitem__(lo, Rows.failed(hi - lo, message)))
        rows = concatenated([results[lo] for lo in sorted(results)], figure_names or ())
        return _table(names, sets, rows, mech)
    return _stream(out, resume, run, worker_ref, model, backend, study, sets, names, list(figure_names), mech)


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
        rows.write(csv_rows(sets[lo:hi], lo, Rows.failed(hi - lo, message), names, figure_names), hi - lo, message)

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
    failed = np.flatnonzero(~rows.ok)
    return csv_rows(sets, first, rows, names, figure_names), len(failed), rows.messages[failed[0]] if len(failed) else ""


@dataclass(frozen=True)
class _Local:
    """A System already at hand (the serial route)."""

    held: object

    def system(self):
        return self.held


def _table(names, sets, rows: Rows, mech) -> Table:
    cols = {n: sets.column(n) if isinstance(sets, Grid) else np.array([s[n] for s in sets], float) for n in names}
    cols.update(rows.figures)
    cols["status"] = np.where(rows.ok, "ok", "error").astype(object)
    cols["message"] = np.array(rows.messages, dtype=object)
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
