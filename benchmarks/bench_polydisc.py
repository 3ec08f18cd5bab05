"""Benchmark: spatial_v2's example 7 (the rolling polygonal disc) for 1.5 s at rtol 1e-6, with events.

    python benchmarks/bench_polydisc.py [--repeat 3] [--rtol 1e-6] [--max-step 0.002] [--quick]

Prints the derivation time (sympy + code generation, once per model), then per repetition the wall time of
mechsym's integration with event location, of the whole call (including the output grid and the audit), the
number of right-hand-side evaluations, of guard (signal) evaluations, of switches and of point state
changes by kind, on both backends: C (the whole run in one compiled call, library loaded from the cache
before the clock starts) and numpy (mechsym.core.hybrid on solve_ivp). Target: the C call under 0.3 s.

Peers, in the same run, at the same rtol and step bound (ratios: peer time / mechsym's median time):
* mechsym with the law classifying by itself in every right-hand side (`hold_states=False`);
* a hand port of spatial_v2's route in numpy (tests/contact/test_polydisc.py: gcontact, Fpt and FDfb's
  spatial algebra about the origin), integrated by solve_ivp without events, as a direct port runs;
* the same port with Simulink's zero-crossing detection done the plain way: one solve_ivp event function
  per point and signal (64), located but not restarting the integration.
`--quick` runs the peers for 0.4 s only (they are slow).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def port_run(t_end, rtol, max_step, per_point_events):
    """The hand port of spatial_v2's route; returns (wall, nfev, located crossings, end centre x)."""
    from scipy.integrate import solve_ivp

    from tests.contact.test_polydisc import SpatialV2Port

    port = SpatialV2Port()
    events = None
    if per_point_events:
        tau, mu, cache = port.D / port.K, port.mu, {}

        def signals(t, x):               # one evaluation per step end, shared by the 64 event functions
            key = (t, x.tobytes())
            if key not in cache:
                cache.clear()
                p, v = port.posvel(x)
                depth = -p[2] - tau * v[2]
                u = x[13:].reshape(2, port.n)
                cache[key] = np.concatenate([np.minimum(-p[2], depth),
                                             mu * depth - np.linalg.norm(u + tau * v[:2], axis=0)])
            return cache[key]

        events = [lambda t, x, _i=i: signals(t, x)[_i] for i in range(2 * port.n)]
    wall = time.perf_counter()
    sol = solve_ivp(port.rhs, (0.0, t_end), port.initial_state(), method="RK45", rtol=rtol, atol=rtol,
                    max_step=max_step, events=events)
    wall = time.perf_counter() - wall
    crossings = sum(len(te) for te in sol.t_events) if per_point_events else 0
    return wall, sol.nfev, crossings, sol.y[4, -1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rtol", type=float, default=1e-6)
    parser.add_argument("--max-step", type=float, default=2e-3)
    parser.add_argument("--t-end", type=float, default=1.5)
    parser.add_argument("--method", default="RK45")
    parser.add_argument("--quick", action="store_true", help="peers over 0.4 s only")
    args = parser.parse_args(argv)

    from mechanisms import polydisc
    from mechsym.contact import simulate_contact

    t0 = time.perf_counter()
    system, points, ground = polydisc.model()
    derive = time.perf_counter() - t0
    y0 = polydisc.initial_state(system)
    print(f"example 7: {points.n} contact points, K={ground.stiffness:g}, D={ground.damping:g}, mu={ground.mu:g}, "
          f"t_end={args.t_end} s, rtol={args.rtol:g}, max_step={args.max_step:g} s, {args.method}")
    print(f"derivation and code generation: {derive:.2f} s (once per model)")

    def timed(hold, t_end, backend="numpy"):
        t0 = time.perf_counter()
        run = simulate_contact(points, ground, y0, t_end, rtol=args.rtol, max_step=args.max_step,
                               method=args.method, hold_states=hold, backend=backend)
        return run, time.perf_counter() - t0

    timed(True, 0.01, "c")  # the C library compiled (or loaded from the cache) before the clock starts
    medians, runs = {}, {}
    for backend in ("c", "numpy"):
        walls, totals = [], []
        print(f"backend {backend}:")
        for i in range(args.repeat):
            run, total = timed(True, args.t_end, backend)
            totals.append(total)
            walls.append(run.stats["wall"])
            st = run.stats
            kinds = Counter(e.kind for e in run.timeline)
            print(f"  run {i + 1}: integration {st['wall']:.4f} s, whole call {total:.4f} s, "
                  f"{st['rhs_evaluations']} right-hand sides, {st['signal_evaluations']} guard evaluations, "
                  f"{st['switches']} switches, {st['events']} state changes "
                  f"({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}), unlocated {st['unlocated']}")
        medians[backend] = (statistics.median(walls), statistics.median(totals))
        runs[backend] = run
        print(f"  {backend}: integration min {min(walls):.4f} s, median {medians[backend][0]:.4f} s; whole call "
              f"(grid, table, audit) median {medians[backend][1]:.4f} s")
    print(f"C against numpy: x{medians['numpy'][1] / medians['c'][1]:.1f} (whole call), target < 0.3 s in-process "
          f"with a warm cache: {'met' if medians['c'][1] < 0.3 else 'NOT met'}")
    run = runs["c"]
    t = run
    print(f"end state (C): x={t['x'][-1]:.5f} y={t['y'][-1]:.5f} z={t['z'][-1]:.5f} m, vx={t['vx'][-1]:.4f} m/s, "
          f"wy={t['wy'][-1]:.3f} rad/s, in contact {int(t['n_contact'][-1])}; C - numpy: "
          + ", ".join(f"{c} {abs(t[c][-1] - runs['numpy'][c][-1]):.1e}" for c in ("x", "y", "z", "wy")))
    median = medians["numpy"][0]

    t_peer = 0.4 if args.quick else args.t_end
    if t_peer != args.t_end:
        short, _ = timed(True, t_peer)
        ref = short.stats["wall"]
        short_c, _ = timed(True, t_peer, "c")
        print(f"\npeers over {t_peer} s (mechsym numpy over the same span: {ref:.3f} s, "
              f"{short.stats['rhs_evaluations']} right-hand sides; mechsym C: {short_c.stats['wall']:.4f} s)")
    else:
        ref = median
        print(f"\npeers over {t_peer} s (mechsym numpy: {ref:.3f} s, C: {medians['c'][0]:.4f} s)")
    direct, _ = timed(False, t_peer)
    st = direct.stats
    print(f"  mechsym, law classifying in every right-hand side: {st['wall']:.3f} s, {st['rhs_evaluations']} "
          f"right-hand sides, {st['events']} state changes   x{st['wall'] / ref:.2f}")
    x_ref = (short if t_peer != args.t_end else runs["numpy"])["x"][-1]
    for label, per_point in (("hand port of spatial_v2's route, no events", False),
                             ("hand port, 64 per-point zero-crossing event functions", True)):
        wall, nfev, crossings, x_end = port_run(t_peer, args.rtol, args.max_step, per_point)
        located = f", {crossings} crossings located" if per_point else ""
        print(f"  {label}: {wall:.3f} s, {nfev} right-hand sides{located}, end x differs by "
              f"{abs(x_end - x_ref):.1e} m   x{wall / ref:.2f}")
    print("(x: peer time / mechsym numpy's time with events over the same span; 'end x differs': the centre's final x "
          "against mechsym's, two independent routes at this tolerance)")


if __name__ == "__main__":
    main()
