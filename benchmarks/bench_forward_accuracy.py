"""What accuracy an rtol buys in a forward run, on each backend, with the time it takes (in one run).

The shipped fourbar under no torque: from rest at theta = 0 for 2 s (a slow swing), and from 20 rad/s
for 1 s (a fast, strongly non-uniform rotation). For rtol 1e-3 ... 1e-12 (atol = rtol) on the numpy route
(scipy's solve_ivp DOP853) and the C route (DOP853 in C with scipy's coefficients and error control):
the norm-wise error of theta and omega on the output grid against a reference at rtol 1e-13 (numpy),
the right-hand sides evaluated and the best of three times.

    python benchmarks/bench_forward_accuracy.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from timing import best_of  # noqa: E402

from mechanisms import fourbar  # noqa: E402
from mechsym import derive  # noqa: E402

RUNS = {"from rest, 2 s": (0.0, 2.0), "from 20 rad/s, 1 s": (20.0, 1.0)}
RTOLS = (1e-3, 1e-6, 1e-9, 1e-12)


def error(table, ref, column):
    return float(np.max(np.abs(table[column] - ref[column])) / np.max(np.abs(ref[column])))


def main():
    systems = {"numpy": derive(fourbar.build(), backend="numpy"), "C": derive(fourbar.build(), "c")}
    print(f"{'run':20s} {'rtol':>7s} {'backend':7s} {'err theta':>10s} {'err omega':>10s} {'rhs':>7s} {'time':>9s}")
    for label, (omega0, t_end) in RUNS.items():
        ref = systems["numpy"].forward(0.0, 0.0, omega0, t_end, rtol=1e-13, atol=1e-13)
        for rtol in RTOLS:
            for name, system in systems.items():
                seconds, table = best_of(lambda: system.forward(0.0, 0.0, omega0, t_end, rtol=rtol))
                print(f"{label:20s} {rtol:7.0e} {name:7s} {error(table, ref, 'theta'):10.2e} "
                      f"{error(table, ref, 'omega'):10.2e} {table.nfev:7d} {seconds * 1e3:7.1f} ms")


if __name__ == "__main__":
    main()
