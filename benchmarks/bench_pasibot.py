"""PASIBOT timings (issue 4): cold derivation, warm load, and the 69 x 69 inverse dynamics with every
reaction at 10^4 crank angles.

    python benchmarks/bench_pasibot.py [--samples 10000] [--backend numpy|c|both] [--repeat 3]

Cold derivation runs in a fresh interpreter (sympy caches nothing yet). "warm load" is a fresh interpreter
deriving again with the compiled library already in the cache (C backend only; the numpy backend always
re-derives). The inverse timing is the whole `System.inverse` call (kinematics sweep, A U = C for three
right-hand sides, every reaction) at constant speed; the "solve only" line is the batched dense LU on the
assembled A alone, for comparison. The C backend (mechsym/codegen, written separately) is used when
`--backend c` is given and a compiler exists; otherwise that line says why it was skipped.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

DERIVE = """
import time, sys
sys.path.insert(0, {root!r})
t = time.perf_counter()
from mechanisms import pasibot
from mechsym.system import derive
s = derive(pasibot.build("foot", "unprimed"), backend={backend!r})
s.kinematics([3.0])  # everything lazily derived is derived by the first use
print(time.perf_counter() - t, s.backend)
"""


def fresh_derivation(backend):
    out = subprocess.run([sys.executable, "-c", DERIVE.format(root=ROOT, backend=backend)], capture_output=True,
                         text=True, cwd=ROOT)
    if out.returncode:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed")
    seconds, used = out.stdout.split()
    return float(seconds), used


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_inverse(backend, samples, repeat):
    from mechanisms import pasibot
    from mechsym.dynamics import assemble, solve_checked
    from mechsym.equations import inverse as inverse_analysis
    from mechsym.system import derive

    system = derive(pasibot.build("foot", "unprimed"), backend=backend)
    if system.backend != backend:
        return None, f"backend '{backend}' unavailable (fell back to {system.backend})"
    theta = np.linspace(np.pi / 2, 1.5 * np.pi, samples)
    system.inverse(theta[:10], 3.0)  # warm up (first sweep, compiled analyses)
    whole = best_of(lambda: system.inverse(theta, 3.0), repeat)
    lines = [f"  inverse, {samples} angles, all 68 reactions + T8 ({backend}): {whole:.3f} s "
             f"({1e6 * whole / samples:.1f} us per angle)"]
    if backend == "numpy":
        chunk = min(samples, 4096)
        kin = system.kinematics(theta[:chunk])
        analysis = inverse_analysis(system.mechanism)
        rhs = [system.mass(kin.params) * kin.ddq]
        a, c = assemble(system, kin, analysis, np.zeros((chunk, 1)), rhs)
        solve = best_of(lambda: solve_checked(system, a, c, kin.theta[:, 0]), repeat) * samples / chunk
        lines.append(f"  for comparison: the batched dense LU of the assembled 69 x 69 A alone ~{solve:.3f} s")
    else:
        ref = derive(pasibot.build("foot", "unprimed")).inverse(theta[::97], 3.0)
        got = system.inverse(theta[::97], 3.0)
        err = max(np.max(np.abs(got[n] - ref[n])) / max(np.max(np.abs(ref[n])), 1e-300) for n in ref.names)
        lines.append(f"  {backend} agrees with numpy on every column to {err:.1e} (norm-wise)")
    return whole, "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--backend", choices=["numpy", "c", "both"], default="both")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    backends = ["numpy", "c"] if args.backend == "both" else [args.backend]

    print("PASIBOT benchmark (targets of issue 4: cold derivation < 60 s, warm load < 1 s, 10^4 full solves < 0.1 s "
          "on the C backend)")
    cold, _ = fresh_derivation("numpy")
    print(f"  cold derivation (fresh interpreter, sympy -> numpy functions, first kinematics): {cold:.2f} s")
    if "c" in backends:
        try:
            first, used = fresh_derivation("c")
            if used != "c":
                print(f"  C backend unavailable here (derivation fell back to {used}); skipped")
                backends.remove("c")
            else:
                warm, _ = fresh_derivation("c")
                print(f"  C backend: derivation + compile (or cache hit) {first:.2f} s; warm load from the cache {warm:.2f} s")
        except RuntimeError as exc:
            print(f"  C backend failed: {exc}; skipped")
            backends.remove("c")
    for backend in backends:
        _, text = bench_inverse(backend, args.samples, args.repeat)
        print(text)


if __name__ == "__main__":
    main()
