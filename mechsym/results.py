"""Results: named columns of samples with units, written as CSV and drawn with matplotlib."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mechsym.errors import InputError
from mechsym.output import atomic, save_figure


@dataclass
class Table:
    """Columns of equal length, in order; `units` maps a column name to its SI unit."""

    columns: dict
    units: dict = field(default_factory=dict)
    title: str = ""

    def __getitem__(self, name):
        return self.columns[name]

    def __contains__(self, name):
        return name in self.columns

    @property
    def names(self):
        return list(self.columns)

    def __len__(self):
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def to_csv(self, path):
        """One header row, one row per sample, plain decimal numbers (round-trip precision), written
        atomically. A non-finite value is refused, naming its column and row: a CSV never holds NaN."""
        data = np.column_stack([np.asarray(v, float) for v in self.columns.values()])
        bad = ~np.isfinite(data)
        if bad.any():
            row, col = (int(i[0]) for i in np.nonzero(bad))
            raise InputError(f"{self.title or 'the result'}: {self.names[col]} is {data[row, col]} at row {row + 1} "
                             f"({int(bad.sum())} non-finite values); nothing written to '{path}'")
        with atomic(path) as tmp:
            np.savetxt(tmp, data, delimiter=",", header=",".join(self.columns), comments="", fmt="%.17g")

    def plot(self, path, x, ys, ylabel=None, title=None, groups=None):
        """Draw columns `ys` against column `x` into an image file (PNG or SVG); with `groups`, one line
        per distinct value of that column."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.2))
        x_values = np.asarray(self.columns[x])
        for y in ys:
            y_values = np.asarray(self.columns[y])
            if groups is None:
                ax.plot(x_values, y_values, label=y)
                continue
            keys = np.asarray(self.columns[groups])
            for key in np.unique(keys):  # one line per value of the group column (e.g. per speed)
                sel = keys == key
                unit = f" {self.units[groups]}" if groups in self.units else ""
                ax.plot(x_values[sel], y_values[sel], label=f"{y}, {groups} = {key:g}{unit}")
        ax.set_xlabel(_label(x, self.units))
        ax.set_ylabel(ylabel or _label(ys[0], self.units))
        if len(ys) > 1 or groups is not None:
            ax.legend(fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.set_title(title or self.title)
        fig.tight_layout()
        save_figure(fig, path, dpi=120)


def read_csv(path) -> Table:
    with open(path) as fh:
        header = fh.readline().strip().split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return Table({h: data[:, i] for i, h in enumerate(header)})


def _label(name, units):
    unit = units.get(name)
    return f"{name} [{unit}]" if unit else name

