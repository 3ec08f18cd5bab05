"""Benchmark: the URDF files of example-robot-data's loaders read, derived and compared with Pinocchio; writes
the tables of docs/robots.md (between their markers).

    python benchmarks/bench_robots.py [--robots ur5,panda,...] [--states 10000] [--cpp] [--no-write]

For each loader, in a fresh interpreter (each robot's memory freed after it):
1. the file read (read_urdf, as Pinocchio reads it: docs/robots.md), its sizes (nq, nv, bodies);
2. cold: derivation, generation and compilation of the C into an empty cache (the Python extension of the
   calls, built once per Python and not per robot, is built into it first): the per-state library that
   `derive` builds; lanes: the library of the batched entry points on SIMD lanes, which the first call of 8
   states or more builds (printed below the row); warm: a fresh interpreter reading the file and loading
   both libraries from that cache (imports included), best of 3;
3. batched, per state: H and the bias of --states random states, in calls of 1000 states
   (mass_matrix(q), bias(q, v)), against Pinocchio's Python bindings (crba + nonLinearEffects, one call each
   per state) and, with --cpp, Pinocchio's C++ loop over as many states (benchmarks/pinocchio_loop.cpp at -O3
   -march=native, built once per run; the C++ loop and mechsym alternate for 3 rounds): each route timed
   over chunks of 1000 states, keeping its fastest chunk (on a shared machine a long interval is always
   interrupted); one state per Python call (mass_matrix and bias, against crba and nonLinearEffects) over
   1000 states, best of --repeat; the 1-minute load average, the largest seen during the robot's run;
4. the largest relative error against Pinocchio over 20 random states of H, bias, gravity, RNEA, ABA and
   every link frame's position, rotation, Jacobian and classical-acceleration bias (tests/oracles/robots.py:
   mimic joints against G^T (Pinocchio's independent model) G, continuous joints' (cos, sin) mapped); the
   timed Pinocchio model is that independent model.
A file mechsym refuses is a row with the refusal; so is one that Pinocchio refuses. Rows are kept for robots
not run this time (--robots), so the tables can be filled in pieces; the machine has 2 shared cores, so the
timings move by about 2x between runs (the load column says how busy it was).
With --single K, also one state per Python call over K states for H, bias and RNEA through mechsym's
extension (mechsym.codegen.c_extension), through ctypes and Pinocchio's bindings (crba, nonLinearEffects,
rnea), printed in a further table.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "robots.md")
BEGIN, END = "<!-- robots table: written by benchmarks/bench_robots.py -->", "<!-- end of robots table -->"
SPEED_BEGIN = "<!-- speed table: written by benchmarks/bench_robots.py --cpp -->"
SPEED_END = "<!-- end of speed table -->"
# the robots of the speed table, from an arm to a 50-joint humanoid
SPEED_ROBOTS = ("ur5", "panda", "solo12", "anymal", "go1", "b1_z1", "g1", "talos_full")

ONE = r'''
import json, os, subprocess, sys, time, warnings
sys.path.insert(0, os.path.join(ROOT, "tests"))
import numpy as np
from oracles.robots import Reference, errors, loaders
path, floating = loaders()[NAME]
row = {"robot": NAME, "file": os.path.basename(path)}
import pinocchio as pin
try:
    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
except Exception as exc:
    row["pinocchio"] = "refused"
from mechsym.core.errors import InputError
from mechsym.spatial import read_urdf
from mechsym import derive
from mechsym.codegen import c_extension
c_extension.module()                     # (built once per Python, not per robot: not part of the cold time)
loads = [os.getloadavg()[0]]
t = time.perf_counter()
try:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tree = read_urdf(path, floating=floating)
except InputError as exc:
    row["refused"] = str(exc).replace(path, os.path.basename(path))
    print(json.dumps(row)); sys.exit(0)
row["read"] = time.perf_counter() - t
row["warnings"] = len(caught)
t = time.perf_counter()
system = derive(tree)
row["cold"] = time.perf_counter() - t
t = time.perf_counter()
system.prepare(batched=True)             # the library of the batched entry points on lanes (first batch)
row["lanes"] = time.perf_counter() - t
row.update(nq=system.nq, nv=system.nv, bodies=len(tree.bodies), mimic=len(tree.mimics()))
code = ("import time, warnings; t = time.perf_counter(); warnings.simplefilter('ignore'); "
        "from mechsym import derive, read_urdf; "
        f"derive(read_urdf({path!r}, floating={floating})).prepare(batched=True); print(time.perf_counter() - t)")
row["warm"] = min(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                       env=dict(os.environ, PYTHONPATH=ROOT)).stdout) for _ in range(3))
reference = Reference(system, path, floating)
q, v, _ = reference.states(STATES, seed=1)
CHUNK = min(1000, len(q))       # states per timed interval of the batched routes (the C++ loop's CHUNK)
def per_state(*fs, rounds=3):
    """Microseconds per state of the functions fs (each f(i, j) on the states i..j-1), each timed over chunks
    of CHUNK states for `rounds` rounds, keeping each one's fastest chunk, summed (as the C++ loop times its
    loops: on a shared machine a long interval is always interrupted)."""
    fastest = [float("inf")] * len(fs)
    for _ in range(rounds):
        for i in range(0, len(q) - CHUNK + 1, CHUNK):
            for n, f in enumerate(fs):
                t0 = time.perf_counter()
                f(i, i + CHUNK)
                fastest[n] = min(fastest[n], time.perf_counter() - t0)
    return 1e6 * sum(fastest) / CHUNK
m, d = reference.model, reference.data
qp = np.array([reference.pinocchio_q(x) for x in q])
vp = v @ reference.G.T
def crba(i, j):
    for a in qp[i:j]:
        pin.crba(m, d, a)
def nle(i, j):
    for a, b in zip(qp[i:j], vp[i:j]):
        pin.nonLinearEffects(m, d, a, b)
batched = lambda: per_state(lambda i, j: system.mass_matrix(q[i:j]), lambda i, j: system.bias(q[i:j], v[i:j]))
if CPP:
    # the C++ loop and mechsym alternate, and each keeps its best round
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import tempfile
    import pinocchio_cpp
    with tempfile.TemporaryDirectory() as folder:
        run = pinocchio_cpp.runner(CPP, m, len(q), folder)
        rounds = [(sum(run()), batched()) for _ in range(3)]
        loads.append(os.getloadavg()[0])
    row["cpp_us"] = min(c for c, _ in rounds)
    row["mechsym_us"] = min(x for _, x in rounds)
else:
    row["mechsym_us"] = batched()
row["pinocchio_us"] = per_state(crba, nle, rounds=1)
def per_call(f, *arrays):
    """Microseconds per call of f on each state of `arrays` in turn, best of REPEAT rounds."""
    times = []
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        for x in zip(*arrays):
            f(*x)
        times.append(time.perf_counter() - t0)
    return 1e6 * min(times) / len(arrays[0])
k = min(1000, len(q))
row["one_hb_us"] = per_call(lambda a, b: (system.mass_matrix(a), system.bias(a, b)), q[:k], v[:k])
row["pinocchio_one_hb_us"] = per_call(lambda a, b: (pin.crba(m, d, a), pin.nonLinearEffects(m, d, a, b)),
                                      qp[:k], vp[:k])
loads.append(os.getloadavg()[0])
if SINGLE:
    # one state per Python call: H, the bias and RNEA through the extension, through ctypes (a second system
    # derived from the warm cache where the extension is not built), and Pinocchio's bindings
    k = min(SINGLE, len(q))
    qs, vs, ap = q[:k], v[:k], np.random.default_rng(2).standard_normal((k, system.nv))
    def ours(s):
        return [per_call(s.mass_matrix, qs), per_call(s.bias, qs, vs), per_call(s.inverse, qs, vs, ap)]
    row["extension_one_us"] = ours(system)
    c_extension.module = lambda: None
    row["ctypes_one_us"] = ours(derive(tree))
    app = ap @ reference.G.T
    row["pinocchio_one_us"] = [per_call(lambda a: pin.crba(m, d, a), qp[:k]),
                               per_call(lambda a, b: pin.nonLinearEffects(m, d, a, b), qp[:k], vp[:k]),
                               per_call(lambda a, b, c: pin.rnea(m, d, a, b, c), qp[:k], vp[:k], app)]
e = errors(system, reference, list(tree.bodies))
row["error"] = max(e.values())
row["singular"] = "aba" not in e
row["load"] = max(loads + [os.getloadavg()[0]])
print(json.dumps(row))
'''


def run_one(name, states, cache, single=0, repeat=5, cpp=None):
    code = ONE.replace("ROOT", repr(ROOT)).replace("NAME", repr(name)).replace("STATES", str(states)).replace(
        "SINGLE", str(single)).replace("REPEAT", str(repeat)).replace("CPP", repr(cpp))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT, MECHSYM_CACHE=cache))
    if proc.returncode != 0:
        return {"robot": name, "failed": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def row_text(r) -> str:
    if "failed" in r:
        return f"| {r['robot']} | | | | failed: {r['failed']} | | | | | |"
    if "refused" in r:
        who = "Pinocchio refuses it too" if r.get("pinocchio") == "refused" else "Pinocchio reads it"
        return f"| {r['robot']} | {r['file']} | | | refused: {r['refused']} ({who}) | | | | | |"
    notes = []
    if r["mimic"]:
        notes.append(f"{r['mimic']} mimic")
    if r["warnings"]:
        notes.append(f"{r['warnings']} warning{'s' if r['warnings'] > 1 else ''}")
    if r["singular"]:
        notes.append("H singular (massless moving links): no ABA")
    return (f"| {r['robot']} | {r['file']} | {r['nq']} / {r['nv']} | {r['bodies']} | {'; '.join(notes)} | "
            f"{r['cold']:.1f} | {r['warm']:.2f} | {r['mechsym_us']:.2f} | {r['pinocchio_us']:.1f} | {r['error']:.1e} |")


HEADER = ("| loader | file | nq / nv | bodies | notes | cold s | warm s | mechsym us/state | Pinocchio us/state "
          "| max error |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")


def single_table(rows) -> str:
    """One state per Python call (us, best of --repeat rounds): H, bias and RNEA through mechsym's extension and
    ctypes routes and Pinocchio's bindings (crba, nonLinearEffects, rnea), with the machine's load."""
    lines = ["| robot | nv | what | mechsym extension us | mechsym ctypes us | Pinocchio us | Pinocchio / extension "
             "| load (1 min) |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        for i, (what, peer) in enumerate((("H", "crba"), ("bias", "nonLinearEffects"), ("RNEA", "rnea"))):
            ext, ct, pi = r["extension_one_us"][i], r["ctypes_one_us"][i], r["pinocchio_one_us"][i]
            lines.append(f"| {r['robot']} | {r['nv']} | {what} ({peer}) | {ext:.2f} | {ct:.2f} | {pi:.2f} | "
                         f"{pi / ext:.2f} | {r['load']:.2f} |")
    return "\n".join(lines)


SPEED_HEADER = ("| robot | nq / nv | cold s | warm s | batched H + bias: mechsym us/state | Pinocchio C++ us/state | "
                "Pinocchio bindings us/state | C++ / mechsym | one state per Python call: mechsym us | Pinocchio "
                "bindings us | bindings / mechsym | load (1 min) |\n"
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")


def speed_row(r) -> str:
    """A row of the speed table (a robot timed with --cpp)."""
    return (f"| {r['robot']} | {r['nq']} / {r['nv']} | {r['cold']:.1f} | {r['warm']:.2f} | {r['mechsym_us']:.3f} | "
            f"{r['cpp_us']:.3f} | {r['pinocchio_us']:.2f} | {r['cpp_us'] / r['mechsym_us']:.1f} | {r['one_hb_us']:.2f} | "
            f"{r['pinocchio_one_hb_us']:.2f} | {r['pinocchio_one_hb_us'] / r['one_hb_us']:.2f} | {r['load']:.1f} |")


def _replace_rows(text, begin, end, header, rows, order):
    """`text` with the table between `begin` and `end` holding `rows` (robot -> line) and the rows it had
    for other robots, in `order` (robots not in it last); the table is appended where it has no markers."""
    old = {}
    if begin in text:
        for line in text.split(begin, 1)[1].split(end, 1)[0].splitlines():
            match = re.match(r"\| (\S+) \|", line)
            if match and match.group(1) not in ("loader", "robot", "---"):
                old[match.group(1)] = line
    old.update(rows)
    names = [n for n in order if n in old] + sorted(n for n in old if n not in order)
    table = "\n".join([begin, header, *(old[n] for n in names), end])
    if begin in text:
        return text.split(begin, 1)[0] + table + text.split(end, 1)[1]
    return text.rstrip() + "\n\n" + table + "\n"


def write_table(rows):
    """The rows into docs/robots.md's tables (the speed table for rows timed against the C++ loop)."""
    from example_robot_data import robots_loader

    from mechsym.core.output import write_text

    text = open(DOC).read()
    text = _replace_rows(text, BEGIN, END, HEADER, {r["robot"]: row_text(r) for r in rows}, list(robots_loader.ROBOTS))
    timed = {r["robot"]: speed_row(r) for r in rows if "cpp_us" in r}
    if timed:
        text = _replace_rows(text, SPEED_BEGIN, SPEED_END, SPEED_HEADER, timed, list(SPEED_ROBOTS))
    write_text(DOC, text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--robots", help="comma-separated loader names (default: all, or with --cpp the speed table's: "
                                     + ",".join(SPEED_ROBOTS) + ")")
    ap.add_argument("--states", type=int, default=10000)
    ap.add_argument("--cpp", action="store_true", help="also time Pinocchio's C++ loop (benchmarks/pinocchio_loop.cpp)")
    ap.add_argument("--cpp-exe", help="the C++ loop already built (benchmarks/pinocchio_cpp.py; it takes minutes)")
    ap.add_argument("--no-write", action="store_true", help="print only, leave docs/robots.md as it is")
    ap.add_argument("--single", type=int, default=0,
                    help="also time one state per Python call over this many states (H, bias, RNEA: the extension, "
                         "ctypes and Pinocchio's bindings)")
    ap.add_argument("--repeat", type=int, default=5, help="best of this many rounds of the one-state calls")
    args = ap.parse_args()
    sys.path.insert(0, ROOT)
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from oracles.robots import loaders

    files = loaders()
    # the smaller files first, so that an interrupted run has covered the most robots
    size = {n: open(path, "rb").read().count(b"<joint") for n, (path, _) in files.items()}
    speed = args.cpp or args.cpp_exe
    names = args.robots.split(",") if args.robots else list(SPEED_ROBOTS) if speed else sorted(files, key=size.get)
    with tempfile.TemporaryDirectory() as folder:
        cpp = args.cpp_exe
        if args.cpp and cpp is None:
            import pinocchio_cpp

            cpp = pinocchio_cpp.build(folder)
        print(HEADER)
        rows = []
        for name in names:
            with tempfile.TemporaryDirectory() as cache:          # cold: an empty cache per robot
                row = run_one(name, args.states, cache, args.single, args.repeat, cpp)
            print(row_text(row), flush=True)
            if "lanes" in row:
                print(f"  {name}: the lanes' library built on the first batch in {row['lanes']:.1f} s", flush=True)
            rows.append(row)
            if not args.no_write:                                 # row by row: an interrupted run keeps its rows
                write_table([row])
    timed = [r for r in rows if "cpp_us" in r]
    if timed:
        print(SPEED_HEADER)
        print("\n".join(speed_row(r) for r in timed))
    singles = [r for r in rows if "extension_one_us" in r]
    if singles:
        print(single_table(singles))
    if not args.no_write:
        print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
