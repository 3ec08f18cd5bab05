"""Progress of long runs: after a few seconds, the fraction done, the time spent and an estimate of the
time left, rewritten in place on a terminal's stderr (nothing when stderr is not a terminal, unless
MECHSYM_PROGRESS=1), so that a run of minutes says so and can be stopped with Ctrl-C."""
from __future__ import annotations

import os
import sys
import time

__all__ = ["Progress", "tracked"]


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
        self.enabled = os.environ.get("MECHSYM_PROGRESS") == "1" or _isatty(self.stream)

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
        """End the progress line (on a terminal, where it was rewritten in place)."""
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
