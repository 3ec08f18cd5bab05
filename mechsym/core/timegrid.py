"""The options of a time run, checked once, and its output grid (docs/conventions.md: Sampling, Errors).

Every runner (forward, simulate, hybrid, the contact runs, the 3-D body, the disc, the tree) and every
command that writes a time series takes its end time, output step and tolerances through `run_options`:
the same checks, the same defaults (dt = t_end/1000, atol = rtol) and the same messages, naming the
argument as the caller knows it (`t_end` in Python, `--t-end` on the command line). The output grid is
0, dt, 2 dt, ... and the end itself (a shorter last step where the end is not a whole number of steps), or n samples from 0 to the
end inclusive.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mechsym.core.errors import InputError

__all__ = ["RunOptions", "run_options", "uniform_grid", "API_NAMES", "CLI_NAMES"]

MAX_RTOL = 1e-2  # a relative tolerance from here on lets the integrator step over the motion (rtol 1 gave a
#                  four-bar theta(1 s) = 12.6 rad for 29.8): refused rather than a result of no accuracy
API_NAMES = {"t_end": "t_end", "dt": "dt", "n": "n", "rtol": "rtol", "atol": "atol"}
CLI_NAMES = {"t_end": "--t-end", "dt": "--dt", "n": "--samples", "rtol": "--rtol", "atol": "--atol"}


@dataclass(frozen=True)
class RunOptions:
    """Checked options of a time run: end time, output step `dt` (or `n` output samples) and tolerances."""

    t_end: float
    dt: float | None
    n: int | None
    rtol: float | None
    atol: float | None

    def grid(self, t_last=None) -> np.ndarray:
        """The output times from 0 to `t_last` (default t_end; a run that stopped early ends sooner)."""
        end = t_last is None or float(t_last) >= self.t_end
        t_last = self.t_end if end else float(t_last)
        if self.n is not None:
            return np.linspace(0.0, t_last, self.n)
        return uniform_grid(t_last, self.dt, end)

    @property
    def points(self) -> float:
        """Number of output samples of the full run (for memory budgets)."""
        return float(self.n) if self.n is not None else self.t_end / self.dt + 1


def run_options(t_end, dt=None, rtol=None, atol=None, *, n=None, arrays=None, width=None, what="simulation",
                names=API_NAMES) -> RunOptions:
    """Check a run's options and return them with their defaults filled in.

    t_end: positive and finite. dt: the output step, in (0, t_end] (default t_end/1000 unless `n`, a
    number of output samples of at least 2, is given instead). rtol, atol: positive and finite (atol
    defaults to rtol), rtol below MAX_RTOL; None for a run without tolerances. arrays: name -> initial values, each finite.
    width: values kept per output sample; with it the output's memory is checked against the budget
    (mechsym.core.budget). names: how the caller calls each option in messages (API_NAMES or CLI_NAMES)."""
    t_end = _number(t_end, names["t_end"])
    if not t_end > 0:
        raise InputError(f"{names['t_end']} must be positive and finite, got {t_end}")
    for name, value in (arrays or {}).items():
        if not np.all(np.isfinite(value)):
            raise InputError(f"{name} must be finite, got {value}")
    if n is not None:
        if dt is not None:
            raise InputError(f"give {names['dt']} or {names['n']}, not both")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
            raise InputError(f"{names['n']} must be a whole number of at least 2, got {n!r}")
        n = int(n)
    else:
        dt = t_end / 1000 if dt is None else _number(dt, names["dt"])
        if not 0 < dt <= t_end:
            raise InputError(f"{names['dt']} must be in (0, {names['t_end']}], got {dt}")
    if rtol is not None:
        rtol = _number(rtol, names["rtol"])
        atol = rtol if atol is None else _number(atol, names["atol"])
        for key, value in (("rtol", rtol), ("atol", atol)):
            if not value > 0:
                raise InputError(f"{names[key]} must be positive and finite, got {value}")
        if rtol >= MAX_RTOL:
            raise InputError(f"{names['rtol']} {rtol:g} allows errors of the order of the result itself; give a value "
                             f"below {MAX_RTOL:g}")
    options = RunOptions(t_end, dt, n, rtol, atol)
    if width is not None:
        from mechsym.core.budget import check_memory

        check_memory(f"{what} at {options.points:.6g} time points", 8 * options.points * (width + 8))
    return options


def uniform_grid(t_last, dt, end=True) -> np.ndarray:
    """0, dt, 2 dt, ... up to t_last, the last sample clipped to t_last when within half a step. end: t_last
    is the run's end time, a sample itself (docs/conventions.md, Sampling: t_end inclusive), following as a shorter
    last step when it is not a whole number of steps; a run that stopped early ends at its last whole step."""
    grid = np.arange(0.0, t_last + 0.5 * dt, dt)
    if end and t_last - grid[-1] > 1e-9 * dt:
        return np.append(grid, t_last)
    grid[-1] = min(grid[-1], t_last) if not end else t_last
    return grid


def _number(value, name) -> float:
    """A finite float, or an InputError naming the option."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(value):
        raise InputError(f"{name} must be positive and finite, got {value}")
    return value
