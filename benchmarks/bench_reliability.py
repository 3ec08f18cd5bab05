"""Benchmark: what the reliability guards cost, each beside the unguarded route in the same run.

    python benchmarks/bench_reliability.py [--repeat 3] [--rows 1000000]

1. CSV output: Table.to_csv (finite check, temporary file in the same folder, rename) against numpy's
   np.savetxt straight onto the path, for --rows rows x 10 columns.
2. Progress on a right-hand side: scipy's solve_ivp (DOP853) on a small nonlinear ODE with and without
   mechsym.core.progress.tracked (one clock read per call), and with and without the watch of
   mechsym.core.budget.CallBudget (a count per call, a CPU clock read every 16th) that stops a creeping run.
3. Interrupt polling in C: the fourbar's forward dynamics over 1 s in C (the integrator polls the SIGINT
   flag once per step) against the same run with the numpy route of mechsym (solve_ivp), and the C time
   per step.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from timing import best_time as best  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    from scipy.integrate import solve_ivp

    from mechsym.core.budget import CallBudget
    from mechsym.core.progress import Progress, tracked
    from mechsym.core.results import Table

    rng = np.random.default_rng(0)
    table = Table({f"c{i}": rng.standard_normal(args.rows) for i in range(10)})
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "t.csv")
        data = np.column_stack(list(table.columns.values()))
        plain = best(lambda: np.savetxt(path, data, delimiter=",", header=",".join(table.columns), comments="",
                                        fmt="%.17g"), args.repeat)
        guarded = best(lambda: table.to_csv(path), args.repeat)
    print(f"CSV {args.rows} x 10: Table.to_csv {guarded:.3f} s, np.savetxt {plain:.3f} s (ratio {guarded / plain:.3f})")

    def rhs(t, y):
        return [y[1], -np.sin(y[0]) - 0.01 * y[1]]

    run = lambda f: solve_ivp(f, (0, 2000), [1.0, 0.0], method="DOP853", rtol=1e-10, atol=1e-10)
    bare = best(lambda: run(rhs), args.repeat)
    shown = Progress("bench", 2000, delay=1e9)
    shown.enabled = True  # as on a terminal: one clock read per call (nothing printed before the delay)
    wrapped = best(lambda: run(tracked(rhs, shown)), args.repeat)
    nfev = run(rhs).nfev
    print(f"solve_ivp, {nfev} right-hand sides: with progress {wrapped:.3f} s, without {bare:.3f} s "
          f"(ratio {wrapped / bare:.3f}; {1e9 * (wrapped - bare) / nfev:.0f} ns per call)")
    watched = best(lambda: run(CallBudget(2, "bench", 2000, "DOP853").wrap(rhs)), args.repeat)
    print(f"solve_ivp, {nfev} right-hand sides: watched by CallBudget {watched:.3f} s, without {bare:.3f} s "
          f"(ratio {watched / bare:.3f}; {1e9 * (watched - bare) / nfev:.0f} ns per call)")

    from mechanisms import fourbar
    from mechsym import derive

    c_sys, np_sys = derive(fourbar.build(), backend="c"), derive(fourbar.build(), backend="numpy")
    if c_sys.backend.name != "c":
        print("C forward: no C compiler, skipped")
        return
    c_time = best(lambda: c_sys.forward(0.1, 0.0, 0.0, 1.0), args.repeat)
    table = c_sys.forward(0.1, 0.0, 0.0, 1.0)
    np_time = best(lambda: np_sys.forward(0.1, 0.0, 0.0, 1.0), 1)
    print(f"forward fourbar 1 s: C (polling SIGINT per step) {c_time:.3f} s, {table.nfev} right-hand sides "
          f"({1e9 * c_time / table.nfev:.0f} ns each); numpy route {np_time:.3f} s (ratio {np_time / c_time:.1f})")


if __name__ == "__main__":
    main()
