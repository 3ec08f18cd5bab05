"""Benchmark: the rolling disc of issue 7, cases (a)-(c) over 1 s, mechsym against Exudyn in the same run.

    python benchmarks/bench_disc.py [--repeat 3] [--cases a_rolling,b_sliding,c_driven]

Per case:
1. Exudyn (generalized-alpha, fixed step, tests/reference/exudyn_disc.py) at steps 1 ms / 2^k: the cheapest
   converged step dt_c is the first whose halving changes the trajectory (x, v, omega on the 1 ms grid) by
   less than 1e-6 norm-wise (docs/conventions.md, Accuracy); that change is the accuracy Exudyn reaches there.
2. mechsym (generated rhs and exact Jacobian in C, scipy's BDF): the loosest tolerance rtol = atol in
   1e-6, 1e-7, ... whose trajectory is within that accuracy of mechsym's own run at rtol 1e-12.
3. Wall times, best of --repeat, of the integration alone (Exudyn's SolveDynamic; mechsym's solve_ivp),
   and of mechsym's whole call (with the output grid and contact forces); ratio = Exudyn / mechsym
   (> 1: mechsym is faster). Also printed: each converged run against the other package's.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

TRAJ = ("x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz")
FORCES = ("f_lat", "f_long", "f_n")
STEPS = tuple(1e-3 / 2**k for k in range(7))        # 1 ms ... 1.5625e-5 s
RTOLS = (1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11)


def normwise(a, b, names):
    a, b = np.stack([a[c] for c in names]), np.stack([b[c] for c in names])
    return float(np.abs(a - b).max() / np.abs(b).max())


def exudyn_columns(case, dt, fresh=False):
    from tests.reference.exudyn_disc import run_disc

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        run = run_disc(case, dt, cache=not fresh)
    return run.columns(), run.wall_time


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", default="a_rolling,b_sliding,c_driven")
    args = parser.parse_args(argv)

    import exudyn

    from mechanisms.disc import Disc, simulate, system
    from tests.reference.exudyn_disc import CASES

    t0 = time.perf_counter()
    system()
    simulate(Disc(), 1e-3)                               # derive, generate and compile (or load the cache)
    setup = time.perf_counter() - t0
    print(f"Exudyn {exudyn.__version__}; mechsym setup (derivation, code generation or cache) {setup:.2f} s")
    print(f"{'case':10s} {'Exudyn dt':>10s} {'its acc':>8s} {'Exudyn s':>9s} | {'rtol':>6s} {'acc':>8s} "
          f"{'steps':>5s} {'integ s':>8s} {'call s':>7s} | {'ratio':>6s} {'ratio call':>10s} | "
          f"{'traj vs Exudyn':>14s} {'F vs Exudyn':>11s}")
    for name in args.cases.split(","):
        case = CASES[name]
        disc = Disc(**{f.name: getattr(case, f.name) for f in dataclasses.fields(Disc)})
        # 1. Exudyn's cheapest converged step
        runs = [exudyn_columns(case, dt)[0] for dt in STEPS[:2]]
        k = 0
        while normwise(runs[k], runs[k + 1], TRAJ) >= 1e-6:
            k += 1
            if k + 1 == len(STEPS):
                raise SystemExit(f"{name}: Exudyn does not converge to 1e-6 down to {STEPS[-1]:g} s")
            runs.append(exudyn_columns(case, STEPS[k + 1])[0])
        dt_c, accuracy = STEPS[k], normwise(runs[k], runs[k + 1], TRAJ)
        exudyn_wall = min(exudyn_columns(case, dt_c, fresh=True)[1] for _ in range(args.repeat))
        # 2. mechsym's loosest tolerance within that accuracy of its own tight run
        tight = simulate(disc, 1.0, rtol=1e-12)
        for rtol in RTOLS:
            ours = simulate(disc, 1.0, rtol=rtol)
            error = normwise(ours, tight, TRAJ)
            if error <= accuracy:
                break
        # 3. timings
        walls, calls = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            ours = simulate(disc, 1.0, rtol=rtol)
            stats = ours.stats
            calls.append(time.perf_counter() - t0)
            walls.append(stats["wall"])
        finest = runs[-1]
        print(f"{name:10s} {dt_c:10.4g} {accuracy:8.2e} {exudyn_wall:9.4f} | {rtol:6.0e} {error:8.2e} "
              f"{stats['steps']:5d} {min(walls):8.4f} {min(calls):7.4f} | {exudyn_wall / min(walls):6.2f} "
              f"{exudyn_wall / min(calls):10.2f} | {normwise(ours, runs[k], TRAJ):14.2e} "
              f"{normwise(ours, runs[k], FORCES):11.2e}")
        print(f"{'':10s} mechsym at rtol 1e-12 against Exudyn at {STEPS[len(runs) - 1]:g} s: trajectory "
              f"{normwise(tight, finest, TRAJ):.2e}, forces {normwise(tight, finest, FORCES):.2e} (norm-wise)")


if __name__ == "__main__":
    main()
