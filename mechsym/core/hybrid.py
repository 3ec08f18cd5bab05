"""Hybrid simulation: continuous modes joined by switches located exactly with solve_ivp events.

A model with switching dynamics (a foot that sticks or slides, a support that passes from one leg to the
other, a clutch, a contact that opens) is a set of `Mode`s. Each mode has its own right-hand side and its
own `Transition`s; a transition's guard is an event function g(t, y) whose zero crossing (in the given
direction) ends the mode. The transition then names the next mode (a fixed name, or a function of the state
that decides, for example "stick if static friction suffices, else slide the other way") and may map the
state (`reset`). `run` integrates mode after mode and returns a RunResult (mechsym.core.results): the state on
the output grid, the switches as its events, and the pieces with their dense outputs.

Nothing here knows about mechanisms: right-hand sides and guards are plain functions of (t, y).

A right-hand side that cannot be evaluated at a trial state (a configuration tracker's StepRejected: the
loops do not close there, the branch would change) rejects the integrator's step, which is retried shorter;
the run fails, naming the reason, only if no step is left.

Care at the switches:
* A guard that is zero where its mode starts does not fire at once if its direction excludes moving away
  from zero (solve_ivp reports a crossing only in the stated direction); guards should be written so (for
  example slip -> stick on the slip velocity returning to zero, with the direction of return).
* A run of switches at the same instant (chattering, a Zeno point) is stopped with an error naming the
  modes involved instead of looping.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from mechsym.core.budget import CallBudget
from mechsym.core.errors import InputError
from mechsym.core.progress import Progress
from mechsym.core.results import RunResult
from mechsym.core.runner import integrate
from mechsym.core.timegrid import run_options


@dataclass(frozen=True)
class Transition:
    """Leave the current mode when `guard(t, y)` crosses zero in `direction` (+1 rising, -1 falling, 0 either).
    When several transitions of a mode fire at the same instant, the first listed is taken.

    target: the next mode's name, or a callable (t, y) -> name (None ends the run); reset: a callable
    (t, y) -> y applied at the switch (default: the state is kept)."""

    name: str
    guard: Callable
    target: object
    direction: int = 0
    reset: Callable | None = None

    def next_mode(self, t, y):
        """The mode entered at state (t, y)."""
        return self.target(t, y) if callable(self.target) else self.target


@dataclass(frozen=True)
class Mode:
    """One continuous regime: y' = rhs(t, y) until one of `transitions` fires. `max_step` bounds the
    integrator's step (so that a guard that crosses zero and returns within one step is not missed)."""

    name: str
    rhs: Callable
    transitions: tuple = ()
    max_step: float = np.inf


@dataclass(frozen=True)
class Event:
    """A switch: at time t the run left mode `source` for `target` through transition `transition`;
    `y` is the state after the reset."""

    t: float
    source: str
    target: str | None
    transition: str
    y: np.ndarray

    @property
    def name(self) -> str:
        """The event's name in a RunResult: its transition."""
        return self.transition

    @property
    def state(self) -> np.ndarray:
        """The state after the switch."""
        return self.y

    def describe(self) -> str:
        """One line: the time, the modes left and entered and the transition."""
        return f"t={self.t:.9g}: {self.source} -> {self.target or 'end'} ({self.transition})"


@dataclass
class Segment:
    mode: str
    t0: float
    t1: float
    solution: object  # solve_ivp's OdeSolution (dense output), None for a zero-length segment
    y0: np.ndarray
    y1: np.ndarray
    nfev: int = 0


@dataclass
class HybridResult(RunResult):
    """A hybrid run: the RunResult (the state on the output grid, the switches as `events` in time order,
    status "done" or "stopped" by a transition whose target is None) and the pieces between switches
    with their dense outputs (`solution(t)` evaluates them: the state entered at a switch instant)."""

    segments: list = field(default_factory=list)
    t_end: float = 0.0  # where the run stopped (the requested end, or an ending transition)
    stopped_by: str | None = None

    def __post_init__(self):
        super().__post_init__()
        self.solution = lambda t: self.sample(t)[0].T

    def piece_at(self, t):
        """Index of the piece (segment) at each time t; at a switch instant, the piece entered there."""
        starts = np.array([s.t0 for s in self.segments])
        t = np.atleast_1d(np.asarray(t, float))
        return np.clip(np.searchsorted(starts, t, side="right") - 1, 0, len(self.segments) - 1)

    def mode_at(self, t):
        """Mode name(s) at time(s) t; at a switch instant, the mode entered there."""
        return np.array([self.segments[i].mode for i in self.piece_at(t)])

    def sample(self, grid):
        """States (len(grid), ny) from the dense outputs, and the mode at each time (the later mode at a
        switch instant). Times beyond the end of the run are an error."""
        grid = np.asarray(grid, float)
        if grid.size and grid.max() > self.t_end * (1 + 1e-12) + 1e-300:
            raise InputError(f"cannot sample at t = {grid.max():.6g}: the run ended at t = {self.t_end:.6g}")
        ny = len(self.segments[0].y0)
        out = np.empty((len(grid), ny))
        idx = self.piece_at(grid)
        for i in np.unique(idx):
            sel = idx == i
            seg = self.segments[i]
            if seg.solution is None:
                out[sel] = seg.y0
            else:
                out[sel] = seg.solution(np.clip(grid[sel], seg.t0, seg.t1)).T
        modes = np.array([self.segments[i].mode for i in idx])
        return out, modes


def run(modes, mode0, y0, t_span, rtol=1e-9, atol=None, method="DOP853", max_switches=10_000,
        max_chatter=8, dt=None, n=None, names=None) -> HybridResult:
    """Integrate a hybrid system over t_span = (t0, t_end).

    modes: iterable of Mode (or a dict name -> Mode); mode0: the initial mode's name, or a callable
    (t0, y0) -> name. Returns a HybridResult: columns t and the state (`names`, default y0, y1, ...)
    on the output grid from t0 (step dt, default a thousandth of the span, or n samples) to where the
    run ended. A transition whose target is None ends the run (status "stopped"). Raises InputError
    for an unknown mode, a failed integration, more than `max_switches` switches, or more than
    `max_chatter` switches in a row without time advancing.
    """
    modes = dict(modes) if isinstance(modes, dict) else {m.name: m for m in modes}
    t0, t_end = map(float, t_span)
    if not (np.isfinite(t0) and np.isfinite(t_end)) or t_end <= t0:
        raise InputError(f"hybrid run: t_span must be finite and increasing, got {t_span}")
    y = np.array(y0, float)
    if not np.all(np.isfinite(y)):
        raise InputError(f"hybrid run: the initial state must be finite, got {y}")
    opts = run_options(t_end - t0, dt, rtol, atol, n=n)
    names = list(names) if names is not None else [f"y{i}" for i in range(len(y))]
    if len(names) != len(y):
        raise InputError(f"hybrid run: {len(names)} names for a state of {len(y)} values")
    name = mode0(t0, y) if callable(mode0) else mode0
    progress = Progress("simulation", t_end)
    try:
        segments, events, t1, nfev, stopped_by = _run(modes, name, y, t0, t_end, opts.rtol, opts.atol, method,
                                                      max_switches, max_chatter, progress)
    finally:
        progress.close()
    result = HybridResult({}, {"t": "s"}, "hybrid run", events=events, nfev=nfev,
                          status="stopped" if stopped_by else "done",
                          message=f"stopped by {stopped_by} at t = {t1:.9g}" if stopped_by else "",
                          segments=segments, t_end=t1, stopped_by=stopped_by)
    grid = t0 + opts.grid(t1 - t0)
    states = result.sample(grid)[0]
    result.columns = {"t": grid, **{k: states[:, i] for i, k in enumerate(names)}}
    return result


def _run(modes, name, y, t0, t_end, rtol, atol, method, max_switches, max_chatter, progress):
    """run()'s loop over the pieces between switches, reporting the time reached to `progress`: (segments,
    switches, the time reached, right-hand sides, the transition that ended the run or None)."""
    budget = CallBudget(len(y), "hybrid run", t_end - t0, method)
    segments, timeline, nfev, stall = [], [], 0, 0
    t = t0
    while True:
        if name not in modes:
            raise InputError(f"hybrid run: unknown mode '{name}' (known: {', '.join(modes)})")
        mode = modes[name]
        events = []
        for tr in mode.transitions:
            def event(tt, yy, _g=tr.guard):
                return _g(tt, yy)

            event.terminal, event.direction = True, tr.direction
            events.append(event)
        piece = functools.partial(
            integrate, mode.rhs, y, (t, t_end), rtol=rtol, atol=atol, method=method, name="hybrid run",
            where=f"hybrid run: mode '{name}'", events=events, budget=budget, progress=progress,
            describe=lambda yy: f"mode '{mode.name}', state {np.array2string(yy, precision=6)}", max_step=mode.max_step)
        sol = piece()
        if sol.status == 1 and _spurious_start(sol, mode, t, y):
            # a guard that is zero where the mode starts "fired" on a first step too short to move it: take a
            # real first step (the guard then leaves zero on the side its direction allows, or fires for good)
            nfev += sol.nfev
            sol = piece(first_step=1e-6 * min(mode.max_step, t_end - t))
        nfev += sol.nfev
        t1, y1 = float(sol.t[-1]), sol.y[:, -1].copy()
        segments.append(Segment(name, t, t1, sol.sol, y, y1, sol.nfev))
        if sol.status == 0:  # reached the end
            return segments, timeline, t1, nfev, None
        # a terminal event: the earliest one; of several at the same instant, the first listed
        fired = [i for i, te in enumerate(sol.t_events) if len(te)]
        first = min(sol.t_events[k][0] for k in fired)
        i = min(k for k in fired if sol.t_events[k][0] <= first + 1e-12 * max(1.0, abs(first)))
        tr = mode.transitions[i]
        t1, y1 = float(sol.t_events[i][0]), sol.y_events[i][0].copy()
        segments[-1].t1, segments[-1].y1 = t1, y1
        stall = stall + 1 if t1 - t <= 1e-12 * max(1.0, abs(t1)) else 0
        if stall > max_chatter:
            recent = " | ".join(e.describe() for e in timeline[-max_chatter:])
            raise InputError(f"hybrid run: {stall} switches at t = {t1:.9g} without time advancing (chattering or a "
                             f"Zeno point): {recent}")
        if len(timeline) >= max_switches:
            raise InputError(f"hybrid run: more than {max_switches} switches before t = {t1:.9g}")
        y_new = np.array(tr.reset(t1, y1), float) if tr.reset is not None else y1
        target = tr.next_mode(t1, y_new)
        timeline.append(Event(t1, name, target, tr.name, y_new))
        if target is None:
            return segments, timeline, t1, nfev, tr.name
        t, y, name = t1, y_new, target


def _spurious_start(sol, mode, t, y):
    """An event at the segment's first instant from a guard that is exactly zero there and at the event."""
    for i, te in enumerate(sol.t_events):
        if len(te) and te[0] <= t + 1e-14 * max(1.0, abs(t)):
            tr = mode.transitions[i]
            if tr.guard(t, y) == 0.0 and tr.guard(te[0], sol.y_events[i][0]) == 0.0:
                return True
    return False
