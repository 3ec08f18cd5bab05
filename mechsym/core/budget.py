"""Memory budgets: the size of a request (its result and intermediate arrays) estimated before the work
and refused above a limit, with the estimate and the option that lifts it in the message.

The limit is a quarter of the machine's memory unless `limit_memory(nbytes)` (the CLI's --max-memory)
sets another for a block. Estimates are rough (to a factor of about two) but computed from the sizes the
work will allocate: samples or time points times the doubles kept per sample.
"""
from __future__ import annotations

import argparse
import contextlib
import contextvars
import os
import re

from mechsym.core.errors import InputError

_LIMIT = contextvars.ContextVar("mechsym_memory_limit", default=None)
_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}

__all__ = ["machine_memory", "memory_limit", "limit_memory", "check_memory", "parse_size", "format_size",
           "add_option", "check_tree"]

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


class CallBudget:
    """The right-hand sides an integration may evaluate before the dense output it keeps (for the output
    grid and events, about `BYTES_PER_CALL(n)` per evaluation) would pass the memory limit. A step size that
    collapses (a model too stiff for an explicit method, a switch the integrator cannot pass) then ends the
    run with an error naming the time reached, instead of exhausting the machine. One budget spans every
    piece of a run (`wrap` each right-hand side)."""

    def __init__(self, n_states, what):
        self.what, self.calls = what, 0
        self.cap = max(1, int(memory_limit() // (8 * (int(n_states) + 16))))

    def wrap(self, rhs):
        """rhs(t, y, ...) counted against the budget."""
        def counted(t, y, *args):
            self.calls += 1
            if self.calls > self.cap:
                raise InputError(
                    f"{self.what}: {self.cap} right-hand side evaluations reached only t = {t:.6g}: the step size "
                    f"collapsed (a model too stiff for the method, or a switch the integrator cannot pass), and the "
                    f"integrator's dense output would pass the memory limit of {format_size(memory_limit())}; a "
                    "stiff method (Radau) or --max-memory may help")
            return rhs(t, y, *args)

        return counted
