"""The N-four-bar chain of the IFToMM benchmark A02 (N = 2 and 40; 20 s from every crank vertical, B0 along +x
at 1 m/s): mechsym's C (and, for N = 2, numpy) forward run at rtol 1e-6 ... 1e-12 beside Exudyn's
generalized-alpha at fixed steps, in one run. Per route: the CPU time of the solve (mechsym: the best of REPEAT warm runs; Exudyn: its
SolveDynamic) and the largest error of crank0's angle against the motion by quadrature
(tests/oracles/parallelogram_chain.py) at the benchmark's 400 output steps; the benchmark's tolerance is
1e-3 (on B0's position, about the angle's error for bars of 1 m). For N = 2 the numpy route's forward run
(one run per rtol) is printed beside C's.

    python benchmarks/bench_fourbar_chain.py [--quick]     (--quick: Exudyn's finest step left out)
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from oracles.parallelogram_chain import ChainMotion  # noqa: E402

QUICK = "--quick" in sys.argv
T_END, OUTPUTS, REPEAT = 20.0, 400, 3
THETA0, OMEGA0 = np.pi / 2, -1.0
RTOLS = (1e-6, 1e-8, 1e-10, 1e-12)
STEPS = (1e-2, 1e-3) if QUICK else (1e-2, 1e-3, 2e-4)
NUMPY_MAX = 2  # the numpy route (one run per rtol, its generated scalar tracker) for the small chain only


def mechsym_rows(n, reference, backend):
    from mechanisms.fourbar_chain import build
    from mechsym import derive

    system = derive(build(n), backend=backend)
    label = {"c": "C", "numpy": "numpy"}[backend]
    rows = []
    for rtol in RTOLS:
        run, cpu = None, np.inf
        for _ in range(REPEAT if backend == "c" else 1):
            start = time.process_time()
            try:
                run = system.forward(0.0, THETA0, OMEGA0, T_END, dt=T_END / OUTPUTS, rtol=rtol)
            except Exception as exc:  # a run that stops is a row of the table
                rows.append((f"mechsym {label}, rtol {rtol:g}", time.process_time() - start, f"stopped: {exc}"))
                break
            cpu = min(cpu, time.process_time() - start)
        else:
            error = np.max(np.abs(run["theta"] - reference))
            rows.append((f"mechsym {label}, rtol {rtol:g}", cpu, error))
    return rows


def exudyn_rows(n, motion):
    from reference.exudyn_fourbar_chain import run_chain

    rows = []
    for h in STEPS:
        try:
            t, theta, cpu = run_chain(n, h, T_END)
        except RuntimeError as exc:
            rows.append((f"Exudyn gen.-alpha, h {h:g}", np.nan, f"failed: {exc}"))
            continue
        every = max(1, int(round(T_END / OUTPUTS / h)))
        rows.append((f"Exudyn gen.-alpha, h {h:g}", cpu, np.max(np.abs(theta[::every] - motion.theta(t[::every])))))
    return rows


def main():
    grid = np.linspace(0.0, T_END, OUTPUTS + 1)
    for n in (2, 40):
        motion = ChainMotion(n, THETA0, OMEGA0)
        reference = motion.theta(grid)
        numpy_rows = mechsym_rows(n, reference, "numpy") if n <= NUMPY_MAX else []
        rows = mechsym_rows(n, reference, "c") + numpy_rows + exudyn_rows(n, motion)
        best_exudyn = min((cpu for name, cpu, err in rows if name.startswith("Exudyn") and not isinstance(err, str)
                           and err <= 1e-3), default=None)
        print(f"\nN = {n} ({2 * n + 1} bars), {T_END:g} s, error of theta at {OUTPUTS} outputs vs quadrature")
        print(f"{'route':34s} {'CPU [s]':>10s} {'error [rad]':>12s}  {'x Exudyn (1e-3 met)':>20s}")
        for name, cpu, err in rows:
            text = err if isinstance(err, str) else f"{err:12.3g}"
            ratio = f"{best_exudyn / cpu:20.1f}" if best_exudyn and name.startswith("mechsym") and cpu > 0 else ""
            print(f"{name:34s} {cpu:10.4f} {text:>12s}  {ratio}")
        if best_exudyn is None:
            print("(no Exudyn run met the benchmark's 1e-3)")


if __name__ == "__main__":
    main()
