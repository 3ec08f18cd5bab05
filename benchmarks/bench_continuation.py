"""Continuation benchmark: numpy kinematics sweeps (coarse nodes, then one batched Newton of the samples)
beside the C kernel's sweep (continuation from sample to sample) of the same samples, in one run.

Rows: the shipped fourbar (with its branch condition, and without: the branch checked by the sign of
det Phi_q) and PASIBOT over half a revolution at 10^4 angles (the common case: no interval retried), and
the kite four-bar, whose crank pin passes within 0.5 mm of the ground pivot (a near change point: both
routes retry the interval that crosses it in halved steps), at 229 and 1000 angles. Each numpy row prints its node
count and its agreement with the C route. Best of REPEAT for every route.

    python benchmarks/bench_continuation.py
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from timing import best_of  # noqa: E402

REPEAT = 5


def cases():
    from mechanisms import fourbar, pasibot
    from test_branch_c import kite

    def bare():  # the fourbar without its branch condition: the branch checked by the sign of det Phi_q
        m = fourbar.build()
        m.branches.clear()
        return m

    half = np.linspace(np.pi / 2, 1.5 * np.pi, 10_000)
    return [("fourbar", fourbar.build, half), ("fourbar, no branch condition", bare, half),
            ("pasibot", lambda: pasibot.build("foot", "unprimed"), half),
            ("kite", kite, np.linspace(0.0, 2 * np.pi, 229, endpoint=False)),
            ("kite", kite, np.linspace(0.0, 2 * np.pi, 1000, endpoint=False))]


def nodes(system, theta):
    """The number of continuation nodes of the numpy sweep of theta (from the reference to theta's end)."""
    solver = system.solver()
    ref, q_ref = solver.reference()
    path = np.vstack([ref[None], theta[:, None]])
    try:
        return len(solver._continue(path, q_ref, solver.step)[0])
    except ValueError as exc:
        return f"failed ({type(exc).__name__})"


def main():
    from mechsym import derive
    from mechsym.planar.kinematics import STEP_TOL

    print(f"continuation benchmark (best of {REPEAT}; machine: {os.cpu_count()} cores, load average "
          f"{', '.join(f'{v:.2f}' for v in os.getloadavg())})")
    for name, build, theta in cases():
        numpy, c = derive(build(), backend="numpy"), derive(build(), "c")
        line = f"  {name}, {len(theta)} angles: numpy "
        try:
            numpy.kinematics(theta[:10])
            t_num, k_num = best_of(lambda: numpy.kinematics(theta), REPEAT)
            line += f"{t_num:.4f} s ({nodes(numpy, theta)} nodes)"
        except ValueError as exc:
            k_num, line = None, line + f"error: {exc}"
        if c.backend.name == "c":
            lib, solver = c.functions, c.solver()
            q0 = solver.sweep(theta[:1, None]).q[0]
            run = lambda: lib.kinematics(theta, solver.params, q0, solver.col_scale, STEP_TOL, hmax=solver.step[0])
            t_c, (failed, status, q_c, *_) = best_of(run, REPEAT)
            line += f"; peer: the C kernel's sweep {t_c:.4f} s"
            if failed >= 0:
                line += f" (stopped at sample {failed}, status {status})"
            elif k_num is not None:
                line += f"; q agree norm-wise to {np.max(np.abs(k_num.q - q_c)) / np.max(np.abs(q_c)):.1e}"
        print(line)


if __name__ == "__main__":
    main()
