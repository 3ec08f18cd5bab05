"""Memory budgets: the size of a request (its result and intermediate arrays) estimated before the work
and refused above a limit, with the estimate and the option that lifts it in the message.

The limit is a quarter of the machine's memory unless `limit_memory(nbytes)` (the CLI's --max-memory)
sets another for a block. Estimates are rough (to a factor of about two) but computed from the sizes the
work will allocate: samples or time points times the doubles kept per sample.

An integration's budget (`CallBudget`, around every right-hand side that scipy's solve_ivp evaluates)
also watches its progress per second of CPU, so that a step size that collapses ends the run within
seconds, naming the time reached, instead of letting it creep.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import contextvars
import os
import re
import time

from mechsym.core.errors import InputError

_LIMIT = contextvars.ContextVar("mechsym_memory_limit", default=None)
_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}

__all__ = ["machine_memory", "memory_limit", "limit_memory", "check_memory", "parse_size", "format_size",
           "add_option", "check_tree", "CallBudget", "step_bytes"]

# deriving a tree (derivation, generation, compilation): its size is the joint columns summed over the paths
# of its moving bodies and frames to the root (CRBA, RNEA, frame Jacobians); measured on HyQ and iCub
TREE_BYTES_PER_COLUMN = 50e3
TREE_SECONDS_PER_COLUMN = 0.07


def machine_memory() -> int:
    """Physical memory of this machine in bytes (8 GiB where the system does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def memory_limit() -> int:
    """The memory budget in bytes of the current block: `limit_memory`'s, else a quarter of the machine's."""
    limit = _LIMIT.get()
    return machine_memory() // 4 if limit is None else limit


@contextlib.contextmanager
def limit_memory(nbytes):
    """Within the block, requests may use up to `nbytes` (None: the default, a quarter of the memory)."""
    token = _LIMIT.set(None if nbytes is None else int(nbytes))
    try:
        yield
    finally:
        _LIMIT.reset(token)


def format_size(nbytes) -> str:
    """A byte count to read: the largest binary unit (KiB ... TiB) it reaches, 3 significant digits."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{int(nbytes)} B"


def parse_size(text) -> int:
    """A size in bytes: 2000000, 512M, 8G, 1.5GiB (binary units)."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([kmgt]?)(?:i?b)?\s*", str(text).lower())
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: '{text}' (bytes, or with K, M, G, T: 512M, 8G)")
    value = float(match.group(1)) * _UNITS[match.group(2)]
    if not value >= 1:
        raise argparse.ArgumentTypeError(f"size '{text}' must be at least one byte")
    return int(value)


def check_memory(what: str, nbytes) -> None:
    """Refuse a request needing more than the limit, before any of it is allocated."""
    nbytes = float(nbytes)
    limit = memory_limit()
    if nbytes > limit:
        source = "a quarter of this machine's memory" if _LIMIT.get() is None else "set by --max-memory"
        lift = format_size(1.25 * nbytes).replace(" ", "").replace("iB", "")
        raise InputError(f"{what} needs about {format_size(nbytes)} of memory (result and intermediate arrays), "
                         f"above the limit of {format_size(limit)} ({source}); --max-memory {lift} lifts it")


def check_tree(what: str, columns: int) -> None:
    """Refuse deriving a tree of `columns` (joint columns summed over the paths of its bodies and frames to
    the root) whose derivation would pass the memory limit; the message gives the time it would take too."""
    minutes = TREE_SECONDS_PER_COLUMN * columns / 60
    check_memory(f"{what} ({columns} joint columns on the paths of its bodies and frames to the root; "
                 f"deriving it would take about {minutes:.3g} min)", TREE_BYTES_PER_COLUMN * columns)


def add_option(parser, dest="max_memory") -> None:
    """--max-memory SIZE on a command's parser (stored as `dest`)."""
    parser.add_argument("--max-memory", type=parse_size, metavar="SIZE", dest=dest,
                        help="largest memory a request may need (default: a quarter of this machine's; e.g. 16G)")


#: The fewest right-hand sides each method evaluates per accepted step (BDF and LSODA: one Newton
#: iteration; Radau: three stages), over which a step's dense output is spread.
CALLS_PER_STEP = {"RK23": 3, "RK45": 6, "DOP853": 12, "Radau": 3, "BDF": 1, "LSODA": 1}

#: A run whose progress over WINDOW seconds of CPU stays below its span / SLOWEST simulated seconds per CPU
#: second (it would need more than about three hours of CPU to finish) has stalled.
WINDOW, SLOWEST = 3.0, 1e4


class CallBudget:
    """The right-hand sides of one integration, watched so that a run whose step size collapses ends within
    seconds with a one-line error naming the time reached, instead of creeping for hours and exhausting the
    machine. Two limits, each an InputError naming the time reached:

    - progress: over any WINDOW seconds of CPU the simulated time must advance by at least span / SLOWEST
      per CPU second (span: the run's length; a run at that rate would need about three hours);
    - memory: the dense output the integrator keeps grows with each step (about `step_bytes(n)` per step,
      spread over the method's fewest right-hand sides per step), and must stay within the memory limit.

    explain(t, y), if given, raises the error that names what degenerated (a disc lying flat) where the
    model knows it; it is asked as soon as progress has been slow for an eighth of the window, and before
    either limit's error. One budget spans every piece of a run (`wrap` each right-hand side)."""

    def __init__(self, n_states, what, span, method="DOP853", explain=None):
        self.what, self.calls, self.span, self.explain = what, 0, float(span), explain
        self.cap = max(1, int(memory_limit() * CALLS_PER_STEP.get(method, 1) // step_bytes(n_states)))
        self.marks = None  # (CPU time, t, calls) about every WINDOW / 16 of CPU, the oldest within WINDOW

    def wrap(self, rhs):
        """rhs(t, y, ...) watched by the budget."""
        def watched(t, y, *args):
            self.calls += 1
            if self.calls > self.cap:
                self._explain(t, y)
                raise InputError(
                    f"{self.what}: the integration stalled at t = {t:.6g} s: {self.cap} right-hand side evaluations "
                    f"reached only this time, and the integrator's dense output would pass the memory limit of "
                    f"{format_size(memory_limit())}; the step size collapsed (a model too stiff for the method, or a "
                    "switch the integrator cannot pass): a stiff method (Radau) or --max-memory may help")
            out = rhs(t, y, *args)
            if self.calls % 16 == 1:  # after the call: lazy work in a first call is no step of the run
                self._progress(float(t), y)
            return out

        return watched

    def _progress(self, t, y):
        """An InputError if the simulated time advanced too little over the last WINDOW seconds of CPU."""
        now = time.thread_time()  # this run's own CPU: not other threads' (a sweep's)
        if self.marks is None:
            self.marks = collections.deque([(now, t, self.calls)])
            return
        if now - self.marks[-1][0] >= WINDOW / 16:
            self.marks.append((now, t, self.calls))
        while len(self.marks) > 1 and now - self.marks[1][0] >= WINDOW:
            self.marks.popleft()
        floor = self.span / SLOWEST
        recent = next((m for m in reversed(self.marks) if now - m[0] >= WINDOW / 8), None)
        if recent is None or t - recent[1] >= floor * (now - recent[0]):
            return
        self._explain(t, y)
        cpu0, t0, calls0 = self.marks[0]
        cpu = now - cpu0
        if cpu >= WINDOW and t - t0 < floor * cpu:
            raise InputError(
                f"{self.what}: the integration stalled at t = {t:.6g} s: it advanced {t - t0:.3g} s in {cpu:.1f} s of "
                f"CPU ({(t - t0) / cpu:.3g} simulated s per CPU s, below the floor of {floor:.3g}; "
                f"{(t - t0) / max(self.calls - calls0, 1):.3g} s per right-hand side evaluation): the step size "
                "collapsed (a model too stiff for the method, a state where the model degenerates, or a switch the "
                "integrator cannot pass)")

    def _explain(self, t, y):
        """The model's own error for a degenerate state, where it has one."""
        if self.explain is not None:
            self.explain(t, y)


def step_bytes(n_states) -> int:
    """The memory one accepted step of an integration with dense output keeps, about: the state, the
    interpolant's coefficients (up to 7 per state) and the Python objects holding them."""
    return 8 * (8 * int(n_states) + 72)
