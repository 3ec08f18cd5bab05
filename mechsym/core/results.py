"""Results: named columns of samples with units, written as CSV and drawn with matplotlib."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.output import atomic, save_figure


@dataclass
class Table:
    """Columns of equal length, in order; `units` maps a column name to its SI unit; `sweep` names the
    columns that the analysis stacked its rows by (an inverse at several speeds: `omega`), so that a plot
    draws one line per value of them."""

    columns: dict
    units: dict = field(default_factory=dict)
    title: str = ""
    sweep: tuple = ()

    def __getitem__(self, name):
        return self.columns[name]

    def __contains__(self, name):
        return name in self.columns

    @property
    def names(self):
        """The column names, in order."""
        return list(self.columns)

    def __len__(self):
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def to_csv(self, path):
        """One header row, one row per sample, plain decimal numbers (the shortest text that reads back to
        the same value, `csv_number`), written atomically. A non-finite value is refused, naming its column
        and row: a CSV never holds NaN or inf. A table with text columns (a sweep's `status` and `message`) is written with quoting where a text
        needs it; there a missing figure of a failed row (status other than ok: NaN) is an empty field."""
        text = self.text_columns()
        numeric = [n for n in self.columns if n not in text]
        data = np.column_stack([np.asarray(self.columns[n], float) for n in numeric]) if numeric \
            else np.zeros((len(self), 0))
        bad = ~np.isfinite(data)
        if "status" in text:  # a failed row's figures are missing, not wrong
            bad &= ~((np.asarray(self.columns["status"]) != "ok")[:, None] & np.isnan(data))
        if bad.any():
            row, col = (int(i[0]) for i in np.nonzero(bad))
            raise InputError(f"{self.title or 'the result'}: {numeric[col]} is {data[row, col]} at row {row + 1} "
                             f"({int(bad.sum())} non-finite values); nothing written to '{path}'")
        with atomic(path) as tmp, open(tmp, "w", newline="") as fh:
            write_csv(fh, self.columns)

    def text_columns(self) -> list:
        """Names of the columns that hold text, not numbers."""
        return [n for n, v in self.columns.items() if np.asarray(v).dtype.kind in "OUS"]

    def to_pandas(self):
        """A pandas DataFrame with the same columns in the same order (units in `DataFrame.attrs`)."""
        import pandas as pd

        frame = pd.DataFrame({n: np.asarray(v) for n, v in self.columns.items()})
        frame.attrs["units"], frame.attrs["title"] = dict(self.units), self.title
        return frame

    def _repr_html_(self, max_rows=20):
        """An HTML table for notebooks: the header with units, the first and last rows of a long table."""
        from html import escape

        n = len(self)
        rows = list(range(n)) if n <= max_rows else [*range(max_rows // 2), None, *range(n - max_rows // 2, n)]
        head = "".join(f"<th>{escape(_label(k, self.units))}</th>" for k in self.columns)
        body = []
        for i in rows:
            if i is None:
                body.append(f"<tr><td colspan='{len(self.columns)}'>... {n - max_rows} more rows ...</td></tr>")
                continue
            body.append("<tr>" + "".join(f"<td>{escape(_cell(v[i]))}</td>" for v in self.columns.values()) + "</tr>")
        caption = f"<caption>{escape(self.title)} ({n} rows)</caption>" if self.title else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"

    def plot(self, path, x, ys, ylabel=None, title=None, groups=None):
        """Draw columns `ys` against column `x`, into an image file `path` (PNG or SVG) if given: one line
        per column and per distinct value of the `groups` columns (a name or names; by default the table's
        `sweep`, e.g. one line per speed), with a legend. Returns the matplotlib Figure."""
        import matplotlib

        from mechsym.core.plotting import headless

        headless(matplotlib)
        import matplotlib.pyplot as plt

        if groups is None:  # the sweep's columns that the table still has (a quasi-static inverse drops omega)
            groups = [g for g in self.sweep if g in self.columns]
        groups = [groups] if isinstance(groups, str) else list(groups)
        fig, ax = plt.subplots(figsize=(7, 4.2))
        x_values = np.asarray(self.columns[x])
        keys = np.column_stack([np.asarray(self.columns[g], float) for g in groups]) if groups \
            else np.zeros((len(x_values), 0))
        for y in ys:
            y_values = np.asarray(self.columns[y])
            for key in np.unique(keys, axis=0):  # one line per set of the groups' values (e.g. per speed)
                sel = np.all(keys == key, axis=1)
                named = [f"{g} = {v:g}{' ' + self.units[g] if g in self.units else ''}" for g, v in zip(groups, key)]
                ax.plot(x_values[sel], y_values[sel], label=", ".join([y, *named]))
        ax.set_xlabel(_label(x, self.units))
        ax.set_ylabel(ylabel or _label(ys[0], self.units))
        if len(ys) > 1 or groups:
            ax.legend(fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.set_title(title or self.title)
        fig.tight_layout()
        if path:
            save_figure(fig, path, dpi=120)
        return fig


@dataclass(frozen=True)
class RunEvent:
    """An event of a run: at time `t` the event `name` happened with the state `state` (the integrator's
    state vector there, None where the route does not give it)."""

    t: float
    name: str
    state: np.ndarray | None = None


@dataclass
class RunResult(Table):
    """What every time runner returns: the table on the output grid (names and units), and the run itself.

    events: objects with `t`, `name` and `state` (RunEvent, or a runner's own richer event), sorted by
    time; nfev: right-hand side evaluations; solution: the dense output, a callable t -> states
    (n_states, len(t)) with t_min and t_max (scipy's OdeSolution, or a DenseSolution from the C integrator),
    where the integrator gives one (else None); status: "done" (the requested end
    was reached) or "stopped" (a terminal event or transition ended the run); message: why it stopped
    (empty when done); stats: the runner's counters (wall time, steps, switches, ...)."""

    events: list = field(default_factory=list)
    nfev: int = 0
    solution: object = None
    status: str = "done"
    message: str = ""
    stats: dict = field(default_factory=dict)

    def __post_init__(self):
        self.events = sorted(self.events, key=lambda e: e.t)

    def view(self, system, path=None, **options):
        """The run replayed in the browser by the system that made it (`system.view(path, table=self,
        ...)`: a planar System's linkage, a TreeSystem's bodies with the contact forces; docs/view.md)."""
        return system.view(path, self, **options)

    def events_named(self, name) -> list:
        """The events called `name`, in time order."""
        return [e for e in self.events if e.name == name]


class DenseSolution:
    """The dense output of a run that DOP853 integrated outside scipy (the C integrator), with the interface
    of scipy's OdeSolution: called on a scalar t it gives the states (n_states,), on an array of t
    (n_states, len(t)); t_min and t_max bound the run, ts holds its breakpoints.

    Each accepted step from t_old of size h keeps the state y_old there and the interpolant's coefficients
    F (7, n_states): y(t) = y_old + F0 x + F1 x (1 - x) + F2 x^2 (1 - x) + ..., x = (t - t_old) / h, summed
    in the order of scipy's Dop853DenseOutput. As scipy's OdeSolution, a time on a breakpoint takes the
    step that ends there, and a time outside [t_min, t_max] the first or last step's polynomial. Every
    sample is evaluated at once (the steps' coefficients gathered, seven vector terms)."""

    def __init__(self, t_old, h, y_old, F, t_max):
        t_old, h = np.asarray(t_old, float), np.asarray(h, float)
        if not (len(t_old) and np.all(np.diff(t_old) > 0) and t_old[-1] < t_max):
            raise ValueError("a dense solution needs steps with increasing start times before its end")
        self.t_old, self.h = t_old, h
        self.y_old, self.F = np.asarray(y_old, float), np.asarray(F, float)
        self.ts = np.append(t_old, float(t_max))
        self.t_min, self.t_max = float(t_old[0]), float(t_max)
        self.n_segments = len(t_old)

    def __call__(self, t):
        t = np.asarray(t, float)
        step = np.clip(np.searchsorted(self.ts, t, side="left") - 1, 0, self.n_segments - 1)
        x = ((t - self.t_old[step]) / self.h[step])[..., None]
        coef = self.F[step]
        y = np.zeros(t.shape + self.y_old.shape[1:])
        for i in range(coef.shape[-2]):  # Horner's scheme from the highest term, as scipy's
            y += coef[..., -1 - i, :]
            y *= x if i % 2 == 0 else 1.0 - x
        y += self.y_old[step]
        return y.T


def ivp_result(sol, events, columns, units, title) -> RunResult:
    """The RunResult of one solve_ivp run: its events (by function name, with the state), nfev, the dense
    output, and "stopped" where a terminal event ended it."""
    names = [getattr(e, "__name__", f"event{i}") for i, e in enumerate(events)]
    found = [RunEvent(float(t), names[i], np.array(y)) for i, (ts, ys) in
             enumerate(zip(sol.t_events or [], sol.y_events or [])) for t, y in zip(ts, ys)]
    stopped = sol.status == 1
    message = f"stopped by {max(found, key=lambda e: e.t).name} at t = {sol.t[-1]:.9g}" if stopped else ""
    return RunResult(columns, units, title, events=found, nfev=int(sol.nfev), solution=sol.sol,
                     status="stopped" if stopped else "done", message=message)


def speed_columns(basis, coef) -> list:
    """The columns U = coef[s, 0] basis[:, i, 0] + coef[s, 1] basis[:, i, 1] + coef[s, 2] basis[:, i, 2] of an
    inverse analysis, rows stacked speed by speed: basis (N, m, 3) holds each unknown per unit acceleration,
    per unit speed squared and for the static loads, coef (S, 3) one row per speed. One matrix product
    over the whole basis (read once), then one contiguous column per unknown."""
    n, m = basis.shape[:2]
    u = (np.ascontiguousarray(basis).reshape(n * m, 3) @ np.asarray(coef, float).T).reshape(n, m, -1)
    return [np.ascontiguousarray(u[:, i, :].T).ravel() for i in range(m)]


def read_csv(path) -> Table:
    """A CSV that mechsym wrote, back as a Table: numeric columns as float arrays (an empty field as
    NaN), the text columns `status` and `message` as arrays of str."""
    with open(path) as fh:
        header = fh.readline().strip().split(",")
    if not TEXT_COLUMNS & set(header):
        data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
        return Table({h: data[:, i] for i, h in enumerate(header)})
    import csv

    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    cols = {}
    for i, h in enumerate(header):
        values = [r[i] for r in rows]
        cols[h] = np.array(values, dtype=str) if h in TEXT_COLUMNS else \
            np.array([float(v) if v else np.nan for v in values])
    return Table(cols)


TEXT_COLUMNS = {"status", "message"}  # the only text columns a mechsym CSV has (a sweep's)


def _cell(value) -> str:
    if isinstance(value, str):
        return value
    value = float(value)
    return "" if np.isnan(value) else f"{value:.6g}"


def csv_number(value) -> str:
    """A number as every mechsym CSV writes it: the shortest decimal text that reads back to the same double
    (Python's repr: 0.03, not 0.029999999999999999), an integer as an integer, NaN (a failed row's missing
    figure) as an empty field."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(int(value))
    value = float(value)
    return "" if value != value else repr(value)


def write_csv(fh, columns):
    """Write named columns to an open text file: one header row, numbers by `csv_number`, text quoted where
    it needs to be."""
    import csv

    out = csv.writer(fh, lineterminator="\n")
    out.writerow(list(columns))
    cells = []
    for values in columns.values():
        values = np.asarray(values)
        cells.append(values.tolist() if values.dtype.kind in "OUS" else [csv_number(v) for v in values.tolist()])
    out.writerows(zip(*cells))


def _label(name, units):
    unit = units.get(name)
    return f"{name} [{unit}]" if unit else name

