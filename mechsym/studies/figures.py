"""A parameter set's figures: the reductions of a table to numbers (FUNC:COLUMN), and what the batched
inverse of a sweep (mechsym.studies.sweep_sets.inverse_rows, which the workers' warm start runs too) needs
to make them: the figures of many sets from their inverse bases at once, and the negative-mass check."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.results import Table

REDUCERS = {  # each over the last axis: one table's column, or the same column of many sets at once
    "max": lambda v: np.max(v, axis=-1),
    "min": lambda v: np.min(v, axis=-1),
    "mean": lambda v: np.mean(v, axis=-1),
    "rms": lambda v: np.sqrt(np.mean(np.square(v), axis=-1)),
    "ptp": lambda v: np.ptp(v, axis=-1),
    "absmax": lambda v: np.max(np.abs(v), axis=-1),
    "final": lambda v: v[..., -1],
}


@dataclass(frozen=True)
class Reduction:
    """One figure of a table: FUNC (max, min, mean, rms, ptp, absmax, final) of a column, named FUNC_COLUMN."""

    func: str
    column: str

    @classmethod
    def parse(cls, text: str) -> "Reduction":
        """From 'FUNC:COLUMN'."""
        func, sep, column = str(text).partition(":")
        if not sep or not column:
            raise InputError(f"expected FUNC:COLUMN (e.g. absmax:torque), got '{text}'")
        if func not in REDUCERS:
            raise InputError(f"unknown reduction '{func}' (one of {', '.join(REDUCERS)})")
        return cls(func, column)

    @property
    def name(self) -> str:
        """The figure's column name, FUNC_COLUMN."""
        return f"{self.func}_{self.column}"

    def __call__(self, table: Table) -> float:
        if self.column not in table:
            raise InputError(f"no column '{self.column}' to reduce (columns: {', '.join(table.names)})")
        values = np.asarray(table[self.column], float)
        if values.size == 0:
            raise InputError(f"column '{self.column}' is empty")
        return float(self.reduce(values))

    def reduce(self, values) -> np.ndarray:
        """The figure of each row of `values` (..., N): the column of many tables at once."""
        return REDUCERS[self.func](values)


def speeds_apart(omegas, quasi_static=False) -> tuple:
    """The speeds whose figures an inverse analysis reports apart: with two or more speeds, one figure per
    speed (not one over every speed's rows); none for one speed or a quasi-static analysis."""
    speeds = () if quasi_static or omegas is None else tuple(dict.fromkeys(float(w) for w in np.ravel(omegas)))
    return speeds if len(speeds) > 1 else ()


def figure_names(reductions, speeds=()) -> list:
    """The figures' column names: FUNC_COLUMN, or FUNC_COLUMN@omega=W per speed of `speeds`."""
    if not speeds:
        return [r.name for r in reductions]
    return [f"{r.name}@omega={w:.12g}" for w in speeds for r in reductions]


def reduce_table(table, reductions, speeds=()) -> dict:
    """A table's figures (`figure_names`): each reduction over the whole table, or over each speed's rows."""
    if not speeds:
        return {r.name: r(table) for r in reductions}
    omega = np.asarray(table["omega"], float)
    figures = {}
    for w in speeds:
        rows = Table({n: np.asarray(v)[omega == w] for n, v in table.columns.items()}, table.units)
        figures.update({f"{r.name}@omega={w:.12g}": r(rows) for r in reductions})
    return figures


def inverse_figures(coordinate, theta, omegas, quasi_static, coef, names, basis, reductions) -> dict:
    """The figures (name -> (S,)) of S sets from their inverse bases (S, N, unknowns, 3), in one pass over the
    sets: each set's table of every speed (coef (W, 3): alpha, omega^2, 1 per speed; its rows speed by
    speed, as mechsym.planar.dynamics.inverse makes them) reduced, speed by speed where there are several. A
    reduction of a column the table lacks raises its InputError (the same for every set)."""
    nsets, n = basis.shape[:2]
    if n == 0:
        raise InputError(f"column '{reductions[0].column}' is empty")
    cols = {coordinate: np.tile(theta, len(omegas))}
    if not quasi_static:
        cols["omega"] = np.repeat(omegas, n)
    index = {name: i for i, name in enumerate(names)}
    speeds = speeds_apart(omegas, quasi_static)
    figures, columns = {}, {}
    for r in reductions:
        if r.column in columns:
            values = columns[r.column]
        elif r.column in cols:
            values = np.broadcast_to(cols[r.column], (nsets, len(cols[r.column])))
        elif r.column in index:  # (S, W, N): a set's table column, speed by speed
            values = np.matmul(coef, basis[:, :, index[r.column], :].transpose(0, 2, 1))
        else:
            raise InputError(f"no column '{r.column}' to reduce (columns: {', '.join([*cols, *names])})")
        values = columns[r.column] = values.reshape(nsets, len(omegas), n)
        for w in speeds or (None,):
            rows = values if w is None else values[:, omegas == w, :]
            figures[r.name if w is None else f"{r.name}@omega={w:.12g}"] = r.reduce(rows.reshape(nsets, -1))
    return {name: figures[name] for name in figure_names(reductions, speeds)}


def negative_mass(name, bodies, mass):
    """The InputError of a parameter set whose mass matrix diagonal `mass` (x, y, angle per body) holds a
    negative mass or inertia (Mechanism.resolve_parameters' check), or None."""
    negative = [(b, mass[3 * i], mass[3 * i + 2]) for i, b in enumerate(bodies) if mass[3 * i] < 0 or mass[3 * i + 2] < 0]
    if not negative:
        return None
    return InputError(f"mechanism '{name}': " + "; ".join(
        f"body '{b}' has negative mass or inertia (m={m:g}, I={i:g})" for b, m, i in negative))
