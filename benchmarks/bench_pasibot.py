"""PASIBOT timings: cold derivation, warm load, and the 69 x 69 inverse dynamics with every
reaction at 10^4 crank angles, against the batched dense LU of the same A in the same run; the kinematics
sweep at 10^4 angles, the several-coordinate simulation's right-hand side, and the studies' forward and
slip runs, C against numpy.

    python benchmarks/bench_pasibot.py [--samples 10000] [--backend numpy|c|both] [--repeat 3] [--figures]

Each derivation runs in a fresh interpreter (sympy caches nothing yet) and is timed from the first import
to the first kinematics, split into imports (numpy, sympy and mechsym: what loading and solving needs),
declaration, derivation and first kinematics. The C backend
gets an empty cache folder of its own (MECHSYM_CACHE), so "cold" is derivation + code generation +
compilation and "warm" is a fresh interpreter loading the compiled library from that cache. The inverse
timing is the whole `System.inverse` call (kinematics, A U = C, every reaction) at constant speed; the
dense-LU line is numpy's batched LU solve of the assembled A alone (no kinematics, no assembly).
--figures also times `mechsym pasibot figures` (C backend) in a fresh interpreter with the user's warm
cache (a first call warms it). The machine's load average is printed at the start and the end: the
machine is shared, and the figures are only comparable within one run.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from timing import best_time as best_of  # noqa: E402

DERIVE = """
import time, sys
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
import numpy, sympy
from mechanisms import pasibot
from mechsym import derive
t1 = time.perf_counter()
m = pasibot.build("foot", "unprimed")
t2 = time.perf_counter()
s = derive(m, backend={backend!r})
t3 = time.perf_counter()
s.kinematics([3.0])  # everything lazily derived is derived by the first use
t4 = time.perf_counter()
print(t4 - t0, t1 - t0, t2 - t1, t3 - t2, t4 - t3, s.backend)
"""


def fresh_derivation(backend, cache):
    env = dict(os.environ, MECHSYM_CACHE=cache)
    out = subprocess.run([sys.executable, "-c", DERIVE.format(root=ROOT, backend=backend)], capture_output=True,
                         text=True, cwd=ROOT, env=env)
    if out.returncode:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed")
    *times, used = out.stdout.split()
    return [float(t) for t in times], used


def parts(times):
    total, imports, build, derive, first = times
    return (f"{total:.2f} s (imports {imports:.2f}, declaration {build:.2f}, derivation {derive:.2f}, "
            f"first kinematics {first:.2f})")


def bench_inverse(backend, samples, repeat):
    """(seconds for the whole inverse at `samples` angles, text)."""
    from mechanisms import pasibot
    from mechsym import derive

    system = derive(pasibot.build("foot", "unprimed"), backend=backend)
    if system.backend.name != backend:
        return None, f"  backend '{backend}' unavailable (fell back to {system.backend})"
    theta = np.linspace(np.pi / 2, 1.5 * np.pi, samples)
    system.inverse(theta[:10], 3.0)  # warm up (first sweep, compiled analyses)
    whole = best_of(lambda: system.inverse(theta, 3.0), repeat)
    text = (f"  inverse, {samples} angles, all 68 reactions + T8 ({backend}): {whole:.3f} s "
            f"({1e6 * whole / samples:.1f} us per angle)")
    if backend == "c":
        ref = derive(pasibot.build("foot", "unprimed"), backend="numpy").inverse(theta[::97], 3.0)
        got = system.inverse(theta[::97], 3.0)
        err = max(np.max(np.abs(got[n] - ref[n])) / max(np.max(np.abs(ref[n])), 1e-300) for n in ref.names)
        text += f"\n  c agrees with numpy on every column to {err:.1e} (norm-wise)"
    return whole, text


def bench_dense_lu(samples, repeat):
    """Seconds for numpy's batched dense LU solve of the assembled 69 x 69 A (three right-hand sides) at
    `samples` angles, timed on a chunk and scaled."""
    from mechanisms import pasibot
    from mechsym import derive
    from mechsym.planar.dynamics import assemble, solve_checked
    from mechsym.planar.equations import inverse as inverse_analysis

    system = derive(pasibot.build("foot", "unprimed"), backend="numpy")
    chunk = min(samples, 4096)
    kin = system.kinematics(np.linspace(np.pi / 2, 1.5 * np.pi, chunk))
    rhs = [system.mass(kin.params) * kin.ddq, system.mass(kin.params) * kin.dq[:, :, 0],
           -np.broadcast_to(system.applied(kin.q.T, kin.params).T, kin.ddq.shape)]
    a, c = assemble(system, kin, inverse_analysis(system.mechanism), np.zeros((chunk, 1)), rhs)
    return best_of(lambda: solve_checked(system, a, c, kin.theta[:, 0]), repeat) * samples / chunk


def bench_kinematics(backend, samples, repeat):
    """(best seconds of System.kinematics at `samples` crank angles, the result)."""
    from mechanisms import pasibot
    from mechsym import derive

    system = derive(pasibot.build("foot", "unprimed"), backend=backend)
    theta = np.linspace(np.pi / 2, 1.5 * np.pi, samples)
    system.kinematics(theta[:10])
    return best_of(lambda: system.kinematics(theta), repeat), system.kinematics(theta)


def bench_rhs(backend, calls=1000):
    """Microseconds per right-hand side of the several-coordinate simulation (EquationsOfMotion.rhs) along a
    path of states 0.5 mrad apart (as an integrator's calls), and the values for the cross-check."""
    from mechanisms import pasibot
    from mechsym import derive
    from mechsym.planar.simulate import EquationsOfMotion

    system = derive(pasibot.build("foot", "unprimed"), backend=backend)
    ode = EquationsOfMotion(system, np.array([2.0]))
    states = [np.array([2.0 + 5e-4 * i, 3.0]) for i in range(calls)]
    t = time.perf_counter()
    values = np.array([ode.rhs(0.0, y) for y in states])
    return 1e6 * (time.perf_counter() - t) / calls, values


def bench_runs(backend):
    """The studies' runs, timed after their builds are derived: a forward run (no slip) 3 s from rest under
    T8 = 1 N m through its support changes, and a one-step slip run at 3 rad/s with mu = 0.05 (stick,
    slip, slip stops, one 72 x 72 A U = C per right-hand side). Returns (forward seconds, right-hand
    sides, theta8 and omega8 on a grid; slip seconds, right-hand sides, the slip run's table)."""
    import warnings

    from mechanisms import pasibot_study as st

    st.forward_run(1.0, t_end=0.01, backend=backend)
    t = time.perf_counter()
    run = st.forward_run(1.0, t_end=3.0, rtol=1e-9, backend=backend)
    forward = time.perf_counter() - t
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the ZMP leaves the foot: not the question here
        model = st.SlipModel(0.05, omega=3.0, backend=backend)
        t = time.perf_counter()
        slip = model.run(steps=1, samples_per_step=50)
        slip_time = time.perf_counter() - t
    return forward, run.nfev, run.sample(np.linspace(0.0, 3.0, 301))[0], slip_time, slip.result.nfev, slip


def bench_figures(repeat):
    """Best seconds of `mechsym pasibot figures --out TMP` in a fresh interpreter, the cache warmed first."""
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "mechsym", "pasibot", "figures", "--out", out]
        subprocess.run(command, capture_output=True, cwd=ROOT, check=True)  # warm the cache

        def once():
            subprocess.run(command, capture_output=True, cwd=ROOT, check=True)

        return best_of(once, repeat)


def load():
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--backend", choices=["numpy", "c", "both"], default="both")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--figures", action="store_true", help="also time `mechsym pasibot figures` (warm cache)")
    args = ap.parse_args(argv)
    backends = ["numpy", "c"] if args.backend == "both" else [args.backend]

    print("PASIBOT benchmark (targets on the C backend: cold derivation < 60 s, warm load < 1 s, 10^4 full solves "
          "< 0.03 s, kinematics at 10^4 angles < 0.05 s, slip right-hand side < 60 us, figures < 10 s warm)")
    print(f"  machine: {os.cpu_count()} cores, {load()}")
    previous = os.environ.get("MECHSYM_CACHE")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["MECHSYM_CACHE"] = cache  # the in-process C system below loads what the cold run compiled
        cold, _ = fresh_derivation("numpy", cache)
        print(f"  cold derivation, numpy backend: {parts(cold)}")
        if "c" in backends:
            try:
                cold, used = fresh_derivation("c", cache)
                if used != "c":
                    print(f"  C backend unavailable here (derivation fell back to {used}); skipped")
                    backends.remove("c")
                else:
                    print(f"  cold derivation, C backend (empty cache: derive, generate, compile): {parts(cold)}")
                    warm = min((fresh_derivation("c", cache)[0] for _ in range(args.repeat)), key=lambda t: t[0])
                    print(f"  warm load, C backend (library from the cache, best of {args.repeat}): {parts(warm)}")
            except RuntimeError as exc:
                print(f"  C backend failed: {exc}; skipped")
                backends.remove("c")
        lu = bench_dense_lu(args.samples, args.repeat)
        print(f"  dense LU (numpy, batched) of the assembled 69 x 69 A alone, {args.samples} angles: {lu:.3f} s")
        for backend in backends:
            whole, text = bench_inverse(backend, args.samples, args.repeat)
            print(text)
            if whole is not None:
                print(f"    ratio to the dense LU of A alone: {whole / lu:.2f}")
        kin = {}
        for backend in ["numpy"] + [b for b in backends if b == "c"]:
            kin[backend] = bench_kinematics(backend, args.samples, args.repeat)
            line = f"  kinematics (q, q', q''), {args.samples} angles ({backend}): {kin[backend][0]:.3f} s"
            if backend == "c":
                ref = kin["numpy"][1]
                err = max(np.max(np.abs(getattr(kin["c"][1], n) - getattr(ref, n))) / np.max(np.abs(getattr(ref, n)))
                          for n in ("q", "dq", "ddq"))
                line += f"; ratio to numpy {kin['numpy'][0] / kin['c'][0]:.1f}; agrees with numpy to {err:.1e}"
            print(line)
        rhs = {backend: bench_rhs(backend) for backend in ["numpy"] + [b for b in backends if b == "c"]}
        for backend, (us, values) in rhs.items():
            line = f"  simulation right-hand side (EquationsOfMotion.rhs, {backend}): {us:.1f} us per call"
            if backend == "c":
                ref = rhs["numpy"][1]
                line += (f"; ratio to numpy {rhs['numpy'][0] / us:.1f}; agrees with numpy to "
                         f"{np.max(np.abs(values - ref)) / np.max(np.abs(ref)):.1e}")
            print(line)
        runs = {backend: bench_runs(backend) for backend in ["numpy"] + [b for b in backends if b == "c"]}
        for backend, (fwd, n_fwd, y, slip, n_slip, table) in runs.items():
            line = (f"  forward run, 3 s from rest under T8 = 1 N m ({backend}): {fwd:.2f} s, {n_fwd} right-hand "
                    f"sides ({1e6 * fwd / n_fwd:.0f} us each)")
            line2 = (f"  slip run, one step at 3 rad/s, mu = 0.05 ({backend}): {slip:.2f} s, {n_slip} right-hand "
                     f"sides ({1e6 * slip / n_slip:.0f} us each)")
            if backend == "c":
                ref = runs["numpy"]
                err = max(np.max(np.abs(y[:, i] - ref[2][:, i])) / np.max(np.abs(ref[2][:, i])) for i in (0, 1))
                line += f"; ratio to numpy {ref[0] / fwd:.1f}; agrees with numpy to {err:.1e}"
                err = max(np.max(np.abs(table[n] - ref[5][n])) / np.max(np.abs(ref[5][n]))
                          for n in ("theta8", "x1", "T8", "friction", "fn"))
                line2 += f"; ratio to numpy {ref[3] / slip:.1f}; agrees with numpy to {err:.1e}"
            print(line)
            print(line2)
    if previous is None:  # the figures below run with the user's cache, as a user's command would
        os.environ.pop("MECHSYM_CACHE")
    else:
        os.environ["MECHSYM_CACHE"] = previous
    if args.figures:
        print(f"  mechsym pasibot figures (C backend, warm cache, fresh interpreter, best of {args.repeat}): "
              f"{bench_figures(args.repeat):.1f} s")
    print(f"  machine at the end: {load()}")


if __name__ == "__main__":
    main()
