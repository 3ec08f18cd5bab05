"""Warm CLI start: `mechsym inverse fourbar --omega 3` with the library and its manifest cached, against
`python -c "import numpy"` (the floor of any numpy program), median wall time of 10 runs of each, in one run;
and the full route (derivation with sympy, library from the cache) for comparison. Then a sweep worker's
first task (a fresh process evaluating an inverse study at 8 densities) from the sweep manifest
(mechsym.studies.sweep_warm) against the same task with the model derived first, median of 5 each, interleaved.

    python benchmarks/bench_warm.py
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 10


def wall(cmd, env):
    t = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    env = dict(os.environ, MECHSYM_CACHE=tempfile.mkdtemp(prefix="mechsym-bench-warm-"))
    inverse = [sys.executable, "-m", "mechsym", "inverse", "fourbar", "--omega", "3"]
    cold = wall(inverse, env)                           # derives, compiles, writes the manifest
    numpy = [sys.executable, "-c", "import numpy"]
    times = {"numpy": [], "warm": []}
    for _ in range(RUNS):                               # interleaved: the same load for both
        times["numpy"].append(wall(numpy, env))
        times["warm"].append(wall(inverse, env))
    full = [wall(inverse + ["--param", "density=1"], env) for _ in range(3)]  # the default value, full route
    a, b = statistics.median(times["numpy"]), statistics.median(times["warm"])
    print(f"cold `mechsym inverse fourbar --omega 3` (derive, generate, compile): {cold:.3f} s")
    print(f"python -c 'import numpy', median of {RUNS}: {a:.3f} s")
    print(f"warm `mechsym inverse fourbar --omega 3`, median of {RUNS}: {b:.3f} s   (+{b - a:.3f} s over numpy)")
    print(f"the same with --param density=1 (the default value: the full route, library cached), median of 3: "
          f"{statistics.median(full):.3f} s")
    worker = {"warm": [], "derived": []}
    subprocess.run([sys.executable, "-c", SWEEP], cwd=ROOT, env=env, check=True)  # records the manifest
    for _ in range(5):
        for route in worker:
            worker[route].append(wall([sys.executable, "-c", WORKER, route], env))
    print(f"a sweep worker's first task (fresh process, 8 densities, 360 angles, 2 speeds), median of 5: "
          f"{statistics.median(worker['warm']):.3f} s from the manifest, "
          f"{statistics.median(worker['derived']):.3f} s deriving the model")
    print(f"load: {os.getloadavg()[0]:.1f} (1-minute average)")


STUDY = 'TableStudy(InverseOptions(omega=[2.0, 3.0]), ["absmax:torque"])'
SWEEP = f"""
from concurrent.futures import ThreadPoolExecutor
from mechsym.app.registry import find
from mechsym.studies.analyses import InverseOptions
from mechsym.studies import TableStudy, grid, sweep
with ThreadPoolExecutor(1) as pool:
    sweep(find("fourbar"), grid(density=[1.0, 2.0]), {STUDY}, executor=pool)
"""
WORKER = f"""
import sys
from mechsym.app.registry import find
from mechsym.studies.analyses import InverseOptions
from mechsym.studies import TableStudy, grid
from mechsym.studies.sweep import ModelRef, evaluate
ref = ModelRef(find("fourbar"))
if sys.argv[1] == "derived":
    ref.system()
rows = evaluate(ref, {STUDY}, grid(density=[0.5 + 0.25 * k for k in range(8)]))
assert all(r[1] == "" for r in rows) and ("sympy" in sys.modules) == (sys.argv[1] == "derived")
"""


if __name__ == "__main__":
    main()
