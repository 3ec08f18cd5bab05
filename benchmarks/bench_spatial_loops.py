"""Spatial closed loops: per-state forward dynamics and the benchmarks' free motion, beside Pinocchio's
constraintDynamics (tests/oracles/spatial_loops: the same mechanisms as Pinocchio trees with RigidConstraintModel
closures, ProximalSettings(1e-14, 1e-12, 200)) in the same run.

    python benchmarks/bench_spatial_loops.py [--states N]

Cold: the derivation, generation and compilation into an empty cache (a temporary MECHSYM_CACHE); warm: the
same system built again from the cache. Per state: the constrained accelerations at N consistent states (one
Python call per state on both sides). Free motion: 10 s of Bricard's mechanism and of the governor at rtol
1e-12 (CPU time; the oracle's run projects onto the constraints every 0.5 s, ours solves the dependent
coordinates at every state), and Exudyn's generalized-alpha run of the same model (fixed step 1e-3 s, about
5e-6 m from the reference: tests/oracles/spatial_loops/README.md) where Exudyn is installed.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from timing import best_time  # noqa: E402

from mechanisms import bricard, governor, rssr  # noqa: E402
from mechsym.spatial import loop_dynamics as dyn  # noqa: E402
from mechsym.spatial.loop_kinematics import LoopSolver  # noqa: E402
from mechsym.spatial.loops import LoopSystem  # noqa: E402

MODELS = {"bricard": bricard, "governor": governor, "rssr": rssr}


def build(module):
    """A LoopSystem with its generated functions loaded (C) and its solver, assembled."""
    system = LoopSystem(module.build(), backend="c")
    solver = LoopSolver(system)
    q = solver.close()
    dyn.accelerations(solver, q, np.zeros(system.nv), np.zeros(system.nv))
    return solver


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--states", type=int, default=200)
    args = parser.parse_args()
    try:
        from tests.oracles.spatial_loops import pinocchio_models as pm
        from tests.oracles.spatial_loops import reference_runs
    except ImportError:
        pm = reference_runs = None
        print("tests/oracles/spatial_loops not found: mechsym only")
    print(f"{'model':10s} {'cold s':>8s} {'warm s':>8s} {'mechsym us/state':>17s} {'pinocchio us/state':>19s} {'ratio':>6s}")
    for name, module in MODELS.items():
        with tempfile.TemporaryDirectory() as cache:
            os.environ["MECHSYM_CACHE"] = cache
            t = time.perf_counter()
            build(module)
            cold = time.perf_counter() - t
            t = time.perf_counter()
            solver = build(module)
            warm = time.perf_counter() - t
        os.environ.pop("MECHSYM_CACHE")
        s = solver.s
        ours = pin = float("nan")
        if pm is not None:
            ref = pm.build(name)
            rng = np.random.default_rng(0)
            states = []
            for _ in range(args.states // 10):
                values = {n: rng.uniform(-1, 1) * (0.03 if n == "slider" else 0.3) for n in ref.problem.driven}
                qp = pm.assemble(ref, values)
                vp = pm.velocity(ref, qp, {n: rng.normal() for n in ref.problem.driven})
                states.append((qp, vp))
            states = states * 10
            names = [n if n in ref.q_index else n.replace("J", "j") for n in s.coordinate_names]
            if all(n in ref.q_index for n in names):       # one coordinate per joint: the same q and v
                iq = [ref.q_index[n] for n in names]
                iv = [ref.coordinate[n] for n in names]
                mine = [(qp[iq], vp[iv]) for qp, vp in states]
                zero = np.zeros(s.nv)
                ours = best_time(lambda: [dyn.accelerations(solver, q, v, zero) for q, v in mine]) / len(mine) * 1e6
            pin = best_time(lambda: [pm.forward_dynamics(ref, q, v) for q, v in states]) / len(states) * 1e6
        else:
            q = solver.close()
            zero = np.zeros(s.nv)
            ours = best_time(lambda: [dyn.accelerations(solver, q, zero, zero) for _ in range(args.states)]) \
                / args.states * 1e6
        print(f"{name:10s} {cold:8.2f} {warm:8.2f} {ours:17.1f} {pin:19.1f} {ours / pin:6.2f}")
    print()
    try:
        from tests.oracles.spatial_loops import exudyn_models
    except ImportError:
        exudyn_models = None
    print(f"{'free motion':12s} {'mechsym cpu s':>14s} {'nfev':>6s} {'pinocchio cpu s':>16s} {'nfev':>6s} "
          f"{'exudyn cpu s (h 1e-3)':>22s}")
    for name in ("bricard", "governor"):
        module = MODELS[name]
        solver = build(module)
        s = solver.s
        q0, v0 = (np.zeros(s.nq), np.zeros(s.nv)) if name == "bricard" else module.initial_state(s)
        t = time.process_time()
        run = dyn.forward(solver, q0, v0, 10.0, dt=0.01, rtol=1e-12)
        cpu = time.process_time() - t
        peer = reference_runs.free_motion(name) if reference_runs else {"cpu": float("nan"), "nfev": 0}
        exudyn = float("nan")
        if exudyn_models is not None:
            try:
                exudyn = exudyn_models.run(name, 1e-3, 10.0, omega=governor.OMEGA0 if name == "governor" else None)[2]
            except ImportError:
                pass
        print(f"{name:12s} {cpu:14.2f} {run.nfev:6d} {peer['cpu']:16.2f} {peer['nfev']:6d} {exudyn:22.2f}")


if __name__ == "__main__":
    main()
