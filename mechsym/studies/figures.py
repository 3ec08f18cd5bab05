"""A parameter set's figures: the reductions of a table to numbers (FUNC:COLUMN), and what the batched
inverse of a sweep (mechsym.studies.sweep) and the workers' warm start (mechsym.studies.sweep_warm) both
need to make them: a set's figures from its inverse basis, the negative-mass check, and which parameters
are geometry."""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.results import Table

REDUCERS = {
    "max": np.max,
    "min": np.min,
    "mean": np.mean,
    "rms": lambda v: np.sqrt(np.mean(np.square(v))),
    "ptp": np.ptp,
    "absmax": lambda v: np.max(np.abs(v)),
    "final": lambda v: v[-1],
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
        return float(REDUCERS[self.func](values))


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


def inverse_figures(coordinate, theta, omegas, quasi_static, coef, names, basis, reductions):
    """A set's figures (or its InputError) from its inverse basis (N, unknowns, 3): the table of every
    speed (coef (S, 3): alpha, omega^2, 1 per speed) reduced, speed by speed where there are several."""
    cols = {coordinate: np.tile(theta, len(omegas))}
    if not quasi_static:
        cols["omega"] = np.repeat(omegas, len(theta))
    cols.update({n: (coef @ basis[:, i, :].T).ravel() for i, n in enumerate(names)})
    try:
        return reduce_table(Table(cols), reductions, speeds_apart(omegas, quasi_static))
    except InputError as exc:
        return exc


def negative_mass(name, bodies, mass):
    """The InputError of a parameter set whose mass matrix diagonal `mass` (x, y, angle per body) holds a
    negative mass or inertia (Mechanism.resolve_parameters' check), or None."""
    negative = [(b, mass[3 * i], mass[3 * i + 2]) for i, b in enumerate(bodies) if mass[3 * i] < 0 or mass[3 * i + 2] < 0]
    if not negative:
        return None
    return InputError(f"mechanism '{name}': " + "; ".join(
        f"body '{b}' has negative mass or inertia (m={m:g}, I={i:g})" for b, m, i in negative))


_GEOMETRY = weakref.WeakKeyDictionary()


def geometry_parameters(system) -> list:
    """Names of the parameters the constraints depend on (lengths, pivots, centres of mass); the others
    (masses, inertias, densities, loads, g) do not change the kinematics. Found once per System."""
    if system not in _GEOMETRY:
        con = system.constraints
        used = set().union(*(_free(e) for e in con.rows),
                           *(_free(c) for point in con.points.values() for c in point))
        _GEOMETRY[system] = [n for n, p in system.mechanism.parameters.items() if p.symbol in used]
    return _GEOMETRY[system]


def _free(expr) -> set:
    """The free symbols of a sympy expression (or number)."""
    import sympy

    return sympy.sympify(expr).free_symbols
