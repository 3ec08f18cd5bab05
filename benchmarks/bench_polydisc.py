"""Benchmark: spatial_v2's example 7 (the rolling polygonal disc) for 1.5 s at rtol 1e-6, with events.

    python benchmarks/bench_polydisc.py [--repeat 5] [--rtol 1e-6] [--max-step 0.002] [--direct]

Prints the derivation time (sympy + code generation, once per model), then per repetition the wall time of
the integration with event location, of the whole call (including the output grid and the audit), the
number of right-hand-side evaluations, of guard (signal) evaluations, of switches and of point state
changes by kind. Target (issue 6): the integration under 2 s here.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rtol", type=float, default=1e-6)
    parser.add_argument("--max-step", type=float, default=2e-3)
    parser.add_argument("--t-end", type=float, default=1.5)
    parser.add_argument("--method", default="RK45")
    parser.add_argument("--direct", action="store_true", help="evaluate gcontact's own classification (no held states)")
    args = parser.parse_args(argv)

    from mechanisms import polydisc
    from mechsym.contact import simulate_contact

    t0 = time.perf_counter()
    system, points, ground = polydisc.model()
    derive = time.perf_counter() - t0
    y0 = polydisc.initial_state(system)
    print(f"example 7: {points.n} contact points, K={ground.stiffness:g}, D={ground.damping:g}, mu={ground.mu:g}, "
          f"t_end={args.t_end} s, rtol={args.rtol:g}, max_step={args.max_step:g} s, {args.method}, "
          f"{'direct law' if args.direct else 'held states'}")
    print(f"derivation and code generation: {derive:.2f} s (once per model)")
    walls, totals = [], []
    for i in range(args.repeat):
        t0 = time.perf_counter()
        run = simulate_contact(points, ground, y0, args.t_end, rtol=args.rtol, max_step=args.max_step,
                               method=args.method, hold_states=not args.direct)
        totals.append(time.perf_counter() - t0)
        walls.append(run.stats["wall"])
        st = run.stats
        kinds = Counter(e.kind for e in run.timeline)
        print(f"  run {i + 1}: integration {st['wall']:.3f} s, whole call {totals[-1]:.3f} s, "
              f"{st['rhs_evaluations']} right-hand sides, {st['signal_evaluations']} guard evaluations, "
              f"{st['switches']} switches, {st['events']} state changes "
              f"({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}), unlocated {st['unlocated']}")
    t = run.table
    print(f"integration wall time: min {min(walls):.3f} s, median {statistics.median(walls):.3f} s "
          f"(whole call median {statistics.median(totals):.3f} s); target < 2 s: "
          f"{'met' if statistics.median(walls) < 2 else 'NOT met'}")
    print(f"end state: x={t['x'][-1]:.5f} y={t['y'][-1]:.5f} z={t['z'][-1]:.5f} m, vx={t['vx'][-1]:.4f} m/s, "
          f"wy={t['wy'][-1]:.3f} rad/s, in contact {int(t['n_contact'][-1])}")


if __name__ == "__main__":
    main()
