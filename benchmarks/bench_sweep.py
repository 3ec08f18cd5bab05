"""Sweep benchmark: throughput of a PASIBOT start-torque sweep on 1 and 2 processes, mechsym.studies.sweep against
Exudyn's ParameterVariation (a multiprocessing pool, the peer the design study is usually run with) on the
same study function, in one run; and the figures docs/scaling.md uses (cost per set of a four-bar inverse
sweep, a worker's start-up, the cache entry a worker loads, the bytes per result row).

    python benchmarks/bench_sweep.py [--quick]
    python benchmarks/bench_sweep.py --routes [M]  # one compiled call against set by set, M geometries
    python benchmarks/bench_sweep.py --design [N [W ...]] [--analysis inverse|kinematics|forward]
                                            # only the design study: N sets on W workers
    python benchmarks/bench_sweep.py --must-show  # only the design study's must-show figures (10^5 and 10^6 sets)

The machine's core count bounds the speed-up (2 cores: at most 2x).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUICK = "--quick" in sys.argv
DENSITIES = np.linspace(1.2, 1.8, 4 if QUICK else 8)
TOL = 1e-3 if QUICK else 1e-4


def start_torque_of(params):
    """The study as Exudyn's ParameterVariation calls it: a dict of parameters in, a number out."""
    from mechanisms.pasibot_study import start_torque

    return start_torque({"density": float(params["density"])}, tol=TOL, backend="c")


@dataclass(frozen=True)
class Timed:
    """The study with the CPU time of each set added as a figure (cpu_s): the work a sweep does,
    independent of how many other programs share the cores."""

    study: object

    @property
    def names(self):
        return [*self.study.names, "cpu_s"]

    def prepare(self, system):
        self.study.prepare(system)

    def __call__(self, system, params):
        t = time.process_time()
        out = self.study(system, params)
        return dict(out, cpu_s=time.process_time() - t)


@dataclass(frozen=True)
class SetBySet:
    """The study without its batch: one set at a time (the route of a study that cannot batch)."""

    study: object

    def __call__(self, system, params):
        return self.study(system, params)


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main():
    import warnings

    warnings.simplefilter("ignore")
    from mechanisms.sweep_studies import StartTorque
    from mechsym.app.registry import find
    from mechsym.studies.analyses import InverseOptions
    from mechsym.studies import TableStudy, sweep

    print(f"cores: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}; PASIBOT start torque (tol {TOL:g} N m) at {len(DENSITIES)} densities")
    study = Timed(StartTorque(tol=TOL))
    sets = {"density": list(DENSITIES)}
    sweep(find("pasibot"), {"density": [DENSITIES[0]]}, study)  # the C libraries compiled and cached before timing
    rows = []
    t1, serial = timed(lambda: sweep(find("pasibot"), sets, study))
    rows.append(("mechsym.studies.sweep, 1 process (serial)", t1))
    tp1, pool1 = timed(lambda: sweep(find("pasibot"), sets, study, workers=1, chunk=1))
    rows.append(("mechsym.studies.sweep, workers=1 (pool)", tp1))
    tp2, pool2 = timed(lambda: sweep(find("pasibot"), sets, study, workers=2, chunk=1))
    rows.append(("mechsym.studies.sweep, workers=2 (pool)", tp2))
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(2) as pool:  # workers started and warmed (derived, C loaded) before timing
        sweep(find("pasibot"), {"density": list(DENSITIES[:2])}, study, executor=pool, chunk=1)
        tw, warm = timed(lambda: sweep(find("pasibot"), sets, study, executor=pool, chunk=1))
    rows.append(("mechsym.studies.sweep, 2 warmed processes", tw))
    ref = serial["start_torque"]
    for other in (pool1, pool2, warm):
        assert np.max(np.abs(other["start_torque"] - ref)) <= 1e-14 * np.max(np.abs(ref)), "the pool's figures differ"
    try:
        from exudyn.processing import ParameterVariation

        pv = {"density": list(DENSITIES)}
        te1, (_, ex1) = timed(lambda: ParameterVariation(start_torque_of, pv, showProgress=False))
        rows.append(("Exudyn ParameterVariation, serial", te1))
        te2, (_, ex2) = timed(lambda: ParameterVariation(start_torque_of, pv, useMultiProcessing=True,
                                                         numberOfThreads=2, showProgress=False))
        rows.append(("Exudyn ParameterVariation, 2 processes", te2))
        for ex in (ex1, ex2):
            assert np.max(np.abs(np.ravel(ex) - ref)) <= 1e-14 * np.max(np.abs(ref)), "Exudyn's figures differ"
    except ImportError:
        print("(exudyn not installed: no peer rows)")
    n = len(DENSITIES)
    for name, t in rows:
        print(f"  {name:42s} {t:7.2f} s   {n / t:6.2f} sets/s   speed-up vs serial {t1 / t:4.2f}x")
    for name, table in (("serial", serial), ("workers=1", pool1), ("workers=2", pool2), ("2 warmed", warm)):
        print(f"  CPU time per set inside the study, {name:10s}: {np.mean(table['cpu_s']):.3f} s")

    # -- the figures of docs/scaling.md --------------------------------------------------------------
    fb = TableStudy(InverseOptions(omega=[3.0]), ("absmax:torque", "rms:torque"))
    sweep(find("fourbar"), {"density": [1.0]}, fb)
    m = 200 if QUICK else 1000
    tf, table = timed(lambda: sweep(find("fourbar"), {"density": np.linspace(1, 2, m)}, fb))
    ts, _ = timed(lambda: sweep(find("fourbar"), {"density": np.linspace(1, 2, m)}, SetBySet(fb)))
    tg, _ = timed(lambda: sweep(find("fourbar"), {"l_crank": np.linspace(0.04, 0.06, m // 50), "density": np.linspace(1, 2, 50)},
                                fb))
    from mechsym import derive
    from mechsym.app.registry import load_mechanism

    system = derive(load_mechanism("fourbar"), "c")
    theta = 2 * np.pi * np.arange(360) / 360
    th, _ = timed(lambda: [system.inverse(theta, [3.0], params={"density": d}) for d in np.linspace(1, 2, m)])
    print(f"four-bar inverse sweep, 360 angles per set, ms per set: batched over densities {tf / m * 1e3:.2f}, "
          f"batched over {m // 50} geometries x 50 densities {tg / m * 1e3:.2f}, set by set {ts / m * 1e3:.2f}; "
          f"a hand-written loop of System.inverse {th / m * 1e3:.2f}")
    geometry_sweep(m // 5)
    code = ("import time; t = time.perf_counter(); from mechsym.app.registry import find; "
            "from mechsym.studies.sweep import ModelRef; ModelRef(find('{}'), 'c').system(); "
            "print(time.perf_counter() - t)")
    for model in ("fourbar", "pasibot"):
        out = subprocess.run([sys.executable, "-c", code.format(model)], cwd=ROOT, capture_output=True, text=True,
                             check=True)
        lib = sweep.__globals__["_SYSTEMS"].get((find(model), None, True))
        size = Path(lib.functions.path, "lib.so").stat().st_size if lib is not None and lib.backend.name == "c" else float("nan")
        print(f"worker start-up ({model}: import, derive the declaration, load the cached C): "
              f"{float(out.stdout.split()[-1]):.2f} s; cache entry lib.so {size / 1e3:.0f} kB")
    path = ROOT / "benchmarks" / ".sweep_rows.csv"
    table.to_csv(path)
    print(f"result volume: {path.stat().st_size / len(table):.0f} bytes per CSV row (1 parameter, 2 figures, "
          "status, empty message)")
    path.unlink()


def geometry_sweep(m):
    """ms per set of a four-bar inverse sweep where every set changes the geometry (l_crank x l_rocker, one
    density each): all sets in one compiled call (ms_inverse_sets) against one call per set, and a
    hand-written loop of System.inverse, in the same run; the figures must agree to 1e-13."""
    from mechsym import derive
    from mechsym.app.registry import find, load_mechanism
    from mechsym.studies.analyses import InverseOptions
    from mechsym.studies import TableStudy, grid, sweep

    fb = TableStudy(InverseOptions(omega=[3.0]), ("absmax:torque", "rms:torque"))
    k = max(int(round(np.sqrt(m))), 2)
    sets = grid(l_crank=np.linspace(0.04, 0.06, k), l_rocker=np.linspace(0.12, 0.13, k))
    sweep(find("fourbar"), sets[:2], fb)
    tb, batched = timed(lambda: sweep(find("fourbar"), sets, fb))
    ts, one = timed(lambda: sweep(find("fourbar"), sets, SetBySet(fb)))
    system = derive(load_mechanism("fourbar"), "c")
    theta = 2 * np.pi * np.arange(360) / 360
    th, _ = timed(lambda: [system.inverse(theta, [3.0], params=p) for p in sets])
    a, b = (np.column_stack([t[n] for n in fb.names]) for t in (batched, one))
    assert np.linalg.norm(a - b) <= 1e-13 * np.linalg.norm(b), "the one-call figures differ"
    from mechsym.codegen.c_sets import inverse_sets
    from mechsym.codegen.constants import STEP
    from mechsym.planar.kinematics import STEP_TOL
    from mechsym.studies.sweep_sets import compiled_start, set_blocks

    params = np.array([system.params(p) for p in sets])  # the kernels alone, from the same reference
    start = compiled_start(system)

    def compiled():
        return np.concatenate([inverse_sets(system.functions, theta, params[lo:hi], ref, scale, STEP * coord,
                                            start.tol)[5] for lo, hi, ref, scale, coord, _ in set_blocks(start, params)])

    tc, u = timed(compiled)
    solvers = [system.solver(p) for p in sets]  # one call per set, from the Python solver's start
    lib = system.functions
    first = [(sv.params, sv.sweep(theta[:1, None]).q[0], sv.col_scale, sv.step[0]) for sv in solvers]
    tl, each = timed(lambda: [lib.inverse(theta, p, q0, sc, STEP_TOL, hmax=h) for p, q0, sc, h in first])
    assert np.max(np.abs(u - np.array([e[5] for e in each]))) <= 1e-12 * np.max(np.abs(u)), \
        "ms_inverse_sets differs from ms_inverse"
    n = len(sets)
    print(f"  the compiled kernels alone: ms_inverse_sets {tc / n * 1e3:.3f} ms per set, ms_inverse per set "
          f"{tl / n * 1e3:.3f} (its start found in Python beforehand); the rest of the batched sweep {(tb - tc) / n * 1e3:.2f} ms")
    print(f"four-bar inverse sweep over {n} geometries, 360 angles per set, ms per set: one compiled call for all "
          f"sets {tb / n * 1e3:.2f}, one call per set {ts / n * 1e3:.2f}; a hand-written loop of System.inverse "
          f"{th / n * 1e3:.2f}")


def set_routes(analysis, m):
    """ms per set of the four-bar's STUDIES[analysis] over m geometries on one core, in the same run: every set
    of a task in one compiled call (mechsym.studies.sweep_sets) against the set-by-set route (each set started
    by the Python solver, one compiled run per set); the figures must agree to 1e-12 (a forward run to 1e-10:
    its start, solved by another route, differs in its last bits, which the integration's steps amplify)."""
    from mechsym.app.registry import find
    from mechsym.studies import grid, sweep

    study = STUDIES[analysis]()
    k = max(int(round(np.sqrt(m))), 2)
    sets = grid(l_crank=np.linspace(0.045, 0.055, k), l_rocker=np.linspace(0.12, 0.13, k))
    sweep(find("fourbar"), sets[:2], study)
    tb, batched = min((timed(lambda: sweep(find("fourbar"), sets, study)) for _ in range(2)), key=lambda r: r[0])
    ts, one = min((timed(lambda: sweep(find("fourbar"), sets, SetBySet(study))) for _ in range(2)), key=lambda r: r[0])
    a, b = (np.column_stack([t[n] for n in study.names]) for t in (batched, one))
    differ = np.max(np.abs(a - b) / np.max(np.abs(b), axis=0))
    assert differ <= (1e-10 if analysis == "forward" else 1e-12), f"the one-call figures differ by {differ:.2g}"
    n = len(sets)
    print(f"four-bar {analysis} sweep over {n} geometries on one core, ms per set (best of 2): one compiled call "
          f"for the sets of a task {tb / n * 1e3:.3f}, set by set {ts / n * 1e3:.3f} ({ts / tb:.1f}x); figures "
          f"agree to {differ:.2g}; load average {os.getloadavg()[0]:.1f}")


CALLER = r"""
import json, resource, sys, time
import numpy as np
from mechsym.app.registry import find
from mechsym.studies import TableStudy, grid, sweep
sys.path.insert(0, "benchmarks")
from bench_sweep import STUDIES, peak_mb

n, workers, out, analysis = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
k = int(round(n ** 0.5))
study = STUDIES[analysis]()
sets = grid(l_crank=np.linspace(0.045, 0.055, k), l_rocker=np.linspace(0.12, 0.13, n // k))
cpu, wall = time.process_time(), time.perf_counter()
done = sweep(find("fourbar"), sets, study, workers=workers, out=out)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the pool's workers, ended and waited for
print(json.dumps({"wall": wall, "cpu": cpu, "workers_cpu": children.ru_utime + children.ru_stime, "sets": len(sets),
                  "failed": done.failed, "peak_mb": peak_mb()}))
"""


def peak_mb() -> float:
    """This process's peak resident memory in MB: VmHWM, the peak of its own address space (ru_maxrss would
    carry the peak of the process it was forked from, which Linux keeps across exec)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1e3
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def _inverse_study():
    from mechsym.studies import InverseOptions, TableStudy

    return TableStudy(InverseOptions(omega=[3.0], samples=360), ("absmax:torque", "rms:torque"))


def _kinematics_study():
    from mechsym.studies import KinematicsOptions, TableStudy

    return TableStudy(KinematicsOptions(samples=360), ("max:coupler.angle", "ptp:rocker.angle", "absmax:C.y''"))


def _forward_study():
    from mechsym.studies import ForwardOptions, TableStudy

    return TableStudy(ForwardOptions(torque=0.05, t_end=0.5), ("final:theta", "absmax:omega"))


STUDIES = {"inverse": _inverse_study, "kinematics": _kinematics_study, "forward": _forward_study}


def kernel_seconds(system, analysis, params):
    """(wall, CPU) seconds of the compiled calls of many sets alone (mechsym.codegen.c_sets, each set started from
    the reference assembly in C) for the study STUDIES[analysis] at the parameter vectors params (S, npar)."""
    from mechsym.codegen import c_sets
    from mechsym.codegen.constants import STEP
    from mechsym.core.timegrid import run_options
    from mechsym.studies.sweep_sets import compiled_start, set_blocks

    start, lib, args = compiled_start(system), system.functions, STUDIES[analysis]().analysis
    theta = 2 * np.pi * np.arange(360) / 360

    def run():
        for lo, hi, ref, scale, coord, _ in set_blocks(start, params):
            if analysis == "forward":
                opts = run_options(args.t_end, args.dt, args.rtol, args.atol)
                c_sets.forward_sets(lib, args.torque, args.theta0, args.omega0, opts.t_end, opts.grid(), opts.rtol,
                                    opts.atol, params[lo:hi], ref, scale, STEP * coord, start.tol)
            else:
                fn = c_sets.inverse_sets if analysis == "inverse" else c_sets.kinematics_sets
                fn(lib, theta, params[lo:hi], ref, scale, STEP * coord, start.tol)

    cpu = time.process_time()
    wall = timed(run)[0]
    return wall, time.process_time() - cpu


def design_study(n, workers=(1, 2), analysis="inverse") -> dict:
    """The four-bar over n geometries (l_crank x l_rocker), the study STUDIES[analysis] (inverse dynamics at
    360 angles reduced to the absmax and rms of the torque; kinematics at 360 angles; a forward run of 0.5 s),
    streamed to a CSV, warm cache: the kernel alone per set (the compiled call of many sets on up to 2000 of
    them, each started from the reference assembly; best of 3), then the whole sweep on each number of workers
    in a fresh calling process: its wall time beside the ideal (kernel time x sets / workers; the kernel's
    CPU time where it is less than its wall time, which other programs on a loaded machine inflate), the CPU of the
    whole sweep (the calling process and its workers) beside the kernel's (a ratio the machine's load does not
    change), the calling process's own peak memory and CPU per successful set. The files of every number of
    workers must be identical. Returns {workers: the figures}."""
    import json
    import tempfile

    from mechsym.app.registry import find
    from mechsym.studies import grid, sweep
    from mechsym.studies.sweep import ModelRef

    study = STUDIES[analysis]()
    k = int(round(n ** 0.5))
    sets = grid(l_crank=np.linspace(0.045, 0.055, k), l_rocker=np.linspace(0.12, 0.13, n // k))
    sweep(find("fourbar"), sets[:4], study, workers=1)  # compiled, and the workers' manifest recorded: a warm cache
    system = ModelRef(find("fourbar")).system()
    pick = np.linspace(0, len(sets) - 1, min(2000, len(sets))).astype(int)
    params = np.array([system.params(sets[int(i)]) for i in pick])
    wall, cpu = min(kernel_seconds(system, analysis, params) for _ in range(3))
    per_set, cpu_per_set = wall / len(pick), cpu / len(pick)
    print(f"design study: four-bar, {len(sets)} geometries, {analysis} ({', '.join(study.names)}), streamed to CSV; "
          f"load average {os.getloadavg()[0]:.1f} (uptime: {_uptime()})")
    print(f"  the kernel alone (ms_{analysis}_sets, start included, best of 3): {per_set * 1e3:.3f} ms per set "
          f"({cpu_per_set * 1e3:.3f} ms of CPU)")
    files, found = [], {}
    with tempfile.TemporaryDirectory() as folder:
        for w in workers:
            out = Path(folder, f"w{w}.csv")
            run = subprocess.run([sys.executable, "-c", CALLER, str(n), str(w), str(out), analysis], cwd=ROOT, check=True,
                                 capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
            r = json.loads(run.stdout.splitlines()[-1])
            r.update(ideal=min(per_set, cpu_per_set) * r["sets"] / w, load=os.getloadavg()[0])
            r["ratio"], ok = r["wall"] / r["ideal"], max(r["sets"] - r["failed"], 1)
            r["work"] = (r["cpu"] + r["workers_cpu"]) / (cpu_per_set * r["sets"])
            r["us_per_set"] = r["cpu"] / ok * 1e6
            print(f"  {w} worker(s): {r['wall']:.2f} s, ideal (kernel / workers) {r['ideal']:.2f} s, ratio "
                  f"{r['ratio']:.2f}; CPU of the sweep (calling process and workers) {r['work']:.2f}x the kernel's; "
                  f"calling process: peak memory {r['peak_mb']:.0f} MB, CPU {r['us_per_set']:.2f} us per successful "
                  f"set; {r['failed']} sets failed; load now {r['load']:.1f}")
            files.append(out.read_bytes())
            found[w] = r
        assert all(f == files[0] for f in files), "the files of every number of workers differ"
    return found


def must_show(full=None):
    """The figures the design study must show, in one run on a warm cache: the 10^5-geometry four-bar inverse
    sweep on 2 workers against the ideal (kernel time / workers), the calling process's peak memory for 10^6
    sets and its CPU per successful set. `full`: the 10^5 study's figures if already measured in this run."""
    full = full or design_study(100_000, (1, 2))
    big = design_study(1_000_000, (2,))[2]
    r = full[2]
    print(f"must show (load average {os.getloadavg()[0]:.1f} now): the {r['sets']}-geometry four-bar inverse sweep "
          f"on 2 workers {r['wall']:.2f} s, ideal {r['ideal']:.2f} s: ratio {r['ratio']:.2f} (target 1.5: "
          f"{'met' if r['ratio'] <= 1.5 else 'NOT met'}); {big['sets']} sets on 2 workers {big['wall']:.1f} s "
          f"(ratio {big['ratio']:.2f}): the calling process's peak memory {big['peak_mb']:.0f} MB (target < 200: "
          f"{'met' if big['peak_mb'] < 200 else 'NOT met'}), its CPU per successful set {big['us_per_set']:.2f} us "
          f"(target < 5: {'met' if big['us_per_set'] < 5 else 'NOT met'})")


def _uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "n/a"


if __name__ == "__main__":
    if "--routes" in sys.argv:  # only the batched against the set-by-set route: bench_sweep.py --routes [M]
        rest = [int(a) for a in sys.argv[1:] if a.isdigit()]
        for name in STUDIES:
            set_routes(name, rest[0] if rest else 400)
    elif "--design" in sys.argv:  # only the design study: bench_sweep.py --design [N [W ...]] [--analysis NAME]
        rest = [int(a) for a in sys.argv[1:] if a.isdigit()]
        name = sys.argv[sys.argv.index("--analysis") + 1] if "--analysis" in sys.argv else "inverse"
        design_study(rest[0] if rest else 100_000, tuple(rest[1:]) or (1, 2), name)
    elif "--must-show" in sys.argv:  # only the must-show figures
        must_show()
    else:
        main()
        for name in STUDIES:
            set_routes(name, 100 if QUICK else 400)
        if QUICK:
            design_study(10_000)
        else:
            must_show(design_study(100_000))
        design_study(2_000 if QUICK else 20_000, analysis="kinematics")
        design_study(400 if QUICK else 4_000, analysis="forward")
