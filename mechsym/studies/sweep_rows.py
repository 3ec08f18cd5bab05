"""The outcome of each parameter set of a sweep's task (`Rows`): its figures, or the one-line error that
replaces them, held as one array per figure (never a dict per set) so that a task of thousands of sets is
filled by blocks, checked and written out as CSV text with numpy (mechsym.studies.sweep_stream)."""
from __future__ import annotations

import numpy as np

from mechsym.core.errors import InputError
from mechsym.studies.sweep_run import one_line


def message_of(exc) -> str:
    """A set's exception as its row's one-line message: an InputError's text, else its type and text."""
    return one_line(exc) if isinstance(exc, InputError) else one_line(f"{type(exc).__name__}: {exc}")


class Rows:
    """The outcomes of `count` sets in order: `figures` (name -> (count,) floats, NaN where a set has none),
    `ok` (count,) whether a set has its figures, `messages` ("" for a set that is ok) and `done` (count,),
    which sets have an outcome yet (a batched route leaves some to the set-by-set route)."""

    def __init__(self, count, names=()):
        self.count = int(count)
        self.figures = {n: np.full(self.count, np.nan) for n in names}
        self.ok = np.zeros(self.count, bool)
        self.done = np.zeros(self.count, bool)
        self.messages = [""] * self.count

    @classmethod
    def failed(cls, count, message, names=()):
        """`count` sets that all failed with `message` (a task given up)."""
        rows = cls(count, names)
        rows.done[:] = True
        rows.messages = [message] * rows.count
        return rows

    def __len__(self):
        return self.count

    def __iter__(self):
        return (self[k] for k in range(self.count))

    def __getitem__(self, k):
        """Set k's (figures dict, "") or (None, message); a slice's sets as Rows."""
        if isinstance(k, slice):
            index = np.arange(self.count)[k]
            part = Rows(len(index))
            part.figures = {n: v[index] for n, v in self.figures.items()}
            part.ok, part.done, part.messages = self.ok[index], self.done[index], [self.messages[i] for i in index]
            return part
        if not self.ok[k]:
            return None, self.messages[k]
        return {n: float(v[k]) for n, v in self.figures.items() if v[k] == v[k]}, ""

    def pending(self) -> np.ndarray:
        """The indices of the sets without an outcome yet."""
        return np.flatnonzero(~self.done)

    def put(self, k, outcome):
        """Set k's outcome: its figures (name -> number) or its exception."""
        if isinstance(outcome, Exception):
            self.fail(k, message_of(outcome))
            return
        self.put_block(np.array([k]), {n: np.array([float(v)]) for n, v in outcome.items()})

    def fail(self, k, message):
        """Set k failed with the one-line `message`."""
        self.done[k], self.ok[k], self.messages[k] = True, False, message
        for values in self.figures.values():
            values[k] = np.nan

    def put_block(self, index, figures):
        """The figures (name -> (len(index),)) of the sets `index`; a set with a figure that is not finite fails
        naming the first such figure instead."""
        index = np.asarray(index, int)
        for n, v in figures.items():
            if n not in self.figures:
                self.figures[n] = np.full(self.count, np.nan)
            self.figures[n][index] = v
        self.done[index], self.ok[index] = True, True
        names = list(figures)
        if names:
            bad = ~np.isfinite(np.column_stack([np.asarray(figures[n], float) for n in names]))
            for j in np.flatnonzero(bad.any(axis=1)):
                self.fail(int(index[j]), f"figure '{names[int(np.argmax(bad[j]))]}' is not finite")

    def merge(self, index, other):
        """The outcomes of `other` (Rows of the sets `index`) that it has."""
        index = np.asarray(index, int)
        have = np.flatnonzero(other.done)
        good = have[other.ok[have]]
        self.put_block(index[good], {n: v[good] for n, v in other.figures.items()})
        for j in have[~other.ok[have]]:
            self.fail(int(index[j]), other.messages[j])


def concatenated(parts, names=()) -> Rows:
    """The Rows of consecutive tasks as one."""
    out = Rows(sum(len(p) for p in parts), names)
    lo = 0
    for part in parts:
        out.merge(np.arange(lo, lo + len(part)), part)
        lo += len(part)
    return out
