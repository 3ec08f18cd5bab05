"""Timing shared by the benchmark scripts (run as `python benchmarks/bench_X.py`, which puts this folder on
sys.path): every route, mechsym's and its peer's, timed the same way."""
from __future__ import annotations

import time


def best_of(fn, repeat=3):
    """The shortest wall time of `repeat` calls of fn (seconds), and the last call's result."""
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def best_time(fn, repeat=3):
    """The shortest wall time of `repeat` calls of fn (seconds)."""
    return best_of(fn, repeat)[0]
