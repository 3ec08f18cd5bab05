"""A sweep's parameter sets: an axis from its text (`axis`), and the grid of every combination of the axes'
values (`grid`), generated lazily (`Grid`): a task carries its range of the grid, never the sets themselves."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from mechsym.core.errors import InputError


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
