"""Progress bars of long work on stderr (tqdm): derivations and compilations, figures, bisections, sweeps.

Shown only when stderr is a terminal and the work lasts longer than half a second; never written into
results or files. MECHSYM_PROGRESS=0 silences it, MECHSYM_PROGRESS=1 shows it even without a terminal.
"""
from __future__ import annotations

import math
import os
from contextlib import contextmanager


_QUIET = [0]  # > 0 inside `quiet()`


def _disable(force=None):
    """tqdm's `disable`: None lets tqdm decide by whether stderr is a terminal."""
    if force is not None:
        return not force
    if _QUIET[0]:
        return True
    setting = os.environ.get("MECHSYM_PROGRESS")
    return None if setting not in ("0", "1") else setting == "0"


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


@contextmanager
def quiet():
    """No progress bars of their own from the work inside (a sweep's sets: the sweep shows its own)."""
    _QUIET[0] += 1
    try:
        yield
    finally:
        _QUIET[0] -= 1


def bisection_steps(lo, hi, tol) -> int:
    """The number of halvings that bring [lo, hi] below tol."""
    return max(0, math.ceil(math.log2(max(hi - lo, tol) / tol)))
