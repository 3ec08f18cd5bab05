"""Spatial closed loops: per-state forward dynamics and the benchmarks' free motion, beside Pinocchio's
constraintDynamics (tests/oracles/spatial_loops: the same mechanisms as Pinocchio trees with RigidConstraintModel
closures, ProximalSettings(1e-14, 1e-12, 200)) in the same run.

    python benchmarks/bench_spatial_loops.py [--states N] [--samples N]

Cold: the derivation, generation and compilation into an empty cache (a temporary MECHSYM_CACHE), the library
of the compiled forward dynamics included; warm: the same system built again from the cache. Per state: the
constrained accelerations at N consistent states (one Python call per state on every side) by the compiled
route (one generated C call: mechsym.spatial.loop_compiled), by the Python route (the KKT system in numpy
from the generated H, bias, J and gamma: loop_dynamics.kkt_accelerations) and by Pinocchio's constraintDynamics
(its constraint data initialised once, pin.constraintDynamics per state), and the largest difference of the
compiled route from the other two relative to the accelerations' size. The mechanisms are the oracle's
declarations (tests/test_spatial_loops_oracles.declare, the same as the shipped models: Bricard's, the governor,
the RSSR; and a delta robot with universal joints, which ships none).
Free motion: 10 s of Bricard's mechanism and of the governor at rtol 1e-12 (CPU time; the oracle's run projects
onto the constraints every 0.5 s, ours solves the dependent coordinates at every state), on the C backend (each
right-hand side two C calls: the dependent coordinates, the accelerations) and on numpy, and Exudyn's
generalized-alpha run of the same model (fixed step 1e-3 s, about 5e-6 m from the reference:
tests/oracles/spatial_loops/README.md) where Exudyn is installed. Sweeps: the kinematics of one driven coordinate
at N samples, assembly included, in C and by the numpy route on the same system. The machine's load average is printed at the
start and the end: timings on a shared machine move with it.
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

MODELS = {"bricard": bricard, "governor": governor, "rssr": rssr, "delta": None}


def build(tree):
    """A LoopSystem with its generated functions loaded (C) and its solver, assembled, the compiled forward
    dynamics loaded."""
    system = LoopSystem(tree, backend="c")
    solver = LoopSolver(system)
    q = solver.close()
    dyn.accelerations(solver, q, np.zeros(system.nv), np.zeros(system.nv))
    return solver


def declaration(name, module):
    """The oracle's declaration of the problem (tests/test_spatial_loops_oracles.declare: its joint names map
    onto Pinocchio's), else the shipped model (None for the delta robot, which ships none)."""
    try:
        from tests.oracles.spatial_loops import pinocchio_models as pm
        from tests.test_spatial_loops_oracles import declare
    except ImportError:
        return None if module is None else module.build()
    return declare(pm.build(name).problem)[0]


def states(name, solver, count):
    """count consistent states from the oracle's assembly at random driven values and rates (10 distinct ones,
    repeated): [(ours q, v)], [(Pinocchio's q, v)] of the same states."""
    from tests.oracles.spatial_loops import pinocchio_models as pm
    from tests.test_spatial_loops_oracles import _maps, declare

    ref = pm.build(name)
    qmap, vmap = _maps(solver.s, ref, declare(ref.problem)[1])
    rng = np.random.default_rng(0)
    mine, theirs = [], []
    for _ in range(max(1, count // 10)):
        lengths = {n for n in ref.problem.driven if n.startswith(("platform", "slider"))}
        values = {n: rng.uniform(-1, 1) * (0.03 if n in lengths else 0.3) for n in ref.problem.driven}
        qp = pm.assemble(ref, values)
        vp = pm.velocity(ref, qp, {n: rng.normal() for n in ref.problem.driven})
        q, v = solver.s.neutral(), np.zeros(solver.s.nv)
        q[qmap[:, 0]] = qp[qmap[:, 1]]
        v[vmap[:, 0]] = vp[vmap[:, 1]]
        mine.append((q, v))
        theirs.append((qp, vp))
    return mine * 10, theirs * 10, ref, vmap


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--states", type=int, default=200)
    parser.add_argument("--samples", type=int, default=1000, help="driven values of a kinematics sweep")
    args = parser.parse_args()
    try:
        from tests.oracles.spatial_loops import pinocchio_models as pm
        from tests.oracles.spatial_loops import reference_runs
    except ImportError:
        pm = reference_runs = None
        print("tests/oracles/spatial_loops not found: mechsym only")
    print("load average at the start: %.2f %.2f %.2f (2 cores, shared)" % os.getloadavg())
    print(f"{'model':9s} {'cold s':>7s} {'warm s':>7s} {'C us/state':>11s} {'numpy KKT us':>13s} "
          f"{'pinocchio us':>13s} {'C/pin':>6s} {'|C-KKT|':>8s} {'|C-pin|':>8s}")
    for name, module in MODELS.items():
        tree = declaration(name, module)
        if tree is None:
            continue
        with tempfile.TemporaryDirectory() as cache:
            os.environ["MECHSYM_CACHE"] = cache
            t = time.perf_counter()
            build(tree)
            cold = time.perf_counter() - t
            t = time.perf_counter()
            solver = build(tree)
            warm = time.perf_counter() - t
        os.environ.pop("MECHSYM_CACHE")
        s = solver.s
        zero = np.zeros(s.nv)
        pin = err_kkt = err_pin = float("nan")
        if pm is not None:
            mine, theirs, ref, vmap = states(name, solver, args.states)
            peer = pm.dynamics(ref)
            pin = best_time(lambda: [peer(q, v) for q, v in theirs]) / len(theirs) * 1e6
            for (q, v), (qp, vp) in zip(mine[:10], theirs[:10]):
                a = dyn.accelerations(solver, q, v, zero)
                size = np.abs(a).max()
                err_kkt = np.nanmax([err_kkt, np.abs(a - dyn.kkt_accelerations(solver, q, v, zero)).max() / size])
                err_pin = np.nanmax([err_pin, np.abs(a[vmap[:, 0]] - peer(qp, vp)[vmap[:, 1]]).max() / size])
        else:
            mine = [(solver.close(), zero)] * args.states
        ours = best_time(lambda: [dyn.accelerations(solver, q, v, zero) for q, v in mine]) / len(mine) * 1e6
        kkt = best_time(lambda: [dyn.kkt_accelerations(solver, q, v, zero) for q, v in mine]) / len(mine) * 1e6
        print(f"{name:9s} {cold:7.2f} {warm:7.2f} {ours:11.2f} {kkt:13.1f} {pin:13.2f} {ours / pin:6.3f} "
              f"{err_kkt:8.1e} {err_pin:8.1e}")
    print()
    try:
        from tests.oracles.spatial_loops import exudyn_models
    except ImportError:
        exudyn_models = None
    print(f"{'free motion':12s} {'C cpu s':>8s} {'nfev':>6s} {'numpy cpu s':>12s} {'nfev':>6s} "
          f"{'pinocchio cpu s':>16s} {'nfev':>6s} {'exudyn cpu s (h 1e-3)':>22s}")
    for name in ("bricard", "governor"):
        module = MODELS[name]
        cpu, nfev = [], []
        for solver in (build(module.build()), LoopSolver(LoopSystem(module.build(), backend="numpy"))):
            s = solver.s
            q0, v0 = (np.zeros(s.nq), np.zeros(s.nv)) if name == "bricard" else module.initial_state(s)
            t = time.process_time()
            run = dyn.forward(solver, q0, v0, 10.0, dt=0.01, rtol=1e-12)
            cpu.append(time.process_time() - t)
            nfev.append(run.nfev)
        peer = reference_runs.free_motion(name) if reference_runs else {"cpu": float("nan"), "nfev": 0}
        exudyn = float("nan")
        if exudyn_models is not None:
            try:
                exudyn = exudyn_models.run(name, 1e-3, 10.0, omega=governor.OMEGA0 if name == "governor" else None)[2]
            except ImportError:
                pass
        print(f"{name:12s} {cpu[0]:8.2f} {nfev[0]:6d} {cpu[1]:12.2f} {nfev[1]:6d} {peer['cpu']:16.2f} "
              f"{peer['nfev']:6d} {exudyn:22.2f}")
    print()
    sweeps(args.samples)
    print("load average at the end: %.2f %.2f %.2f" % os.getloadavg())


def sweeps(samples):
    """The kinematics of one driven coordinate at `samples` values (assembly, continuation, Newton, checks,
    derivatives): in C and by the numpy route on the same system, and their largest difference in q."""
    from mechsym.codegen.constants import STEP

    print(f"{'sweep':22s} {'C ms':>8s} {'numpy ms':>9s} {'|q C - q numpy|':>16s}")
    for name, theta in (("bricard J1 0..1.5", np.linspace(0.0, 1.5, samples)),
                        ("rssr crank 0..2pi", np.linspace(0.0, 2 * np.pi, samples))):
        solver = build((bricard if name.startswith("bricard") else rssr).build())

        def numpy_route():
            q0 = solver.assemble(theta[:1])
            dist = np.concatenate([[0.0], np.cumsum(np.abs(np.diff(theta)) / solver.theta_scale[0])])
            nodes = np.flatnonzero(np.diff(np.floor(dist / STEP).astype(int), prepend=-1))
            return solver.numpy_sweep(theta[:, None], nodes, q0)

        compiled = best_time(lambda: solver.sweep(theta)) * 1e3
        numpy = best_time(numpy_route) * 1e3
        print(f"{name:22s} {compiled:8.1f} {numpy:9.1f} {np.abs(solver.sweep(theta).q - numpy_route()[0]).max():16.1e}")


if __name__ == "__main__":
    main()
