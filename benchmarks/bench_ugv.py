"""UGV benchmark (issue 5): the Figure 24 sweep and the Figure 25 optimisation over the bump.

Prints: the symbolic derivation (per-body rows -> closed form -> lambdify); the drive torque along 10^4
front-contact positions for 100 angle pairs (10^6 pose-and-force solves: position problem by bracketed
Newton on arrays, forces from the compiled closed form), split into placement and forces; for scale, a
batched 5x5 LAPACK solve of the same size alone; and one full optimisation over the bump per criterion
(dynamic programming on the angle grid, then SLSQP), with the criterion against the best constant pair, and
the whole `optimize` command in a fresh process. Targets of the issue: sweep under 1 s, optimisation under 10 s.

    python benchmarks/bench_ugv.py [--quick]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from timing import best_of  # noqa: E402

QUICK = "--quick" in sys.argv


def main():
    from mechanisms import ugv_optimize as uo
    from mechanisms import ugv_study as us
    from mechanisms.tracks import bump

    t0 = time.perf_counter()
    st = us.statics()
    t_derive = time.perf_counter() - t0
    t0 = time.perf_counter()
    _ = st.solution
    t_elim = time.perf_counter() - t0
    vehicle = us.Vehicle()
    t0 = time.perf_counter()
    st.compile(us.FORCES, vehicle.p)
    t_compile = time.perf_counter() - t0
    print(f"derivation: per-body rows and contact columns {t_derive:.2f} s, closed-form elimination {t_elim:.2f} s, "
          f"lambdify {t_compile:.2f} s ({st.A.shape[0]} x {st.A.shape[1]} system)")

    track = bump()
    n_x = 1000 if QUICK else 10_000
    grid = np.linspace(*us.LIMITS, 10)
    pr, pf = (a.ravel() for a in np.meshgrid(grid, grid, indexing="ij"))
    x = np.linspace(0.0, 8.0, n_x)
    us.sweep(track, pr, pf, x[:50], vehicle=vehicle)  # warm-up (compiles, checks the track)
    t_sweep, out = best_of(lambda: us.sweep(track, pr, pf, x, vehicle=vehicle))
    n = n_x * len(pr)
    print(f"sweep: {n_x} positions x {len(pr)} angle pairs = {n:.0e} pose-and-force solves in {t_sweep:.3f} s "
          f"({t_sweep / n * 1e9:.0f} ns per solve; target 1 s)")
    chunk = max(1, 65536 // len(pr))

    def place_only():
        for lo in range(0, n_x, chunk):
            vehicle.place(track, x[lo:lo + chunk], pr, pf)

    t_place, _ = best_of(place_only)
    print(f"  of which placement (scan + bracketed Newton) {t_place:.3f} s, forces {t_sweep - t_place:.3f} s")
    a = np.random.default_rng(0).normal(size=(n, 5, 5)) + 5 * np.eye(5)
    c = np.ones((n, 5, 1))
    t_lapack, _ = best_of(lambda: np.linalg.solve(a, c))
    print(f"  for scale: a batched 5x5 LAPACK solve of {n:.0e} systems alone takes {t_lapack:.3f} s "
          f"(sweep / LAPACK = {t_sweep / t_lapack:.2f})")
    peak = np.abs(out["torque"]).max(axis=0)
    clear = vehicle.clearance(pr, pf)
    ok = (clear["wheels"] >= 0) & (clear["rear"] >= 0) & (clear["front"] >= 0)
    i = int(np.argmin(np.where(ok, peak, np.inf)))
    print(f"  peak |torque| over the clear pairs: {peak[ok].min():.3f} .. {peak[ok].max():.3f} N m "
          f"(lowest at phi_r = {pr[i] / us.DEG:.0f} deg, phi_f = {pf[i] / us.DEG:.0f} deg)")

    print("optimisation over the bump (x = 0..8 m, 161 stages, limits 45-135 deg, 60 deg/m, mu 0.6):")
    for criterion in uo.CRITERIA:
        t0 = time.perf_counter()
        s = uo.optimize(track, criterion, vehicle=vehicle, samples=81 if QUICK else 161)
        dt = time.perf_counter() - t0
        bc = s.best_constant
        print(f"  {criterion:17s} {dt:6.2f} s  value {s.value:.6g} (DP {s.dp_value:.6g}, "
              f"{'refined' if s.refined else 'DP kept'}; best constant pair {bc[2]:.6g} at "
              f"({bc[0] / us.DEG:.0f}, {bc[1] / us.DEG:.0f}) deg; grid {s.info['grid']}x{s.info['grid']})")
    # the whole command in a fresh process: imports, derivation, compilation, DP, SLSQP and the CSV
    import os
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "mechsym", "ugv", "optimize", "--criterion", "torque-variation",
               "--samples", "81" if QUICK else "161", "--out", os.path.join(tmp, "angles.csv")]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
        print(f"  `mechsym ugv optimize --criterion torque-variation` from a fresh process: "
              f"{time.perf_counter() - t0:.2f} s (target 10 s)")


if __name__ == "__main__":
    main()
