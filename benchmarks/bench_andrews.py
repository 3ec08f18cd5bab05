"""Andrews' squeezing mechanism (mechanisms/andrews.py; the Test Set for IVP Solvers' "andrews" problem,
t = 0 ... 0.03 s): mechsym's forward run (C: the reduced ODE and DOP853 in one call; numpy: scipy's DOP853
on the tracked reduced form) beside scipy's DOP853 on the test set's own index-1 equations written by hand
(tests/oracles/andrews_testset.py: a 13 x 13 solve per evaluation), at the same tolerances, in one run.
Per route: CPU time (the best of REPEAT runs; mechsym's generation and compilation are done before, cached)
and the largest error of the seven angles at 0.03 s against the test set's published reference.

    python benchmarks/bench_andrews.py
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from oracles import andrews_testset as testset  # noqa: E402

REPEAT = 3
RTOLS = (1e-6, 1e-9, 1e-12)


def cpu_best(fn):
    """(the least CPU time of REPEAT calls, the last result)."""
    best, out = np.inf, None
    for _ in range(REPEAT):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def angles(system, run):
    k = system.kinematics_table(run["beta"][-1:])
    b = {n: k[f"{n}.angle"][0] for n in ("crank", "rod", "link3", "link4", "link5", "link6", "link7")}
    return np.array([b["crank"], b["rod"] - b["crank"], b["link3"], b["link4"] - b["link5"], b["link5"],
                     b["link6"] - b["link7"], b["link7"]])


def error(q):
    return float(np.max(np.abs((q - testset.REFERENCE_Q + np.pi) % (2 * np.pi) - np.pi)))


def main():
    from mechanisms import andrews
    from mechsym import derive

    systems = {b: derive(andrews.build(), b) for b in ("c", "numpy")}
    print(f"{'rtol':>7} {'route':<28} {'CPU s':>9} {'max angle error':>16} {'scipy / route':>15}")
    for rtol in RTOLS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            peer_cpu, sol = cpu_best(lambda: testset.integrate(rtol=rtol, atol=rtol))
        rows = [("scipy DOP853, test-set equations", peer_cpu, error(sol.y[:7, -1]))]
        for backend, system in systems.items():
            cpu, run = cpu_best(lambda: system.forward(andrews.MOM, andrews.BETA0, 0.0, 0.03, dt=0.03, rtol=rtol,
                                                       atol=rtol, dense_output=False))
            rows.append((f"mechsym {backend}", cpu, error(angles(system, run))))
        for name, cpu, err in rows:
            print(f"{rtol:7.0e} {name:<28} {cpu:9.4f} {err:16.2e} {peer_cpu / cpu:14.1f}x")


if __name__ == "__main__":
    main()
