"""Progress of long work on stderr, never written into results or files.

Two forms, under one switch: `bar`/`stage` (a tqdm bar) for work counted in steps (derivations and
compilations, figures, bisections, sweeps), and `Progress`/`tracked` for scipy-integrated runs counted in
simulated time: after a few seconds, the fraction done, the time spent and an estimate of the time left,
rewritten in place, so that a run of minutes says so and can be stopped with Ctrl-C.

Shown only when stderr is a terminal; `notice` gives one line, terminal or not, the first time a process
compiles. MECHSYM_PROGRESS=0 silences all three, MECHSYM_PROGRESS=1 shows them
even without a terminal, and inside `quiet()` (a sweep's sets: the sweep shows its own) nothing is shown.
"""
from __future__ import annotations

import math
import os
import sys
import time
from contextlib import contextmanager

__all__ = ["bar", "stage", "quiet", "notice", "bisection_steps", "Progress", "tracked", "enabled"]

_QUIET = [0]  # > 0 inside `quiet()`
_NOTICED = set()  # the kinds of notice this process has given


def _setting():
    setting = os.environ.get("MECHSYM_PROGRESS")
    return setting if setting in ("0", "1") else None


def _disable(force=None):
    """tqdm's `disable`: None lets tqdm decide by whether stderr is a terminal."""
    if force is not None:
        return not force
    if _QUIET[0]:
        return True
    setting = _setting()
    return None if setting is None else setting == "0"


def enabled(stream=None) -> bool:
    """Whether progress is shown on `stream` (stderr by default): not inside `quiet()`, and
    MECHSYM_PROGRESS=1 or, unless it is 0, a terminal."""
    disable = _disable()
    if disable is not None:
        return not disable
    return _isatty(sys.stderr if stream is None else stream)


def bar(total=None, desc="", unit="it", force=None):
    """A progress bar on stderr (a tqdm) for `total` units of work; update(n) as they finish."""
    from tqdm.auto import tqdm

    disable = _disable(force)
    return tqdm(total=total, desc=desc, unit=unit, disable=disable, leave=False, delay=0.0 if disable is False else 0.5,
                dynamic_ncols=True)


@contextmanager
def stage(desc, force=None):
    """One long step (a derivation, a compilation): its name and elapsed time while it runs."""
    with bar(1, desc, "step", force) as b:
        yield
        b.update(1)


def notice(kind, message):
    """One line on stderr, the first time this process meets a `kind` of long step (a compilation on a cold
    cache), terminal or not, so that a wait of seconds is explained; none where progress is silenced
    (MECHSYM_PROGRESS=0, inside `quiet()`). Never on stdout, which may carry a table."""
    if kind in _NOTICED or _QUIET[0] or _setting() == "0":
        return
    _NOTICED.add(kind)
    print(f"mechsym: {message}", file=sys.stderr, flush=True)


@contextmanager
def quiet():
    """No progress of their own from the work inside (a sweep's sets: the sweep shows its own)."""
    _QUIET[0] += 1
    try:
        yield
    finally:
        _QUIET[0] -= 1


def bisection_steps(lo, hi, tol) -> int:
    """The number of halvings that bring [lo, hi] below tol."""
    return max(0, math.ceil(math.log2(max(hi - lo, tol) / tol)))


class Progress:
    """progress(done) with 0 <= done <= total: shows `label` done/total after `delay` s, at most every
    `every` s; close() ends the line."""

    def __init__(self, label, total, unit="s", stream=None, delay=2.0, every=1.0, clock=time.monotonic):
        self.label, self.total, self.unit = label, float(total), unit
        self.stream = sys.stderr if stream is None else stream
        self.clock, self.every = clock, every
        self.start = clock()
        self.next = self.start + delay
        self.shown = False
        self.enabled = enabled(self.stream)

    def __call__(self, done):
        if not self.enabled:
            return
        now = self.clock()
        if now < self.next:
            return
        self.next = now + self.every
        elapsed = now - self.start
        frac = min(max(float(done) / self.total, 0.0), 1.0) if self.total > 0 else 0.0
        left = f"about {_duration(elapsed * (1 - frac) / frac)} left" if frac > 0 else "time left unknown"
        line = (f"{self.label}: {float(done):.4g} of {self.total:.4g} {self.unit} ({100 * frac:.1f} %), "
                f"{_duration(elapsed)} so far, {left} (Ctrl-C stops)")
        self.stream.write(("\r" if _isatty(self.stream) else "") + line + ("" if _isatty(self.stream) else "\n"))
        self.stream.flush()
        self.shown = True

    def close(self):
        """End the progress line (a newline on a terminal, if anything was shown)."""
        if self.shown and _isatty(self.stream):
            self.stream.write("\n")
            self.stream.flush()


def tracked(rhs, progress):
    """The right-hand side rhs(t, y) reporting t to `progress` (one clock read per call); rhs itself
    where nothing is shown (stderr not a terminal)."""
    if not progress.enabled:
        return rhs

    def f(t, y, *args):
        progress(t)
        return rhs(t, y, *args)

    return f


def _isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _duration(seconds):
    seconds = float(seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"
